package store

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Output is what a round produced, as its member recorded it: a quantity in
// a unit ("3 epochs", "12 M tokens", "1200 images", "0.83 eval acc") and a
// note. Entries are never changed: a correction is a new entry naming the
// one it replaces.
type Output struct {
	ID         int64     `json:"id"`
	BookingID  int64     `json:"booking_id"`
	Quantity   float64   `json:"quantity"`
	Unit       string    `json:"unit"`
	Note       string    `json:"note"`
	CorrectsID *int64    `json:"corrects_id"`
	CreatedBy  int64     `json:"created_by"`
	CreatedAt  time.Time `json:"created_at"`
}

// TableName maps Output to its table.
func (Output) TableName() string { return "ledger_outputs" }

// OutputView is an entry of a round's output history.
type OutputView struct {
	Output
	CreatedByName string `json:"created_by_name"`
	// CorrectedBy is the entry that replaced this one; nil while current.
	CorrectedBy *int64 `json:"corrected_by"`
}

// Current tells whether no later entry replaced this one.
func (o OutputView) Current() bool { return o.CorrectedBy == nil }

// OutputInput records an output, or corrects one when CorrectsID is set.
type OutputInput struct {
	Quantity   *float64 `json:"quantity"`
	Unit       string   `json:"unit"`
	Note       string   `json:"note"`
	CorrectsID int64    `json:"corrects_id,omitempty"`
}

// Output limits.
const (
	MaxOutputQuantity = 1e15
	MaxOutputUnit     = 32
	MaxOutputNote     = 500
)

// normalizeUnit trims a unit and collapses its inner spaces, so "M  tokens"
// and "M tokens" group together in the reports.
func normalizeUnit(u string) string { return strings.Join(strings.Fields(u), " ") }

func (in *OutputInput) validate(op string) error {
	in.Unit = normalizeUnit(in.Unit)
	in.Note = strings.TrimSpace(in.Note)
	v := errs.NewValidation(op)
	switch {
	case in.Quantity == nil:
		v.Add("quantity", "field.required")
	case math.IsNaN(*in.Quantity) || math.IsInf(*in.Quantity, 0) || *in.Quantity < 0 || *in.Quantity > MaxOutputQuantity:
		v.Add("quantity", "ledger.quantity_range")
	}
	v.Check(in.Unit != "", "unit", "field.required")
	v.CheckLen(in.Unit, MaxOutputUnit, "unit")
	v.Check(!strings.ContainsFunc(in.Unit, unicode.IsControl), "unit", "ledger.unit_invalid")
	v.CheckLen(in.Note, MaxOutputNote, "note")
	v.Check(in.CorrectsID >= 0, "corrects_id", "ledger.correct_unknown")
	return v.Err()
}

// Check is what the store would refuse of in before it looks at the
// database; nothing is stored (see TaskInput.Check).
func (in OutputInput) Check() error { return in.validate("store.OutputInput") }

// FormatQuantity writes a quantity without trailing zeros ("3", "0.83",
// "1200").
func FormatQuantity(q float64) string { return strconv.FormatFloat(roundQuantity(q), 'f', -1, 64) }

// RecordOutput appends an output entry to a finished booking's round. Only
// the booking's owner and the managers of its team (and admins) may; the
// round is written first when the ledger pass has not reached it yet, its
// months cut in loc.
func (s *Store) RecordOutput(ctx context.Context, loc *time.Location, bookingID int64, in OutputInput) (*OutputView, error) {
	const op = "store.RecordOutput"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var b Booking
	if err := s.read(ctx).First(&b, bookingID).Error; err != nil {
		return nil, withKey(translate(op, err), "booking.not_found")
	}
	if err := s.mayRecordOutput(ctx, op, &b); err != nil {
		return nil, err
	}
	if !isFinished(b.State) {
		return nil, roundNotFinished(op, &b)
	}
	if err := s.ensureRounds(ctx, op, loc, []int64{b.ID}); err != nil {
		return nil, err
	}
	var out OutputView
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		out = OutputView{}
		var r LedgerRound
		if err := tx.First(&r, "booking_id = ?", b.ID).Error; err != nil {
			return err
		}
		if !r.EndAt.After(r.StartAt) {
			return errs.E(errs.Conflict, op, "ledger.round_empty")
		}
		u, err := actorUser(ctx, tx, op)
		if err != nil {
			return err
		}
		var old *Output
		if in.CorrectsID != 0 {
			var o Output
			err := tx.Where("id = ? AND booking_id = ?", in.CorrectsID, b.ID).First(&o).Error
			if errs.Is(translate(op, err), errs.NotFound) {
				return fieldErr(op, "corrects_id", "ledger.correct_unknown")
			} else if err != nil {
				return err
			}
			var n int64
			if err := tx.Model(&Output{}).Where("corrects_id = ?", o.ID).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return errs.E(errs.Conflict, op, "ledger.already_corrected", o.ID)
			}
			old = &o
		}
		o := Output{BookingID: b.ID, Quantity: *in.Quantity, Unit: in.Unit, Note: in.Note, CreatedBy: u.ID, CreatedAt: s.now()}
		action, summary := "record", auditMsg("audit.sum.output", argText(FormatQuantity(o.Quantity)), argText(o.Unit), argText(b.ID))
		if old != nil {
			id := old.ID
			o.CorrectsID = &id
			action, summary = "correct", auditMsg("audit.sum.output_correction", argText(FormatQuantity(o.Quantity)), argText(o.Unit), argText(b.ID), argText(old.ID))
		}
		if err := tx.Create(&o).Error; err != nil {
			// Two corrections of one entry raced; the unique index kept
			// one. Any other conflict (a collision) goes back to tx, which
			// runs the transaction again.
			if isDuplicate(translate(op, err)) {
				return errs.E(errs.Conflict, op, "ledger.already_corrected", in.CorrectsID)
			}
			return err
		}
		var before any
		if old != nil {
			before = old
		}
		if err := s.auditNoted(ctx, tx, action, "ledger_output", o.ID, summary, before, o); err != nil {
			return err
		}
		out = OutputView{Output: o, CreatedByName: u.Username}
		return nil
	})
	if err != nil {
		return nil, translate(op, err)
	}
	return &out, nil
}

