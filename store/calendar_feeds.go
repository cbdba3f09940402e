package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// CalendarFeed is a secret iCalendar URL for one user's or one team's
// bookings. Only its hash is stored; asking again replaces it.
type CalendarFeed struct {
	ID        int64
	UserID    *int64
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
			f.TeamID = &teamID
			q = q.Where("team_id = ?", teamID)
		} else {
			f.UserID = &userID
			q = q.Where("user_id = ?", userID)
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

// FindCalendarFeed resolves a feed secret to what it shows.
func (s *Store) FindCalendarFeed(ctx context.Context, secret string) (*CalendarFeed, error) {
	var f CalendarFeed
	if err := s.read(ctx).Where("token_hash = ?", HashSecret(secret)).First(&f).Error; err != nil {
		return nil, withKey(translate("store.FindCalendarFeed", err), "feed.not_found")
	}
	return &f, nil
}
