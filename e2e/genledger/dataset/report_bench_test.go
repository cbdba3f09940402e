package dataset_test

import (
	"context"
	"testing"
	"time"

	"cardhour/e2e/genledger/dataset"
	"cardhour/store"
	"cardhour/store/storetest"
)

// The store's report and ledger-pass benchmarks live here, beside the data
// set they need, so the generator stays out of the store package.

// BenchmarkMonthlyReport times the monthly report over a generated year (a
// tenth of the scale, so it sets up in seconds; e2e/genledger
// builds and times the full one). Run with -bench MonthlyReport; MariaDB
// too when CARDHOUR_TEST_MYSQL is set.
func BenchmarkMonthlyReport(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			from := time.Date(2025, 1, 1, 0, 0, 0, 0, shanghai)
			st, _ := generateLedgerData(b, d, dataset.Spec{Cards: 50, Bookings: 5000, Days: 365, From: from, Seed: 1, Zone: shanghai})
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.MonthlyReport(ctx, shanghai, "2025-10", store.ReportScope{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLedgerPassIdle is what the ticker pays every ten seconds when
// nothing finished: the bounded search for new rounds over a year of them.
func BenchmarkLedgerPassIdle(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			from := time.Date(2025, 1, 1, 0, 0, 0, 0, shanghai)
			st, _ := generateLedgerData(b, d, dataset.Spec{Cards: 50, Bookings: 5000, Days: 365, From: from, Seed: 1, Zone: shanghai})
			ctx := context.Background()
			since := time.Now().Add(-7 * 24 * time.Hour)
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.SettleLedger(ctx, store.LedgerPassOptions{Zone: shanghai, Since: since}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
