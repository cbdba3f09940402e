package store

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// CardHold is a card held by a booking at some instant: what the board
// shows on a tile and what the telemetry is charged to.
type CardHold struct {
	UUID      string    `gorm:"column:uuid"`
	CardID    int64     `gorm:"column:card_id"`
	BookingID int64     `gorm:"column:booking_id"`
	TeamID    int64     `gorm:"column:team_id"`
	TeamName  string    `gorm:"column:team_name"`
	TaskName  string    `gorm:"column:task_name"`
	UserID    int64     `gorm:"column:user_id"`
	Username  string    `gorm:"column:username"`
	StartAt   time.Time `gorm:"column:start_at"`
	EndAt     time.Time `gorm:"column:end_at"`
}

// FindCardHolds lists the cards a confirmed or active booking holds at at.
func (s *Store) FindCardHolds(ctx context.Context, at time.Time) ([]CardHold, error) {
	var out []CardHold
	at = at.UTC()
	err := s.read(ctx).Table("booking_cards bc").
		Select("c.uuid, bc.card_id, b.id AS booking_id, b.team_id, tm.name AS team_name, t.name AS task_name, "+
			"b.user_id, u.username, bc.start_at, bc.end_at").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Joins("JOIN cards c ON c.id = bc.card_id").
		Joins("JOIN teams tm ON tm.id = b.team_id").
		Joins("JOIN tasks t ON t.id = b.task_id").
		Joins("JOIN users u ON u.id = b.user_id").
		// b.start_at is implied by bc.start_at (a card is held within its
		// booking) but lets the (state, start_at) index skip the future
		// bookings: without it the board's refresh read every confirmed
		// booking ever made, every five seconds.
		Where("bc.held = ? AND bc.start_at <= ? AND bc.end_at > ? AND b.state IN ? AND b.start_at <= ?", true, at, at,
			[]string{BookingConfirmed, BookingActive}, at).
		Order("bc.card_id").Scan(&out).Error
	if err != nil {
		return nil, translate("store.FindCardHolds", err)
	}
	for i := range out {
		out[i].StartAt, out[i].EndAt = out[i].StartAt.UTC(), out[i].EndAt.UTC()
	}
	return out, nil
}

// PendingCard is a card that reported telemetry but is not in the
// inventory: it waits for an admin to register it with a card type.
type PendingCard struct {
	ID          int64     `json:"id"`
	UUID        string    `json:"uuid" gorm:"column:uuid"`
	HostName    string    `json:"host"`
	GPUIndex    int       `json:"index" gorm:"column:gpu_index"`
	GPUName     string    `json:"name" gorm:"column:gpu_name"`
	MemTotalMiB int64     `json:"mem_total_mib" gorm:"column:mem_total_mib"`
	FirstSeenAt time.Time `json:"first_seen_at"`
	LastSeenAt  time.Time `json:"last_seen_at"`
}

// TableName maps PendingCard to its table.
func (PendingCard) TableName() string { return "telemetry_pending_cards" }

// UnknownCard is what telemetry says about a card the inventory lacks.
type UnknownCard struct {
	UUID        string
	Host        string
	Index       int
	Name        string
	MemTotalMiB float64
	SeenAt      time.Time
}

