package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/notify"
	"cardhour/store"
	"cardhour/store/storetest"
)

// openGalera opens a store on each node of the test cluster, on one fresh
// database, migrated through the first; it skips without a cluster.
func openGalera(t *testing.T, clock *storetest.Clock, params string) []*store.Store {
	t.Helper()
	dsns := storetest.GaleraDSNs(t)
	var sts []*store.Store
	for i, dsn := range dsns {
		st, err := store.Open(context.Background(), store.Options{Dialect: store.MySQL, DSN: dsn + params, Now: clock.Now})
		if err != nil {
			t.Fatalf("open node %d: %v", i+1, err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if i == 0 {
			if err := st.Migrate(context.Background()); err != nil {
				t.Fatalf("migrate on node 1: %v", err)
			}
		}
		sts = append(sts, st)
	}
	return sts
}

// TestGaleraBookingsAcrossNodes: 200 conflicting requests through stores
// on three nodes at once. Certification failures are retried inside the
// store, so the callers see only "no capacity", exactly as many bookings
// land as the slots hold, no card is booked twice, and every booking's id
// is its own row's though the nodes interleave their ids
// (innodb_autoinc_lock_mode 2, auto_increment_increment 3).
func TestGaleraBookingsAcrossNodes(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	sts := openGalera(t, clock, "")
	w := buildBookingWorld(t, sts[0], clock, 4)
	var mode int
	if err := sts[1].DB().QueryRow("SELECT @@innodb_autoinc_lock_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != 2 || sts[1].ConsecutiveIDs() {
		t.Fatalf("node 2: autoinc lock mode %d, consecutive ids trusted %v; want mode 2, not trusted", mode, sts[1].ConsecutiveIDs())
	}
	const cards, slots, requests = 4, 20, 200
	results := make([]*store.BookingResult, requests)
	errl := make([]error, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slot := float64(i%slots + 1)
			results[i], errl[i] = sts[i%len(sts)].CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID,
				CardTypeID: w.ct.ID, Count: 1, Start: w.at(slot), End: w.at(slot + 1)})
		}()
	}
	wg.Wait()
	ok := 0
	for i, err := range errl {
		if err != nil {
			if e, _ := errs.As(err); e == nil || e.Code != errs.Conflict || !strings.HasPrefix(e.Key, "booking.no_capacity") {
				t.Errorf("request %d (node %d): %v, want a booking or no capacity", i, i%len(sts)+1, err)
			}
			continue
		}
		ok++
		r := results[i]
		// Read on another node: with wsrep_sync_wait it has the row.
		got, err := sts[(i+1)%len(sts)].FindBookingByID(context.Background(), r.Booking.ID)
		if err != nil {
			t.Fatalf("request %d: booking %d: %v", i, r.Booking.ID, err)
		}
		if !got.StartAt.Equal(r.Booking.StartAt) || got.TaskID != r.Booking.TaskID || !slices.Equal(got.Cards, r.Cards) {
			t.Errorf("booking %d reads back as %v from %v on cards %v, want %v on %v", r.Booking.ID,
				got.StartAt, got.TaskID, got.Cards, r.Booking.StartAt, r.Cards)
		}
	}
	if ok != cards*slots {
		t.Errorf("%d bookings succeeded, want exactly %d", ok, cards*slots)
	}
	for _, st := range sts {
		storetest.AssertNoDoubleBooking(t, st)
	}
}

