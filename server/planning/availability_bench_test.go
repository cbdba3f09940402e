package planning_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
)

// BenchmarkAvailability measures the availability view for 20 card types ×
// 14 days: the computation (store.FindAvailability) and the render, as the
// JSON API and as the HTML page. The target is a median ≤ 50 ms.
//
//	go test -run '^$' -bench BenchmarkAvailability -count 5 ./server/planning/
func BenchmarkAvailability(b *testing.B) {
	e := newEnv(b, servertest.Options{})
	ctx := e.AdminCtx()
	st := e.St
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	team, err := st.CreateTeam(ctx, store.TeamInput{Name: "bench"})
	must(err)
	memberID := e.Users[store.RoleMember].ID
	_, err = st.SetMembership(ctx, team.ID, memberID, store.TeamRoleMember)
	must(err)
	host, err := st.CreateHost(ctx, store.HostInput{Name: "bench-01"})
	must(err)
	member := store.WithActor(context.Background(), store.Actor{UserID: memberID, Username: "t-member"})
	task, err := st.CreateTask(member, store.TaskInput{TeamID: team.ID, Name: "bench", Priority: "normal", EstimateCardHours: 1e5, DataReadiness: "ready"})
	must(err)

	const types, cardsPerType, bookingsPerType = 20, 8, 150
	now := time.Now().UTC()
	rng := rand.New(rand.NewPCG(7, 11))
	booked := 0
	for t := 0; t < types; t++ {
		ct, err := st.CreateCardType(ctx, store.CardTypeInput{Name: fmt.Sprintf("B%02d", t), VRAMGiB: 24 + 8*t, TFLOPSBF16: 100 + float64(t), PriceFen: int64(200 + 50*t)})
		must(err)
		for i := 0; i < cardsPerType; i++ {
			_, err := st.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-B%02d%02d000-0000-0000-0000-000000000000", t, i), GPUIndex: t*cardsPerType + i, HostID: host.ID, CardTypeID: ct.ID})
			must(err)
		}
		_, err = st.CreateQuota(ctx, store.QuotaInput{TeamID: team.ID, CardTypeID: ct.ID, CardHours: 1e6,
			ValidFrom: now.Add(-time.Hour), ExpiresAt: now.Add(30 * 24 * time.Hour)})
		must(err)
		for i := 0; i < bookingsPerType; i++ {
			start := now.Add(time.Hour + time.Duration(rng.IntN(13*24*4))*15*time.Minute)
			_, err := st.CreateBooking(member, store.BookingRequest{TaskID: task.ID, CardTypeID: ct.ID, Count: 1 + rng.IntN(3),
				Start: start, End: start.Add(time.Duration(1+rng.IntN(8)) * time.Hour)})
			if err == nil {
				booked++
			}
		}
	}
	if booked < types*bookingsPerType/2 {
		b.Fatalf("only %d bookings placed", booked)
	}
	b.Logf("%d card types × %d cards, %d bookings", types, cardsPerType, booked)

	session := e.Session(store.RoleViewer)
	// The machine is shared: besides wall time per request, report the
	// process's CPU time per request, which other load disturbs less.
	run := func(b *testing.B, path string, header func(*http.Request)) {
		cpu0 := cpuTime(b)
		for b.Loop() {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			header(req)
			rec := httptest.NewRecorder()
			e.Srv.Handler().ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s: %d: %.300s", path, rec.Code, rec.Body)
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
	b.Run("api", func(b *testing.B) {
		run(b, "/api/v1/availability?hours=336", func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+e.Users[store.RoleViewer].Token)
		})
	})
	if e.HasRoute(http.MethodGet, "/availability") {
		b.Run("page", func(b *testing.B) {
			run(b, "/availability", func(r *http.Request) {
				r.AddCookie(&http.Cookie{Name: "cardhour_session", Value: session})
			})
		})
	}
}

// cpuTime is the user and system time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
