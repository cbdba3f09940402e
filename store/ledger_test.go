package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// lgShanghai is the portal's default zone: months split at its midnight,
// 16:00 UTC.
var lgShanghai = mustLedgerZone("Asia/Shanghai")

func mustLedgerZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// ledgerWorld is a team with a manager and two members, four cards of one
// type at ¥22 a card-hour, a generous quota, and a task of each priority.
// The clock starts on 2026-01-31 at 12:00 UTC (20:00 in Shanghai), four
// hours before February begins there.
type ledgerWorld struct {
	st                     *store.Store
	clock                  *storetest.Clock
	admin, manager         *store.User
	member, colleague      *store.User
	outsider               *store.User
	team, other            *store.Team
	ct                     *store.CardType
	cardByUUID             map[string]int64
	core, normal, backfill *store.Task
	outsiderTask           *store.Task
	loc                    *time.Location
	passOpts               store.LedgerPassOptions
}

func newLedgerWorld(t testing.TB, dialect string) *ledgerWorld {
	t.Helper()
	clock := storetest.NewClock(time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC))
	st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
	w := &ledgerWorld{st: st, clock: clock, cardByUUID: map[string]int64{}, loc: lgShanghai}
	w.passOpts = store.LedgerPassOptions{Zone: lgShanghai}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	w.admin = MustUser(t, st, "root", store.RoleAdmin)
	w.manager = MustUser(t, st, "boss", store.RoleManager)
	w.member = MustUser(t, st, "dev", store.RoleMember)
	w.colleague = MustUser(t, st, "dev2", store.RoleMember)
	w.outsider = MustUser(t, st, "stranger", store.RoleMember)
	w.team, w.other = MustTeam(t, st, "llm"), MustTeam(t, st, "vision")
	ctx := asLedgerUser(w.admin)
	for _, m := range []struct {
		team *store.Team
		user *store.User
		role string
	}{{w.team, w.manager, store.TeamRoleManager}, {w.team, w.member, store.TeamRoleMember}, {w.team, w.colleague, store.TeamRoleMember},
		{w.other, w.outsider, store.TeamRoleMember}} {
		_, err := st.SetMembership(ctx, m.team.ID, m.user.ID, m.role)
		must(err)
	}
	var err error
	w.ct, err = st.CreateCardType(ctx, h100("H800"))
	must(err)
	host, err := st.CreateHost(ctx, store.HostInput{Name: "gpu-01"})
	must(err)
	for i := 0; i < 4; i++ {
		c, err := st.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-1000000%d-aaaa-bbbb-cccc-%012d", i, i), GPUIndex: i, HostID: host.ID, CardTypeID: w.ct.ID})
		must(err)
		w.cardByUUID[c.UUID] = c.ID
	}
	mk := func(u *store.User, team *store.Team, name, prio string) *store.Task {
		task, err := st.CreateTask(asLedgerUser(u), store.TaskInput{TeamID: team.ID, Name: name, Priority: prio, EstimateCardHours: 10,
			DataReadiness: schedule.DataReady, VRAMGiB: 40, Precision: "bf16"})
		must(err)
		return task
	}
	w.core, w.normal, w.backfill = mk(w.member, w.team, "pretrain", schedule.Core), mk(w.member, w.team, "eval", schedule.Normal), mk(w.member, w.team, "sweep", schedule.Backfill)
	w.outsiderTask = mk(w.outsider, w.other, "detector", schedule.Normal)
	for _, team := range []*store.Team{w.team, w.other} {
		_, err = st.CreateQuota(ctx, store.QuotaInput{TeamID: team.ID, CardTypeID: w.ct.ID, CardHours: 1000,
			ValidFrom: clock.Now().Add(-24 * time.Hour), ExpiresAt: clock.Now().Add(60 * 24 * time.Hour)})
		must(err)
	}
	return w
}

func (w *ledgerWorld) at(h float64) time.Time {
	return time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC).Add(time.Duration(h * float64(time.Hour)))
}

