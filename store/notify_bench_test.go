package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// BenchmarkScanReminders runs the reminder scan over a portal of 10,000
// quotas and 50,000 bookings (issue 13: under 1 s on MariaDB). steady is
// the scan every minute finds when everything due was already told: it
// must tell nothing, and its cost is the queries that find the candidates
// and their marks. first is the scan that finds all of it due and untold
// (the told notices are cleared before each run, outside the timer):
// notices/op says how much it told.
func BenchmarkScanReminders(b *testing.B) {
	for _, dialect := range storetest.Dialects(b) {
		b.Run(dialect, func(b *testing.B) {
			clock := storetest.NewClock(reminderNow)
			st := storetest.MustOpenWith(b, dialect, store.Options{Now: clock.Now})
			st.SetDelivery(store.Delivery{Mail: true, Lang: "zh-CN", TZ: time.UTC})
			shape := mustReminderWorld(b, st)
			ctx := context.Background()
			b.Run("first", func(b *testing.B) {
				var told int
				var r0 store.ScanResult
				for b.Loop() {
					b.StopTimer()
					mustForgetTold(b, st)
					b.StartTimer()
					r, err := st.ScanReminders(ctx)
					if err != nil {
						b.Fatal(err)
					}
					told, r0 = r.Total(), r
					if told == 0 {
						b.Fatal("the first scan told nothing")
					}
				}
				b.Logf("%s; the first scan told %+v", shape, r0)
				b.ReportMetric(float64(told), "notices/op")
			})
			b.Run("steady", func(b *testing.B) {
				if _, err := st.ScanReminders(ctx); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					r, err := st.ScanReminders(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if r.Total() != 0 {
						b.Fatalf("a scan after everything was told told %+v again", r)
					}
				}
			})
		})
	}
}

// reminderNow is the benchmark's clock: 10:00 UTC, after the managers'
// 09:00 digests.
var reminderNow = time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)

// The portal the scan runs over.
const (
	remTeams          = 250
	remManagers       = 2 // per team
	remMembers        = 6 // per team
	remTasks          = 8 // per team, the first two core
	remCardTypes      = 8
	remHosts          = 64
	remCardsPerHost   = 8
	remQuotas         = 10_000
	remBookings       = 50_000
	remOutputShare    = 0.5 // of ended rounds that have their output recorded
	remQuotaLifetime  = 90 * 24 * time.Hour
	remBookingHorizon = 14 * 24 * time.Hour // bookings start up to this far ahead
	remBookingHistory = 60 * 24 * time.Hour // and this far back
)