// TestGaleraReadAfterWrite: a booking made through node 1 is at once
// visible through nodes 2 and 3, which wait for the cluster before they
// read (wsrep_sync_wait, set at Open); a DSN's own setting is kept.
func TestGaleraReadAfterWrite(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	sts := openGalera(t, clock, "")
	w := buildBookingWorld(t, sts[0], clock, 2)
	for i, st := range sts {
		var wait int
		if err := st.DB().QueryRow("SELECT @@SESSION.wsrep_sync_wait").Scan(&wait); err != nil {
			t.Fatal(err)
		}
		if wait != 1 {
			t.Errorf("node %d: wsrep_sync_wait = %d, want 1", i+1, wait)
		}
	}
	for i := range 30 {
		slot := float64(i + 1)
		r := w.mustBook(t, w.member, w.normal, 1, slot, slot+1)
		for n, st := range sts[1:] {
			if _, err := st.FindBookingByID(context.Background(), r.Booking.ID); err != nil {
				t.Fatalf("booking %d made on node 1, read on node %d at once: %v", r.Booking.ID, n+2, err)
			}
		}
	}

	off := openGalera(t, clock, "&wsrep_sync_wait=0")
	var wait int
	if err := off[1].DB().QueryRow("SELECT @@SESSION.wsrep_sync_wait").Scan(&wait); err != nil {
		t.Fatal(err)
	}
	if wait != 0 {
		t.Errorf("DSN wsrep_sync_wait=0: session has %d", wait)
	}
}

// together runs fn once per node at the same moment and returns each
// node's error.
func together(nodes int, fn func(node int) error) []error {
	errl := make([]error, nodes)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errl[n] = fn(n)
		}()
	}
	close(start)
	wg.Wait()
	return errl
}