// book books count cards for task from hour fromH to toH of the world's
// start (not of the clock's now).
func (w *ledgerWorld) book(t testing.TB, u *store.User, task *store.Task, count int, fromH, toH float64) *store.BookingResult {
	t.Helper()
	r, err := w.st.CreateBooking(asLedgerUser(u), store.BookingRequest{TaskID: task.ID, CardTypeID: w.ct.ID, Count: count, Start: w.at(fromH), End: w.at(toH)})
	if err != nil {
		t.Fatalf("book %d cards %v–%vh: %v", count, fromH, toH, err)
	}
	return r
}

// feed reports telemetry for the booking's cards from hour fromH to toH, a
// minute at a time, as the live fleet would save it: busy for busyShare of
// each minute and held-idle for idleShare of it.
func (w *ledgerWorld) feed(t testing.TB, r *store.BookingResult, fromH, toH, busyShare, idleShare float64) {
	t.Helper()
	var minutes []store.Rollup
	for m := w.at(fromH); m.Before(w.at(toH)); m = m.Add(time.Minute) {
		for _, u := range r.Cards {
			minutes = append(minutes, store.Rollup{CardID: w.cardByUUID[u], At: m, Samples: 60, UtilSum: 60 * 100 * busyShare, UtilSamples: 60,
				SampledSeconds: 60, BusySeconds: 60 * busyShare, HeldSeconds: 60, HeldIdleSeconds: 60 * idleShare, BookingID: r.Booking.ID})
		}
	}
	if err := w.st.SaveRollups(context.Background(), minutes, nil); err != nil {
		t.Fatal(err)
	}
}

// until moves the clock to hour h and lets the bookings and the ledger
// catch up, as the server's ticker does.
func (w *ledgerWorld) until(t testing.TB, h float64) store.LedgerPass {
	t.Helper()
	if d := w.at(h).Sub(w.clock.Now()); d > 0 {
		w.clock.Advance(d)
	}
	if _, err := w.st.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := w.st.SettleLedger(context.Background(), w.passOpts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *ledgerWorld) round(t testing.TB, bookingID int64) *store.LedgerRoundDetail {
	t.Helper()
	d, err := w.st.FindLedgerRound(asLedgerUser(w.member), w.loc, bookingID)
	if err != nil {
		t.Fatalf("round %d: %v", bookingID, err)
	}
	return d
}

const lgCardHour = 3600

func TestLedgerRoundOfAnEarlyReleaseCountsUpToTheRelease(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 2, 0, 3)
		w.feed(t, r, 0, 1.5, 0.75, 0.1)
		w.clock.Advance(90 * time.Minute)
		if _, err := w.st.ReleaseBooking(asLedgerUser(w.member), r.Booking.ID); err != nil {
			t.Fatal(err)
		}
		p := w.until(t, 1.5)
		if p.Added != 1 {
			t.Fatalf("pass %+v, want one round added", p)
		}
		got := w.round(t, r.Booking.ID)
		if got.State != store.BookingReleased || !got.EndAt.Equal(w.at(1.5)) || !got.PlannedEndAt.Equal(w.at(3)) {
			t.Errorf("round %s ended %v (planned %v), want released at 1.5 h of 3", got.State, got.EndAt, got.PlannedEndAt)
		}
		if got.BookedCardSeconds != 3*lgCardHour || got.CostFen != 6600 {
			t.Errorf("booked %d s costing %d fen, want 3 card-hours = 6600 fen at ¥22", got.BookedCardSeconds, got.CostFen)
		}
		if got.SampledCardSeconds != 3*lgCardHour || got.BusyCardSeconds != 8100 || got.HeldIdleCardSeconds != 1080 {
			t.Errorf("usage sampled %d busy %d held-idle %d, want 10800/8100/1080", got.SampledCardSeconds, got.BusyCardSeconds, got.HeldIdleCardSeconds)
		}
		if len(got.Months) != 1 || got.Months[0].Month != "2026-01" || got.Months[0].CostFen != 6600 {
			t.Errorf("months %+v, want all of it in January", got.Months)
		}
		if got.Settled {
			t.Error("a round that just ended is settled; late telemetry would be lost")
		}
		// An hour later nothing more is expected.
		w.clock.Advance(time.Hour)
		if p := w.until(t, 2.5); p.Settled != 1 || p.Added != 0 {
			t.Errorf("second pass %+v, want the round settled and nothing added", p)
		}
		if p := w.until(t, 2.6); p != (store.LedgerPass{}) {
			t.Errorf("idle pass %+v, want nothing to do", p)
		}
	})
}