// mustReminderWorld fills st through plain multi-row INSERTs (the store's
// own calls would take minutes for 50,000 bookings): 512 cards with
// yesterday's hourly rollups, 250 teams of 2
// managers and 6 members (all with mail; each team a webhook), 8 tasks per
// team, 10,000 quotas of 90 days expiring between 300 days ago and 150
// days ahead (a tenth of those in force 80–95 % used, a twentieth more),
// and 50,000 bookings starting between 60 days ago and 14 days ahead,
// 1–12 hours long, in the state their times give them; every ended
// booking has its ledger round, half of them an output. used_card_seconds
// is set, not summed from the bookings: the scan only reads it.
func mustReminderWorld(tb testing.TB, st *store.Store) string {
	tb.Helper()
	ctx := context.Background()
	now := reminderNow
	rng := rand.New(rand.NewPCG(13, 13))
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	ins := func(table string, cols string, rows [][]any) {
		tb.Helper()
		mustInsertRows(tb, tx, table, cols, rows)
	}
	const idBase = 1000
	var rows [][]any
	for t := range remTeams {
		rows = append(rows, []any{idBase + t, fmt.Sprintf("team-%03d", t), now, now})
	}
	ins("teams", "id, name, created_at, updated_at", rows)

	perTeam := remManagers + remMembers
	userID := func(team, k int) int { return idBase + team*perTeam + k }
	rows = rows[:0]
	var members [][]any
	for t := range remTeams {
		for k := range perTeam {
			role := store.RoleMember
			if k < remManagers {
				role = store.RoleManager
			}
			name := fmt.Sprintf("u%03d-%d", t, k)
			rows = append(rows, []any{userID(t, k), name, name + "@example.com", "x", role, now, now, now})
			teamRole := store.TeamRoleMember
			if k < remManagers {
				teamRole = store.TeamRoleManager
			}
			members = append(members, []any{idBase + t*perTeam + k, idBase + t, userID(t, k), teamRole, now})
		}
	}
	ins("users", "id, username, email, password_hash, role, password_changed_at, created_at, updated_at", rows)
	ins("memberships", "id, team_id, user_id, role, created_at", members)

	rows = rows[:0]
	for c := range remCardTypes {
		rows = append(rows, []any{idBase + c, fmt.Sprintf("GPU-%d", c), 80, 1200, now, now})
	}
	ins("card_types", "id, name, vram_gib, price_fen, created_at, updated_at", rows)

	// The fleet and yesterday's hourly rollups, which the digests read.
	rows = rows[:0]
	for h := range remHosts {
		rows = append(rows, []any{idBase + h, fmt.Sprintf("gpu-%03d", h), now, now})
	}
	ins("hosts", "id, name, created_at, updated_at", rows)
	rows = rows[:0]
	var hours [][]any
	yesterday := now.Truncate(24 * time.Hour).Add(-24 * time.Hour)
	for c := range remHosts * remCardsPerHost {
		h := c / remCardsPerHost
		rows = append(rows, []any{idBase + c, fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", c), c % remCardsPerHost, idBase + h,
			idBase + h%remCardTypes, store.CardActive, now, now})
		for hr := range 24 {
			busy := rng.Float64() * 3600
			hours = append(hours, []any{idBase + c, yesterday.Add(time.Duration(hr) * time.Hour), 120, 3600.0, busy, rng.Float64() * 600})
		}
	}
	ins("cards", "id, uuid, gpu_index, host_id, card_type_id, status, created_at, updated_at", rows)
	ins("telemetry_hours", "card_id, hour_at, samples, sampled_seconds, busy_seconds, full_seconds", hours)

	rows = rows[:0]
	taskID := func(team, k int) int { return idBase + team*remTasks + k }
	for t := range remTeams {
		for k := range remTasks {
			prio := "normal"
			if k < 2 {
				prio = "core"
			}
			author := userID(t, remManagers+k%remMembers)
			rows = append(rows, []any{taskID(t, k), idBase + t, fmt.Sprintf("task-%d", k), prio, 100 * 3600, "ready", author, now, now})
		}
	}
	ins("tasks", "id, team_id, name, priority, estimate_card_seconds, data_readiness, created_by, created_at, updated_at", rows)

	rows = rows[:0]
	inForce, expiring, low := 0, 0, 0
	for q := range remQuotas {
		team := q % remTeams
		exp := now.Add(-300*24*time.Hour + time.Duration(rng.Int64N(int64(450*24*time.Hour)))).Truncate(time.Second)
		from := exp.Add(-remQuotaLifetime)
		granted := int64(1000 * 3600)
		share := rng.Float64() * 0.8
		switch p := rng.Float64(); {
		case p < 0.05:
			share = 0.95 + rng.Float64()*0.05
		case p < 0.15:
			share = 0.80 + rng.Float64()*0.15
		}
		if !from.After(now) && exp.After(now) {
			inForce++
			if share >= 0.8 {
				low++
			}
			if exp.Sub(now) <= 30*24*time.Hour {
				expiring++
			}
		}
		rows = append(rows, []any{idBase + q, idBase + team, idBase + q%remCardTypes, granted, int64(float64(granted) * share), from, exp, now, now})
	}
	ins("quotas", "id, team_id, card_type_id, card_seconds, used_card_seconds, valid_from, expires_at, created_at, updated_at", rows)

	rows = rows[:0]
	var rounds, outputs [][]any
	starts, ends, toRecord := 0, 0, 0
	span := remBookingHistory + remBookingHorizon
	for i := range remBookings {
		task := i % (remTeams * remTasks)
		team := task / remTasks
		user := userID(team, remManagers+rng.IntN(remMembers))
		start := now.Add(-remBookingHistory + time.Duration(rng.Int64N(int64(span)))).Truncate(5 * time.Minute)
		end := start.Add(time.Duration(1+rng.IntN(12)) * time.Hour)
		cards := 1 + rng.IntN(8)
		var state string
		var endedAt, confirmedAt any
		switch {
		case !end.After(now):
			state, endedAt, confirmedAt = "completed", end, start
			if rng.Float64() < 0.1 {
				state, endedAt = "released", start.Add(end.Sub(start)/2)
			}
		case !start.After(now):
			state, confirmedAt = "active", start
			if end.Sub(now) <= 30*time.Minute {
				ends++
			}
		default:
			state, confirmedAt = "confirmed", now.Add(-time.Hour)
			if rng.Float64() < 0.1 {
				state, confirmedAt = "pending", nil
			}
			if state == "confirmed" && start.Sub(now) <= 15*time.Minute {
				starts++
			}
			if state == "confirmed" && start.Sub(now) > 15*time.Minute && rng.Float64() < 0.05 {
				state = "cancelled"
			}
		}
		id := idBase + i
		ct := idBase + rng.IntN(remCardTypes)
		secs := int64(cards) * int64(end.Sub(start)/time.Second)
		rows = append(rows, []any{id, idBase + task, idBase + team, user, ct, cards, start, end, state, "advance", "normal", 1200,
			start.Add(-24 * time.Hour), confirmedAt, endedAt, start.Add(-24 * time.Hour), now})
		if state == "completed" || state == "released" {
			e := endedAt.(time.Time)
			rounds = append(rounds, []any{id, idBase + task, idBase + team, user, ct, cards, state, start, e, end, 1200, secs, secs / 3600 * 1200, e, e})
			if rng.Float64() < remOutputShare {
				outputs = append(outputs, []any{id, 1.0, "ckpt", user, e})
			} else if d := now.Sub(e); d >= 24*time.Hour && d < 7*24*time.Hour {
				toRecord++
			}
		}
	}
	ins("bookings", "id, task_id, team_id, user_id, card_type_id, card_count, start_at, end_at, state, kind, priority, price_fen, "+
		"submitted_at, confirmed_at, ended_at, created_at, updated_at", rows)
	ins("ledger_rounds", "booking_id, task_id, team_id, user_id, card_type_id, card_count, state, start_at, end_at, planned_end_at, "+
		"price_fen, booked_card_seconds, cost_fen, created_at, updated_at", rounds)
	ins("ledger_outputs", "booking_id, quantity, unit, created_by, created_at", outputs)

	rows = rows[:0]
	for t := range remTeams {
		rows = append(rows, []any{idBase + t, idBase + t, "webhook", "hook", "http://127.0.0.1:9/hooks/cardhour", 20, 1, now, now})
	}
	ins("notify_channels", "id, team_id, kind, name, url, rate_per_minute, enabled, created_at, updated_at", rows)
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%d quotas (%d in force, %d in their 30-day window, %d ≥80%% used), %d bookings (%d start within 15 min, %d end within 30 min), "+
		"%d rounds (%d without output ended 1–7 days ago), %d managers, %d cards",
		remQuotas, inForce, expiring, low, remBookings, starts, ends, len(rounds), toRecord, remTeams*remManagers, remHosts*remCardsPerHost)
}

// mustInsertRows inserts rows into table a few hundred to a statement.
func mustInsertRows(tb testing.TB, tx *sql.Tx, table, cols string, rows [][]any) {
	tb.Helper()
	n := strings.Count(cols, ",") + 1
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	for i := 0; i < len(rows); i += 500 {
		batch := rows[i:min(i+500, len(rows))]
		args := make([]any, 0, len(batch)*n)
		for _, r := range batch {
			if len(r) != n {
				tb.Fatalf("%s: row of %d values for %d columns", table, len(r), n)
			}
			args = append(args, r...)
		}
		q := "INSERT INTO " + table + " (" + cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", len(batch)), ", ")
		if _, err := tx.Exec(q, args...); err != nil {
			tb.Fatalf("insert into %s: %v", table, err)
		}
	}
}

// mustForgetTold deletes every told reminder — marks, bells and outbox —
// so that the next scan finds all of it due again.
func mustForgetTold(tb testing.TB, st *store.Store) {
	tb.Helper()
	for _, table := range []string{"notify_outbox", "notifications", "notify_marks"} {
		if _, err := st.DB().Exec("DELETE FROM " + table); err != nil {
			tb.Fatal(err)
		}
	}
}
