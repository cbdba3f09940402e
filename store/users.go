package store

import (
	"context"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"cardhour/errs"
)

// Site roles, from most to least powerful. A user's site role decides which
// routes they may use; team memberships decide whose tasks they see.
const (
	RoleAdmin   = "admin"
	RoleManager = "manager"
	RoleMember  = "member"
	RoleViewer  = "viewer"
)

// Roles lists the site roles, most powerful first.
var Roles = []string{RoleAdmin, RoleManager, RoleMember, RoleViewer}

// RoleRank orders roles: a higher rank may do everything a lower one may.
func RoleRank(role string) int {
	switch role {
	case RoleAdmin:
		return 4
	case RoleManager:
		return 3
	case RoleMember:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// MinPasswordLength applies to passwords set through the portal; the
// bootstrap password from the environment is the operator's choice.
const MinPasswordLength = 8

// User is an account.
type User struct {
	ID                int64     `json:"id"`
	Username          string    `json:"username"`
	DisplayName       string    `json:"display_name"`
	Email             string    `json:"email"`
	PasswordHash      string    `json:"-"`
	Role              string    `json:"role"`
	Disabled          bool      `json:"disabled"`
	PasswordChangedAt time.Time `json:"password_changed_at"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	// OSAccounts are the OS account names the person runs GPU processes
	// as: a process of one of them on a card booked by another team is
	// foreign use.
	OSAccounts NameList `json:"os_accounts" gorm:"column:os_accounts"`
	// Lang is the language mail and the API speak to the user in; empty
	// is the portal's default.
	Lang string `json:"lang"`
	// QuietFrom and QuietTo are the user's quiet hours for mail and chat,
	// minutes of the day in the portal's zone; equal means none.
	QuietFrom int `json:"quiet_from"`
	QuietTo   int `json:"quiet_to"`
	// DigestMinute is when a manager's daily digest goes out, a minute of
	// the day in the portal's zone; -1 is none.
	DigestMinute int `json:"digest_minute"`
}

// DefaultDigestMinute is when a new manager's daily digest goes out: 09:00
// in the portal's zone, the start of a working day.
const DefaultDigestMinute = 9 * 60

// Limits of a user's OS accounts.
const (
	MaxOSAccounts   = 16
	osAccountsWidth = 500 // characters of users.os_accounts
)

// osAccountRule is the rule of a Linux account name (useradd's default).
var osAccountRule = nameRule{field: "os_accounts", pattern: regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`), max: MaxOSAccounts,
	width: osAccountsWidth, invalid: "user.os_account_invalid", tooMany: "user.os_accounts_too_many", tooLong: "user.os_accounts_too_long"}

// Name is what the UI shows for the user.
func (u User) Name() string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.Username
}

// UserCreate is the input of CreateUser.
type UserCreate struct {
	Username    string `json:"username" form:"username"`
	DisplayName string `json:"display_name" form:"display_name"`
	Email       string `json:"email" form:"email"`
	Password    string `json:"password" form:"password"`
	Role        string `json:"role" form:"role"`
	// OSAccounts: see User.OSAccounts.
	OSAccounts []string `json:"os_accounts,omitempty" form:"os_accounts"`
	// bootstrap skips the length rule for the first admin.
	bootstrap bool
}

// UserUpdate changes the fields that are set.
type UserUpdate struct {
	DisplayName *string `json:"display_name"`
	Email       *string `json:"email"`
	Role        *string `json:"role"`
	Disabled    *bool   `json:"disabled"`
	Password    *string `json:"password"`
	// OSAccounts, when set, replaces the user's OS accounts.
	OSAccounts *[]string `json:"os_accounts,omitempty"`
}

// UserFilter narrows FindUsers.
type UserFilter struct {
	Query string
	Limit int
}

var usernamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,63}$`)
var emailPattern = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

func (in *UserCreate) validate() error {
	in.Username = strings.ToLower(strings.TrimSpace(in.Username))
	in.DisplayName = strings.TrimSpace(in.DisplayName)
	in.Email = strings.TrimSpace(in.Email)
	if in.Role == "" {
		in.Role = RoleMember
	}
	v := errs.NewValidation("store.CreateUser")
	// The length first: a name past the limit hears the limit, not the pattern.
	UserLimits.checkLen(v, "username", in.Username)
	v.Check(usernamePattern.MatchString(in.Username), "username", "user.username_invalid")
	UserLimits.checkLen(v, "display_name", in.DisplayName)
	v.Check(in.Email == "" || emailPattern.MatchString(in.Email), "email", "user.email_invalid")
	v.Check(RoleRank(in.Role) > 0, "role", "user.role_invalid")
	if in.bootstrap {
		v.Check(in.Password != "", "password", "user.password_required")
	} else {
		v.Check(len([]rune(in.Password)) >= MinPasswordLength, "password", "user.password_short")
	}
	v.Check(len(in.Password) <= 72, "password", "user.password_long")
	return v.Err()
}

func hashPassword(op, pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return "", errs.Internalf(op, "bcrypt: %w", err)
	}
	return string(h), nil
}

// CreateUser adds an account.
func (s *Store) CreateUser(ctx context.Context, in UserCreate) (*User, error) {
	const op = "store.CreateUser"
	if err := in.validate(); err != nil {
		return nil, err
	}
	accounts, err := osAccountRule.clean(op, in.OSAccounts)
	if err != nil {
		return nil, err
	}
	hash, err := hashPassword(op, in.Password)
	if err != nil {
		return nil, err
	}
	now := s.now()
	u := new(User)
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*u = User{Username: in.Username, DisplayName: in.DisplayName, Email: in.Email, PasswordHash: hash,
			Role: in.Role, PasswordChangedAt: now, CreatedAt: now, UpdatedAt: now, OSAccounts: accounts, DigestMinute: DefaultDigestMinute}
		if err := tx.Create(u).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "user", u.ID, u.Username, nil, u)
	})
	if isDuplicate(err) {
		return nil, &errs.Error{Code: errs.Conflict, Op: op, Key: "user.username_taken", Fields: map[string]string{"username": "user.username_taken"}, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return u, nil
}

// EnsureAdmin creates the account admin on an empty database. It returns
// created=false when any user exists already.
func (s *Store) EnsureAdmin(ctx context.Context, password string) (created bool, err error) {
	var n int64
	if err := s.read(ctx).Model(&User{}).Count(&n).Error; err != nil {
		return false, translate("store.EnsureAdmin", err)
	}
	if n > 0 {
		return false, nil
	}
	_, err = s.CreateUser(ctx, UserCreate{Username: "admin", DisplayName: "Administrator", Password: password, Role: RoleAdmin, bootstrap: true})
	if errs.Is(err, errs.Conflict) {
		// Another replica starting on the same empty database created it a
		// moment ago (and loads the demo data, if any).
		if _, ferr := s.FindUserByUsername(ctx, "admin"); ferr == nil {
			return false, nil
		}
	}
	return err == nil, err
}

// FindUserByID returns one user.
func (s *Store) FindUserByID(ctx context.Context, id int64) (*User, error) {
	var u User
	if err := s.read(ctx).First(&u, id).Error; err != nil {
		return nil, withKey(translate("store.FindUserByID", err), "user.not_found")
	}
	return &u, nil
}

// FindUserByUsername returns one user by login name.
func (s *Store) FindUserByUsername(ctx context.Context, username string) (*User, error) {
	var u User
	if err := s.read(ctx).Where("username = ?", strings.ToLower(strings.TrimSpace(username))).First(&u).Error; err != nil {
		return nil, withKey(translate("store.FindUserByUsername", err), "user.not_found")
	}
	return &u, nil
}

// FindUsers lists users by username.
func (s *Store) FindUsers(ctx context.Context, f UserFilter) ([]User, error) {
	q := s.read(ctx).Order("username")
	if f.Query != "" {
		like := "%" + strings.ToLower(f.Query) + "%"
		q = q.Where("username LIKE ? OR display_name LIKE ?", like, like)
	}
	var out []User
	if err := q.Limit(limitOr(f.Limit, 500)).Find(&out).Error; err != nil {
		return nil, translate("store.FindUsers", err)
	}
	return out, nil
}

// UpdateUser changes an account. Disabling or demoting the last active admin
// is refused so the portal never locks itself out.
func (s *Store) UpdateUser(ctx context.Context, id int64, up UserUpdate) (*User, error) {
	const op = "store.UpdateUser"
	v := errs.NewValidation(op)
	if up.Role != nil {
		v.Check(RoleRank(*up.Role) > 0, "role", "user.role_invalid")
	}
	if up.Email != nil {
		e := strings.TrimSpace(*up.Email)
		up.Email = &e
		v.Check(e == "" || emailPattern.MatchString(e), "email", "user.email_invalid")
	}
	if up.DisplayName != nil {
		d := strings.TrimSpace(*up.DisplayName)
		up.DisplayName = &d
		UserLimits.checkLen(v, "display_name", d)
	}
	if up.Password != nil {
		v.Check(len([]rune(*up.Password)) >= MinPasswordLength, "password", "user.password_short")
		v.Check(len(*up.Password) <= 72, "password", "user.password_long")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	var accounts NameList
	if up.OSAccounts != nil {
		var err error
		if accounts, err = osAccountRule.clean(op, *up.OSAccounts); err != nil {
			return nil, err
		}
	}
	var hash string
	if up.Password != nil {
		h, err := hashPassword(op, *up.Password)
		if err != nil {
			return nil, err
		}
		hash = h
	}
	var u User
	// After the commit, API tokens look their user up again (ttl_cache.go).
	defer s.changed(ChangeUsers)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		u = User{}
		if err := tx.First(&u, id).Error; err != nil {
			return withKey(translate(op, err), "user.not_found")
		}
		before := u
		if up.DisplayName != nil {
			u.DisplayName = *up.DisplayName
		}
		if up.Email != nil {
			u.Email = *up.Email
		}
		if up.Role != nil {
			u.Role = *up.Role
		}
		if up.Disabled != nil {
			u.Disabled = *up.Disabled
		}
		if up.OSAccounts != nil {
			u.OSAccounts = accounts
		}
		if hash != "" {
			u.PasswordHash = hash
			u.PasswordChangedAt = s.now()
		}
		if u.Role != RoleAdmin || u.Disabled {
			last, err := isLastAdmin(tx, before)
			if err != nil {
				return err
			}
			if last {
				return errs.E(errs.Conflict, op, "user.last_admin")
			}
		}
		u.UpdatedAt = s.now()
		if err := tx.Save(&u).Error; err != nil {
			return err
		}
		if hash != "" {
			// A new password ends every session of the account and revokes
			// its API tokens: whoever knew the old password may have made
			// them, and a token outliving the reset would keep them in.
			if err := tx.Where("user_id = ?", id).Delete(&Session{}).Error; err != nil {
				return err
			}
			if _, err := s.revokeUserTokens(ctx, tx, id); err != nil {
				return err
			}
		}
		return s.audit(ctx, tx, "update", "user", u.ID, u.Username, before, u)
	})
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// isLastAdmin tells whether u is the portal's last active admin, whom no
// change may demote or disable: the portal would lock itself out.
func isLastAdmin(tx *gorm.DB, u User) (bool, error) {
	if u.Role != RoleAdmin || u.Disabled {
		return false, nil
	}
	var others int64
	err := tx.Model(&User{}).Where("role = ? AND disabled = ? AND id <> ?", RoleAdmin, false, u.ID).Count(&others).Error
	return others == 0, err
}

// ChangePassword checks the current password before setting a new one.
func (s *Store) ChangePassword(ctx context.Context, id int64, current, next string) error {
	const op = "store.ChangePassword"
	u, err := s.FindUserByID(ctx, id)
	if err != nil {
		return err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(current)) != nil {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "user.current_password_wrong", Fields: map[string]string{"current": "user.current_password_wrong"}}
	}
	_, err = s.UpdateUser(ctx, id, UserUpdate{Password: &next})
	return err
}

// Authenticate returns the user when the password matches. Unknown users
// and wrong passwords give the same error, and both cost one bcrypt compare
// so timing does not tell which.
func (s *Store) Authenticate(ctx context.Context, username, password string) (*User, error) {
	const op = "store.Authenticate"
	u, err := s.FindUserByUsername(ctx, username)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return nil, err
	}
	hash := dummyHash
	if u != nil {
		hash = u.PasswordHash
	}
	match := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
	if u == nil || !match || u.Disabled {
		return nil, errs.E(errs.Unauthorized, op, "auth.bad_credentials")
	}
	return u, nil
}

// dummyHash is a bcrypt hash of a random string, compared against when the
// user does not exist.
const dummyHash = "$2a$10$7EqJtq98hPqEX7fNZaFWoOHi5gK6R3wF8rY8P2wV7p8Q5s6uYQZ9m"