func TestLedgerRoundOfAPreemptedBackfillEndsAtTheCut(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		bf := w.book(t, w.member, w.backfill, 4, 0, 6)
		w.feed(t, bf, 0, 2, 1, 0)
		w.clock.Advance(time.Hour)
		core := w.book(t, w.manager, w.core, 4, 2, 5)
		if len(core.Preempted) != 1 || core.Preempted[0] != bf.Booking.ID {
			t.Fatalf("preempted %v, want the backfill", core.Preempted)
		}
		w.until(t, 2)
		got := w.round(t, bf.Booking.ID)
		if got.State != store.BookingPreempted || !got.EndAt.Equal(w.at(2)) {
			t.Errorf("round %s ends %v, want preempted at 2 h", got.State, got.EndAt)
		}
		if got.BookedCardSeconds != 8*lgCardHour || got.CostFen != 8*2200 || got.BusyCardSeconds != 8*lgCardHour {
			t.Errorf("booked %d busy %d cost %d, want 8 card-hours, all busy, ¥176", got.BookedCardSeconds, got.BusyCardSeconds, got.CostFen)
		}
		// The core booking is not finished: no round yet.
		if _, err := w.st.FindLedgerRound(asLedgerUser(w.member), w.loc, core.Booking.ID); !errs.Is(err, errs.Conflict) {
			t.Errorf("round of a running booking: %v, want a conflict", err)
		}
	})
}

func TestLedgerRoundOfAnExtendedBookingKeepsItsPriceAndSplitsAtMidnightInShanghai(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		// 20:00–22:00 in Shanghai on 31 January, extended to 02:00 on 1
		// February: two hours in each month, at the price of the booking.
		r := w.book(t, w.member, w.normal, 2, 0, 2)
		if _, err := w.st.ExtendBooking(asLedgerUser(w.member), r.Booking.ID, w.at(6)); err != nil {
			t.Fatal(err)
		}
		up := h100("H800")
		up.PriceFen = 9900
		if _, err := w.st.UpdateCardType(asLedgerUser(w.admin), w.ct.ID, up); err != nil {
			t.Fatal(err)
		}
		w.feed(t, r, 0, 6, 0.5, 0.25)
		w.until(t, 6)
		got := w.round(t, r.Booking.ID)
		if got.State != store.BookingCompleted || got.BookedCardSeconds != 12*lgCardHour || got.PriceFen != 2200 || got.CostFen != 12*2200 {
			t.Errorf("round %s booked %d at %d fen = %d, want completed, 12 card-hours at the booking's 2200 = 26400",
				got.State, got.BookedCardSeconds, got.PriceFen, got.CostFen)
		}
		want := []store.RoundMonth{
			{Month: "2026-01", LedgerTotals: store.LedgerTotals{Rounds: 1, BookedCardSeconds: 8 * lgCardHour, CostFen: 8 * 2200,
				SampledCardSeconds: 8 * lgCardHour, BusyCardSeconds: 4 * lgCardHour, HeldIdleCardSeconds: 2 * lgCardHour}},
			{Month: "2026-02", LedgerTotals: store.LedgerTotals{Rounds: 1, BookedCardSeconds: 4 * lgCardHour, CostFen: 4 * 2200,
				SampledCardSeconds: 4 * lgCardHour, BusyCardSeconds: 2 * lgCardHour, HeldIdleCardSeconds: 1 * lgCardHour}},
		}
		if fmt.Sprint(got.Months) != fmt.Sprint(want) {
			t.Errorf("months\n got %+v\nwant %+v", got.Months, want)
		}
		// In UTC all of it is January.
		utc, err := w.st.FindLedgerRound(asLedgerUser(w.member), time.UTC, r.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(utc.Months) != 1 || utc.Months[0].BookedCardSeconds != 12*lgCardHour {
			t.Errorf("months in UTC %+v, want one", utc.Months)
		}
		jan, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-01", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		feb, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-02", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if jan.Totals.BookedCardSeconds+feb.Totals.BookedCardSeconds != got.BookedCardSeconds || jan.Totals.CostFen+feb.Totals.CostFen != got.CostFen {
			t.Errorf("January %+v and February %+v do not add up to the round", jan.Totals, feb.Totals)
		}
		if feb.Previous != jan.Totals {
			t.Errorf("February's previous month %+v, want January's %+v", feb.Previous, jan.Totals)
		}
	})
}

