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

// FinishedStates are the booking states that end a round of work and so
// yield a ledger entry. A booking cancelled before it began held nothing.
var FinishedStates = []string{BookingCompleted, BookingReleased, BookingPreempted, BookingNoShow}

// LedgerRound is one finished booking in the ledger ("记真实账"): what it
// booked and cost at the price of the day it was made, and what telemetry
// saw its cards do.
type LedgerRound struct {
	BookingID           int64     `json:"booking_id" gorm:"primaryKey;autoIncrement:false"`
	TaskID              int64     `json:"task_id"`
	TeamID              int64     `json:"team_id"`
	UserID              int64     `json:"user_id"`
	CardTypeID          int64     `json:"card_type_id"`
	CardCount           int       `json:"count"`
	State               string    `json:"state"`
	StartAt             time.Time `json:"start"`
	EndAt               time.Time `json:"end"`         // when it really ended: early release or preemption cut
	PlannedEndAt        time.Time `json:"planned_end"` // the window's end, extensions included
	PriceFen            int64     `json:"price_fen"`   // per card-hour, when booked
	BookedCardSeconds   int64     `json:"booked_card_seconds"`
	CostFen             int64     `json:"cost_fen"`
	SampledCardSeconds  int64     `json:"sampled_card_seconds"` // held time telemetry saw
	BusyCardSeconds     int64     `json:"used_card_seconds"`
	HeldIdleCardSeconds int64     `json:"held_idle_card_seconds"`
	Settled             bool      `json:"settled"` // no more telemetry expected
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// TableName maps LedgerRound to its table.
func (LedgerRound) TableName() string { return "ledger_rounds" }

// Totals are the round's figures as totals.
func (r LedgerRound) Totals() LedgerTotals {
	return LedgerTotals{Rounds: 1, BookedCardSeconds: r.BookedCardSeconds, SampledCardSeconds: r.SampledCardSeconds,
		BusyCardSeconds: r.BusyCardSeconds, HeldIdleCardSeconds: r.HeldIdleCardSeconds, CostFen: r.CostFen}
}

// LedgerTotals sum rounds, or their shares of a month.
type LedgerTotals struct {
	Rounds              int   `json:"rounds"`
	BookedCardSeconds   int64 `json:"booked_card_seconds"`
	SampledCardSeconds  int64 `json:"sampled_card_seconds"`
	BusyCardSeconds     int64 `json:"used_card_seconds"`
	HeldIdleCardSeconds int64 `json:"held_idle_card_seconds"`
	CostFen             int64 `json:"cost_fen"`
}

// Add adds o to t.
func (t *LedgerTotals) Add(o LedgerTotals) {
	t.Rounds += o.Rounds
	t.BookedCardSeconds += o.BookedCardSeconds
	t.SampledCardSeconds += o.SampledCardSeconds
	t.BusyCardSeconds += o.BusyCardSeconds
	t.HeldIdleCardSeconds += o.HeldIdleCardSeconds
	t.CostFen += o.CostFen
}

// Measured tells whether telemetry saw any of the booked time.
func (t LedgerTotals) Measured() bool { return t.SampledCardSeconds > 0 }

// Utilisation is the busy share of the held time telemetry saw, 0–1; ok is
// false when it saw none, so "no data" never reads as "idle".
func (t LedgerTotals) Utilisation() (share float64, ok bool) {
	if t.SampledCardSeconds <= 0 {
		return 0, false
	}
	return float64(t.BusyCardSeconds) / float64(t.SampledCardSeconds), true
}

// IdleCardSeconds is the held time telemetry saw the cards not busy.
func (t LedgerTotals) IdleCardSeconds() int64 { return max(0, t.SampledCardSeconds-t.BusyCardSeconds) }

// ledgerRoundMonth is a round's share of a month in a zone.
type ledgerRoundMonth struct {
	BookingID           int64
	Zone                string
	Month               string
	TeamID              int64
	TaskID              int64
	CardTypeID          int64
	IsEndMonth          bool
	BookedCardSeconds   int64
	CostFen             int64
	SampledCardSeconds  int64
	BusyCardSeconds     int64
	HeldIdleCardSeconds int64
}

// LedgerPassOptions tune SettleLedger.
type LedgerPassOptions struct {
	// Zone cuts the months; the reports of the same zone read them.
	Zone *time.Location
	// Since limits the search for new rounds to bookings that ended at or
	// after it. Zero searches every booking and also cuts, in Zone, the
	// months of rounds that were cut in another zone only.
	Since time.Time
	// SettleAfter is how long after a round's end telemetry may still
	// arrive; the round's usage is refreshed until then. Default 1 h.
	SettleAfter time.Duration
	// Batch is how many rounds one transaction writes. Default 500.
	Batch int
	// OnlyNew writes the missing rounds and stops: what a page calls to
	// catch up with bookings that finished since the ticker last ran.
	OnlyNew bool
}

// LedgerPass counts what SettleLedger did.
type LedgerPass struct {
	Added     int `json:"added"`     // new rounds
	Refreshed int `json:"refreshed"` // rounds whose usage was read again
	Settled   int `json:"settled"`   // rounds now closed to telemetry
	Recut     int `json:"recut"`     // rounds cut into months of a new zone
}

// CatchUpLedger writes the rounds of bookings that finished in the last
// hour and have none yet, so a page opened right after a release shows it
// without waiting for the ticker.
func (s *Store) CatchUpLedger(ctx context.Context, loc *time.Location) error {
	_, err := s.SettleLedger(ctx, LedgerPassOptions{Zone: loc, Since: s.now().Add(-time.Hour), OnlyNew: true})
	return err
}

// DefaultSettleAfter is how long a round stays open to late telemetry.
const DefaultSettleAfter = time.Hour

func (o *LedgerPassOptions) defaults() {
	if o.Zone == nil {
		o.Zone = time.UTC
	}
	if o.SettleAfter <= 0 {
		o.SettleAfter = DefaultSettleAfter
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
}

// SettleLedger writes a ledger round for every finished booking that has
// none, refreshes the usage of rounds still open to telemetry, and closes
// those past SettleAfter. Every write is an upsert keyed by the booking, so
// the pass is idempotent and several processes may run it at once; the
// server's ticker calls it.
func (s *Store) SettleLedger(ctx context.Context, o LedgerPassOptions) (LedgerPass, error) {
	const op = "store.SettleLedger"
	o.defaults()
	var out LedgerPass
	// New rounds.
	write := func(ids []int64) error {
		n, settled, err := s.writeRounds(ctx, op, ids, o)
		out.Added += n
		out.Settled += settled
		return err
	}
	var err error
	if o.Since.IsZero() {
		err = s.eachBatch(ctx, o.Batch, func(after int64) ([]int64, error) {
			var ids []int64
			err := s.read(ctx).Table("bookings b").Select("b.id").
				Joins("LEFT JOIN ledger_rounds r ON r.booking_id = b.id").
				Where("r.booking_id IS NULL AND b.state IN ? AND b.id > ?", FinishedStates, after).
				Order("b.id").Limit(o.Batch).Pluck("b.id", &ids).Error
			return ids, err
		}, write)
	} else {
		err = s.recentlyEnded(ctx, o, write)
	}
	if err != nil || o.OnlyNew {
		return out, translate(op, err)
	}
	// Rounds still open to late telemetry.
	err = s.eachBatch(ctx, o.Batch, func(after int64) ([]int64, error) {
		var ids []int64
		err := s.read(ctx).Model(&LedgerRound{}).Where("settled = ? AND booking_id > ?", false, after).
			Order("booking_id").Limit(o.Batch).Pluck("booking_id", &ids).Error
		return ids, err
	}, func(ids []int64) error {
		n, settled, err := s.writeRounds(ctx, op, ids, o)
		out.Refreshed += n
		out.Settled += settled
		return err
	})
	if err != nil {
		return out, translate(op, err)
	}
	if !o.Since.IsZero() {
		return out, nil
	}
	// Rounds whose months were cut in another zone only.
	err = s.eachBatch(ctx, o.Batch, func(after int64) ([]int64, error) {
		var ids []int64
		err := s.read(ctx).Model(&LedgerRound{}).
			Where("end_at > start_at AND booking_id > ? AND NOT EXISTS (SELECT 1 FROM ledger_round_months m "+
				"WHERE m.booking_id = ledger_rounds.booking_id AND m.zone = ?)", after, o.Zone.String()).
			Order("booking_id").Limit(o.Batch).Pluck("booking_id", &ids).Error
		return ids, err
	}, func(ids []int64) error {
		n, _, err := s.writeRounds(ctx, op, ids, o)
		out.Recut += n
		return err
	})
	return out, translate(op, err)
}

// recentlyEnded feeds write, in batches, the bookings that ended since
// o.Since and have no round. Only the index on ended_at bounds the read:
// the states are checked here, so that no planner prefers the index on
// state, which would read every finished booking ever.
func (s *Store) recentlyEnded(ctx context.Context, o LedgerPassOptions, write func([]int64) error) error {
	var rows []struct {
		ID    int64
		State string
	}
	err := s.read(ctx).Table("bookings b").Select("b.id, b.state").
		Joins("LEFT JOIN ledger_rounds r ON r.booking_id = b.id").
		Where("r.booking_id IS NULL AND b.ended_at >= ?", o.Since.UTC()).Scan(&rows).Error
	if err != nil {
		return err
	}
	var ids []int64
	for _, r := range rows {
		if isFinished(r.State) {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	for start := 0; start < len(ids); start += o.Batch {
		if err := write(ids[start:min(start+o.Batch, len(ids))]); err != nil {
			return err
		}
	}
	return nil
}

// eachBatch feeds fn the ids next returns, in ascending batches, until a
// batch comes back short.
func (s *Store) eachBatch(ctx context.Context, size int, next func(after int64) ([]int64, error), fn func([]int64) error) error {
	var after int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ids, err := next(after)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if err := fn(ids); err != nil {
			return err
		}
		if len(ids) < size {
			return nil
		}
		after = ids[len(ids)-1]
	}
}

// ensureRounds writes the rounds of the given bookings that are finished
// and have none yet, so a page or an output never waits for the ticker.
func (s *Store) ensureRounds(ctx context.Context, op string, loc *time.Location, bookingIDs []int64) error {
	if len(bookingIDs) == 0 {
		return nil
	}
	var missing []int64
	err := s.read(ctx).Table("bookings b").Select("b.id").
		Joins("LEFT JOIN ledger_rounds r ON r.booking_id = b.id").
		Where("r.booking_id IS NULL AND b.state IN ? AND b.id IN ?", FinishedStates, bookingIDs).
		Pluck("b.id", &missing).Error
	if err != nil {
		return translate(op, err)
	}
	if len(missing) == 0 {
		return nil
	}
	o := LedgerPassOptions{Zone: loc}
	o.defaults()
	_, _, err = s.writeRounds(ctx, op, missing, o)
	return err
}

// writeRounds computes and upserts the rounds of the given bookings and
// their months in o.Zone, in one transaction. It reports how many rounds it
// wrote and how many of them are settled.
func (s *Store) writeRounds(ctx context.Context, op string, bookingIDs []int64, o LedgerPassOptions) (written, settled int, err error) {
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		written, settled = 0, 0
		var bs []Booking
		if err := tx.Where("id IN ? AND state IN ?", bookingIDs, FinishedStates).Order("id").Find(&bs).Error; err != nil {
			return err
		}
		hours, err := findBookingHours(tx, bookingIDs)
		if err != nil {
			return err
		}
		now := s.now()
		rounds := make([]LedgerRound, 0, len(bs))
		var months []ledgerRoundMonth
		for _, b := range bs {
			r, ms := roundOf(b, hours[b.ID], o.Zone)
			r.Settled = !now.Before(r.EndAt.Add(o.SettleAfter))
			r.CreatedAt, r.UpdatedAt = now, now
			if r.Settled {
				settled++
			}
			rounds = append(rounds, r)
			months = append(months, ms...)
		}
		if err := s.upsertRounds(tx, rounds); err != nil {
			return err
		}
		written = len(rounds)
		return s.upsertRoundMonths(tx, months)
	})
	return written, settled, err
}

// roundOf builds a booking's round and its months in loc.
func roundOf(b Booking, hours []usageHour, loc *time.Location) (LedgerRound, []ledgerRoundMonth) {
	end := b.EndAt
	switch b.State {
	case BookingReleased, BookingPreempted, BookingNoShow:
		if b.EndedAt != nil && b.EndedAt.Before(end) {
			end = *b.EndedAt
		}
	}
	if end.Before(b.StartAt) {
		end = b.StartAt
	}
	r := LedgerRound{BookingID: b.ID, TaskID: b.TaskID, TeamID: b.TeamID, UserID: b.UserID, CardTypeID: b.CardTypeID,
		CardCount: b.CardCount, State: b.State, StartAt: b.StartAt.UTC(), EndAt: end.UTC(), PlannedEndAt: b.EndAt.UTC(),
		PriceFen: b.PriceFen, BookedCardSeconds: b.BookedCardSeconds()}
	r.CostFen = schedule.CostFen(r.BookedCardSeconds, r.PriceFen)
	parts := splitRound(b.CardCount, r.StartAt, r.EndAt, r.PriceFen, hours, loc)
	months := make([]ledgerRoundMonth, 0, len(parts))
	for _, p := range parts {
		r.SampledCardSeconds += p.SampledCardSeconds
		r.BusyCardSeconds += p.BusyCardSeconds
		r.HeldIdleCardSeconds += p.HeldIdleSeconds
		months = append(months, ledgerRoundMonth{BookingID: b.ID, Zone: loc.String(), Month: p.Month, TeamID: b.TeamID,
			TaskID: b.TaskID, CardTypeID: b.CardTypeID, IsEndMonth: p.IsEndMonth, BookedCardSeconds: p.BookedCardSeconds,
			CostFen: p.CostFen, SampledCardSeconds: p.SampledCardSeconds, BusyCardSeconds: p.BusyCardSeconds,
			HeldIdleCardSeconds: p.HeldIdleSeconds})
	}
	return r, months
}

var roundCols = []string{"booking_id", "task_id", "team_id", "user_id", "card_type_id", "card_count", "state", "start_at", "end_at",
	"planned_end_at", "price_fen", "booked_card_seconds", "cost_fen", "sampled_card_seconds", "busy_card_seconds",
	"held_idle_card_seconds", "settled", "created_at", "updated_at"}

// roundUpdateCols are what a rewrite of an existing round changes: the
// usage and its settlement. The price, the window and the cost were fixed
// when the round was first written.
var roundUpdateCols = []string{"sampled_card_seconds", "busy_card_seconds", "held_idle_card_seconds", "settled", "updated_at"}

var monthCols = []string{"booking_id", "zone", "month", "team_id", "task_id", "card_type_id", "is_end_month", "booked_card_seconds",
	"cost_fen", "sampled_card_seconds", "busy_card_seconds", "held_idle_card_seconds"}

var monthUpdateCols = []string{"sampled_card_seconds", "busy_card_seconds", "held_idle_card_seconds"}

// upsertSQL builds a multi-row insert of n rows that updates updateCols of
// rows whose key exists.
func (s *Store) upsertSQL(table string, cols, keyCols, updateCols []string, n int) string {
	ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	rows := make([]string, n)
	for i := range rows {
		rows[i] = ph
	}
	sets := make([]string, len(updateCols))
	for i, c := range updateCols {
		if s.dialect == MySQL {
			sets[i] = c + " = VALUES(" + c + ")"
		} else {
			sets[i] = c + " = excluded." + c
		}
	}
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.Join(rows, ", ")
	if s.dialect == MySQL {
		return q + " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
	}
	return q + " ON CONFLICT(" + strings.Join(keyCols, ", ") + ") DO UPDATE SET " + strings.Join(sets, ", ")
}

// upsertChunk is how many rows one upsert statement writes: SQLite's
// driver binds in time quadratic in a statement's parameters, so its
// statements stay short; MySQL's interpolates and takes long ones.
func (s *Store) upsertChunk(cols int) int {
	if s.dialect == MySQL {
		return 200
	}
	return max(1, 480/cols)
}

func (s *Store) upsertRounds(tx *gorm.DB, rounds []LedgerRound) error {
	chunk := s.upsertChunk(len(roundCols))
	for start := 0; start < len(rounds); start += chunk {
		part := rounds[start:min(start+chunk, len(rounds))]
		args := make([]any, 0, len(part)*len(roundCols))
		for _, r := range part {
			args = append(args, r.BookingID, r.TaskID, r.TeamID, r.UserID, r.CardTypeID, r.CardCount, r.State, r.StartAt, r.EndAt,
				r.PlannedEndAt, r.PriceFen, r.BookedCardSeconds, r.CostFen, r.SampledCardSeconds, r.BusyCardSeconds,
				r.HeldIdleCardSeconds, r.Settled, r.CreatedAt, r.UpdatedAt)
		}
		if err := tx.Exec(s.upsertSQL("ledger_rounds", roundCols, []string{"booking_id"}, roundUpdateCols, len(part)), args...).Error; err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) upsertRoundMonths(tx *gorm.DB, months []ledgerRoundMonth) error {
	chunk := s.upsertChunk(len(monthCols))
	for start := 0; start < len(months); start += chunk {
		part := months[start:min(start+chunk, len(months))]
		args := make([]any, 0, len(part)*len(monthCols))
		for _, m := range part {
			args = append(args, m.BookingID, m.Zone, m.Month, m.TeamID, m.TaskID, m.CardTypeID, m.IsEndMonth, m.BookedCardSeconds,
				m.CostFen, m.SampledCardSeconds, m.BusyCardSeconds, m.HeldIdleCardSeconds)
		}
		q := s.upsertSQL("ledger_round_months", monthCols, []string{"booking_id", "zone", "month"}, monthUpdateCols, len(part))
		if err := tx.Exec(q, args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// roundNotFinished explains why a booking has no ledger round yet.
func roundNotFinished(op string, b *Booking) error {
	if schedule.Withdrawn(b.State) {
		return errs.E(errs.Conflict, op, "ledger.round_cancelled")
	}
	return errs.E(errs.Conflict, op, "ledger.round_not_finished")
}
