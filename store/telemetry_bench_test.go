package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// BenchmarkSaveRollups saves one minute of 10,000 cards' rollups (a tenth
// of them held by a booking), as the board's rollup loop does once a
// minute with a fleet of 10,000 cards reporting. bytes/op is what one save
// allocates: the replica's memory peak while it runs.
func BenchmarkSaveRollups(b *testing.B) {
	const cards = 10_000
	for _, dialect := range storetest.Dialects(b) {
		b.Run(dialect, func(b *testing.B) {
			w := newBookingWorld(b, dialect, 1)
			ctx := as(w.admin)
			ids := make([]int64, cards)
			var host *store.Host
			for i := range ids {
				if i%8 == 0 { // eight cards a host, as in e2e/loadboard
					var err error
					if host, err = w.st.CreateHost(ctx, store.HostInput{Name: fmt.Sprintf("gpu-bench-%04d", i/8), Zone: "bj"}); err != nil {
						b.Fatal(err)
					}
				}
				c, err := w.st.CreateCard(ctx, store.CardInput{UUID: benchUUID(i), GPUIndex: i % 8, HostID: host.ID, CardTypeID: w.ct.ID})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = c.ID
			}
			bk, err := w.book(b, w.member, w.normal, 1, 0, 4)
			if err != nil {
				b.Fatal(err)
			}
			minute := w.clock.Now().Truncate(time.Minute)
			rows := make([]store.Rollup, cards)
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				at := minute.Add(time.Duration(n) * time.Minute)
				for i, id := range ids {
					rows[i] = store.Rollup{CardID: id, At: at, Samples: 60, UtilSum: 3000, UtilSamples: 60, UtilMax: 90, MemMaxMiB: 40000,
						MemTotalMiB: 81559, SampledSeconds: 60, BusySeconds: 40, FullSeconds: 5}
					if i%10 == 0 {
						rows[i].BookingID, rows[i].HeldSeconds, rows[i].HeldIdleSeconds = bk.Booking.ID, 60, 20
					}
				}
				if err := w.st.SaveRollups(context.Background(), rows, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchUUID(i int) string { return fmt.Sprintf("GPU-bench000-0000-4000-8000-%012d", i) }
