package dataset_test

import (
	"context"
	"math"
	"testing"
	"time"

	"cardhour/e2e/genledger/dataset"
	"cardhour/store"
	"cardhour/store/storetest"
)

var shanghai = mustZone("Asia/Shanghai")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// generateLedgerData builds a small synthetic data set in a fresh store.
func generateLedgerData(tb testing.TB, dialect string, spec dataset.Spec) (*store.Store, *dataset.Stats) {
	tb.Helper()
	st := storetest.MustOpen(tb, dialect)
	if _, err := st.EnsureAdmin(context.Background(), "generator-admin"); err != nil {
		tb.Fatal(err)
	}
	stats, err := dataset.Generate(context.Background(), st, spec)
	if err != nil {
		tb.Fatal(err)
	}
	return st, stats
}

func TestGeneratedDataSetIsConsistent(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		from := time.Date(2025, 1, 1, 0, 0, 0, 0, shanghai)
		st, stats := generateLedgerData(t, d, dataset.Spec{Cards: 12, Bookings: 150, Days: 60, From: from, Teams: 3, TasksPerTeam: 6, Seed: 7, Zone: shanghai})
		if stats.Bookings != 150 || stats.HourRows != 12*60*24 || stats.Rounds == 0 || stats.Outputs == 0 {
			t.Fatalf("stats %+v", stats)
		}
		for table, want := range map[string]int{"bookings": stats.Bookings, "telemetry_hours": stats.HourRows,
			"telemetry_booking_hours": stats.BookingHourRows, "ledger_rounds": stats.Rounds, "ledger_outputs": stats.Outputs} {
			if n := storetest.MustCount(t, st, table); n != int64(want) {
				t.Errorf("%s has %d rows, want %d", table, n, want)
			}
		}
		// No card is held by two overlapping bookings.
		storetest.AssertNoDoubleBooking(t, st)
		// The card rollups and the booking hours tell the same story.
		var cardBusy, bookingBusy float64
		if err := st.DB().QueryRow("SELECT SUM(busy_seconds) FROM telemetry_hours").Scan(&cardBusy); err != nil {
			t.Fatal(err)
		}
		if err := st.DB().QueryRow("SELECT SUM(busy_seconds) FROM telemetry_booking_hours").Scan(&bookingBusy); err != nil {
			t.Fatal(err)
		}
		if cardBusy <= 0 || math.Abs(cardBusy-bookingBusy) > 1 {
			t.Errorf("busy seconds: cards %v, bookings %v", cardBusy, bookingBusy)
		}
		rep, err := st.MonthlyReport(context.Background(), shanghai, "2025-01", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Empty || len(rep.Teams) != 3 || len(rep.Entries) == 0 || len(rep.Quotas) == 0 {
			t.Errorf("January: empty %v, teams %d, entries %d, quotas %d", rep.Empty, len(rep.Teams), len(rep.Entries), len(rep.Quotas))
		}
		if u, ok := rep.Totals.Utilisation(); !ok || u < 0.3 || u > 1 {
			t.Errorf("utilisation %v", u)
		}
	})
}