// An odd-length booking split at an odd boundary still adds up to the
// round's own seconds and fen: the months are cut cumulatively.
func TestLedgerMonthsAddUpToTheFenAtAnyBoundary(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 3, 3.99, 4+17.0/3600+0.37)
		w.until(t, 5)
		got := w.round(t, r.Booking.ID)
		var secs, fen int64
		for _, m := range got.Months {
			secs += m.BookedCardSeconds
			fen += m.CostFen
		}
		if len(got.Months) != 2 || secs != got.BookedCardSeconds || fen != got.CostFen {
			t.Errorf("months %+v sum to %d s / %d fen, round has %d s / %d fen", got.Months, secs, fen, got.BookedCardSeconds, got.CostFen)
		}
		view, err := w.st.FindBookingByID(context.Background(), r.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if view.CostFen != got.CostFen {
			t.Errorf("round cost %d, booking page says %d", got.CostFen, view.CostFen)
		}
	})
}

func TestLedgerPassIsIdempotentAndSkipsWhatDidNotRun(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		done := w.book(t, w.member, w.normal, 1, 0, 1)
		cancelled := w.book(t, w.member, w.normal, 1, 3, 4)
		if _, err := w.st.CancelBooking(asLedgerUser(w.member), cancelled.Booking.ID); err != nil {
			t.Fatal(err)
		}
		w.until(t, 1)
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := w.st.SettleLedger(context.Background(), store.LedgerPassOptions{Zone: lgShanghai}); err != nil && !errs.Is(err, errs.Conflict) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if n := storetest.MustCount(t, w.st, "ledger_rounds"); n != 1 {
			t.Errorf("%d rounds, want 1 (the cancelled booking held nothing)", n)
		}
		if n := storetest.MustCount(t, w.st, "ledger_round_months"); n != 1 {
			t.Errorf("%d month rows, want 1", n)
		}
		if _, err := w.st.FindLedgerRound(asLedgerUser(w.member), w.loc, cancelled.Booking.ID); !errs.Is(err, errs.Conflict) {
			t.Errorf("round of a cancelled booking: %v, want a conflict", err)
		}
		_ = done
	})
}

func TestLateTelemetryReopensASettledRound(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 1, 0, 1)
		w.until(t, 3)
		if got := w.round(t, r.Booking.ID); !got.Settled || got.SampledCardSeconds != 0 {
			t.Fatalf("round %+v, want settled without telemetry", got.LedgerRound)
		}
		w.feed(t, r, 0, 1, 1, 0) // an agent that was offline sends its backlog
		w.until(t, 3.1)
		if got := w.round(t, r.Booking.ID); got.BusyCardSeconds != lgCardHour {
			t.Errorf("busy %d after the backlog, want 3600", got.BusyCardSeconds)
		}
	})
}

