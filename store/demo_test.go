package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// The demo fleet loads on both dialects (after EnsureAdmin, as the command
// does it). Its exact contents belong to demo.go; this only checks that each
// kind of record is there and that a demo user can log in.
func TestSeedDemo(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := st.EnsureAdmin(ctx, "admin-password"); err != nil {
			t.Fatal(err)
		}
		if err := st.SeedDemo(ctx, time.UTC); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"card_types", "hosts", "cards", "images", "teams", "users", "memberships",
			"ledger_rounds", "ledger_outputs", "telemetry_booking_hours"} {
			if n := storetest.MustCount(t, st, table); n == 0 {
				t.Errorf("demo left %s empty", table)
			}
		}
		// The demo's past never holds a card twice, nor do its live bookings.
		storetest.AssertNoDoubleBooking(t, st)
		if _, err := st.Authenticate(ctx, "wangfang", store.DemoPassword); err != nil {
			t.Errorf("demo user cannot log in: %v", err)
		}
		if _, err := st.Authenticate(ctx, "admin", store.DemoPassword); err == nil {
			t.Error("the demo set admin's password")
		}
		// Each demo person runs GPU processes as their login name.
		if u, err := st.FindUserByUsername(ctx, "lihua"); err != nil || !slices.Equal(u.OSAccounts, []string{"lihua"}) {
			t.Errorf("demo user lihua: %+v %v", u, err)
		}
		accounts, err := st.TeamOSAccounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var llm []string
		for _, names := range accounts {
			if slices.Contains(names, "lihua") {
				llm = names
			}
		}
		if !slices.Equal(llm, []string{"lihua", "wangfang"}) {
			t.Errorf("the LLM team's OS accounts are %v, want lihua and wangfang (all teams: %v)", llm, accounts)
		}
		assertAuditTableHasNoSecrets(t, st)
		// The heatmap has a past: every active card reports each hour of the
		// last week, and the rounds' busy hours are in its rollups as in
		// their booking hours.
		now := time.Now().UTC().Truncate(time.Hour)
		hours, err := st.FindHourRollups(ctx, now.Add(-7*24*time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		var active int64
		if err := st.DB().QueryRow("SELECT COUNT(*) FROM cards WHERE status = 'active'").Scan(&active); err != nil {
			t.Fatal(err)
		}
		if int64(len(hours)) < active*7*24-active {
			t.Errorf("the last week has %d hour rollups, want one per active card (%d) and hour", len(hours), active)
		}
		var rollupBusy, bookedBusy float64
		if err := st.DB().QueryRow("SELECT COALESCE(SUM(busy_seconds), 0) FROM telemetry_hours").Scan(&rollupBusy); err != nil {
			t.Fatal(err)
		}
		if err := st.DB().QueryRow("SELECT COALESCE(SUM(busy_seconds), 0) FROM telemetry_booking_hours").Scan(&bookedBusy); err != nil {
			t.Fatal(err)
		}
		if bookedBusy == 0 || rollupBusy < bookedBusy*0.999 || rollupBusy > bookedBusy*1.001 {
			t.Errorf("busy card-seconds: %.0f in the hour rollups, %.0f in the rounds' booking hours; want the same", rollupBusy, bookedBusy)
		}
	})
}
