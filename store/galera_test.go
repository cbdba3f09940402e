package store_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
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
