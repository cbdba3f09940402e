package store_test

import (
	"fmt"
	"testing"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestPreviewAgreesWithCreateAndWritesNothing: for each request the preview
// answers what CreateBooking then does — the cost and placement, or the same
// refusal — and the preview itself changes no table.
func TestPreviewAgreesWithCreateAndWritesNothing(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 4)
		w.mustBook(t, w.member, w.backfill, 2, 1, 3)
		req := func(task *store.Task, count int, fromH, toH float64) store.BookingRequest {
			return store.BookingRequest{TaskID: task.ID, CardTypeID: w.ct.ID, Count: count, Start: w.at(fromH), End: w.at(toH)}
		}
		cases := []struct {
			name    string
			req     store.BookingRequest
			placed  bool
			preempt int
			wait    string
			errKey  string
		}{
			{"fits", req(w.normal, 2, 1, 3), true, 0, "", ""},
			{"core preempts backfill", req(w.core, 4, 1, 3), true, 1, "", ""},
			{"no capacity", req(w.normal, 3, 1, 3), false, 0, "", "booking.no_capacity"},
			{"no capacity, queued", func() store.BookingRequest { r := req(w.normal, 3, 1, 3); r.Queue = true; return r }(), false, 0, store.WaitCapacity, ""},
			{"over the quota", req(w.normal, 4, 4, 300), false, 0, "", "quota.over_hours"},
			{"another team's task", req(w.otherTask, 1, 4, 5), false, 0, "", "booking.not_your_team"},
			{"end before start", req(w.normal, 1, 5, 4), false, 0, "", "booking.end_before_start"},
		}
		for _, tc := range cases {
			before := snapshot(t, w.st)
			p, perr := w.st.PreviewBooking(as(w.member), tc.req)
			if after := snapshot(t, w.st); after != before {
				t.Errorf("%s: the preview changed the tables %v → %v", tc.name, before, after)
			}
			if tc.errKey != "" {
				e, ok := errs.As(perr)
				if !ok || e.Key != tc.errKey {
					t.Errorf("%s: preview error %v, want %s", tc.name, perr, tc.errKey)
					continue
				}
				_, cerr := w.st.CreateBooking(as(w.member), tc.req)
				if ce, ok := errs.As(cerr); !ok || ce.Key != e.Key || ce.Code != e.Code || fmt.Sprint(ce.Args) != fmt.Sprint(e.Args) {
					t.Errorf("%s: preview said %v, create said %v", tc.name, perr, cerr)
				}
				continue
			}
			if perr != nil {
				t.Errorf("%s: preview: %v", tc.name, perr)
				continue
			}
			secs := schedule.CardSeconds(tc.req.Count, tc.req.Start, tc.req.End)
			if p.Placed != tc.placed || p.Preempts != tc.preempt || p.WaitReason != tc.wait ||
				p.CardSeconds != secs || p.CostFen != schedule.CostFen(secs, w.ct.PriceFen) {
				t.Errorf("%s: preview %+v, want placed %v, %d preempted, wait %q, %d card-seconds", tc.name, p, tc.placed, tc.preempt, tc.wait, secs)
			}
		}
		// Free cards count those free for the whole window.
		p, err := w.st.PreviewBooking(as(w.member), req(w.normal, 1, 2, 4))
		if err != nil {
			t.Fatal(err)
		}
		if p.FreeCards != 2 || p.TotalCards != 4 {
			t.Errorf("free %d of %d, want 2 of 4", p.FreeCards, p.TotalCards)
		}
	})
}