// RecordUnknownCards parks cards the inventory lacks in the pending list
// (or refreshes them there) and creates their host when it is new, so an
// admin registering them only chooses the card type. Cards that are in the
// inventory by now are skipped. The changes are audited as made by the
// telemetry, not by a person.
func (s *Store) RecordUnknownCards(ctx context.Context, cards []UnknownCard) error {
	const op = "store.RecordUnknownCards"
	if len(cards) == 0 {
		return nil
	}
	ctx = WithActor(ctx, Actor{Username: "telemetry"})
	uuids := make([]string, 0, len(cards))
	for _, c := range cards {
		uuids = append(uuids, c.UUID)
	}
	var known []string
	if err := s.read(ctx).Model(&Card{}).Where("uuid IN ?", uuids).Pluck("uuid", &known).Error; err != nil {
		return translate(op, err)
	}
	isKnown := map[string]bool{}
	for _, u := range known {
		isKnown[strings.ToUpper(u)] = true
	}
	hosts := map[string]bool{}
	for _, c := range cards {
		if isKnown[strings.ToUpper(c.UUID)] || !cardUUIDPattern.MatchString(c.UUID) {
			continue
		}
		if c.Host != "" && !hosts[strings.ToLower(c.Host)] && hostNamePattern.MatchString(c.Host) {
			hosts[strings.ToLower(c.Host)] = true
			if _, err := s.FindHostByName(ctx, c.Host); errs.Is(err, errs.NotFound) {
				// Created by another process meanwhile is fine; a collision
				// that outlasted the retries is not.
				if _, err := s.CreateHost(ctx, HostInput{Name: c.Host}); err != nil && !hostNameTaken(err) {
					return err
				}
			} else if err != nil {
				return err
			}
		}
		seen := c.SeenAt.UTC()
		if seen.IsZero() {
			seen = s.now()
		}
		err := s.tx(ctx, op, func(tx *gorm.DB) error {
			var p PendingCard
			err := tx.Where("uuid = ?", c.UUID).First(&p).Error
			if err != nil && !errs.Is(translate(op, err), errs.NotFound) {
				return err
			}
			p.HostName, p.GPUIndex, p.GPUName = truncate(c.Host, 100), max(c.Index, 0), truncate(c.Name, 255)
			p.MemTotalMiB = int64(c.MemTotalMiB)
			p.LastSeenAt = seen
			if p.ID == 0 {
				p.UUID, p.FirstSeenAt = c.UUID, seen
				if err := tx.Create(&p).Error; err != nil {
					return err
				}
				return s.auditNoted(ctx, tx, "park", "pending_card", p.ID, auditMsg("audit.sum.parked", argText(p.UUID), argText(p.HostName)), nil, p)
			}
			return tx.Save(&p).Error
		})
		if err != nil && !isDuplicate(err) { // a concurrent insert of the same uuid is fine
			return err
		}
	}
	return nil
}

func hostNameTaken(err error) bool {
	e, ok := errs.As(err)
	return ok && e.Key == "host.name_taken"
}

// RegisterPendingCard moves a pending card into the inventory with the
// given card type, creating its host if needed. Admins only.
func (s *Store) RegisterPendingCard(ctx context.Context, id, cardTypeID int64) (*Card, error) {
	const op = "store.RegisterPendingCard"
	var p PendingCard
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		p = PendingCard{}
		if _, err := requireAdmin(ctx, tx, op); err != nil {
			return err
		}
		if err := tx.First(&p, id).Error; err != nil {
			return withKey(translate(op, err), "telemetry.pending_not_found")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	host, err := s.FindHostByName(ctx, p.HostName)
	if errs.Is(err, errs.NotFound) {
		host, err = s.CreateHost(ctx, HostInput{Name: p.HostName})
	}
	if err != nil {
		return nil, err
	}
	c, err := s.CreateCard(ctx, CardInput{UUID: p.UUID, GPUIndex: p.GPUIndex, HostID: host.ID, CardTypeID: cardTypeID, Status: CardActive})
	if err != nil {
		return nil, err
	}
	if err := s.read(ctx).Delete(&PendingCard{}, p.ID).Error; err != nil {
		return nil, translate(op, err)
	}
	return c, nil
}

// DeletePendingCard drops a card from the pending list (it returns if it
// keeps reporting). Admins only.
func (s *Store) DeletePendingCard(ctx context.Context, id int64) error {
	const op = "store.DeletePendingCard"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		if _, err := requireAdmin(ctx, tx, op); err != nil {
			return err
		}
		var p PendingCard
		if err := tx.First(&p, id).Error; err != nil {
			return withKey(translate(op, err), "telemetry.pending_not_found")
		}
		if err := tx.Delete(&p).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "delete", "pending_card", p.ID, p.UUID, p, nil)
	})
}

