package store_test

import (
	"context"
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// approvalWorld is a booking world whose team requires approval.
func approvalWorld(t *testing.T, d string, cards int) *bookingWorld {
	t.Helper()
	w := newBookingWorld(t, d, cards)
	if _, err := w.st.UpdateTeam(as(w.admin), w.team.ID, store.TeamInput{Name: w.team.Name, RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	return w
}

// mustRequest books as the member and checks it waits for approval.
func (w *bookingWorld) mustRequest(t *testing.T, count int, fromH, toH float64) *store.Booking {
	t.Helper()
	r := w.mustBook(t, w.member, w.normal, count, fromH, toH)
	if r.Booking.State != store.BookingPending || r.Booking.WaitReason != store.WaitApproval {
		t.Fatalf("request does not wait for approval: %+v", r.Booking)
	}
	return r.Booking
}

// notices are u's notifications of kind, newest first.
func notices(t *testing.T, st *store.Store, u *store.User, kind string) []store.Notification {
	t.Helper()
	all, err := st.FindNotifications(context.Background(), u.ID, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Notification
	for _, n := range all {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

func TestRejectNeedsAReasonAndChangesNothingWithout(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := approvalWorld(t, d, 2)
		b := w.mustRequest(t, 1, 1, 2)
		before := snapshot(t, w.st)
		for _, reason := range []string{"", "   \n\t", strings.Repeat("长", store.MaxRejectReason+1)} {
			_, err := w.st.RejectBooking(as(w.manager), b.ID, reason)
			e, ok := errs.As(err)
			if !ok || e.Code != errs.Invalid || e.Fields["reason"] == "" {
				t.Errorf("reject with reason %.10q: %v, want a field error on reason", reason, err)
			}
		}
		if _, err := w.st.DecideBookings(as(w.manager), []int64{b.ID}, false, " "); !errs.Is(err, errs.Invalid) {
			t.Errorf("bulk reject without a reason: %v", err)
		}
		if after := snapshot(t, w.st); after != before {
			t.Errorf("rows changed by refused rejections: %v → %v", before, after)
		}
		got, err := w.st.FindBookingByID(context.Background(), b.ID)
		if err != nil || got.State != store.BookingPending || got.DecidedBy != nil {
			t.Errorf("after refused rejections: %+v %v", got, err)
		}
		// Exactly 500 runes is accepted, trimmed.
		ok, err := w.st.RejectBooking(as(w.manager), b.ID, "  "+strings.Repeat("长", store.MaxRejectReason)+" ")
		if err != nil || ok.State != store.BookingRejected || len([]rune(ok.RejectReason)) != store.MaxRejectReason {
			t.Errorf("reject with 500 runes: %+v %v", ok, err)
		}
	})
}

func TestRejectIsForManagersAndTerminal(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := approvalWorld(t, d, 2)
		b := w.mustRequest(t, 1, 1, 3)
		if _, err := w.st.RejectBooking(as(w.member), b.ID, "no"); !errs.Is(err, errs.Forbidden) {
			t.Errorf("the requester rejected: %v", err)
		}
		if _, err := w.st.RejectBooking(as(w.outsider), b.ID, "no"); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a stranger rejected: %v", err)
		}
		n := auditCount(t, w.st)
		r, err := w.st.RejectBooking(as(w.manager), b.ID, "  数据集还没准备好 ")
		if err != nil {
			t.Fatal(err)
		}
		if r.State != store.BookingRejected || r.RejectReason != "数据集还没准备好" || r.DecidedBy == nil || *r.DecidedBy != w.manager.ID || r.DecidedAt == nil {
			t.Errorf("rejected: %+v", r)
		}
		if got := auditCount(t, w.st); got != n+1 || lastAudit(t, w.st).Action != "reject" {
			t.Errorf("audit after reject: %d entries (%s), want %d", got, lastAudit(t, w.st).Action, n+1)
		}
		view, err := w.st.FindBookingByID(context.Background(), b.ID)
		if err != nil || view.DecidedByName != w.manager.Username || view.CostFen != 0 {
			t.Errorf("view of the rejected booking: %+v %v", view, err)
		}
		got := notices(t, w.st, w.member, "rejected")
		if len(got) != 1 || got[0].MessageKey != store.NoticeRejected || len(got[0].Args()) != 2 || got[0].Args()[1] != "数据集还没准备好" {
			t.Errorf("requester's notices: %+v", got)
		}
		// Rejected is terminal: no decision, cancel or extension again.
		if _, err := w.st.RejectBooking(as(w.manager), b.ID, "again"); !errs.Is(err, errs.Conflict) {
			t.Errorf("second reject: %v", err)
		}
		if _, err := w.st.ApproveBooking(as(w.manager), b.ID); !errs.Is(err, errs.Conflict) {
			t.Errorf("approve after reject: %v", err)
		}
		if _, err := w.st.CancelBooking(as(w.member), b.ID); !errs.Is(err, errs.Conflict) {
			t.Errorf("cancel after reject: %v", err)
		}
		if _, err := w.st.ExtendBooking(as(w.member), b.ID, w.at(5)); !errs.Is(err, errs.Conflict) {
			t.Errorf("extend after reject: %v", err)
		}
		// It draws nothing from the quota: the whole grant is back.
		rows, err := w.st.FindAwaitingApproval(context.Background(), w.manager)
		if err != nil || len(rows) != 0 {
			t.Errorf("inbox after reject: %+v %v", rows, err)
		}
		next := w.mustRequest(t, 1, 1, 2)
		rows, err = w.st.FindAwaitingApproval(context.Background(), w.manager)
		if err != nil || len(rows) != 1 || rows[0].ID != next.ID {
			t.Fatalf("inbox: %+v %v", rows, err)
		}
		if q := rows[0].Quota; q.BeforeCardSeconds != q.GrantedCardSeconds {
			t.Errorf("the rejected booking still draws: %+v", q)
		}
	})
}

func TestApproveTellsTheRequesterApprovedNotPlaced(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := approvalWorld(t, d, 1)
		placed := w.mustRequest(t, 1, 1, 2)
		queued := w.mustRequest(t, 1, 1, 2) // the one card is taken once the first is approved
		res, err := w.st.ApproveBooking(as(w.manager), placed.ID)
		if err != nil || res.Booking.State != store.BookingConfirmed || res.Booking.DecidedBy == nil || *res.Booking.DecidedBy != w.manager.ID {
			t.Fatalf("approve: %+v %v", res, err)
		}
		res, err = w.st.ApproveBooking(as(w.admin), queued.ID)
		if err != nil || res.Booking.State != store.BookingPending || res.Booking.WaitReason != store.WaitCapacity {
			t.Fatalf("approve of one without cards: %+v %v", res, err)
		}
		if got := notices(t, w.st, w.member, "placed"); len(got) != 0 {
			t.Errorf("approval sent the placed notice: %+v", got)
		}
		got := notices(t, w.st, w.member, "approved")
		if len(got) != 2 || got[1].MessageKey != store.NoticeApproved || got[0].MessageKey != store.NoticeApprovedQueued {
			t.Fatalf("approved notices: %+v", got)
		}
		// Placed later from the queue, it is told so then.
		if _, err := w.st.CancelBooking(as(w.member), placed.ID); err != nil {
			t.Fatal(err)
		}
		if got := notices(t, w.st, w.member, "placed"); len(got) != 1 {
			t.Errorf("placed from the queue: %+v", got)
		}
	})
}

