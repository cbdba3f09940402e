package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"cardhour/errs"
	"cardhour/schedule"
)

// Quota request kinds and states ("提前续或调": renew ahead, or adjust).
const (
	QuotaRequestRenew  = "renew"
	QuotaRequestAdjust = "adjust"

	QuotaRequestPending  = "pending"
	QuotaRequestApproved = "approved"
	QuotaRequestRefused  = "refused"
)

// QuotaRequestKinds lists the kinds in the order forms offer them.
var QuotaRequestKinds = []string{QuotaRequestRenew, QuotaRequestAdjust}

// Limits on what a request may ask and say.
const (
	quotaRequestTextMax = 500
	// A renewal reaches at most this far ahead: a grant years out is a
	// typing slip, not a plan.
	quotaRequestMaxAhead = 3 * 366 * 24 * time.Hour
)

// QuotaRequest asks an admin to renew or adjust a quota. An asked value is
// nil where the request leaves the quota's own value as it is.
type QuotaRequest struct {
	ID           int64      `json:"id"`
	QuotaID      int64      `json:"quota_id"`
	TeamID       int64      `json:"team_id"`
	RequestedBy  int64      `json:"requested_by"`
	Kind         string     `json:"kind"`
	CardSeconds  *int64     `json:"-"`
	MaxCards     *int       `json:"max_cards"`
	ExpiresAt    *time.Time `json:"expires_at"`
	Reason       string     `json:"reason"`
	State        string     `json:"state"`
	DecidedBy    *int64     `json:"decided_by"`
	DecidedAt    *time.Time `json:"decided_at"`
	DecisionNote string     `json:"decision_note"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

func (QuotaRequest) TableName() string { return "quota_requests" }

// CardHours is the asked grant in card-hours, nil when not asked.
func (r QuotaRequest) CardHours() *float64 {
	if r.CardSeconds == nil {
		return nil
	}
	h := schedule.CardHours(*r.CardSeconds)
	return &h
}

// QuotaRequestInput asks for a renewal or an adjustment of a quota. A nil
// value, or one equal to the quota's, is not asked.
type QuotaRequestInput struct {
	QuotaID   int64
	Kind      string
	CardHours *float64
	MaxCards  *int
	ExpiresAt *time.Time
	Reason    string
}

// QuotaRequestView is a request with names and the quota's values now, so
// that a decider sees what would change.
type QuotaRequestView struct {
	QuotaRequest
	AskedCardHours *float64  `json:"card_hours" gorm:"-"`
	TeamName       string    `json:"team"`
	CardTypeName   string    `json:"card_type"`
	RequesterName  string    `json:"requested_by_name"`
	DeciderName    string    `json:"decided_by_name"`
	QuotaSeconds   int64     `json:"-"`
	QuotaHours     float64   `json:"quota_card_hours" gorm:"-"`
	QuotaMaxCards  int       `json:"quota_max_cards"`
	QuotaExpiresAt time.Time `json:"quota_expires_at"`
}

// QuotaRequestFilter narrows FindQuotaRequests; the reader's scope always
// applies on top of it.
type QuotaRequestFilter struct {
	TeamIDs []int64 // nil = every team the reader sees
	QuotaID int64
	State   string
}

// applyTo is in with the request's asked values put in; the rest stays as
// in says.
func (r QuotaRequest) applyTo(in QuotaInput) QuotaInput {
	if r.CardSeconds != nil {
		in.CardHours = schedule.CardHours(*r.CardSeconds)
	}
	if r.MaxCards != nil {
		in.MaxCards = *r.MaxCards
	}
	if r.ExpiresAt != nil {
		in.ExpiresAt = r.ExpiresAt.UTC()
	}
	return in
}

// input is the quota as a QuotaInput, the start of any change to it.
func (q Quota) input() QuotaInput {
	return QuotaInput{TeamID: q.TeamID, CardTypeID: q.CardTypeID, CardHours: q.CardHours(), MaxCards: q.MaxCards,
		ValidFrom: q.ValidFrom.UTC(), ExpiresAt: q.ExpiresAt.UTC(), Note: q.Note}
}

// asked turns the input into the request's stored values against q: a
// value equal to the quota's is not asked, so a form that starts from the
// quota's values asks only what was changed.
func (in QuotaRequestInput) asked(q Quota) QuotaRequest {
	r := QuotaRequest{QuotaID: q.ID, TeamID: q.TeamID, Kind: in.Kind, Reason: strings.TrimSpace(in.Reason)}
	if in.CardHours != nil && !math.IsNaN(*in.CardHours) {
		if secs := int64(*in.CardHours*3600 + 0.5); secs != q.CardSeconds {
			r.CardSeconds = &secs
		}
	}
	if in.MaxCards != nil && *in.MaxCards != q.MaxCards {
		n := *in.MaxCards
		r.MaxCards = &n
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.IsZero() {
		// The store keeps microseconds; compare as it will read back.
		t := in.ExpiresAt.UTC().Truncate(time.Microsecond)
		if !t.Equal(q.ExpiresAt.UTC()) {
			r.ExpiresAt = &t
		}
	}
	return r
}

// validateQuotaRequest judges r as asked of q at now: the kind, the
// reason, what a renewal and an adjustment must ask, and — through the
// quota's own validation, so that a rule lives in one place — whether the
// quota with the asked values put in would be a valid quota.
// CheckQuotaRequest runs a request's own checks against its quota, for a
// form that could not parse every field: what else is wrong shows at once.
// An unknown quota is left to CreateQuotaRequest to refuse.
func (s *Store) CheckQuotaRequest(ctx context.Context, in QuotaRequestInput) error {
	var q Quota
	if err := s.read(ctx).First(&q, in.QuotaID).Error; err != nil {
		return nil
	}
	return validateQuotaRequest("store.CheckQuotaRequest", in.asked(q), q, s.now())
}

func validateQuotaRequest(op string, r QuotaRequest, q Quota, now time.Time) error {
	v := errs.NewValidation(op)
	v.Check(r.Kind == QuotaRequestRenew || r.Kind == QuotaRequestAdjust, "kind", "quota_request.kind_invalid")
	v.Check(r.Reason != "", "reason", "quota_request.reason_required")
	v.Check(len([]rune(r.Reason)) <= quotaRequestTextMax, "reason", "quota_request.reason_too_long")
	switch r.Kind {
	case QuotaRequestRenew:
		if r.ExpiresAt == nil {
			v.Add("expires_at", "quota_request.renew_needs_expiry")
		} else {
			v.Check(r.ExpiresAt.After(q.ExpiresAt), "expires_at", "quota_request.renew_later")
		}
	case QuotaRequestAdjust:
		v.Check(r.CardSeconds != nil || r.MaxCards != nil || r.ExpiresAt != nil, "card_hours", "quota_request.nothing_changed")
	}
	if r.ExpiresAt != nil {
		v.Check(r.ExpiresAt.After(now), "expires_at", "quota_request.expiry_past")
		v.Check(!r.ExpiresAt.After(now.Add(quotaRequestMaxAhead)), "expires_at", "quota_request.expiry_too_far")
	}
	if err := v.Err(); err != nil {
		return err
	}
	in := r.applyTo(q.input())
	return in.validate(op)
}

// mayRequestQuota: an admin, the team's manager, or a member of the team
// who has a core task in it (core work is what a lapsed quota would cut
// off, "重要任务提前半月盯"). Someone outside the team does not see the
// quota at all, so for them it is not found.
func mayRequestQuota(tx *gorm.DB, op string, u *User, teamID int64) error {
	if u.Role == RoleAdmin {
		return nil
	}
	role, err := teamRole(tx, teamID, u.ID)
	if err != nil {
		return err
	}
	if role == "" {
		return errs.E(errs.NotFound, op, "quota.not_found")
	}
	if managesAs(u, role) {
		return nil
	}
	if mayBookAs(u, role) {
		var core int64
		if err := tx.Model(&Task{}).Where("team_id = ? AND created_by = ? AND priority = ?", teamID, u.ID, schedule.Core).
			Count(&core).Error; err != nil {
			return err
		}
		if core > 0 {
			return nil
		}
	}
	return errs.E(errs.Forbidden, op, "quota_request.not_allowed")
}

// activeAdminIDs lists the admins a request is put before.
func activeAdminIDs(tx *gorm.DB) ([]int64, error) {
	var ids []int64
	err := tx.Model(&User{}).Where("role = ? AND disabled = ?", RoleAdmin, false).Order("id").Pluck("id", &ids).Error
	return ids, err
}

// quotaNames are the team's and the card type's names of a quota, for
// notifications.
func quotaNames(tx *gorm.DB, q Quota) (team, cardType string, err error) {
	var t Team
	if err = tx.First(&t, q.TeamID).Error; err != nil {
		return "", "", err
	}
	var ct CardType
	if err = tx.First(&ct, q.CardTypeID).Error; err != nil {
		return "", "", err
	}
	return t.Name, ct.Name, nil
}

// quotaRequestLink is where a notice about a request leads: the quota's
// row on the quota page.
func quotaRequestLink(quotaID int64) string { return fmt.Sprintf("/quotas#quota-%d", quotaID) }

// CreateQuotaRequest asks to renew or adjust a quota. At most one request
// per quota is pending; every active admin gets an in-app notice.
func (s *Store) CreateQuotaRequest(ctx context.Context, in QuotaRequestInput) (*QuotaRequest, error) {
	const op = "store.CreateQuotaRequest"
	var r QuotaRequest
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		r = QuotaRequest{}
		u, err := actorUser(ctx, tx, op)
		if err != nil {
			return err
		}
		// The quota's row lock makes "one pending request per quota" hold
		// against two askers at once (MySQL; SQLite has one writer).
		var q Quota
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&q, in.QuotaID).Error; err != nil {
			return withKey(translate(op, err), "quota.not_found")
		}
		if err := mayRequestQuota(tx, op, u, q.TeamID); err != nil {
			return err
		}
		r = in.asked(q)
		if err := validateQuotaRequest(op, r, q, s.now()); err != nil {
			return err
		}
		var pending int64
		if err := tx.Model(&QuotaRequest{}).Where("state = ? AND quota_id = ?", QuotaRequestPending, q.ID).Count(&pending).Error; err != nil {
			return err
		}
		if pending > 0 {
			return errs.E(errs.Conflict, op, "quota_request.pending_exists")
		}
		now := s.now()
		r.RequestedBy, r.State, r.CreatedAt, r.UpdatedAt = u.ID, QuotaRequestPending, now, now
		if err := tx.Create(&r).Error; err != nil {
			return err
		}
		if err := s.auditNoted(ctx, tx, "create", "quota_request", r.ID, auditMsg("audit.sum.quota_request", argKey("qreq.kind."+r.Kind), argText(q.ID)), nil, r); err != nil {
			return err
		}
		team, cardType, err := quotaNames(tx, q)
		if err != nil {
			return err
		}
		admins, err := activeAdminIDs(tx)
		if err != nil {
			return err
		}
		key := "notify.quota_request_" + r.Kind
		for _, id := range admins {
			if id == u.ID {
				continue // an admin asking needs no notice of it
			}
			if err := s.notify(tx, id, "quota_request", key, quotaRequestLink(q.ID), team, cardType, u.Username); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// FindQuotaRequests lists requests newest first: an admin's all of them,
// anyone else's those of their own teams.
func (s *Store) FindQuotaRequests(ctx context.Context, f QuotaRequestFilter) ([]QuotaRequestView, error) {
	const op = "store.FindQuotaRequests"
	db := s.read(ctx)
	u, err := actorUser(ctx, db, op)
	if err != nil {
		return nil, err
	}
	q := db.Table("quota_requests r").
		Select("r.*, t.name AS team_name, ct.name AS card_type_name, ru.username AS requester_name, " +
			"COALESCE(du.username, '') AS decider_name, qu.card_seconds AS quota_seconds, qu.max_cards AS quota_max_cards, qu.expires_at AS quota_expires_at").
		Joins("JOIN quotas qu ON qu.id = r.quota_id").
		Joins("JOIN teams t ON t.id = r.team_id").
		Joins("JOIN card_types ct ON ct.id = qu.card_type_id").
		Joins("JOIN users ru ON ru.id = r.requested_by").
		Joins("LEFT JOIN users du ON du.id = r.decided_by")
	if u.Role != RoleAdmin {
		q = q.Where("r.team_id IN (?)", db.Model(&Membership{}).Select("team_id").Where("user_id = ?", u.ID))
	}
	if f.TeamIDs != nil {
		if len(f.TeamIDs) == 0 {
			return []QuotaRequestView{}, nil
		}
		q = q.Where("r.team_id IN ?", f.TeamIDs)
	}
	if f.QuotaID != 0 {
		q = q.Where("r.quota_id = ?", f.QuotaID)
	}
	if f.State != "" {
		q = q.Where("r.state = ?", f.State)
	}
	out := []QuotaRequestView{}
	if err := q.Order("r.id DESC").Scan(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	for i := range out {
		v := &out[i]
		v.AskedCardHours = v.CardHours()
		v.QuotaHours = schedule.CardHours(v.QuotaSeconds)
	}
	return out, nil
}

// FindQuotaRequestByID returns one request the reader may see.
func (s *Store) FindQuotaRequestByID(ctx context.Context, id int64) (*QuotaRequestView, error) {
	const op = "store.FindQuotaRequestByID"
	var r QuotaRequest
	if err := s.read(ctx).First(&r, id).Error; err != nil {
		return nil, withKey(translate(op, err), "quota_request.not_found")
	}
	vs, err := s.FindQuotaRequests(ctx, QuotaRequestFilter{QuotaID: r.QuotaID})
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i].ID == id {
			return &vs[i], nil
		}
	}
	return nil, errs.E(errs.NotFound, op, "quota_request.not_found")
}

// DecideQuotaRequest approves or refuses a pending request; admins only. A
// refusal needs a note. Approving applies the asked values to the quota in
// the same transaction, through the quota's own update path and its
// validation; the values the request did not ask stay as the quota has
// them at the decision. A quota changed since the request was made is no
// reason to refuse it: the asked values are applied as asked (the page
// shows the decider the quota's values now beside them), and if they no
// longer make a valid quota the approval fails with the quota's own error
// and the request stays pending. The requester is notified either way.
func (s *Store) DecideQuotaRequest(ctx context.Context, id int64, approve bool, note string) (*QuotaRequest, error) {
	const op = "store.DecideQuotaRequest"
	note = strings.TrimSpace(note)
	v := errs.NewValidation(op)
	v.Check(approve || note != "", "note", "quota_request.note_required")
	v.Check(len([]rune(note)) <= quotaRequestTextMax, "note", "quota_request.note_too_long")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var r QuotaRequest
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		r = QuotaRequest{}
		u, err := actorUser(ctx, tx, op)
		if err != nil {
			return err
		}
		if u.Role != RoleAdmin {
			return errs.E(errs.Forbidden, op, "quota_request.admin_only")
		}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&r, id).Error; err != nil {
			return withKey(translate(op, err), "quota_request.not_found")
		}
		if r.State != QuotaRequestPending {
			return errs.E(errs.Conflict, op, "quota_request.decided")
		}
		var q Quota
		if err := tx.First(&q, r.QuotaID).Error; err != nil {
			return withKey(translate(op, err), "quota.not_found")
		}
		before := r
		state, key := QuotaRequestRefused, "notify.quota_request_refused"
		if approve {
			state, key = QuotaRequestApproved, "notify.quota_request_approved"
			in := r.applyTo(q.input())
			if err := in.validate(op); err != nil {
				return err
			}
			if _, err := s.updateQuota(ctx, tx, op, q.ID, in); err != nil {
				return err
			}
		}
		now := s.now()
		decider := u.ID
		r.State, r.DecidedBy, r.DecidedAt, r.DecisionNote, r.UpdatedAt = state, &decider, &now, note, now
		if err := tx.Save(&r).Error; err != nil {
			return err
		}
		action := "refuse"
		if approve {
			action = "approve"
		}
		if err := s.auditNoted(ctx, tx, action, "quota_request", r.ID, auditMsg("audit.sum.quota_request", argKey("qreq.kind."+r.Kind), argText(q.ID)), before, r); err != nil {
			return err
		}
		team, cardType, err := quotaNames(tx, q)
		if err != nil {
			return err
		}
		args := []any{team, cardType, note}
		if note == "" {
			// Only an approval may come without a note; its message has none.
			args = args[:2]
		} else if approve {
			key += "_note"
		}
		return s.notify(tx, r.RequestedBy, "quota_request_decided", key, quotaRequestLink(q.ID), args...)
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// MayRequestQuota tells whether the actor may ask to renew or adjust the
// quota: nil when so, not found when the quota is not theirs to see,
// forbidden when they see it but may not ask (pages show why instead of
// the form).
func (s *Store) MayRequestQuota(ctx context.Context, quotaID int64) error {
	const op = "store.MayRequestQuota"
	db := s.read(ctx)
	u, err := actorUser(ctx, db, op)
	if err != nil {
		return err
	}
	var q Quota
	if err := db.First(&q, quotaID).Error; err != nil {
		return withKey(translate(op, err), "quota.not_found")
	}
	if err := mayRequestQuota(db, op, u, q.TeamID); err != nil {
		return translate(op, err)
	}
	return nil
}

// RequestableTeamIDs lists the teams whose quotas the actor may ask to
// renew or adjust (mayRequestQuota's rule, for a list of quotas at once);
// nil for an admin, who may for any team.
func (s *Store) RequestableTeamIDs(ctx context.Context) ([]int64, error) {
	const op = "store.RequestableTeamIDs"
	db := s.read(ctx)
	u, err := actorUser(ctx, db, op)
	if err != nil {
		return nil, err
	}
	if u.Role == RoleAdmin {
		return nil, nil
	}
	var teams []int64
	if err := db.Model(&Membership{}).Where("user_id = ?", u.ID).Order("team_id").Pluck("team_id", &teams).Error; err != nil {
		return nil, translate(op, err)
	}
	out := []int64{}
	for _, id := range teams {
		switch err := mayRequestQuota(db, op, u, id); {
		case err == nil:
			out = append(out, id)
		case errs.Is(err, errs.Forbidden):
		default:
			return nil, translate(op, err)
		}
	}
	return out, nil
}
