package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Token kinds. A user token acts as its user on /api/v1; later kinds (agent,
// board) are narrower and checked by the routes that accept them.
const (
	TokenUser = "user"
)

// APIToken is a bearer credential; its secret is shown once and stored only
// as a hash.
type APIToken struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	Name       string     `json:"name"`
	Kind       string     `json:"kind"`
	Prefix     string     `json:"prefix"`
	TokenHash  string     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// CreateAPIToken issues a token for the user and returns its secret once.
func (s *Store) CreateAPIToken(ctx context.Context, userID int64, name, kind string) (*APIToken, string, error) {
	const op = "store.CreateAPIToken"
	name = strings.TrimSpace(name)
	if name == "" {
		name = "api"
	}
	v := errs.NewValidation(op)
	v.Check(len([]rune(name)) <= 100, "name", "field.too_long")
	v.Check(kind == TokenUser, "kind", "token.kind_invalid")
	if err := v.Err(); err != nil {
		return nil, "", err
	}
	secret, hash, err := newSecret("cht_")
	if err != nil {
		return nil, "", errs.Internalf(op, "random: %w", err)
	}
	t := &APIToken{UserID: userID, Name: name, Kind: kind, Prefix: secret[:8], TokenHash: hash, CreatedAt: s.now()}
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		if err := tx.First(&User{}, userID).Error; err != nil {
			return withKey(translate(op, err), "user.not_found")
		}
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "api_token", t.ID, t.Name, nil, t)
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// FindTokenUser resolves a bearer secret to its token and user.
func (s *Store) FindTokenUser(ctx context.Context, secret string) (*APIToken, *User, error) {
	const op = "store.FindTokenUser"
	var t APIToken
	// Only user tokens act as a user: agent and board tokens (telemetry) are
	// narrower and are checked by the routes that accept them.
	if err := s.read(ctx).Where("token_hash = ? AND kind = ? AND revoked_at IS NULL", HashSecret(secret), TokenUser).First(&t).Error; err != nil {
		if e := translate(op, err); !errs.Is(e, errs.NotFound) {
			return nil, nil, e
		}
		return nil, nil, errs.E(errs.Unauthorized, op, "auth.token_invalid")
	}
	u, err := s.FindUserByID(ctx, t.UserID)
	if err != nil {
		return nil, nil, err
	}
	if u.Disabled {
		return nil, nil, errs.E(errs.Unauthorized, op, "auth.disabled")
	}
	// Last use is a hint for admins; losing it on a busy database is fine,
	// and writing it at most once a minute keeps reads from becoming writes.
	// Only the first of the requests arriving together writes it: when all
	// of a busy client's requests tried at once, they queued for SQLite's
	// write lock behind the bookings.
	now := s.now()
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > time.Minute {
		if last, seen := s.tokenUse.Swap(t.ID, now); !seen || now.Sub(last.(time.Time)) > time.Minute {
			_ = s.tx(ctx, op, func(tx *gorm.DB) error {
				return tx.Model(&APIToken{}).Where("id = ?", t.ID).Update("last_used_at", now).Error
			})
		}
	}
	return &t, u, nil
}

// FindAPITokens lists a user's tokens (all users' when userID is 0).
func (s *Store) FindAPITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	q := s.read(ctx).Order("id DESC")
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	var out []APIToken
	if err := q.Find(&out).Error; err != nil {
		return nil, translate("store.FindAPITokens", err)
	}
	return out, nil
}

// RevokeAPIToken disables a token; userID 0 lets an admin revoke anyone's.
func (s *Store) RevokeAPIToken(ctx context.Context, id, userID int64) error {
	const op = "store.RevokeAPIToken"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var t APIToken
		q := tx.Where("id = ?", id)
		if userID != 0 {
			q = q.Where("user_id = ?", userID)
		}
		if err := q.First(&t).Error; err != nil {
			return withKey(translate(op, err), "token.not_found")
		}
		if t.RevokedAt != nil {
			return nil
		}
		before := t
		now := s.now()
		t.RevokedAt = &now
		if err := tx.Save(&t).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "revoke", "api_token", t.ID, t.Name, before, t)
	})
}
