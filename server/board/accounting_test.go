package board_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
	"cardhour/telemetry"
)

// TestUsageNeverExceedsTheTimeThatPassed pushes samples with gaps, before
// and after a booking's start, and holds the stored rollups to the
// invariant on both databases: for every card and minute, sampled ≤ 60 s
// and busy + held idle ≤ sampled; for the booking, in every minute, held
// ≤ the part of the minute after it began, and in all, sampled ≤ its
// cards × the time since it began; its usage share never above 100 %.
func TestUsageNeverExceedsTheTimeThatPassed(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		o := servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}}
		if dialect == store.MySQL {
			dsn, _ := storetest.MySQLDSN(t)
			o.Vars["CARDHOUR_DB"] = "mysql://" + dsn
		}
		f := servertest.NewFleet(t, o, 2, 1000)
		ctx := context.Background()
		b := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", f.Token(store.RoleMember),
			fmt.Sprintf(`{"task_id":%d,"card_type":"H800","count":2,"start":%q,"end":%q}`, f.Normal.ID,
				time.Now().UTC().Format(time.RFC3339), time.Now().Add(2*time.Hour).UTC().Format(time.RFC3339))), http.StatusCreated)
		// The booking began ten minutes ago (set in the rows, as time would).
		now := time.Now().UTC().Truncate(time.Second)
		start := now.Add(-10 * time.Minute)
		for _, q := range []string{"UPDATE bookings SET start_at = ?, state = 'active' WHERE id = ?", "UPDATE booking_cards SET start_at = ? WHERE booking_id = ?"} {
			if _, err := f.E.St.DB().Exec(q, start, b.ID); err != nil {
				t.Fatal(err)
			}
		}
		area := f.E.Srv.Board()
		if err := area.RefreshNow(ctx); err != nil {
			t.Fatal(err)
		}
		// Every second until 5 s before the start, silent for 20 s across it,
		// every 2 s for a minute, silent 4 minutes, every second to now.
		var ats []time.Time
		for at := start.Add(-3 * time.Minute); at.Before(start.Add(-5 * time.Second)); at = at.Add(time.Second) {
			ats = append(ats, at)
		}
		for at := start.Add(15 * time.Second); at.Before(start.Add(75 * time.Second)); at = at.Add(2 * time.Second) {
			ats = append(ats, at)
		}
		for at := start.Add(315 * time.Second); !at.After(now); at = at.Add(time.Second) {
			ats = append(ats, at)
		}
		var batch telemetry.Batch
		batch.Host = "gpu-01"
		for i, at := range ats {
			util := 90.0
			if i%7 == 0 {
				util = 3
			}
			for _, cd := range f.Cards {
				batch.Samples = append(batch.Samples, telemetry.Sample{UUID: cd.UUID, Index: cd.GPUIndex, At: at,
					UtilPct: &util, MemUsedMiB: ptr(30000), MemTotalMiB: ptr(81559)})
			}
		}
		r := f.C.APICall(http.MethodPost, telemetry.SamplesPath, f.Token(store.RoleAdmin), mustJSON(t, batch))
		if r.StatusCode != http.StatusOK {
			t.Fatalf("push: %d %s", r.StatusCode, r)
		}
		if err := area.SaveRollupsNow(ctx); err != nil {
			t.Fatal(err)
		}
		rows, err := f.E.St.DB().Query("SELECT card_id, minute_at, sampled_seconds, busy_seconds, held_seconds, held_idle_seconds FROM telemetry_minutes")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var card int64
			var minute time.Time
			var sampled, busy, held, heldIdle float64
			if err := rows.Scan(&card, &minute, &sampled, &busy, &held, &heldIdle); err != nil {
				t.Fatal(err)
			}
			n++
			after := math.Max(0, math.Min(60, minute.Add(time.Minute).Sub(start).Seconds()))
			switch {
			case sampled > 60+1e-6:
				t.Errorf("card %d minute %s: sampled %.1f s", card, minute.Format("15:04"), sampled)
			case busy+heldIdle > sampled+1e-6:
				t.Errorf("card %d minute %s: busy %.1f + held idle %.1f > sampled %.1f", card, minute.Format("15:04"), busy, heldIdle, sampled)
			case held > after+1e-6:
				t.Errorf("card %d minute %s: held %.1f s, but the booking ran %.0f s of it", card, minute.Format("15:04"), held, after)
			}
		}
		if n == 0 {
			t.Fatal("no minute rollups were written")
		}
		u := servertest.Decode[store.BookingUsage](t, f.Call(http.MethodGet, fmt.Sprintf("/api/v1/bookings/%d/usage", b.ID),
			f.Token(store.RoleMember), ""), http.StatusOK)
		elapsed := 2 * now.Sub(start).Seconds()
		if u.SampledSeconds <= 0 || u.SampledSeconds > elapsed+1e-6 || u.BusySeconds+u.HeldIdleSeconds > u.SampledSeconds+1e-6 ||
			u.UsedShare() > 1 || u.SampledSeconds > float64(u.ElapsedCardSeconds)+1e-6 {
			t.Errorf("booking usage %+v; %.0f card-seconds have passed since it began", u, elapsed)
		}
	})
}

func ptr(v float64) *float64 { return &v }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
