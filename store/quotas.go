package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// Quota grants a team card-hours of one card type inside a validity window,
// with a cap on cards held at once ("算力常按配额发放").
type Quota struct {
	ID          int64 `json:"id"`
	TeamID      int64 `json:"team_id"`
	CardTypeID  int64 `json:"card_type_id"`
	CardSeconds int64 `json:"-"`
	// UsedCardSeconds is the running total the team's bookings draw (see
	// quota_ledger.go).
	UsedCardSeconds int64     `json:"-"`
	MaxCards        int       `json:"max_cards"`
	ValidFrom       time.Time `json:"valid_from"`
	ExpiresAt       time.Time `json:"expires_at"`
	Note            string    `json:"note"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// CardHours is the grant in card-hours.
func (q Quota) CardHours() float64 { return schedule.CardHours(q.CardSeconds) }

// window is the quota's validity, [valid_from, expires_at).
func (q Quota) window() schedule.Interval {
	return schedule.Interval{Start: q.ValidFrom.UTC(), End: q.ExpiresAt.UTC()}
}

func (q Quota) policy() schedule.Quota {
	return schedule.Quota{CardSeconds: q.CardSeconds, MaxCards: q.MaxCards, ValidFrom: q.ValidFrom.UTC(), ExpiresAt: q.ExpiresAt.UTC()}
}

// QuotaInput creates or replaces a quota.
type QuotaInput struct {
	TeamID     int64
	CardTypeID int64
	CardHours  float64
	MaxCards   int
	ValidFrom  time.Time
	ExpiresAt  time.Time
	Note       string
}

// QuotaView is a quota with names and what is used of it.
type QuotaView struct {
	Quota
	TeamName      string  `json:"team"`
	CardTypeName  string  `json:"card_type"`
	GrantedHours  float64 `json:"card_hours"`
	UsedHours     float64 `json:"used_card_hours"`
	RemainingHour float64 `json:"remaining_card_hours"`
}

// QuotaFilter narrows FindQuotas.
type QuotaFilter struct {
	TeamIDs    []int64 // nil = all
	CardTypeID int64
	ActiveAt   *time.Time
}

func (in *QuotaInput) validate(op string) error {
	in.Note = strings.TrimSpace(in.Note)
	in.ValidFrom, in.ExpiresAt = in.ValidFrom.UTC(), in.ExpiresAt.UTC()
	v := errs.NewValidation(op)
	v.Check(in.TeamID > 0, "team", "team.not_found")
	v.Check(in.CardTypeID > 0, "card_type", "cardtype.not_found")
	v.Check(in.CardHours > 0 && in.CardHours <= 10_000_000, "card_hours", "quota.hours_range")
	v.Check(in.MaxCards >= 0 && in.MaxCards <= 10_000, "max_cards", "quota.max_cards_range")
	v.Check(!in.ValidFrom.IsZero(), "valid_from", "field.required")
	v.Check(!in.ExpiresAt.IsZero(), "expires_at", "field.required")
	if !in.ValidFrom.IsZero() && !in.ExpiresAt.IsZero() {
		v.Check(in.ExpiresAt.After(in.ValidFrom), "expires_at", "quota.expiry_before_start")
	}
	v.CheckLen(in.Note, 255, "note")
	return v.Err()
}

func checkQuotaRefs(tx *gorm.DB, op string, in QuotaInput) error {
	v := errs.NewValidation(op)
	var n int64
	if err := tx.Model(&Team{}).Where("id = ?", in.TeamID).Count(&n).Error; err != nil {
		return err
	}
	v.Check(n == 1, "team", "team.not_found")
	if err := tx.Model(&CardType{}).Where("id = ?", in.CardTypeID).Count(&n).Error; err != nil {
		return err
	}
	v.Check(n == 1, "card_type", "cardtype.not_found")
	return v.Err()
}

// checkQuotaOverlap refuses a quota whose window meets another of its team
// and card type. Asked only of those who may manage the team's quotas: a
// conflict answered to anyone else would map another team's windows.
func checkQuotaOverlap(tx *gorm.DB, op string, in QuotaInput) error {
	// Two quotas of one team and type may not overlap: which one a booking
	// draws on must be unambiguous.
	var clash int64
	if err := tx.Model(&Quota{}).Where("team_id = ? AND card_type_id = ? AND valid_from < ? AND expires_at > ?",
		in.TeamID, in.CardTypeID, in.ExpiresAt, in.ValidFrom).Count(&clash).Error; err != nil {
		return err
	}
	if clash > 0 {
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.overlap", Fields: map[string]string{"valid_from": "quota.overlap"}}
	}
	return nil
}

// mayManageQuota: admins for any team, managers for teams they manage.
func (s *Store) mayManageQuota(ctx context.Context, tx *gorm.DB, op string, teamID int64) error {
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return err
	}
	ok, err := managesTeam(tx, u, teamID)
	if err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.Forbidden, op, "quota.not_your_team")
	}
	return nil
}

// CreateQuota grants a quota.
func (s *Store) CreateQuota(ctx context.Context, in QuotaInput) (*Quota, error) {
	const op = "store.CreateQuota"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	now := s.now()
	q := new(Quota)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*q = Quota{TeamID: in.TeamID, CardTypeID: in.CardTypeID, CardSeconds: int64(in.CardHours*3600 + 0.5), MaxCards: in.MaxCards,
			ValidFrom: in.ValidFrom, ExpiresAt: in.ExpiresAt, Note: in.Note, CreatedAt: now, UpdatedAt: now}
		if err := checkQuotaRefs(tx, op, in); err != nil {
			return err
		}
		if err := s.mayManageQuota(ctx, tx, op, in.TeamID); err != nil {
			return err
		}
		if err := checkQuotaOverlap(tx, op, in); err != nil {
			return err
		}
		// Under the card type's lock no booking can move the total between
		// the count and the insert.
		var ct CardType
		if err := s.lockCardType(tx, in.CardTypeID, &ct); err != nil {
			return err
		}
		if err := s.recountQuotaUse(tx, q); err != nil {
			return err
		}
		noteBookChanged(tx, in.CardTypeID)
		if err := tx.Create(q).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "quota", q.ID, "", nil, q)
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// UpdateQuota renews or adjusts a quota ("提前续或调").
func (s *Store) UpdateQuota(ctx context.Context, id int64, in QuotaInput) (*Quota, error) {
	const op = "store.UpdateQuota"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var q *Quota
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		var err error
		q, err = s.updateQuota(ctx, tx, op, id, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// updateQuota is UpdateQuota inside tx, for in already validated: the one
// path every change of a quota takes (an approved quota request too).
func (s *Store) updateQuota(ctx context.Context, tx *gorm.DB, op string, id int64, in QuotaInput) (*Quota, error) {
	var q Quota
	if err := tx.First(&q, id).Error; err != nil {
		return nil, withKey(translate(op, err), "quota.not_found")
	}
	if in.TeamID != q.TeamID || in.CardTypeID != q.CardTypeID {
		return nil, fieldErr(op, "team", "quota.identity_fixed")
	}
	if err := s.mayManageQuota(ctx, tx, op, q.TeamID); err != nil {
		return nil, err
	}
	// The overlap check must not see the quota itself.
	var clash int64
	if err := tx.Model(&Quota{}).Where("team_id = ? AND card_type_id = ? AND id <> ? AND valid_from < ? AND expires_at > ?",
		q.TeamID, q.CardTypeID, id, in.ExpiresAt, in.ValidFrom).Count(&clash).Error; err != nil {
		return nil, err
	}
	if clash > 0 {
		return nil, &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.overlap", Fields: map[string]string{"valid_from": "quota.overlap"}}
	}
	before := q
	q.CardSeconds, q.MaxCards, q.ValidFrom, q.ExpiresAt, q.Note = int64(in.CardHours*3600+0.5), in.MaxCards, in.ValidFrom, in.ExpiresAt, in.Note
	q.UpdatedAt = s.now()
	// A new window draws on other bookings; recount under the card
	// type's lock so no booking moves the total meanwhile.
	var ct CardType
	if err := s.lockCardType(tx, q.CardTypeID, &ct); err != nil {
		return nil, err
	}
	if err := s.recountQuotaUse(tx, &q); err != nil {
		return nil, err
	}
	noteBookChanged(tx, q.CardTypeID)
	if err := tx.Save(&q).Error; err != nil {
		return nil, err
	}
	if err := rearmQuotaReminders(tx, before, q); err != nil {
		return nil, err
	}
	if err := s.audit(ctx, tx, "update", "quota", q.ID, "", before, q); err != nil {
		return nil, err
	}
	return &q, nil
}

// findQuotaFor returns the team's quota of the type valid at t; when none is
// valid then but a later one exists, that one (so the verdict can say it is
// not valid yet); nil when the team has none.
func findQuotaFor(tx *gorm.DB, teamID, cardTypeID int64, t time.Time) (*Quota, error) {
	var qs []Quota
	err := tx.Where("team_id = ? AND card_type_id = ? AND expires_at > ?", teamID, cardTypeID, t).
		Order("valid_from").Limit(1).Find(&qs).Error
	if err != nil || len(qs) == 0 {
		return nil, err
	}
	return &qs[0], nil
}

// FindQuotas lists quotas with names and use, soonest expiry first.
func (s *Store) FindQuotas(ctx context.Context, f QuotaFilter) ([]QuotaView, error) {
	const op = "store.FindQuotas"
	q := s.read(ctx).Table("quotas q").
		Select("q.*, t.name AS team_name, ct.name AS card_type_name").
		Joins("JOIN teams t ON t.id = q.team_id").
		Joins("JOIN card_types ct ON ct.id = q.card_type_id")
	if f.TeamIDs != nil {
		if len(f.TeamIDs) == 0 {
			return nil, nil
		}
		q = q.Where("q.team_id IN ?", f.TeamIDs)
	}
	if f.CardTypeID != 0 {
		q = q.Where("q.card_type_id = ?", f.CardTypeID)
	}
	if f.ActiveAt != nil {
		q = q.Where("q.valid_from <= ? AND q.expires_at > ?", *f.ActiveAt, *f.ActiveAt)
	}
	var out []QuotaView
	if err := q.Order("q.expires_at, t.name").Scan(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	for i := range out {
		v := &out[i]
		v.GrantedHours = v.CardHours()
		v.UsedHours = schedule.CardHours(v.UsedCardSeconds)
		v.RemainingHour = max(v.GrantedHours-v.UsedHours, 0)
	}
	return out, nil
}

func (Quota) TableName() string { return "quotas" }

// FindQuotaByID returns one quota with its names and use, for the quota
// edit page.
func (s *Store) FindQuotaByID(ctx context.Context, id int64) (*QuotaView, error) {
	const op = "store.FindQuotaByID"
	var q Quota
	if err := s.read(ctx).First(&q, id).Error; err != nil {
		return nil, withKey(translate(op, err), "quota.not_found")
	}
	// The team's quotas of the type are few; FindQuotas already knows how
	// to name them and sum their use.
	vs, err := s.FindQuotas(ctx, QuotaFilter{TeamIDs: []int64{q.TeamID}, CardTypeID: q.CardTypeID})
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i].ID == id {
			return &vs[i], nil
		}
	}
	return nil, errs.E(errs.NotFound, op, "quota.not_found")
}
