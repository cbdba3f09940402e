package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// bookingWorld is a small fleet: one team with a manager and a member,
// another team, one card type with four cards, a quota, and a task of each
// priority class.
type bookingWorld struct {
	st                     *store.Store
	clock                  *storetest.Clock
	admin, manager, member *store.User
	outsider               *store.User
	team, otherTeam        *store.Team
	ct                     *store.CardType
	cards                  []*store.Card
	core, normal, backfill *store.Task
	otherTask              *store.Task
	quota                  *store.Quota
}

func as(u *store.User) context.Context {
	return store.WithActor(context.Background(), store.Actor{UserID: u.ID, Username: u.Username})
}

func newBookingWorld(t testing.TB, dialect string, cards int) *bookingWorld {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
	return buildBookingWorld(t, st, clock, cards)
}

// buildBookingWorld fills st with the world's people, cards, tasks and
// quotas.
func buildBookingWorld(t testing.TB, st *store.Store, clock *storetest.Clock, cards int) *bookingWorld {
	t.Helper()
	w := &bookingWorld{st: st, clock: clock}
	w.admin = MustUser(t, st, "root", store.RoleAdmin)
	w.manager = MustUser(t, st, "boss", store.RoleManager)
	w.member = MustUser(t, st, "dev", store.RoleMember)
	w.outsider = MustUser(t, st, "stranger", store.RoleMember)
	w.team = MustTeam(t, st, "llm")
	w.otherTeam = MustTeam(t, st, "vision")
	ctx := as(w.admin)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := st.SetMembership(ctx, w.team.ID, w.manager.ID, store.TeamRoleManager)
	must(err)
	_, err = st.SetMembership(ctx, w.team.ID, w.member.ID, store.TeamRoleMember)
	must(err)
	_, err = st.SetMembership(ctx, w.otherTeam.ID, w.outsider.ID, store.TeamRoleMember)
	must(err)
	w.ct, err = st.CreateCardType(ctx, h100("H800"))
	must(err)
	host, err := st.CreateHost(ctx, store.HostInput{Name: "gpu-01", Zone: "bj"})
	must(err)
	for i := 0; i < cards; i++ {
		c, err := st.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-0000000%d-aaaa-bbbb-cccc-%012d", i, i), GPUIndex: i, HostID: host.ID, CardTypeID: w.ct.ID})
		must(err)
		w.cards = append(w.cards, c)
	}
	mk := func(name, prio string, team int64) *store.Task {
		author := w.member
		if team == w.otherTeam.ID {
			author = w.outsider
		}
		task, err := st.CreateTask(as(author), store.TaskInput{TeamID: team, Name: name, Priority: prio, EstimateCardHours: 100,
			DataReadiness: schedule.DataReady, VRAMGiB: 40, Precision: "bf16"})
		must(err)
		return task
	}
	w.core, w.normal, w.backfill = mk("pretrain", schedule.Core, w.team.ID), mk("eval", schedule.Normal, w.team.ID), mk("sweep", schedule.Backfill, w.team.ID)
	w.otherTask = mk("detector", schedule.Normal, w.otherTeam.ID)
	w.quota, err = st.CreateQuota(as(w.admin), store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID, CardHours: 1000, MaxCards: 0,
		ValidFrom: clock.Now().Add(-24 * time.Hour), ExpiresAt: clock.Now().Add(30 * 24 * time.Hour)})
	must(err)
	_, err = st.CreateQuota(as(w.admin), store.QuotaInput{TeamID: w.otherTeam.ID, CardTypeID: w.ct.ID, CardHours: 1000,
		ValidFrom: clock.Now().Add(-24 * time.Hour), ExpiresAt: clock.Now().Add(30 * 24 * time.Hour)})
	must(err)
	return w
}

func (w *bookingWorld) at(h float64) time.Time {
	return w.clock.Now().Add(time.Duration(h * float64(time.Hour)))
}

func (w *bookingWorld) book(t testing.TB, u *store.User, task *store.Task, count int, fromH, toH float64) (*store.BookingResult, error) {
	t.Helper()
	return w.st.CreateBooking(as(u), store.BookingRequest{TaskID: task.ID, CardTypeID: w.ct.ID, Count: count, Start: w.at(fromH), End: w.at(toH)})
}

func (w *bookingWorld) mustBook(t *testing.T, u *store.User, task *store.Task, count int, fromH, toH float64) *store.BookingResult {
	t.Helper()
	r, err := w.book(t, u, task, count, fromH, toH)
	if err != nil {
		t.Fatalf("book %d cards %v–%vh: %v", count, fromH, toH, err)
	}
	return r
}

