package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestBatchReadsPartiesTogether: the requests of a batch have their
// parties (actor, task, team, role, named card type) read in one query per
// way of naming the type, those that join under the lock in one more, and
// every booking's cards named in one query after the commit; each request
// still gets exactly the answer it would alone: booked, pending approval,
// not your team, no such task, no such card type.
func TestBatchReadsPartiesTogether(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 8)
		if _, err := w.st.UpdateTeam(as(w.admin), w.otherTeam.ID, store.TeamInput{Name: w.otherTeam.Name, RequiresApproval: true}); err != nil {
			t.Fatal(err)
		}
		byName := func(u *store.User, task int64, name string, h float64) (context.Context, store.BookingRequest) {
			return as(u), store.BookingRequest{TaskID: task, CardTypeName: name, Count: 1, Start: w.at(h), End: w.at(h + 1)}
		}
		type want struct {
			code  errs.Code // "" booked
			key   string
			state string
		}
		cases := []struct {
			user *store.User
			task int64
			name string // "" by id
			want want
		}{
			{w.member, w.normal.ID, "H800", want{state: store.BookingConfirmed}},
			{w.manager, w.core.ID, "H800", want{state: store.BookingConfirmed}},
			{w.outsider, w.core.ID, "H800", want{code: errs.Invalid, key: "booking.not_your_team"}},
			{w.outsider, w.otherTask.ID, "H800", want{state: store.BookingPending}}, // its team approves first
			{w.member, 999_999, "H800", want{code: errs.Invalid, key: "task.not_found"}},
			{w.member, w.normal.ID, "no-such-type", want{code: errs.Invalid, key: "cardtype.not_found"}},
			{w.member, w.backfill.ID, strconv.FormatInt(w.ct.ID, 10), want{state: store.BookingConfirmed}}, // an id given as the name
			{w.member, w.normal.ID, "", want{state: store.BookingConfirmed}},
			// These wait in the queue and join the batch under the lock.
			{w.manager, w.backfill.ID, "H800", want{state: store.BookingConfirmed}},
			{w.outsider, w.normal.ID, "H800", want{code: errs.Invalid, key: "booking.not_your_team"}},
			{w.member, w.core.ID, "H800", want{state: store.BookingConfirmed}},
		}
		const first = 8
		var ctxs []context.Context
		var reqs []store.BookingRequest
		for i, c := range cases {
			ctx, req := byName(c.user, c.task, c.name, float64(1+i))
			if c.name == "" {
				req.CardTypeID = w.ct.ID
			}
			ctxs, reqs = append(ctxs, ctx), append(reqs, req)
		}
		res, errl, partyReads, namings := w.st.CreateBookingsAsBatch(ctxs, reqs, first)
		booked := 0
		for i, c := range cases {
			if c.want.code != "" {
				if e, ok := errs.As(errl[i]); !ok || e.Code != c.want.code || e.Key != c.want.key {
					t.Errorf("request %d: %v, want %s %s", i, errl[i], c.want.code, c.want.key)
				}
				continue
			}
			if errl[i] != nil || res[i] == nil || res[i].Booking == nil {
				t.Errorf("request %d: %v, want a booking", i, errl[i])
				continue
			}
			b := res[i].Booking
			if b.State != c.want.state || b.TaskID != c.task || b.CardTypeID != w.ct.ID || b.UserID != c.user.ID {
				t.Errorf("request %d: booking %+v, want %s for task %d by %s", i, b, c.want.state, c.task, c.user.Username)
			}
			if c.want.state == store.BookingPending {
				continue
			}
			booked++
			v := res[i].View
			if v == nil || len(v.Assigned) != 1 || !strings.Contains(v.Assigned[0].Label, "gpu-01") {
				t.Errorf("request %d: assigned %+v, want its card named on gpu-01", i, v)
			}
		}
		// Four ways of naming the type in the batch ("H800", the unknown
		// name, the id as a name, the id), one for those that joined.
		if partyReads != 5 {
			t.Errorf("%d party queries, want 5", partyReads)
		}
		if namings != 1 {
			t.Errorf("%d queries named the cards of %d bookings, want 1", namings, booked)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
	})
}
