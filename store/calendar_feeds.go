package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// CalendarFeed is a secret iCalendar URL for one user's or one team's
// bookings. Only its hash is stored; asking again replaces it. A team's
// feed (TeamID set) keeps in UserID who asked for it: the feed lasts only
// while they may still read the team's bookings (FindCalendarFeed).
type CalendarFeed struct {
	ID        int64
	UserID    *int64 // the user of a personal feed; the creator of a team's
	TeamID    *int64
	TokenHash string
	CreatedAt time.Time
}

func (CalendarFeed) TableName() string { return "calendar_feeds" }

// CreateCalendarFeed issues a new secret for the user's own feed (teamID 0)
// or a team's feed, revoking the previous one.
func (s *Store) CreateCalendarFeed(ctx context.Context, userID, teamID int64) (string, error) {
	const op = "store.CreateCalendarFeed"
	secret, hash, err := newSecret("chc_")
	if err != nil {
		return "", errs.Internalf(op, "random: %w", err)
	}
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		f := CalendarFeed{TokenHash: hash, CreatedAt: s.now()}
		q := tx.Model(&CalendarFeed{})
		if teamID != 0 {
			u, err := actorUser(ctx, tx, op)
			if err != nil {
				return err
			}
			r, err := teamRole(tx, teamID, u.ID)
			if err != nil {
				return err
			}
			if r == "" && u.Role != RoleAdmin {
				return errs.E(errs.Forbidden, op, "booking.not_your_team")
			}
			f.TeamID, f.UserID = &teamID, &u.ID
			q = q.Where("team_id = ?", teamID)
		} else {
			// Their own feed only: the team feeds they asked for stay.
			f.UserID = &userID
			q = q.Where("user_id = ? AND team_id IS NULL", userID)
		}
		if err := q.Delete(&CalendarFeed{}).Error; err != nil {
			return err
		}
		if err := tx.Create(&f).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "calendar_feed", f.ID, "", nil, nil)
	})
	return secret, err
}

// FindCalendarFeed resolves a feed secret to what it shows. The secret is
// a credential that outlives no one's access: a personal feed stops when
// its user is disabled, a team's when its creator is disabled or no longer
// a member of the team (admins need no membership, as to create it) — and
// starts again if they return. A feed that stopped is not found, as an
// unknown secret is.
func (s *Store) FindCalendarFeed(ctx context.Context, secret string) (*CalendarFeed, error) {
	const op = "store.FindCalendarFeed"
	notFound := errs.E(errs.NotFound, op, "feed.not_found")
	var f CalendarFeed
	if err := s.read(ctx).Where("token_hash = ?", HashSecret(secret)).First(&f).Error; err != nil {
		return nil, withKey(translate(op, err), "feed.not_found")
	}
	owner := int64(0)
	if f.UserID != nil {
		owner = *f.UserID
	} else if f.TeamID != nil {
		// Team feeds issued before their creator was kept: the audit entry
		// of the feed's creation names who asked.
		var actors []int64
		if err := s.read(ctx).Table("audit_log").Where("entity = ? AND entity_id = ? AND action = ? AND actor_id IS NOT NULL", "calendar_feed", f.ID, "create").
			Order("id DESC").Limit(1).Pluck("actor_id", &actors).Error; err != nil {
			return nil, translate(op, err)
		}
		if len(actors) > 0 {
			owner = actors[0]
		}
	}
	if owner == 0 {
		return nil, notFound
	}
	u, err := s.FindUserByID(ctx, owner)
	if errs.Is(err, errs.NotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, notFound
	}
	if f.TeamID != nil && u.Role != RoleAdmin {
		r, err := teamRole(s.read(ctx), *f.TeamID, u.ID)
		if err != nil {
			return nil, translate(op, err)
		}
		if r == "" {
			return nil, notFound
		}
	}
	return &f, nil
}