func TestManagersAreToldOncePerBookingWaitingForApproval(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := approvalWorld(t, d, 2)
		second := MustUser(t, w.st, "boss2", store.RoleManager)
		if _, err := w.st.SetMembership(as(w.admin), w.team.ID, second.ID, store.TeamRoleManager); err != nil {
			t.Fatal(err)
		}
		a := w.mustRequest(t, 1, 1, 2)
		b := w.mustRequest(t, 1, 3, 4)
		for _, m := range []*store.User{w.manager, second} {
			got := notices(t, w.st, m, "approval_waiting")
			if len(got) != 2 {
				t.Fatalf("%s has %d approval notices, want 2: %+v", m.Username, len(got), got)
			}
			for _, n := range got {
				if n.MessageKey != store.NoticeApprovalWaiting || n.Link != "/approvals" {
					t.Errorf("notice %+v", n)
				}
				if id, _ := n.Args()[0].(float64); int64(id) != a.ID && int64(id) != b.ID {
					t.Errorf("notice names booking %v", n.Args()[0])
				}
			}
		}
		if got := notices(t, w.st, w.admin, "approval_waiting"); len(got) != 0 {
			t.Errorf("the admin was told though the team has managers: %+v", got)
		}
		if got := notices(t, w.st, w.member, "approval_waiting"); len(got) != 0 {
			t.Errorf("the requester was told: %+v", got)
		}
		// A team with no manager: the admins are told.
		if _, err := w.st.UpdateTeam(as(w.admin), w.otherTeam.ID, store.TeamInput{Name: w.otherTeam.Name, RequiresApproval: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.CreateBooking(as(w.outsider), store.BookingRequest{TaskID: w.otherTask.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(1), End: w.at(2)}); err != nil {
			t.Fatal(err)
		}
		if got := notices(t, w.st, w.admin, "approval_waiting"); len(got) != 1 {
			t.Errorf("admin notices for a team without managers: %+v", got)
		}
	})
}

