package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// seedDemoHistory gives the demo a past: finished rounds of the demo tasks
// over the last six weeks — run to the end, released early, preempted —
// with the busy and held-idle hours telemetry would have recorded, task
// kinds and recorded outputs, so the ledger and the reports have something
// to show on a fresh portal. The bookings are written directly (no request
// may start in the past), one card each at a time, on cards and hours the
// live demo bookings never use; the quota totals move as for any booking.
// Months are cut in loc, the zone the portal shows.
func (s *Store) seedDemoHistory(ctx context.Context, tasks []*Task, typeIDs []int64, users map[string]*User, admin *User, loc *time.Location) error {
	const op = "store.seedDemoHistory"
	now := s.now()
	day := 24 * time.Hour
	// Rounds end before now-1h: the live demo bookings start at now or later.
	base := now.Truncate(time.Hour).Add(-42 * day)
	type round struct {
		user        string
		task, ctype int
		count       int
		startDay    int // days after base
		startHour   int
		hours       int
		endedAfter  int // hours; 0 = ran to the end
		state       string
		busy        float64 // busy share of the held time
		quantity    float64
		unit, note  string
	}
	rounds := []round{
		{"lihua", 0, 0, 8, 0, 9, 24, 0, BookingCompleted, 0.91, 1, "epoch", "续训第1轮，loss 2.31"},
		{"lihua", 0, 0, 8, 6, 9, 24, 0, BookingCompleted, 0.88, 1, "epoch", "续训第2轮，loss 2.12"},
		{"lihua", 0, 0, 8, 20, 9, 36, 20, BookingReleased, 0.93, 1.5, "epoch", "提前收敛，早释放"},
		{"lihua", 1, 0, 4, 12, 14, 8, 0, BookingCompleted, 0.62, 3, "epoch", "SFT v1"},
		{"wangfang", 2, 2, 2, 3, 20, 12, 5, BookingPreempted, 0.74, 18, "trial", "被核心任务抢占"},
		{"wangfang", 2, 2, 2, 15, 20, 12, 0, BookingCompleted, 0.35, 40, "trial", "数据读取慢，空转多"},
		{"zhangwei", 3, 2, 2, 30, 9, 16, 0, BookingCompleted, 0.82, 0.71, "mAP", "v5 基线"},
		{"zhangwei", 3, 2, 2, 36, 9, 10, 0, BookingCompleted, 0.86, 0.74, "mAP", "v5 加数据"},
		{"liuyang", 5, 1, 2, 24, 10, 6, 0, BookingCompleted, 0.79, 1200, "sample", "评测集回归 11 月"},
		{"liuyang", 5, 1, 2, 38, 10, 6, 3, BookingReleased, 0.81, 600, "sample", "只跑了一半子集"},
		{"liuyang", 6, 3, 2, 33, 22, 4, 0, BookingCompleted, 0.28, 12, "M tokens", "压测，等数据时空转"},
	}
	kinds := map[int]string{0: TaskKindPretrain, 1: TaskKindFinetune, 2: TaskKindOther, 3: TaskKindFinetune, 5: TaskKindEval, 6: TaskKindInference}
	type made struct {
		id int64
		r  round
	}
	var ids []made
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		ids = nil
		for _, r := range rounds {
			var ct CardType
			if err := s.lockCardType(tx, typeIDs[r.ctype], &ct); err != nil {
				return err
			}
			noteBookChanged(tx, ct.ID)
			var cards []int64
			if err := tx.Model(&Card{}).Where("card_type_id = ? AND status = ?", ct.ID, CardActive).Order("id").
				Limit(r.count).Pluck("id", &cards).Error; err != nil {
				return err
			}
			if len(cards) < r.count {
				return fmt.Errorf("demo history: %d cards of %s, want %d", len(cards), ct.Name, r.count)
			}
			start := base.Add(time.Duration(r.startDay)*day + time.Duration(r.startHour)*time.Hour)
			end := start.Add(time.Duration(r.hours) * time.Hour)
			actual := end
			if r.endedAfter > 0 {
				actual = start.Add(time.Duration(r.endedAfter) * time.Hour)
			}
			task := tasks[r.task]
			confirmed := start.Add(-day)
			// Confirmed a day ahead, then ended as the round did: the
			// transitions a real booking makes.
			b := &Booking{TaskID: task.ID, TeamID: task.TeamID, UserID: users[r.user].ID, CardTypeID: ct.ID, CardCount: r.count,
				StartAt: start, EndAt: end, State: BookingConfirmed, Kind: KindAdvance, Priority: task.Priority, PriceFen: ct.PriceFen,
				SubmittedAt: confirmed, ConfirmedAt: &confirmed, CreatedAt: confirmed, UpdatedAt: confirmed}
			if err := s.saveBooking(tx, nil, b); err != nil {
				return err
			}
			before := *b
			b.State, b.EndedAt, b.UpdatedAt = r.state, &actual, actual
			if r.state == BookingPreempted {
				b.NoteKey = NotePreempted
			}
			if err := s.saveBooking(tx, &before, b); err != nil {
				return err
			}
			for _, c := range cards {
				if err := tx.Create(&bookingCard{BookingID: b.ID, CardID: c, CardTypeID: ct.ID, StartAt: start, EndAt: actual, Held: true}).Error; err != nil {
					return err
				}
			}
			// What telemetry would have recorded: the held card-seconds of
			// each hour, split into busy and held-idle.
			var hours []BookingHour
			var sampled, busy float64
			for h := start.Truncate(time.Hour); h.Before(actual); h = h.Add(time.Hour) {
				from, to := h, h.Add(time.Hour)
				if start.After(from) {
					from = start
				}
				if actual.Before(to) {
					to = actual
				}
				held := to.Sub(from).Seconds() * float64(r.count)
				if held <= 0 {
					continue
				}
				hours = append(hours, BookingHour{BookingID: b.ID, HourAt: h, SampledSeconds: held, BusySeconds: held * r.busy, HeldIdleSeconds: held * (1 - r.busy)})
				sampled, busy = sampled+held, busy+held*r.busy
			}
			if err := s.upsertBookingHours(tx, hours); err != nil {
				return err
			}
			if err := tx.Exec("INSERT INTO telemetry_booking_usage (booking_id, sampled_seconds, busy_seconds, held_idle_seconds, updated_at) VALUES (?, ?, ?, ?, ?)",
				b.ID, sampled, busy, sampled-busy, actual).Error; err != nil {
				return err
			}
			ids = append(ids, made{b.ID, r})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("demo history: %w", err)
	}
	asUser := func(u *User) context.Context { return WithActor(ctx, Actor{UserID: u.ID, Username: u.Username}) }
	for i, k := range kinds {
		if err := s.SetTaskKind(asUser(admin), tasks[i].ID, k); err != nil {
			return fmt.Errorf("demo task kind: %w", err)
		}
	}
	if err := s.seedDemoRollups(ctx, base, now.Truncate(time.Hour)); err != nil {
		return fmt.Errorf("demo heatmap: %w", err)
	}
	if loc == nil {
		loc = time.UTC
	}
	if _, err := s.SettleLedger(ctx, LedgerPassOptions{Zone: loc}); err != nil {
		return fmt.Errorf("demo ledger: %w", err)
	}
	for _, m := range ids {
		q := m.r.quantity
		if _, err := s.RecordOutput(asUser(users[m.r.user]), loc, m.id, OutputInput{Quantity: &q, Unit: m.r.unit, Note: m.r.note}); err != nil {
			return fmt.Errorf("demo output: %w", err)
		}
	}
	return nil
}

