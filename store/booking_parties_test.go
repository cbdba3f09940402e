package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestJoinedRequestsReuseParties: a request that joins a batch under the
// lock with the task, actor and card type of a request already in the
// batch takes that request's party instead of a query of its own (a round
// trip while the type's lock is held); its actor is still its own, so a
// site role changed since is what counts, and each answer is the one it
// would get alone.
func TestJoinedRequestsReuseParties(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 8)
		// The HTTP layer names the site role it loaded with the user.
		loaded := func(u *store.User, role string) context.Context {
			return store.WithActor(context.Background(), store.Actor{UserID: u.ID, Username: u.Username, Role: role})
		}
		type call struct {
			ctx  context.Context
			task int64
			name string // "" by id
			key  string // "" booked
		}
		calls := []call{
			{loaded(w.member, w.member.Role), w.normal.ID, "H800", ""},
			{loaded(w.outsider, w.outsider.Role), w.core.ID, "H800", "booking.not_your_team"},
			{loaded(w.member, w.member.Role), w.normal.ID, "", ""},
			// These join under the lock, each like one above.
			{loaded(w.member, w.member.Role), w.normal.ID, "H800", ""},
			{loaded(w.outsider, w.outsider.Role), w.core.ID, "H800", "booking.not_your_team"},
			{loaded(w.member, w.member.Role), w.normal.ID, "", ""},
			{loaded(w.member, store.RoleViewer), w.normal.ID, "H800", "booking.not_your_team"}, // demoted meanwhile
		}
		var ctxs []context.Context
		var reqs []store.BookingRequest
		for i, c := range calls {
			req := store.BookingRequest{TaskID: c.task, CardTypeName: c.name, Count: 1, Start: w.at(float64(1 + i)), End: w.at(float64(2 + i))}
			if c.name == "" {
				req.CardTypeID = w.ct.ID
			}
			ctxs, reqs = append(ctxs, c.ctx), append(reqs, req)
		}
		res, errl, partyReads, _ := w.st.CreateBookingsAsBatch(ctxs, reqs, 3)
		for i, c := range calls {
			if c.key != "" {
				if e, ok := errs.As(errl[i]); !ok || e.Key != c.key {
					t.Errorf("request %d: %v, want %s", i, errl[i], c.key)
				}
				continue
			}
			if errl[i] != nil || res[i] == nil || res[i].Booking == nil {
				t.Errorf("request %d: %v, want a booking", i, errl[i])
				continue
			}
			if b := res[i].Booking; b.State != store.BookingConfirmed || b.TaskID != c.task || b.CardTypeID != w.ct.ID || b.UserID != w.member.ID {
				t.Errorf("request %d: booking %+v, want confirmed for task %d", i, b, c.task)
			}
		}
		// By name and by id before the lock; nothing for those that joined.
		if partyReads != 2 {
			t.Errorf("%d party queries, want 2", partyReads)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
	})
}

// TestBookingAnswersNameCardsOnce: the cards a booking is given are named
// (host, index) by a query after its batch's commit only when this process
// has not named them lately; a host renamed here, or on another replica
// that tells this one (Forget), gives the new name at the next booking.
func TestBookingAnswersNameCardsOnce(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := openTwoStores(t, dialect, clock.Now)
		w := buildBookingWorld(t, one, clock, 1) // one card: every booking gets it
		hosts, err := one.FindHosts(as(w.admin))
		if err != nil || len(hosts) != 1 {
			t.Fatalf("hosts %v, %v", hosts, err)
		}
		slot := 0.0
		book := func(st *store.Store) (string, int) {
			t.Helper()
			slot++
			req := store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(slot), End: w.at(slot + 1)}
			res, errl, _, namings := st.CreateBookingsAsBatch([]context.Context{as(w.member)}, []store.BookingRequest{req}, 1)
			if errl[0] != nil || res[0].View == nil || len(res[0].View.Assigned) != 1 {
				t.Fatalf("booking at +%v h: %+v, %v", slot, res[0], errl[0])
			}
			return res[0].View.Assigned[0].Label, namings
		}
		rename := func(name string) {
			t.Helper()
			if _, err := one.UpdateHost(as(w.admin), hosts[0].ID, store.HostInput{Name: name, Zone: hosts[0].Zone}); err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			st      *store.Store
			before  func()
			label   string
			namings int
		}{
			{one, nil, "gpu-01 #0", 1},
			{one, nil, "gpu-01 #0", 0}, // named lately
			{one, func() { rename("gpu-11") }, "gpu-11 #0", 1},
			{two, nil, "gpu-11 #0", 1},
			{two, nil, "gpu-11 #0", 0},
			{two, func() { rename("gpu-21"); two.Forget(store.ChangeInventory) }, "gpu-21 #0", 1},
		}
		for i, s := range steps {
			if s.before != nil {
				s.before()
			}
			label, namings := book(s.st)
			if label != s.label || namings != s.namings {
				t.Errorf("step %d: card named %q by %d queries, want %q by %d", i, label, namings, s.label, s.namings)
			}
		}
	})
}