func countRows(t *testing.T, st *store.Store, table string) int64 {
	t.Helper()
	var n int64
	if err := st.DB().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func snapshot(t *testing.T, st *store.Store) [4]int64 {
	return [4]int64{countRows(t, st, "bookings"), countRows(t, st, "booking_cards"), countRows(t, st, "audit_log"), countRows(t, st, "notifications")}
}

func wantCode(t *testing.T, err error, code errs.Code, key string) *errs.Error {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code || e.Key != key {
		t.Fatalf("error = %v, want %s %s", err, code, key)
	}
	return e
}

func TestBookingAssignsCardsAndNeverDoubleBooks(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 4)
		a := w.mustBook(t, w.member, w.normal, 2, 0, 2)
		if a.Booking.State != store.BookingActive || a.Booking.Kind != store.KindOnDemand || len(a.Cards) != 2 {
			t.Fatalf("on-demand booking: %+v cards %v", a.Booking, a.Cards)
		}
		b := w.mustBook(t, w.member, w.normal, 2, 1, 3)
		if b.Booking.State != store.BookingConfirmed || b.Booking.Kind != store.KindAdvance || overlapping(a.Cards, b.Cards) {
			t.Fatalf("second booking %+v shares cards %v / %v", b.Booking, a.Cards, b.Cards)
		}
		before := snapshot(t, w.st)
		_, err := w.book(t, w.member, w.normal, 1, 1.5, 2.5)
		e := wantCode(t, err, errs.Conflict, "booking.no_capacity")
		if fmt.Sprint(e.Args) != "[1 0]" {
			t.Errorf("shortfall args %v, want wanted 1 free 0", e.Args)
		}
		if snapshot(t, w.st) != before {
			t.Error("a refused booking wrote rows")
		}
		// Back to back with the first booking is fine.
		c := w.mustBook(t, w.member, w.normal, 2, 2, 4)
		if overlapping(b.Cards, c.Cards) {
			t.Errorf("cards %v overlap %v between 2h and 3h", c.Cards, b.Cards)
		}
	})
}

func overlapping(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func TestBookingBadInputWritesNothing(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		before := snapshot(t, w.st)
		cases := []struct {
			name  string
			u     *store.User
			req   store.BookingRequest
			field string
			key   string
		}{
			{"end before start", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(2), End: w.at(1)}, "end", "booking.end_before_start"},
			{"in the past", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(-3), End: w.at(-1)}, "start", "booking.start_past"},
			{"past the horizon", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(24 * 89), End: w.at(24 * 91)}, "end", "booking.past_horizon"},
			{"zero cards", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 0, Start: w.at(1), End: w.at(2)}, "count", "booking.count_range"},
			{"negative cards", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: -2, Start: w.at(1), End: w.at(2)}, "count", "booking.count_range"},
			{"unknown card type", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: 9999, Count: 1, Start: w.at(1), End: w.at(2)}, "card_type", "cardtype.not_found"},
			{"unknown task", w.member, store.BookingRequest{TaskID: 9999, CardTypeID: w.ct.ID, Count: 1, Start: w.at(1), End: w.at(2)}, "task_id", "task.not_found"},
			{"another team's task", w.outsider, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(1), End: w.at(2)}, "task_id", "booking.not_your_team"},
			{"missing times", w.member, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1}, "start", "booking.start_required"},
		}
		for _, c := range cases {
			_, err := w.st.CreateBooking(as(c.u), c.req)
			e, ok := errs.As(err)
			if !ok || e.Code != errs.Invalid || e.Fields[c.field] != c.key {
				t.Errorf("%s: got %v (fields %v), want invalid %s=%s", c.name, err, fieldsOf(e), c.field, c.key)
			}
		}
		if snapshot(t, w.st) != before {
			t.Error("bad input wrote rows")
		}
	})
}

func fieldsOf(e *errs.Error) map[string]string {
	if e == nil {
		return nil
	}
	return e.Fields
}

func TestReleaseReturnsHoursAndPlacesTheQueue(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		a := w.mustBook(t, w.member, w.normal, 2, 0, 4)
		// No capacity: the request waits in the queue instead of failing.
		q, err := w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 2, Start: w.at(1), End: w.at(3), Queue: true})
		if err != nil || q.Booking.State != store.BookingPending || q.Booking.WaitReason != store.WaitCapacity {
			t.Fatalf("queued booking: %+v, %v", q, err)
		}
		w.clock.Advance(90 * time.Minute)
		rel, err := w.st.ReleaseBooking(as(w.member), a.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Booking.State != store.BookingReleased || rel.ReturnedCardSeconds != 2*int64(150*60) {
			t.Errorf("release: state %s returned %d card-seconds, want 2 × 2.5 h", rel.Booking.State, rel.ReturnedCardSeconds)
		}
		if rel.ReturnedFen != 2*250*22 {
			t.Errorf("returned %d fen, want 5 card-hours × ¥22", rel.ReturnedFen)
		}
		got, err := w.st.FindBookingByID(context.Background(), q.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.BookingActive || len(got.Cards) != 2 {
			t.Errorf("queued booking after release: %s with %v", got.State, got.Cards)
		}
		notes, _ := w.st.FindNotifications(context.Background(), w.member.ID, true, 10)
		if len(notes) != 1 || notes[0].MessageKey != "notify.placed" {
			t.Errorf("notifications %+v", notes)
		}
	})
}