// Rollup is one card's minute or hour of telemetry, summed. Sums rather
// than averages, so that two partial rows of one period add up.
type Rollup struct {
	CardID          int64
	At              time.Time // start of the minute or hour, UTC
	Samples         int
	UtilSum         float64
	UtilSamples     int
	UtilMax         float64
	MemMaxMiB       float64
	MemTotalMiB     float64
	SampledSeconds  float64
	BusySeconds     float64
	FullSeconds     float64
	HeldSeconds     float64
	HeldIdleSeconds float64
	BookingID       int64 // minutes only: the booking that last held the card
}

// UtilAvg is the mean utilisation over the samples that reported one.
func (r Rollup) UtilAvg() float64 {
	if r.UtilSamples == 0 {
		return 0
	}
	return r.UtilSum / float64(r.UtilSamples)
}

// UsageDelta is telemetry to add to one booking's totals.
type UsageDelta struct {
	BookingID       int64
	SampledSeconds  float64
	BusySeconds     float64
	HeldIdleSeconds float64
}

// rollupCols are the summed columns of both rollup tables, in insert order.
var rollupCols = []string{"samples", "util_sum", "util_samples", "util_max", "mem_max_mib", "mem_total_mib",
	"sampled_seconds", "busy_seconds", "full_seconds", "held_seconds", "held_idle_seconds"}

// mergeExpr is how a column of an existing row takes in a new partial row:
// sums add, maxima take the larger, the total and the booking take the new.
func (s *Store) mergeExpr(col string) string {
	newVal := "excluded." + col
	if s.dialect == MySQL {
		newVal = "VALUES(" + col + ")"
	}
	switch col {
	case "util_max", "mem_max_mib":
		if s.dialect == MySQL {
			return col + " = GREATEST(" + col + ", " + newVal + ")"
		}
		return col + " = max(" + col + ", " + newVal + ")"
	case "mem_total_mib":
		return col + " = " + newVal
	case "booking_id":
		return col + " = COALESCE(" + newVal + ", " + col + ")"
	}
	return col + " = " + col + " + " + newVal
}

