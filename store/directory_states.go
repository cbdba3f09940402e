package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// LoginState is what an OpenID Connect round trip keeps between the
// redirect to the provider and its callback: the state (whose hash alone
// is stored), the nonce the ID token must carry, the PKCE verifier and
// where to go afterwards.
type LoginState struct {
	State, Nonce, Verifier, Next string
	ExpiresAt                    time.Time
}

// loginStateRow is a LoginState as stored.
type loginStateRow struct {
	StateHash string `gorm:"primaryKey"`
	Nonce     string
	Verifier  string
	NextURL   string
	ExpiresAt time.Time
	CreatedAt time.Time
}

func (loginStateRow) TableName() string { return "login_states" }

// Widths of login_states' columns.
const (
	loginStateWidth = 255
	nextURLWidth    = 1024
)

// SaveLoginState keeps st for its callback, which may land on any replica.
// Expired round trips are swept here: sign-ins are rare enough.
func (s *Store) SaveLoginState(ctx context.Context, st LoginState) error {
	const op = "store.SaveLoginState"
	now := s.now()
	if st.State == "" || len(st.Nonce) > loginStateWidth || len(st.Verifier) > loginStateWidth || !st.ExpiresAt.After(now) {
		return errs.Internalf(op, "login state without a state, with too long a nonce or verifier, or expired")
	}
	if len(st.Next) > nextURLWidth {
		st.Next = ""
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		if err := tx.Where("expires_at < ?", now).Delete(&loginStateRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&loginStateRow{StateHash: HashSecret(st.State), Nonce: st.Nonce, Verifier: st.Verifier,
			NextURL: st.Next, ExpiresAt: st.ExpiresAt.UTC(), CreatedAt: now}).Error
	})
}

// TakeLoginState returns the round trip of state and deletes it: a state
// is good once. Its DELETE decides — of two callbacks with one state on
// two replicas, only the one whose DELETE removed the row has it. A
// missing, taken or expired state is refused (auth.sso_state_invalid).
func (s *Store) TakeLoginState(ctx context.Context, state string) (*LoginState, error) {
	const op = "store.TakeLoginState"
	refused := errs.E(errs.Unauthorized, op, "auth.sso_state_invalid")
	if state == "" {
		return nil, refused
	}
	hash := HashSecret(state)
	var out *LoginState
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		out = nil
		var row loginStateRow
		res := tx.Where("state_hash = ?", hash).Limit(1).Find(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return refused
		}
		del := tx.Where("state_hash = ?", hash).Delete(&loginStateRow{})
		if del.Error != nil {
			return del.Error
		}
		if del.RowsAffected != 1 {
			return refused
		}
		if !row.ExpiresAt.After(s.now()) {
			// Deleted all the same, and the deletion kept: nil commits it.
			return nil
		}
		out = &LoginState{State: state, Nonce: row.Nonce, Verifier: row.Verifier, Next: row.NextURL, ExpiresAt: row.ExpiresAt}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, refused
	}
	return out, nil
}

// portalSetting is one setting an admin changes at run time.
type portalSetting struct {
	Name      string `gorm:"primaryKey"`
	Value     string
	UpdatedAt time.Time
}

func (portalSetting) TableName() string { return "portal_settings" }

// settingLocalLogin: "on" or "off"; no row is on.
const settingLocalLogin = "local_login"

// LocalLoginEnabled tells whether accounts may sign in with a password
// (BootstrapUsername always may); on until an admin turns it off.
func (s *Store) LocalLoginEnabled(ctx context.Context) (bool, error) {
	var row portalSetting
	res := s.read(ctx).Where("name = ?", settingLocalLogin).Limit(1).Find(&row)
	if res.Error != nil {
		return false, translate("store.LocalLoginEnabled", res.Error)
	}
	return res.RowsAffected == 0 || row.Value != "off", nil
}

// SetLocalLogin turns password sign-in on or off for every account but
// BootstrapUsername.
func (s *Store) SetLocalLogin(ctx context.Context, on bool) error {
	const op = "store.SetLocalLogin"
	value, key := "off", "audit.sum.local_login_off"
	if on {
		value, key = "on", "audit.sum.local_login_on"
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		now := s.now()
		res := tx.Model(&portalSetting{}).Where("name = ?", settingLocalLogin).Updates(map[string]any{"value": value, "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Ignoring a duplicate: another admin set it a moment ago; the
			// UPDATE below makes this call's value the last one.
			if _, err := insertIgnoring(tx, &portalSetting{Name: settingLocalLogin, Value: value, UpdatedAt: now}); err != nil {
				return err
			}
			if err := tx.Model(&portalSetting{}).Where("name = ?", settingLocalLogin).Updates(map[string]any{"value": value, "updated_at": now}).Error; err != nil {
				return err
			}
		}
		return s.auditNoted(ctx, tx, "update", "portal_setting", 0, auditMsg(key), nil, map[string]string{settingLocalLogin: value})
	})
}