func TestQuotaRefusalsSayWhichLimitAndChangeNothing(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 4)
		// 1000 card-hours granted: 4 cards × 240 h would need 960; then 41 more is over by 1.
		w.mustBook(t, w.member, w.normal, 4, 1, 241)
		before := snapshot(t, w.st)
		_, err := w.book(t, w.member, w.normal, 1, 300, 341)
		e := wantCode(t, err, errs.Conflict, "quota.over_hours")
		if fmt.Sprint(e.Args) != "[1.0]" {
			t.Errorf("over by %v card-hours, want 1.0", e.Args)
		}
		// Running past the quota's expiry (30 days out) by 5 hours.
		_, err = w.book(t, w.member, w.normal, 1, 30*24-1, 30*24+5)
		e = wantCode(t, err, errs.Conflict, "quota.past_expiry")
		if fmt.Sprint(e.Args) != "[5.0]" {
			t.Errorf("past expiry by %v hours, want 5.0", e.Args)
		}
		if snapshot(t, w.st) != before {
			t.Error("refused bookings wrote rows")
		}
		// A manager may override; the override is in the audit log.
		r, err := w.st.CreateBooking(as(w.manager), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(300), End: w.at(341), OverrideQuota: true})
		if err != nil || r.Booking.QuotaOverrideBy == nil {
			t.Fatalf("manager override: %+v %v", r, err)
		}
		entries, _, _ := w.st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "booking", EntityID: r.Booking.ID})
		found := false
		for _, e := range entries {
			found = found || e.Action == "quota_override"
		}
		if !found {
			t.Error("no quota_override audit entry")
		}
		// A member may not override.
		_, err = w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(400), End: w.at(441), OverrideQuota: true})
		wantCode(t, err, errs.Conflict, "quota.over_hours")
	})
}

func TestCorePreemptsBackfillAndItsOwnerSeesWhy(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		bf := w.mustBook(t, w.member, w.backfill, 2, 0, 6)
		nrm := w.book
		if _, err := nrm(t, w.member, w.normal, 1, 2, 3); !errs.Is(err, errs.Conflict) {
			t.Fatalf("normal must not preempt backfill: %v", err)
		}
		w.clock.Advance(time.Hour)
		core := w.mustBook(t, w.manager, w.core, 2, 2, 5) // starts at 3h on the original clock
		if len(core.Preempted) != 1 || core.Preempted[0] != bf.Booking.ID {
			t.Fatalf("preempted %v, want [%d]", core.Preempted, bf.Booking.ID)
		}
		victim, _ := w.st.FindBookingByID(context.Background(), bf.Booking.ID)
		if victim.State != store.BookingPreempted || victim.EndedAt == nil || !victim.EndedAt.Equal(w.at(2)) {
			t.Errorf("victim %s ended %v, want preempted at the core start", victim.State, victim.EndedAt)
		}
		notes, _ := w.st.FindNotifications(context.Background(), w.member.ID, true, 10)
		if len(notes) != 1 || notes[0].MessageKey != "notify.preempted" || fmt.Sprint(notes[0].Args()[1]) != "pretrain" {
			t.Errorf("owner notification %+v", notes)
		}
	})
}

func TestDataNotReadyWaitsAndItsCardsGoToTheNextReadyRequest(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 1)
		in := store.TaskInput{TeamID: w.team.ID, Name: "needs-data", Priority: schedule.Core, EstimateCardHours: 10, DataReadiness: schedule.DataNotReady}
		waiting, err := w.st.CreateTask(as(w.member), in)
		if err != nil {
			t.Fatal(err)
		}
		// Booked ahead while the data is still being prepared: cards assigned.
		early := w.mustBook(t, w.member, waiting, 1, 1, 3)
		queued, err := w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(1), End: w.at(2), Queue: true})
		if err != nil || queued.Booking.State != store.BookingPending {
			t.Fatalf("queued %+v %v", queued, err)
		}
		w.clock.Advance(time.Hour)
		if _, err := w.st.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, _ := w.st.FindBookingByID(context.Background(), early.Booking.ID)
		if got.State != store.BookingPending || got.WaitReason != store.WaitData {
			t.Errorf("not-ready booking at start: %s/%s, want pending/data", got.State, got.WaitReason)
		}
		next, _ := w.st.FindBookingByID(context.Background(), queued.Booking.ID)
		if next.State != store.BookingActive {
			t.Errorf("ready request got %s, want active on the freed card", next.State)
		}
		// On-demand with data not ready waits from the start.
		now, err := w.book(t, w.member, waiting, 1, 0, 1)
		if err != nil || now.Booking.State != store.BookingPending || now.Booking.WaitReason != store.WaitData {
			t.Errorf("on-demand not-ready: %+v %v", now, err)
		}
	})
}