func TestANewZoneGetsItsOwnMonths(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		w.book(t, w.member, w.normal, 1, 3, 5)
		w.until(t, 5)
		w.until(t, 7) // settled: only a recut writes it again
		p, err := w.st.SettleLedger(context.Background(), store.LedgerPassOptions{Zone: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if p.Recut != 1 {
			t.Errorf("pass in UTC %+v, want the round cut into UTC months", p)
		}
		rep, err := w.st.MonthlyReport(context.Background(), time.UTC, "2026-01", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Totals.BookedCardSeconds != 2*lgCardHour {
			t.Errorf("January in UTC: %+v, want the whole round", rep.Totals)
		}
	})
}

// The same history on SQLite and MariaDB gives the same reports, to the
// second and to the fen.
func TestLedgerReportsAgreeAcrossDialects(t *testing.T) {
	got := map[string]string{}
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		a := w.book(t, w.member, w.normal, 2, 0, 3)
		b := w.book(t, w.colleague, w.backfill, 2, 0, 7)
		w.feed(t, a, 0, 2.25, 0.61, 0.13)
		w.feed(t, b, 0, 3, 0.2, 0.7)
		w.clock.Advance(2*time.Hour + 15*time.Minute + 7*time.Second)
		if _, err := w.st.ReleaseBooking(asLedgerUser(w.member), a.Booking.ID); err != nil {
			t.Fatal(err)
		}
		w.clock.Advance(45 * time.Minute)
		c := w.book(t, w.manager, w.core, 4, 3, 9)
		if len(c.Preempted) == 0 {
			t.Fatal("the core booking preempted nothing")
		}
		w.feed(t, c, 3, 9, 0.9, 0)
		w.until(t, 10)
		q := 3.0
		if _, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, a.Booking.ID, store.OutputInput{Quantity: &q, Unit: "epochs"}); err != nil {
			t.Fatal(err)
		}
		q2 := 0.83
		if _, err := w.st.RecordOutput(asLedgerUser(w.manager), w.loc, c.Booking.ID, store.OutputInput{Quantity: &q2, Unit: "eval acc"}); err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, m := range []string{"2026-01", "2026-02"} {
			rep, err := w.st.MonthlyReport(context.Background(), lgShanghai, m, store.ReportScope{})
			if err != nil {
				t.Fatal(err)
			}
			// Ids and names are the same on both; times as UTC strings.
			for i := range rep.Entries {
				rep.Entries[i].RecordedAt = time.Time{}
			}
			out = append(out, rep)
		}
		y, err := w.st.YearlyBaseline(context.Background(), lgShanghai, 2026, store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y)
		js, _ := json.Marshal(out)
		got[d] = string(js)
		if rep := out[0].(*store.MonthlyReport); rep.Totals.CostFen == 0 || len(rep.Entries) != 1 {
			t.Errorf("January: %+v, entries %d", rep.Totals, len(rep.Entries))
		}
	})
	if len(got) == 2 && got[store.SQLite] != got[store.MySQL] {
		t.Errorf("the dialects disagree:\nsqlite %s\nmysql  %s", got[store.SQLite], got[store.MySQL])
	}
}

// asUser is a context acting as u.
func asLedgerUser(u *store.User) context.Context {
	return store.WithActor(context.Background(), store.Actor{UserID: u.ID, Username: u.Username})
}

// Booking hours are kept as long as the hour rollups, and pruned with them.
func TestBookingHoursArePrunedWithTheHourRollups(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 1, 0, 2)
		w.feed(t, r, 0, 2, 1, 0)
		hours, err := w.st.FindBookingHours(context.Background(), r.Booking.ID)
		if err != nil || len(hours) != 2 || hours[0].SampledSeconds != lgCardHour || hours[1].BusySeconds != lgCardHour {
			t.Fatalf("booking hours %+v (%v), want two full hours", hours, err)
		}
		if _, err := w.st.PruneRollups(context.Background(), w.at(3), w.at(1)); err != nil {
			t.Fatal(err)
		}
		if hours, _ := w.st.FindBookingHours(context.Background(), r.Booking.ID); len(hours) != 1 || !hours[0].HourAt.Equal(w.at(1)) {
			t.Errorf("after pruning before 1 h: %+v", hours)
		}
	})
}
