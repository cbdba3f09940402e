package store_test

import (
	"context"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// BenchmarkMonthlyReport times the monthly report over a generated year (a
// tenth of the scale, so it sets up in seconds; e2e/genledger
// builds and times the full one). Run with -bench MonthlyReport; MariaDB
// too when CARDHOUR_TEST_MYSQL is set.
func BenchmarkMonthlyReport(b *testing.B) {
	for _, d := range storetest.Dialects(b) {
		b.Run(d, func(b *testing.B) {
			from := time.Date(2025, 1, 1, 0, 0, 0, 0, lgShanghai)
			st, _ := generateLedgerData(b, d, store.DatasetSpec{Cards: 50, Bookings: 5000, Days: 365, From: from, Seed: 1, Zone: lgShanghai})
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.MonthlyReport(ctx, lgShanghai, "2025-10", store.ReportScope{}); err != nil {
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
			from := time.Date(2025, 1, 1, 0, 0, 0, 0, lgShanghai)
			st, _ := generateLedgerData(b, d, store.DatasetSpec{Cards: 50, Bookings: 5000, Days: 365, From: from, Seed: 1, Zone: lgShanghai})
			ctx := context.Background()
			since := time.Now().Add(-7 * 24 * time.Hour)
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.SettleLedger(ctx, store.LedgerPassOptions{Zone: lgShanghai, Since: since}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