// mayRecordOutput is the rule: the booking's owner, a manager of its team,
// or an admin.
func (s *Store) mayRecordOutput(ctx context.Context, op string, b *Booking) error {
	q := s.read(ctx)
	u, err := actorUser(ctx, q, op)
	if err != nil {
		return err
	}
	if u.ID == b.UserID && RoleRank(u.Role) >= RoleRank(RoleMember) {
		return nil
	}
	ok, err := managesTeam(q, u, b.TeamID)
	if err != nil {
		return translate(op, err)
	}
	if !ok {
		return errs.E(errs.Forbidden, op, "ledger.output_not_yours")
	}
	return nil
}

// MayRecordOutput tells whether the acting user may record outputs for the
// booking, for pages that offer the form only to those who may use it.
func (s *Store) MayRecordOutput(ctx context.Context, bookingID int64) (bool, error) {
	const op = "store.MayRecordOutput"
	var b Booking
	if err := s.read(ctx).First(&b, bookingID).Error; err != nil {
		return false, withKey(translate(op, err), "booking.not_found")
	}
	err := s.mayRecordOutput(ctx, op, &b)
	if errs.Is(err, errs.Forbidden) || errs.Is(err, errs.Unauthorized) {
		return false, nil
	}
	return err == nil, err
}

func isFinished(state string) bool {
	for _, s := range FinishedStates {
		if s == state {
			return true
		}
	}
	return false
}

// FindOutputs lists every output entry of the given bookings, corrections
// included, oldest first, each marked with the entry that replaced it.
func (s *Store) FindOutputs(ctx context.Context, bookingIDs []int64) ([]OutputView, error) {
	const op = "store.FindOutputs"
	if len(bookingIDs) == 0 {
		return nil, nil
	}
	var rows []OutputView
	err := s.read(ctx).Table("ledger_outputs o").
		Select("o.*, u.username AS created_by_name, c.id AS corrected_by").
		Joins("JOIN users u ON u.id = o.created_by").
		Joins("LEFT JOIN ledger_outputs c ON c.corrects_id = o.id").
		Where("o.booking_id IN ?", bookingIDs).Order("o.booking_id, o.id").Scan(&rows).Error
	if err != nil {
		return nil, translate(op, err)
	}
	for i := range rows {
		rows[i].CreatedAt = rows[i].CreatedAt.UTC()
	}
	return rows, nil
}

// FindOutputUnits lists the units already used for the task's outputs, then
// the team's, most used first: the form offers them so one kind of output
// keeps one spelling.
func (s *Store) FindOutputUnits(ctx context.Context, taskID, teamID int64, limit int) ([]string, error) {
	var rows []struct {
		Unit string
		Mine int
		N    int
	}
	err := s.read(ctx).Table("ledger_outputs o").
		Select("o.unit, MAX(CASE WHEN r.task_id = ? THEN 1 ELSE 0 END) AS mine, COUNT(*) AS n", taskID).
		Joins("JOIN ledger_rounds r ON r.booking_id = o.booking_id").
		Where("r.team_id = ?", teamID).Group("o.unit").Order("mine DESC, n DESC, o.unit").Limit(limitOr(limit, 20)).
		Scan(&rows).Error
	if err != nil {
		return nil, translate("store.FindOutputUnits", err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Unit
	}
	return out, nil
}