func TestDecideBookingsDecidesEachOnItsOwn(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := approvalWorld(t, d, 4)
		a, b := w.mustRequest(t, 1, 1, 2), w.mustRequest(t, 1, 2, 3)
		done := w.mustRequest(t, 1, 3, 4)
		if _, err := w.st.ApproveBooking(as(w.manager), done.ID); err != nil {
			t.Fatal(err)
		}
		foreign, err := w.st.CreateBooking(as(w.outsider), store.BookingRequest{TaskID: w.otherTask.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(1), End: w.at(2)})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := w.st.DecideBookings(as(w.manager), []int64{a.ID, done.ID, 999999, foreign.Booking.ID, b.ID, a.ID}, true, "")
		if err != nil || len(ds) != 5 {
			t.Fatalf("decisions %+v %v", ds, err)
		}
		want := []errs.Code{"", errs.Conflict, errs.NotFound, errs.Forbidden, ""}
		for i, dd := range ds {
			if got := errs.CodeOf(dd.Err); dd.Err != nil && got != want[i] || dd.Err == nil && want[i] != "" {
				t.Errorf("decision %d (#%d): %v, want %q", i, dd.ID, dd.Err, want[i])
			}
		}
		for _, id := range []int64{a.ID, b.ID} {
			got, err := w.st.FindBookingByID(context.Background(), id)
			if err != nil || got.State != store.BookingConfirmed {
				t.Errorf("#%d after the bulk approval: %+v %v", id, got, err)
			}
		}
		c, e := w.mustRequest(t, 1, 5, 6), w.mustRequest(t, 1, 6, 7)
		ds, err = w.st.DecideBookings(as(w.manager), []int64{c.ID, a.ID, e.ID}, false, "over budget")
		if err != nil || len(ds) != 3 || !ds[0].OK() || ds[1].OK() || !ds[2].OK() {
			t.Fatalf("bulk reject %+v %v", ds, err)
		}
		if ds[0].Booking.State != store.BookingRejected || ds[2].Booking.RejectReason != "over budget" {
			t.Errorf("bulk rejected %+v %+v", ds[0].Booking, ds[2].Booking)
		}
	})
}

func TestFindAwaitingApprovalMatchesTheCount(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := approvalWorld(t, d, 2)
		ctx := context.Background()
		first := w.mustRequest(t, 2, 1, 3)
		w.clock.Advance(60e9)
		second := w.mustRequest(t, 1, 2, 3)
		// Not awaiting: placed by the manager, queued for capacity, another
		// team's (the manager does not manage it), expired.
		w.mustBook(t, w.manager, w.normal, 1, 4, 5)
		expired := w.mustRequest(t, 1, 0, 0.5)
		w.clock.Advance(40 * 60e9)
		if _, err := w.st.Tick(ctx); err != nil { // the expired one is cancelled
			t.Fatal(err)
		}
		if _, err := w.st.UpdateTeam(as(w.admin), w.otherTeam.ID, store.TeamInput{Name: w.otherTeam.Name, RequiresApproval: true}); err != nil {
			t.Fatal(err)
		}
		foreign, err := w.st.CreateBooking(as(w.outsider), store.BookingRequest{TaskID: w.otherTask.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(1), End: w.at(2)})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []*store.User{w.manager, w.admin, w.member, w.outsider} {
			n, err := w.st.CountAwaitingApproval(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := w.st.FindAwaitingApproval(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n {
				t.Errorf("%s: the inbox lists %d, the count says %d", u.Username, len(rows), n)
			}
		}
		rows, err := w.st.FindAwaitingApproval(ctx, w.manager)
		if err != nil || len(rows) != 2 || rows[0].ID != first.ID || rows[1].ID != second.ID {
			t.Fatalf("manager's inbox (oldest first): %+v %v", rows, err)
		}
		for _, r := range rows {
			if r.ID == expired.ID || r.ID == foreign.Booking.ID {
				t.Errorf("listed #%d", r.ID)
			}
		}
		r := rows[0]
		if r.Username != w.member.Username || r.TeamName != w.team.Name || r.TaskName != w.normal.Name || r.CardTypeName != w.ct.Name ||
			r.Task.Priority != w.normal.Priority || r.Task.EstimateCardSeconds != w.normal.EstimateCardSeconds || r.Task.DataReadiness != schedule.DataReady {
			t.Errorf("row %+v", r)
		}
		need := schedule.CardSeconds(2, r.StartAt, r.EndAt)
		if r.CardSeconds != need || r.CostFen != schedule.CostFen(need, w.ct.PriceFen) {
			t.Errorf("row card-seconds %d cost %d, want %d and %d", r.CardSeconds, r.CostFen, need, schedule.CostFen(need, w.ct.PriceFen))
		}
		q := r.Quota
		if q.QuotaID != w.quota.ID || q.Over() || q.AfterCardSeconds != q.BeforeCardSeconds-need || q.Verdict.RemainingCardSeconds != q.AfterCardSeconds {
			t.Errorf("quota effect %+v (need %d)", q, need)
		}
		// The manager's own booking (1 card-hour) is drawn; the requests
		// themselves are left out of "before".
		if want := q.GrantedCardSeconds - 3600 - schedule.CardSeconds(1, rows[1].StartAt, rows[1].EndAt); q.BeforeCardSeconds != want {
			t.Errorf("before %d, want %d", q.BeforeCardSeconds, want)
		}
		all, err := w.st.FindAwaitingApproval(ctx, w.admin)
		if err != nil || len(all) != 3 {
			t.Errorf("admin's inbox: %d %v", len(all), err)
		}
	})
}
