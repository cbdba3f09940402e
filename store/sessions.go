package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Session is a browser login. Only the hash of its token is stored, so a
// copy of the database does not log anyone in.
type Session struct {
	ID        int64
	TokenHash string
	UserID    int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SessionTTL is how long a login lasts.
const SessionTTL = 7 * 24 * time.Hour

// newSecret returns a random token with a readable prefix and its hash.
func newSecret(prefix string) (token, hash string, err error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = prefix + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	return token, HashSecret(token), nil
}

// HashSecret is the stored form of a session or API token.
func HashSecret(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateSession logs a user in and returns the cookie value.
func (s *Store) CreateSession(ctx context.Context, userID int64) (string, error) {
	const op = "store.CreateSession"
	token, hash, err := newSecret("chs_")
	if err != nil {
		return "", errs.Internalf(op, "random: %w", err)
	}
	now := s.now()
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		sess := Session{TokenHash: hash, UserID: userID, CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}
		// Checked rather than left to the foreign key: SQLite and MySQL
		// report a missing parent with different codes.
		if err := tx.First(&User{}, userID).Error; err != nil {
			return withKey(translate(op, err), "user.not_found")
		}
		// Expired sessions are swept here rather than by a timer: logins are
		// rare enough and this keeps the table small without a background job.
		if err := tx.Where("expires_at < ?", now).Delete(&Session{}).Error; err != nil {
			return err
		}
		if err := tx.Create(&sess).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "login", "user", userID, "", nil, nil)
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// FindSessionUser returns the user behind a live session token.
func (s *Store) FindSessionUser(ctx context.Context, token string) (*User, error) {
	const op = "store.FindSessionUser"
	var sess Session
	err := s.read(ctx).Where("token_hash = ? AND expires_at > ?", HashSecret(token), s.now()).First(&sess).Error
	if err != nil {
		return nil, withKey(translate(op, err), "auth.session_expired")
	}
	u, err := s.FindUserByID(ctx, sess.UserID)
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, errs.E(errs.Unauthorized, op, "auth.disabled")
	}
	return u, nil
}

// DeleteSession logs out.
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	const op = "store.DeleteSession"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var sess Session
		if err := tx.Where("token_hash = ?", HashSecret(token)).First(&sess).Error; err != nil {
			if errs.Is(translate(op, err), errs.NotFound) {
				return nil
			}
			return err
		}
		if err := tx.Delete(&sess).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "logout", "user", sess.UserID, "", nil, nil)
	})
}
