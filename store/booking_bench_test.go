package store_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// BenchmarkCreateBooking books one card at a time on 16 cards from 64
// goroutines, the shape of e2e/loadbooking without HTTP: windows of 5–30
// minutes over 14 days, a tenth of them in one contested hour. ns/op is
// the store's share of a booking's cost; conflicts count as operations.
func BenchmarkCreateBooking(b *testing.B) {
	for _, dialect := range storetest.Dialects(b) {
		b.Run(dialect, func(b *testing.B) {
			w := newBookingWorld(b, dialect, 16)
			// The world's quota is small; the load needs room.
			if _, err := w.st.UpdateQuota(as(w.admin), w.quota.ID, store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID,
				CardHours: 10_000_000, ValidFrom: w.quota.ValidFrom, ExpiresAt: w.clock.Now().Add(60 * 24 * time.Hour)}); err != nil {
				b.Fatal(err)
			}
			origin := w.clock.Now().Truncate(time.Hour).Add(time.Hour)
			hot := origin.Add(24*time.Hour + 10*time.Hour)
			const step = 5 * time.Minute
			var seed, booked, conflicts atomic.Int64
			// As the server calls it: the actor's role comes with the request.
			ctx := store.WithActor(context.Background(), store.Actor{UserID: w.member.ID, Username: w.member.Username, Role: w.member.Role})
			b.SetParallelism(32) // 64 goroutines on this 2-core machine
			cpu0 := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(uint64(seed.Add(1)), 7))
				for pb.Next() {
					length := step * time.Duration(1+rng.IntN(6))
					start := origin.Add(step * time.Duration(rng.IntN(14*24*12-12)))
					if rng.Float64() < 0.1 {
						start = hot.Add(15 * time.Minute * time.Duration(rng.IntN(4)))
					}
					_, err := w.st.CreateBooking(ctx, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: start, End: start.Add(length)})
					switch {
					case err == nil:
						booked.Add(1)
					case errs.Is(err, errs.Conflict):
						conflicts.Add(1)
					default:
						b.Fatal(err)
					}
				}
			})
			// CPU time per operation is steadier than wall time on a shared
			// machine: it is what one booking costs this process.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(booked.Load())/b.Elapsed().Seconds(), "bookings/s")
			b.ReportMetric(float64(conflicts.Load())/float64(b.N), "conflict-share")
		})
	}
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
