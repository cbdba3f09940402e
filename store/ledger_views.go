package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// LedgerRoundView is a round with the names a page shows and its current
// outputs.
type LedgerRoundView struct {
	LedgerRound
	TaskName     string       `json:"task"`
	TaskKind     string       `json:"task_kind"`
	TeamName     string       `json:"team"`
	Username     string       `json:"user"`
	CardTypeName string       `json:"card_type"`
	Outputs      []OutputView `json:"outputs" gorm:"-"`
}

// RoundMonth is a round's share of one calendar month.
type RoundMonth struct {
	Month string `json:"month"`
	LedgerTotals
}

// LedgerRoundDetail is one round with its months and its whole output
// history, corrections included.
type LedgerRoundDetail struct {
	LedgerRoundView
	Zone    string       `json:"zone"`
	Months  []RoundMonth `json:"months"`
	History []OutputView `json:"history"`
}

// LedgerFilter narrows FindLedgerRounds.
type LedgerFilter struct {
	// Zone and Month keep the rounds that ended in that month of the zone.
	Zone    *time.Location
	Month   string
	TeamIDs []int64 // nil = every team
	TaskID  int64
	UserID  int64
	Limit   int
}

func (s *Store) roundViews(ctx context.Context) *gorm.DB {
	return s.read(ctx).Table("ledger_rounds r").
		Select("r.*, t.name AS task_name, t.kind AS task_kind, tm.name AS team_name, u.username AS username, ct.name AS card_type_name").
		Joins("JOIN tasks t ON t.id = r.task_id").
		Joins("JOIN teams tm ON tm.id = r.team_id").
		Joins("JOIN users u ON u.id = r.user_id").
		Joins("JOIN card_types ct ON ct.id = r.card_type_id")
}

// FindLedgerRounds lists rounds that ran, however briefly (not those cut
// before they began), latest end first, each with its current outputs.
func (s *Store) FindLedgerRounds(ctx context.Context, f LedgerFilter) ([]LedgerRoundView, error) {
	const op = "store.FindLedgerRounds"
	q := s.roundViews(ctx).Where("r.end_at > r.start_at")
	if f.Month != "" {
		zone := time.UTC
		if f.Zone != nil {
			zone = f.Zone
		}
		q = q.Joins("JOIN ledger_round_months m ON m.booking_id = r.booking_id AND m.zone = ? AND m.month = ? AND m.is_end_month = ?",
			zone.String(), f.Month, true)
	}
	if f.TeamIDs != nil {
		if len(f.TeamIDs) == 0 {
			return nil, nil
		}
		q = q.Where("r.team_id IN ?", f.TeamIDs)
	}
	if f.TaskID != 0 {
		q = q.Where("r.task_id = ?", f.TaskID)
	}
	if f.UserID != 0 {
		q = q.Where("r.user_id = ?", f.UserID)
	}
	var out []LedgerRoundView
	if err := q.Order("r.end_at DESC, r.booking_id DESC").Limit(limitOr(f.Limit, 500)).Scan(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	if err := s.attachOutputs(ctx, out); err != nil {
		return nil, translate(op, err)
	}
	return out, nil
}

// attachOutputs fills each round's current outputs.
func (s *Store) attachOutputs(ctx context.Context, rounds []LedgerRoundView) error {
	ids := make([]int64, len(rounds))
	at := map[int64]int{}
	for i := range rounds {
		r := &rounds[i]
		r.StartAt, r.EndAt, r.PlannedEndAt = r.StartAt.UTC(), r.EndAt.UTC(), r.PlannedEndAt.UTC()
		ids[i] = r.BookingID
		at[r.BookingID] = i
	}
	outs, err := s.FindOutputs(ctx, ids)
	if err != nil {
		return err
	}
	for _, o := range outs {
		if o.Current() {
			r := &rounds[at[o.BookingID]]
			r.Outputs = append(r.Outputs, o)
		}
	}
	return nil
}

// FindLedgerRound returns a finished booking's round, written now if the
// ledger pass has not reached it, with its months in loc and its output
// history. A booking still running or waiting is a conflict that says so.
func (s *Store) FindLedgerRound(ctx context.Context, loc *time.Location, bookingID int64) (*LedgerRoundDetail, error) {
	const op = "store.FindLedgerRound"
	var b Booking
	if err := s.read(ctx).First(&b, bookingID).Error; err != nil {
		return nil, withKey(translate(op, err), "booking.not_found")
	}
	if !isFinished(b.State) {
		return nil, roundNotFinished(op, &b)
	}
	if err := s.ensureRounds(ctx, op, loc, []int64{b.ID}); err != nil {
		return nil, err
	}
	months, err := s.roundMonths(ctx, b.ID, loc)
	if err != nil {
		return nil, translate(op, err)
	}
	if r, _ := roundOf(b, nil, loc); len(months) == 0 && r.EndAt.After(r.StartAt) {
		// Cut in another zone only, so far: cut it in this one now.
		o := LedgerPassOptions{Zone: loc}
		o.defaults()
		if _, _, err := s.writeRounds(ctx, op, []int64{b.ID}, o); err != nil {
			return nil, err
		}
		if months, err = s.roundMonths(ctx, b.ID, loc); err != nil {
			return nil, translate(op, err)
		}
	}
	var views []LedgerRoundView
	if err := s.roundViews(ctx).Where("r.booking_id = ?", b.ID).Scan(&views).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(views) == 0 {
		return nil, errs.E(errs.NotFound, op, "booking.not_found")
	}
	if err := s.attachOutputs(ctx, views); err != nil {
		return nil, translate(op, err)
	}
	history, err := s.FindOutputs(ctx, []int64{b.ID})
	if err != nil {
		return nil, err
	}
	return &LedgerRoundDetail{LedgerRoundView: views[0], Zone: loc.String(), Months: months, History: history}, nil
}

func (s *Store) roundMonths(ctx context.Context, bookingID int64, loc *time.Location) ([]RoundMonth, error) {
	var rows []struct {
		Month               string
		BookedCardSeconds   int64
		CostFen             int64
		SampledCardSeconds  int64
		BusyCardSeconds     int64
		HeldIdleCardSeconds int64
	}
	err := s.read(ctx).Table("ledger_round_months").
		Select("month, booked_card_seconds, cost_fen, sampled_card_seconds, busy_card_seconds, held_idle_card_seconds").
		Where("booking_id = ? AND zone = ?", bookingID, loc.String()).Order("month").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]RoundMonth, len(rows))
	for i, r := range rows {
		out[i] = RoundMonth{Month: r.Month, LedgerTotals: LedgerTotals{Rounds: 1, BookedCardSeconds: r.BookedCardSeconds,
			CostFen: r.CostFen, SampledCardSeconds: r.SampledCardSeconds, BusyCardSeconds: r.BusyCardSeconds,
			HeldIdleCardSeconds: r.HeldIdleCardSeconds}}
	}
	return out, nil
}

// LatestLedgerMonth is the latest month of zone in which a round of teams
// (nil: every team) ended, "" when none has: where the ledger and the
// monthly report open, rather than on an empty month.
func (s *Store) LatestLedgerMonth(ctx context.Context, zone *time.Location, teams []int64) (string, error) {
	var months []string
	q := s.read(ctx).Table("ledger_round_months").Where("zone = ? AND is_end_month = ?", zone.String(), true)
	if err := inTeams(q, "team_id", teams).Order("month DESC").Limit(1).Pluck("month", &months).Error; err != nil {
		return "", translate("store.LatestLedgerMonth", err)
	}
	if len(months) == 0 {
		return "", nil
	}
	return months[0], nil
}