// seedDemoRollups writes the hour rollups telemetry would have left for the
// demo's past, from base to the hour before end: every active card
// reporting each hour, busy and held-idle as the history's rounds were
// (their booking usage), quiet otherwise — so the heatmap of a fresh portal
// shows full weeks, and its held-idle hours agree with the ledger's.
func (s *Store) seedDemoRollups(ctx context.Context, base, end time.Time) error {
	var cards []struct {
		ID      int64
		VRAMGiB int
	}
	if err := s.db.WithContext(ctx).Table("cards c").Select("c.id, t.vram_gib").Joins("JOIN card_types t ON t.id = c.card_type_id").
		Where("c.status = ?", CardActive).Order("c.id").Scan(&cards).Error; err != nil {
		return err
	}
	var held []struct {
		CardID         int64
		StartAt, EndAt time.Time
		SampledSeconds float64
		BusySeconds    float64
	}
	if err := s.db.WithContext(ctx).Table("booking_cards bc").
		Select("bc.card_id, bc.start_at, bc.end_at, u.sampled_seconds, u.busy_seconds").
		Joins("JOIN telemetry_booking_usage u ON u.booking_id = bc.booking_id").
		Where("bc.held = ? AND bc.end_at <= ?", true, end).Scan(&held).Error; err != nil {
		return err
	}
	type span struct {
		from, to time.Time
		busy     float64 // share of the held time
	}
	byCard := map[int64][]span{}
	for _, h := range held {
		if h.SampledSeconds > 0 {
			byCard[h.CardID] = append(byCard[h.CardID], span{h.StartAt.UTC(), h.EndAt.UTC(), h.BusySeconds / h.SampledSeconds})
		}
	}
	var rows []Rollup
	for _, c := range cards {
		total := float64(c.VRAMGiB) * 1024
		for h := base; h.Before(end); h = h.Add(time.Hour) {
			r := Rollup{CardID: c.ID, At: h, Samples: 3600, UtilSamples: 3600, SampledSeconds: 3600, MemTotalMiB: total}
			for _, sp := range byCard[c.ID] {
				from, to := laterOf(sp.from, h), earlierOf(sp.to, h.Add(time.Hour))
				if d := to.Sub(from).Seconds(); d > 0 {
					r.HeldSeconds += d
					r.BusySeconds += d * sp.busy
					r.HeldIdleSeconds += d * (1 - sp.busy)
				}
			}
			// Busy seconds at about 88 %, the rest of the hour at 2 %.
			r.UtilSum = r.BusySeconds*88 + (3600-r.BusySeconds)*2
			r.UtilMax, r.MemMaxMiB = 4, total*0.02
			if r.BusySeconds > 0 {
				r.UtilMax, r.MemMaxMiB = 97, total*0.7
			}
			rows = append(rows, r)
		}
	}
	return s.tx(ctx, "store.seedDemoRollups", func(tx *gorm.DB) error {
		return s.upsertRollups(tx, "telemetry_hours", "hour_at", rows, nil, false)
	})
}