func TestApprovalExtendCancel(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		if _, err := w.st.UpdateTeam(as(w.admin), w.team.ID, store.TeamInput{Name: w.team.Name, RequiresApproval: true}); err != nil {
			t.Fatal(err)
		}
		r := w.mustBook(t, w.member, w.normal, 1, 1, 2)
		if r.Booking.State != store.BookingPending || r.Booking.WaitReason != store.WaitApproval {
			t.Fatalf("needs approval: %+v", r.Booking)
		}
		if _, err := w.st.ApproveBooking(as(w.member), r.Booking.ID); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a member approved: %v", err)
		}
		ok, err := w.st.ApproveBooking(as(w.manager), r.Booking.ID)
		if err != nil || ok.Booking.State != store.BookingConfirmed || len(ok.Cards) != 1 {
			t.Fatalf("approved: %+v %v", ok, err)
		}
		other := w.mustBook(t, w.manager, w.normal, 2, 3, 4)
		if _, err := w.st.ExtendBooking(as(w.member), r.Booking.ID, w.at(3.5)); !errs.Is(err, errs.Conflict) {
			t.Errorf("extend into another booking: %v", err)
		}
		ext, err := w.st.ExtendBooking(as(w.member), r.Booking.ID, w.at(3))
		if err != nil || !ext.EndAt.Equal(w.at(3)) {
			t.Errorf("extend to the next booking: %+v %v", ext, err)
		}
		if _, err := w.st.CancelBooking(as(w.outsider), other.Booking.ID); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a stranger cancelled: %v", err)
		}
		c, err := w.st.CancelBooking(as(w.manager), other.Booking.ID)
		if err != nil || c.State != store.BookingCancelled {
			t.Errorf("cancel: %+v %v", c, err)
		}
		// The cancelled booking's cards are free again.
		w.mustBook(t, w.member, w.normal, 1, 3, 4)
	})
}

// Hundreds of concurrent, conflicting requests on a small pool: every card
// ends up held by at most one booking at any instant, and exactly as many
// requests succeed as the pool holds.
func TestConcurrentBookingsMatchCapacityExactly(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		const cards, requests = 4, 200
		w := newBookingWorld(t, d, cards)
		// Twenty one-hour slots; each request asks for one card in one slot,
		// so each slot can take exactly four.
		const slots = 20
		var wg sync.WaitGroup
		results := make([]*store.BookingResult, requests)
		errors := make([]error, requests)
		for i := 0; i < requests; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				slot := float64(i%slots + 1)
				results[i], errors[i] = w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(slot), End: w.at(slot + 1)})
			}(i)
		}
		wg.Wait()
		ok := 0
		perSlot := map[time.Time]map[string]bool{}
		for i, r := range results {
			if errors[i] != nil {
				if !errs.Is(errors[i], errs.Conflict) {
					t.Fatalf("request %d: %v", i, errors[i])
				}
				continue
			}
			ok++
			s := r.Booking.StartAt
			if perSlot[s] == nil {
				perSlot[s] = map[string]bool{}
			}
			for _, c := range r.Cards {
				if perSlot[s][c] {
					t.Fatalf("card %s booked twice at %v", c, s)
				}
				perSlot[s][c] = true
			}
		}
		if ok != cards*slots {
			t.Errorf("%d bookings succeeded, want exactly %d", ok, cards*slots)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
	})
}

// TestReleaseCostAndRefundAddUp: a booking previewed at ¥88.00 (1 card ×
// 4 h × ¥22) released after 27 s costs what it kept and refunds the rest,
// and the two add up to ¥88.00 to the fen — priced apart, the kept 27
// card-seconds (16.5 fen) and the 14,373 returned (8,783.5 fen) both round
// up and make ¥88.01.
func TestReleaseCostAndRefundAddUp(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		a := w.mustBook(t, w.member, w.normal, 1, 0, 4)
		full := schedule.CostFen(a.Booking.BookedCardSeconds(), a.Booking.PriceFen)
		if full != 8800 {
			t.Fatalf("preview cost %d fen, want 8800", full)
		}
		w.clock.Advance(27 * time.Second)
		rel, err := w.st.ReleaseBooking(as(w.member), a.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		kept := schedule.CostFen(rel.Booking.BookedCardSeconds(), rel.Booking.PriceFen)
		if kept+rel.ReturnedFen != full {
			t.Errorf("cost %d + refund %d = %d fen, want the preview's %d", kept, rel.ReturnedFen, kept+rel.ReturnedFen, full)
		}
	})
}