// upsertRollups writes the rows keep accepts (all when keep is nil) into
// table, adding to rows of the same card and period; keyCol is minute_at or
// hour_at, and each row's period is its At in UTC, to the minute. A save
// is 10,000 rows a minute with a fleet of 10,000 cards: the rows go out in
// statements of a bounded number of rows, each statement's text built once
// and reused, its arguments in one reused slice, straight to the
// connection (gorm's statement building allocated several times the rows'
// own size).
func (s *Store) upsertRollups(tx *gorm.DB, table, keyCol string, rows []Rollup, keep func(*Rollup) bool, withBooking bool) error {
	cols := append([]string{"card_id", keyCol}, rollupCols...)
	if withBooking {
		cols = append(cols, "booking_id")
	}
	chunk := s.upsertChunk(len(cols))
	var full string // the text of a statement of chunk rows
	text := func(n int) string {
		if n == chunk && full != "" {
			return full
		}
		var b strings.Builder
		b.Grow(len(table) + 16*len(cols) + n*(2*len(cols)+2) + 64*len(cols))
		b.WriteString("INSERT INTO ")
		b.WriteString(table)
		b.WriteString(" (")
		b.WriteString(strings.Join(cols, ", "))
		b.WriteString(") VALUES ")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j := range cols {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteByte('?')
			}
			b.WriteByte(')')
		}
		if s.dialect == MySQL {
			b.WriteString(" ON DUPLICATE KEY UPDATE ")
		} else {
			b.WriteString(" ON CONFLICT(card_id, " + keyCol + ") DO UPDATE SET ")
		}
		for j, c := range cols[2:] {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s.mergeExpr(c))
		}
		q := b.String()
		if n == chunk {
			full = q
		}
		return q
	}
	args := make([]any, 0, chunk*len(cols))
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		_, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context, text(n), args...)
		clear(args) // the boxed values go with the statement
		args, n = args[:0], 0
		return err
	}
	for i := range rows {
		r := &rows[i]
		if keep != nil && !keep(r) {
			continue
		}
		args = append(args, r.CardID, r.At.UTC().Truncate(time.Minute), r.Samples, r.UtilSum, r.UtilSamples, r.UtilMax, r.MemMaxMiB,
			r.MemTotalMiB, r.SampledSeconds, r.BusySeconds, r.FullSeconds, r.HeldSeconds, r.HeldIdleSeconds)
		if withBooking {
			var b any
			if r.BookingID != 0 {
				b = r.BookingID
			}
			args = append(args, b)
		}
		if n++; n == chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// existingCards returns which of the card ids are still in the inventory,
// sorted, asking in bounded IN lists.
func (s *Store) existingCards(tx *gorm.DB, ids []int64) ([]int64, error) {
	chunk := s.upsertChunk(1)
	exist := make([]int64, 0, len(ids))
	args := make([]any, 0, min(chunk, len(ids)))
	var q strings.Builder
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		q.Reset()
		q.WriteString("SELECT id FROM cards WHERE id IN (")
		args = args[:0]
		for i, id := range part {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('?')
			args = append(args, id)
		}
		q.WriteByte(')')
		rows, err := tx.Statement.ConnPool.QueryContext(tx.Statement.Context, q.String(), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			exist = append(exist, id)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	slices.Sort(exist)
	return exist, nil
}

// SaveRollups stores minute rollups, folds them into the hour rollups and
// adds the usage to each booking's totals, in one transaction. Rows of
// cards deleted meanwhile are dropped; rows for a period already stored are
// added to it. The minutes are read where they lie, never copied.
func (s *Store) SaveRollups(ctx context.Context, minutes []Rollup, usage []UsageDelta) error {
	const op = "store.SaveRollups"
	if len(minutes) == 0 && len(usage) == 0 {
		return nil
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		if len(minutes) > 0 {
			ids := make([]int64, len(minutes))
			for i := range minutes {
				ids[i] = minutes[i].CardID
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			alive, err := s.existingCards(tx, ids)
			if err != nil {
				return err
			}
			kept := func(m *Rollup) bool {
				_, ok := slices.BinarySearch(alive, m.CardID)
				return ok
			}
			type hourKey struct {
				card int64
				hour int64
			}
			// Hours in the order their first minute comes, indexed by key.
			hs := make([]Rollup, 0, len(alive)) // a save's minutes mostly lie in one hour
			at := make(map[hourKey]int, len(alive))
			for i := range minutes {
				m := &minutes[i]
				if !kept(m) {
					continue
				}
				hour := m.At.UTC().Truncate(time.Hour)
				k := hourKey{m.CardID, hour.Unix()}
				j, ok := at[k]
				if !ok {
					j = len(hs)
					at[k] = j
					hs = append(hs, Rollup{CardID: m.CardID, At: hour})
				}
				h := &hs[j]
				h.Samples += m.Samples
				h.UtilSum += m.UtilSum
				h.UtilSamples += m.UtilSamples
				h.UtilMax = max(h.UtilMax, m.UtilMax)
				h.MemMaxMiB = max(h.MemMaxMiB, m.MemMaxMiB)
				h.MemTotalMiB = m.MemTotalMiB
				h.SampledSeconds += m.SampledSeconds
				h.BusySeconds += m.BusySeconds
				h.FullSeconds += m.FullSeconds
				h.HeldSeconds += m.HeldSeconds
				h.HeldIdleSeconds += m.HeldIdleSeconds
			}
			if err := s.upsertRollups(tx, "telemetry_minutes", "minute_at", minutes, kept, true); err != nil {
				return err
			}
			if err := s.upsertRollups(tx, "telemetry_hours", "hour_at", hs, nil, false); err != nil {
				return err
			}
			if err := s.upsertBookingHours(tx, bookingHoursFromMinutes(minutes, kept)); err != nil {
				return err
			}
		}
		now := s.now()
		for _, u := range usage {
			if u.BookingID == 0 {
				continue
			}
			res := tx.Exec("UPDATE telemetry_booking_usage SET sampled_seconds = sampled_seconds + ?, busy_seconds = busy_seconds + ?, "+
				"held_idle_seconds = held_idle_seconds + ?, updated_at = ? WHERE booking_id = ?",
				u.SampledSeconds, u.BusySeconds, u.HeldIdleSeconds, now, u.BookingID)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				if err := tx.Exec("INSERT INTO telemetry_booking_usage (booking_id, sampled_seconds, busy_seconds, held_idle_seconds, updated_at) VALUES (?, ?, ?, ?, ?)",
					u.BookingID, u.SampledSeconds, u.BusySeconds, u.HeldIdleSeconds, now).Error; err != nil {
					return err
				}
			}
		}
		return nil
	})
}

type rollupRow struct {
	CardID          int64
	At              time.Time
	Samples         int
	UtilSum         float64
	UtilSamples     int
	UtilMax         float64
	MemMaxMiB       float64 `gorm:"column:mem_max_mib"`
	MemTotalMiB     float64 `gorm:"column:mem_total_mib"`
	SampledSeconds  float64
	BusySeconds     float64
	FullSeconds     float64
	HeldSeconds     float64
	HeldIdleSeconds float64
	BookingID       *int64
}

func (r rollupRow) rollup() Rollup {
	out := Rollup{CardID: r.CardID, At: r.At.UTC(), Samples: r.Samples, UtilSum: r.UtilSum, UtilSamples: r.UtilSamples,
		UtilMax: r.UtilMax, MemMaxMiB: r.MemMaxMiB, MemTotalMiB: r.MemTotalMiB, SampledSeconds: r.SampledSeconds,
		BusySeconds: r.BusySeconds, FullSeconds: r.FullSeconds, HeldSeconds: r.HeldSeconds, HeldIdleSeconds: r.HeldIdleSeconds}
	if r.BookingID != nil {
		out.BookingID = *r.BookingID
	}
	return out
}

// FindHourRollups returns the hour rollups of [from, to), by card and hour.
func (s *Store) FindHourRollups(ctx context.Context, from, to time.Time) ([]Rollup, error) {
	var rows []rollupRow
	err := s.read(ctx).Table("telemetry_hours").Select("card_id, hour_at AS at, "+strings.Join(rollupCols, ", ")).
		Where("hour_at >= ? AND hour_at < ?", from.UTC(), to.UTC()).Order("card_id, hour_at").Scan(&rows).Error
	if err != nil {
		return nil, translate("store.FindHourRollups", err)
	}
	out := make([]Rollup, len(rows))
	for i, r := range rows {
		out[i] = r.rollup()
	}
	return out, nil
}

// FindMinuteRollups returns one card's minute rollups of [from, to).
func (s *Store) FindMinuteRollups(ctx context.Context, cardID int64, from, to time.Time) ([]Rollup, error) {
	var rows []rollupRow
	err := s.read(ctx).Table("telemetry_minutes").Select("card_id, minute_at AS at, booking_id, "+strings.Join(rollupCols, ", ")).
		Where("card_id = ? AND minute_at >= ? AND minute_at < ?", cardID, from.UTC(), to.UTC()).Order("minute_at").Scan(&rows).Error
	if err != nil {
		return nil, translate("store.FindMinuteRollups", err)
	}
	out := make([]Rollup, len(rows))
	for i, r := range rows {
		out[i] = r.rollup()
	}
	return out, nil
}

// HeldIdleSecondsSince sums the held-but-idle card-seconds stored since t
// (the board's "today" figure after a restart).
func (s *Store) HeldIdleSecondsSince(ctx context.Context, t time.Time) (float64, error) {
	var sum *float64
	err := s.read(ctx).Table("telemetry_hours").Select("SUM(held_idle_seconds)").Where("hour_at >= ?", t.UTC().Truncate(time.Hour)).Scan(&sum).Error
	if err != nil {
		return 0, translate("store.HeldIdleSecondsSince", err)
	}
	if sum == nil {
		return 0, nil
	}
	return *sum, nil
}

// PruneRollups deletes minute rollups older than minutesBefore and hour
// rollups older than hoursBefore: raw samples are never stored, and the
// rollups are not kept forever either.
func (s *Store) PruneRollups(ctx context.Context, minutesBefore, hoursBefore time.Time) (int64, error) {
	const op = "store.PruneRollups"
	var n int64
	for _, p := range []struct {
		table, col string
		before     time.Time
	}{{"telemetry_minutes", "minute_at", minutesBefore}, {"telemetry_hours", "hour_at", hoursBefore},
		{"telemetry_booking_hours", "hour_at", hoursBefore}} {
		if p.before.IsZero() {
			continue
		}
		res := s.read(ctx).Exec("DELETE FROM "+p.table+" WHERE "+p.col+" < ?", p.before.UTC())
		if res.Error != nil {
			return n, translate(op, res.Error)
		}
		n += res.RowsAffected
	}
	return n, nil
}

// BookingUsage is what a booking did with its cards, as telemetry saw it:
// the card-hours booked, those that reported, and how many of those were
// busy, idle, or held-but-idle for longer than the threshold.
type BookingUsage struct {
	BookingID          int64      `json:"booking_id"`
	BookedCardSeconds  int64      `json:"booked_card_seconds"`  // the whole booking
	ElapsedCardSeconds int64      `json:"elapsed_card_seconds"` // of it, so far
	SampledSeconds     float64    `json:"sampled_card_seconds"` // reported by telemetry
	BusySeconds        float64    `json:"busy_card_seconds"`    // used
	IdleSeconds        float64    `json:"idle_card_seconds"`    // reported but quiet
	HeldIdleSeconds    float64    `json:"held_idle_card_seconds"`
	UpdatedAt          *time.Time `json:"updated_at"`
}

// UsedShare is the busy share of the reported card-time (0 when none).
func (u BookingUsage) UsedShare() float64 {
	if u.SampledSeconds <= 0 {
		return 0
	}
	return u.BusySeconds / u.SampledSeconds
}

// FindBookingUsage returns a booking's used and idle card-hours, for the
// booking's page.
func (s *Store) FindBookingUsage(ctx context.Context, bookingID int64) (*BookingUsage, error) {
	const op = "store.FindBookingUsage"
	var b Booking
	if err := s.read(ctx).First(&b, bookingID).Error; err != nil {
		return nil, withKey(translate(op, err), "booking.not_found")
	}
	out := &BookingUsage{BookingID: b.ID, BookedCardSeconds: b.BookedCardSeconds()}
	if b.State != BookingPending && !schedule.Withdrawn(b.State) {
		end := b.EndAt
		if b.EndedAt != nil && b.EndedAt.Before(end) {
			end = *b.EndedAt
		}
		if now := s.now(); now.Before(end) {
			end = now
		}
		out.ElapsedCardSeconds = schedule.CardSeconds(b.CardCount, b.StartAt, end)
	}
	var row []struct {
		SampledSeconds  float64
		BusySeconds     float64
		HeldIdleSeconds float64
		UpdatedAt       time.Time
	}
	if err := s.read(ctx).Table("telemetry_booking_usage").Where("booking_id = ?", bookingID).Scan(&row).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(row) == 1 {
		r := row[0]
		at := r.UpdatedAt.UTC()
		out.SampledSeconds, out.BusySeconds, out.HeldIdleSeconds, out.UpdatedAt = r.SampledSeconds, r.BusySeconds, r.HeldIdleSeconds, &at
		out.IdleSeconds = max(0, r.SampledSeconds-r.BusySeconds)
	}
	return out, nil
}

// Page size limits of FindPendingCardsPage.
const maxPendingPage = 500

// FindPendingCardsPage lists a page of the cards waiting for registration,
// newest first, with how many wait in all. limit is 1 to 500.
func (s *Store) FindPendingCardsPage(ctx context.Context, limit, offset int) ([]PendingCard, int64, error) {
	const op = "store.FindPendingCardsPage"
	v := errs.NewValidation(op)
	v.Check(limit >= 1 && limit <= maxPendingPage, "limit", "field.limit_range")
	v.Check(offset >= 0, "offset", "field.offset_range")
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := s.read(ctx).Model(&PendingCard{}).Count(&total).Error; err != nil {
		return nil, 0, translate(op, err)
	}
	var out []PendingCard
	if err := s.read(ctx).Order("first_seen_at DESC, id DESC").Limit(limit).Offset(offset).Find(&out).Error; err != nil {
		return nil, 0, translate(op, err)
	}
	return out, total, nil
}
