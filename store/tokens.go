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
	// Hosts are the host names an agent token may report (lowercased);
	// none until it is issued for hosts or reports its first one.
	Hosts NameList `json:"hosts,omitempty"`
}

// CreateAPIToken issues a token for the user and returns its secret once.
func (s *Store) CreateAPIToken(ctx context.Context, userID int64, name, kind string) (*APIToken, string, error) {
	const op = "store.CreateAPIToken"
	name = strings.TrimSpace(name)
	if name == "" {
		name = "api"
	}
	v := errs.NewValidation(op)
	TokenLimits.checkLen(v, "name", name)
	v.Check(kind == TokenUser, "kind", "token.kind_invalid")
	if err := v.Err(); err != nil {
		return nil, "", err
	}
	secret, hash, err := newSecret("cht_")
	if err != nil {
		return nil, "", errs.Internalf(op, "random: %w", err)
	}
	now := s.now()
	t := new(APIToken)
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*t = APIToken{UserID: userID, Name: name, Kind: kind, Prefix: secret[:8], TokenHash: hash, CreatedAt: now}
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
	hash := HashSecret(secret)
	var t *APIToken
	var u *User
	if e, ok := s.tokenCache.get(hash); ok {
		t, u = &e.token, &e.user // copies: the caller may change them
	} else {
		gen := s.tokenCache.generation()
		var err error
		if t, u, err = s.readTokenUser(ctx, hash); err != nil {
			return nil, nil, err
		}
		s.tokenCache.put(hash, cachedToken{token: *t, user: *u}, gen)
	}
	// Last use is a hint for admins; losing it on a busy database is fine,
	// and writing it at most once a minute keeps reads from becoming writes.
	// Only the first of the requests arriving together writes it: when all
	// of a busy client's requests tried at once, they queued for SQLite's
	// write lock behind the bookings.
	now := s.now()
	recent := func(last any, seen bool) bool { return seen && now.Sub(last.(time.Time)) <= time.Minute }
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > time.Minute {
		// A remembered token shows an older last use than this process may
		// have recorded lately: check that first, and claim the write.
		if !recent(s.tokenUse.Load(t.ID)) && !recent(s.tokenUse.Swap(t.ID, now)) {
			_ = s.tx(ctx, op, func(tx *gorm.DB) error {
				return tx.Model(&APIToken{}).Where("id = ?", t.ID).Update("last_used_at", now).Error
			})
		}
	}
	return t, u, nil
}

// readTokenUser reads a live user token and its enabled user.
func (s *Store) readTokenUser(ctx context.Context, hash string) (*APIToken, *User, error) {
	const op = "store.FindTokenUser"
	// The token and its user in one query: every API request asks.
	var row struct {
		APIToken `gorm:"embedded"`
		User     User `gorm:"embedded;embeddedPrefix:u_"`
	}
	// Only user tokens act as a user: agent and board tokens (telemetry) are
	// narrower and are checked by the routes that accept them.
	err := s.read(ctx).Table("api_tokens t").
		Select("t.*, u.id AS u_id, u.username AS u_username, u.display_name AS u_display_name, u.email AS u_email, "+
			"u.password_hash AS u_password_hash, u.role AS u_role, u.disabled AS u_disabled, "+
			"u.password_changed_at AS u_password_changed_at, u.created_at AS u_created_at, u.updated_at AS u_updated_at, "+
			"u.os_accounts AS u_os_accounts").
		Joins("JOIN users u ON u.id = t.user_id").
		Where("t.token_hash = ? AND t.kind = ? AND t.revoked_at IS NULL", hash, TokenUser).
		Take(&row).Error
	if err != nil {
		if e := translate(op, err); !errs.Is(e, errs.NotFound) {
			return nil, nil, e
		}
		return nil, nil, errs.E(errs.Unauthorized, op, "auth.token_invalid")
	}
	if row.User.Disabled {
		return nil, nil, errs.E(errs.Unauthorized, op, "auth.disabled")
	}
	return &row.APIToken, &row.User, nil
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
	// After the commit: a lookup racing the change must not keep the old
	// answer (see ttl_cache.go).
	defer s.changed(ChangeTokens)
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

// RevokeUserAPITokens revokes every live API token of the user (the
// account page's "revoke all my tokens": a token leaked, or the laptop that
// held them is gone), each revocation audited, and says how many.
func (s *Store) RevokeUserAPITokens(ctx context.Context, userID int64) (int, error) {
	const op = "store.RevokeUserAPITokens"
	// After the commit: a lookup racing the change must not keep the old
	// answer (see ttl_cache.go).
	defer s.changed(ChangeTokens)
	var n int
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		var err error
		n, err = s.revokeUserTokens(ctx, tx, userID)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// revokeUserTokens revokes in tx the live user tokens of userID. Agent and
// board tokens are the fleet's, not the person's who issued them: they stay.
// The caller forgets cached lookups after the commit.
func (s *Store) revokeUserTokens(ctx context.Context, tx *gorm.DB, userID int64) (int, error) {
	var live []APIToken
	if err := tx.Where("user_id = ? AND kind = ? AND revoked_at IS NULL", userID, TokenUser).Order("id").Find(&live).Error; err != nil {
		return 0, err
	}
	now := s.now()
	for _, t := range live {
		before := t
		t.RevokedAt = &now
		if err := tx.Save(&t).Error; err != nil {
			return 0, err
		}
		if err := s.audit(ctx, tx, "revoke", "api_token", t.ID, t.Name, before, t); err != nil {
			return 0, err
		}
	}
	return len(live), nil
}