// countWhere is the count a COUNT(*) query answers through st.
func countWhere(t *testing.T, st *store.Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestGaleraCollidingWritesNeverBusy: writes other than bookings that
// change the same rows run at the same moment through the three nodes —
// one quota edited, one membership set, the booking tick, the reminder
// scan's marks, the outbox claim — and every call succeeds: the losers of
// certification run again inside the store instead of answering "busy".
// What they report counts each change once, whichever node made it and
// however many runs it took.
func TestGaleraCollidingWritesNeverBusy(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	sts := openGalera(t, clock, "")
	w := buildBookingWorld(t, sts[0], clock, 4)
	for _, st := range sts {
		st.SetDelivery(store.Delivery{Mail: true, Lang: "zh-CN", TZ: time.UTC})
	}
	for _, u := range []*store.User{w.manager, w.member} {
		if _, err := sts[0].UpdateUser(as(w.admin), u.ID, store.UserUpdate{Email: ptr(u.Username + "@example.com")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sts[0].CreateNotifyChannel(as(w.manager), store.NotifyChannelInput{TeamID: &w.team.ID, Kind: string(notify.DingTalk),
		Name: "llm robot", URL: "https://oapi.dingtalk.com/robot/send?access_token=abc", Enabled: true, RatePerMinute: 1000}); err != nil {
		t.Fatal(err)
	}
	// Two rounds of four one-card bookings: each round starts, is reminded
	// of its start and its end, and completes.
	for i := range 8 {
		from := 0.5 + float64(i/4)*2
		w.mustBook(t, w.member, w.normal, 1, from, from+1)
	}
	retriesBefore := int64(0)
	for _, st := range sts {
		retriesBefore += st.TxRetries()
	}

	noErrors := func(what string, round int, errl []error) {
		t.Helper()
		for n, err := range errl {
			if err != nil {
				t.Errorf("%s, round %d, node %d: %v", what, round, n+1, err)
			}
		}
	}
	var ticks []store.TickResult
	var told, claimed int
	var mu sync.Mutex
	// Half-hour steps through both rounds of bookings: each step's ticks
	// start or end some, each step's scans tell their reminders.
	for round := range 9 {
		clock.Advance(30 * time.Minute)
		now := clock.Now()

		q := w.quota
		noErrors("UpdateQuota", round, together(len(sts), func(n int) error {
			_, err := sts[n].UpdateQuota(as(w.admin), q.ID, store.QuotaInput{TeamID: q.TeamID, CardTypeID: q.CardTypeID,
				CardHours: float64(1000 + 10*round + n), ValidFrom: q.ValidFrom, ExpiresAt: q.ExpiresAt, Note: fmt.Sprintf("node %d", n+1)})
			return err
		}))

		u := MustUser(t, sts[0], fmt.Sprintf("joiner%d", round), store.RoleMember)
		roles := []string{store.TeamRoleMember, store.TeamRoleManager, store.TeamRoleViewer}
		noErrors("SetMembership", round, together(len(sts), func(n int) error {
			_, err := sts[n].SetMembership(as(w.admin), w.team.ID, u.ID, roles[n])
			return err
		}))
		if ms, err := sts[1].FindMemberships(context.Background(), store.MembershipFilter{TeamID: w.team.ID, UserID: u.ID}); err != nil || len(ms) != 1 {
			t.Errorf("round %d: memberships of %s: %v, %v; want one", round, u.Username, ms, err)
		}

		noErrors("Tick", round, together(len(sts), func(n int) error {
			r, err := sts[n].Tick(context.Background())
			mu.Lock()
			ticks = append(ticks, r)
			mu.Unlock()
			return err
		}))

		marks := countWhere(t, sts[0], "SELECT COUNT(*) FROM notify_marks")
		var toldNow int
		noErrors("ScanReminders", round, together(len(sts), func(n int) error {
			r, err := sts[n].ScanReminders(context.Background())
			mu.Lock()
			toldNow += r.Total()
			mu.Unlock()
			return err
		}))
		if added := countWhere(t, sts[0], "SELECT COUNT(*) FROM notify_marks") - marks; toldNow != added {
			t.Errorf("round %d: the scans report %d reminders told, %d marks were written", round, toldNow, added)
		}
		told += toldNow

		ids := map[int64]int{}
		noErrors("ClaimOutbox", round, together(len(sts), func(n int) error {
			rows, err := sts[n].ClaimOutbox(context.Background(), 500, time.Minute)
			mu.Lock()
			for _, r := range rows {
				ids[r.ID]++
			}
			claimed += len(rows)
			mu.Unlock()
			return err
		}))
		for id, k := range ids {
			if k != 1 {
				t.Errorf("round %d: notice %d claimed %d times", round, id, k)
			}
		}
		if leased := countWhere(t, sts[0], "SELECT COUNT(*) FROM notify_outbox WHERE lease_until > ?", now); leased != len(ids) {
			t.Errorf("round %d: %d notices claimed, %d leased", round, len(ids), leased)
		}
	}

	var tick store.TickResult
	for _, r := range ticks {
		tick.Activated, tick.Completed, tick.Expired = tick.Activated+r.Activated, tick.Completed+r.Completed, tick.Expired+r.Expired
		tick.BackToData, tick.NoShows = tick.BackToData+r.BackToData, tick.NoShows+r.NoShows
	}
	if tick.Activated != 8 || tick.Completed != 8 {
		t.Errorf("ticks report %+v, want 8 activated and 8 completed", tick)
	}
	transitions := countWhere(t, sts[0], "SELECT COUNT(*) FROM audit_log WHERE action = 'transition'")
	if sum := tick.Activated + tick.Completed + tick.Expired + tick.BackToData + tick.NoShows; sum != transitions {
		t.Errorf("ticks report %d changes (%+v), the audit log %d", sum, tick, transitions)
	}
	if told == 0 || claimed == 0 {
		t.Errorf("%d reminders told, %d notices claimed: the scans and claims wrote nothing to collide on", told, claimed)
	}
	for _, st := range sts {
		storetest.AssertNoDoubleBooking(t, st)
		if drift, err := st.QuotaLedgerDrift(context.Background()); err != nil || len(drift) > 0 {
			t.Errorf("quota totals: %v, %v", drift, err)
		}
	}
	var retries int64
	for _, st := range sts {
		retries += st.TxRetries()
	}
	t.Logf("%d transactions ran again after a collision; %d reminders told, %d notices claimed", retries-retriesBefore, told, claimed)
}

// TestGaleraMigrationsTakeTurns: three stores opened and migrated at the
// same moment on an empty database, one through each node, all succeed;
// the "migrate" lease (a row, certified across nodes, where GET_LOCK would
// be one node's) gives them turns that do not overlap, so one applies every
// migration, the others find none pending, and each version is recorded
// once.
func TestGaleraMigrationsTakeTurns(t *testing.T) {
	dsns := storetest.GaleraDSNs(t)
	type turn struct {
		node            int
		ask, begin, end time.Time
	}
	var mu sync.Mutex
	var turns []turn
	applied := make([]int, len(dsns))
	sts := make([]*store.Store, len(dsns))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errl := together(len(dsns), func(n int) error {
		st, err := store.Open(ctx, store.Options{Dialect: store.MySQL, DSN: dsns[n]})
		if err != nil {
			return err
		}
		sts[n] = st
		ask := time.Now()
		applied[n], err = st.MigrateInTurn(ctx, func(begin bool) {
			mu.Lock()
			defer mu.Unlock()
			if begin {
				turns = append(turns, turn{node: n, ask: ask, begin: time.Now()})
				return
			}
			for i := range turns {
				if turns[i].node == n {
					turns[i].end = time.Now()
				}
			}
		})
		return err
	})
	for n, st := range sts {
		if st != nil {
			t.Cleanup(func() { _ = st.Close() })
		}
		if errl[n] != nil {
			t.Errorf("node %d: open and migrate: %v", n+1, errl[n])
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	status, err := sts[0].MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := len(status)
	slices.Sort(applied)
	if want := append(make([]int, len(dsns)-1), all); !slices.Equal(applied, want) {
		t.Errorf("migrations applied per store %v, want %v: one store applies all %d, the others none", applied, want, all)
	}
	slices.SortFunc(turns, func(a, b turn) int { return a.begin.Compare(b.begin) })
	if len(turns) != len(dsns) {
		t.Fatalf("%d turns taken, want %d", len(turns), len(dsns))
	}
	base := turns[0].ask
	for _, tn := range turns {
		if tn.ask.Before(base) {
			base = tn.ask
		}
	}
	since := func(at time.Time) time.Duration { return at.Sub(base).Round(time.Millisecond) }
	waited := false
	for i, tn := range turns {
		t.Logf("node %d asked for its turn at %v, had it from %v to %v", tn.node+1, since(tn.ask), since(tn.begin), since(tn.end))
		if i == 0 {
			continue
		}
		if tn.begin.Before(turns[i-1].end) {
			t.Errorf("node %d's turn began at %v, before node %d's ended at %v", tn.node+1, tn.begin.Format(time.StampMicro),
				turns[i-1].node+1, turns[i-1].end.Format(time.StampMicro))
		}
		waited = waited || tn.ask.Before(turns[i-1].end)
	}
	if !waited {
		t.Errorf("no store asked for its turn while another had it: the stores did not migrate together")
	}

	for n, st := range sts {
		if current, err := st.MigrationsCurrent(ctx); err != nil || !current {
			t.Errorf("node %d: schema current %v, %v", n+1, current, err)
		}
		// Every version recorded once, seen through each node.
		var rows, versions int
		if err := st.DB().QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0").
			Scan(&rows, &versions); err != nil {
			t.Fatal(err)
		}
		if rows != all || versions != all {
			t.Errorf("node %d: goose_db_version has %d rows of %d versions, want each of the %d once", n+1, rows, versions, all)
		}
	}
	// The same tables on every node, and those of the last migrations among them.
	var tables []string
	for n, st := range sts {
		var got []string
		rs, err := st.DB().QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name")
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var name string
			if err := rs.Scan(&name); err != nil {
				t.Fatal(err)
			}
			got = append(got, name)
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			tables = got
			for _, want := range []string{"bookings", "leases", "book_changes", "quota_requests", "notify_outbox"} {
				if !slices.Contains(got, want) {
					t.Errorf("no table %s after migrating: %v", want, got)
				}
			}
		} else if !slices.Equal(got, tables) {
			t.Errorf("node %d has tables %v, node 1 %v", n+1, got, tables)
		}
	}
	if leases, err := sts[0].FindLeases(ctx); err != nil || len(leases) != 0 {
		t.Errorf("leases after migrating: %v, %v; want the migrate lease given back", leases, err)
	}
}
