package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/directory"
	"cardhour/errs"
)

// BootstrapUsername is the account EnsureAdmin makes: it may always sign
// in with its password, so that turning local sign-in off (or a directory
// that is down) never locks the portal's owner out.
const BootstrapUsername = "admin"

// ExternalIdentity is a person as a directory names them, linked to the
// account they sign in as (UserID), or pending (nil) until an admin links
// it to the local account of the same username.
type ExternalIdentity struct {
	ID          int64     `json:"id"`
	Provider    string    `json:"provider"`
	Subject     string    `json:"subject"`
	SubjectHash string    `json:"-"`
	Username    string    `json:"username"`
	DisplayName string    `json:"display_name"`
	Email       string    `json:"email"`
	UserID      *int64    `json:"user_id"`
	SeenAt      time.Time `json:"seen_at"`
	CreatedAt   time.Time `json:"created_at"`
}

// TableName is the migrations' name.
func (ExternalIdentity) TableName() string { return "external_identities" }

// ExternalAccount is a linked identity with its account.
type ExternalAccount struct {
	Identity ExternalIdentity
	User     User
}

// Widths of external_identities' columns.
const (
	subjectWidth  = 512
	identityWidth = 255
)

// subjectHash is the unique key of a directory subject (its 512 characters
// are too wide for a MySQL unique key in utf8mb4).
func subjectHash(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return hex.EncodeToString(sum[:])
}

// cleanIdentity checks what a directory client handed over: a provider the
// portal knows, a subject, and a username that can be an account's.
func cleanIdentity(op string, id directory.Identity) (directory.Identity, error) {
	id.Provider = strings.ToLower(strings.TrimSpace(id.Provider))
	id.Subject = strings.TrimSpace(id.Subject)
	id.Username = strings.ToLower(strings.TrimSpace(id.Username))
	id.DisplayName = truncate(strings.TrimSpace(id.DisplayName), UserLimits["display_name"].MaxLen)
	id.Email = strings.TrimSpace(id.Email)
	if !emailPattern.MatchString(id.Email) || len(id.Email) > identityWidth {
		id.Email = ""
	}
	if id.Provider != directory.LDAP && id.Provider != directory.OIDC {
		return id, errs.Internalf(op, "unknown directory provider %q", id.Provider)
	}
	if id.Subject == "" || len([]rune(id.Subject)) > subjectWidth {
		return id, errs.E(errs.Invalid, op, "directory.subject_invalid")
	}
	if !usernamePattern.MatchString(id.Username) {
		return id, errs.E(errs.Invalid, op, "directory.username_invalid", id.Username)
	}
	return id, nil
}

// validDefaultRole is the role of an account no rule gives one: the
// caller's choice, member when it names none.
func validDefaultRole(op, role string) (string, error) {
	if role == "" {
		return RoleMember, nil
	}
	if RoleRank(role) == 0 {
		return "", errs.Internalf(op, "unknown default role %q", role)
	}
	return role, nil
}

// byDirectory is the summary of a change a directory's groups made.
func byDirectory(provider string) auditNote {
	return auditMsg("audit.sum.by_directory", argKey("directory.provider."+provider))
}

// identityNote is the summary naming an identity: provider and username.
func identityNote(key string, id directory.Identity) auditNote {
	return auditMsg(key, argKey("directory.provider."+id.Provider), argText(id.Username))
}

// findIdentity reads the identity's row; found is false when there is none.
func findIdentity(tx *gorm.DB, id directory.Identity) (row ExternalIdentity, found bool, err error) {
	res := tx.Where("provider = ? AND subject_hash = ?", id.Provider, subjectHash(id.Subject)).Limit(1).Find(&row)
	return row, res.RowsAffected == 1, res.Error
}

// SignInExternal is a directory sign-in. It finds the account linked to the
// identity (provider and subject), or creates one — without a password,
// with the role the rules give or else defaultRole — when no account has
// the username; applies the group rules (applyGroups); updates the display
// name and mail; and audits the sign-in, all in one transaction.
//
// A local account of the same username that is not linked is never taken
// over: the identity is recorded as pending for an admin to link, the
// attempt audited (directory_conflict), and a Conflict returned. A
// disabled account is refused (Unauthorized, auth.disabled).
func (s *Store) SignInExternal(ctx context.Context, id directory.Identity, defaultRole string) (*User, error) {
	const op = "store.SignInExternal"
	id, err := cleanIdentity(op, id)
	if err != nil {
		return nil, err
	}
	if defaultRole, err = validDefaultRole(op, defaultRole); err != nil {
		return nil, err
	}
	var u User
	var conflict, changed bool
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		u, conflict, changed = User{}, false, false
		now := s.now()
		row, found, err := findIdentity(tx, id)
		if err != nil {
			return err
		}
		rules, err := loadRules(tx)
		if err != nil {
			return err
		}
		if found && row.UserID != nil {
			if err := tx.First(&u, *row.UserID).Error; err != nil {
				return withKey(translate(op, err), "user.not_found")
			}
			if u.Disabled {
				return errs.E(errs.Unauthorized, op, "auth.disabled")
			}
		} else {
			res := tx.Where("username = ?", id.Username).Limit(1).Find(&u)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 1 {
				// A local account of that name: the admin decides.
				conflict = true
				if err := s.keepIdentity(tx, &row, found, id, nil, now); err != nil {
					return err
				}
				return s.auditNoted(ctx, tx, "directory_conflict", "external_identity", row.ID, identityNote("audit.sum.directory_identity", id), nil, row)
			}
			role := directory.Map(rules, id, RoleRank).Role
			if role == "" {
				role = defaultRole
			}
			// No password: Authenticate's bcrypt compare fails on an
			// empty hash, so the account signs in through its directory
			// only.
			u = User{Username: id.Username, DisplayName: id.DisplayName, Email: id.Email, Role: role,
				PasswordChangedAt: now, CreatedAt: now, UpdatedAt: now, DigestMinute: DefaultDigestMinute}
			if err := tx.Create(&u).Error; err != nil {
				return err
			}
			if err := s.auditNoted(ctx, tx, "create", "user", u.ID, byDirectory(id.Provider), nil, u); err != nil {
				return err
			}
		}
		if err := s.keepIdentity(tx, &row, found, id, &u.ID, now); err != nil {
			return err
		}
		if changed, err = s.applyGroups(ctx, tx, &u, id, rules, defaultRole); err != nil {
			return err
		}
		return s.auditNoted(ctx, tx, "directory_login", "user", u.ID, identityNote("audit.sum.directory_identity", id), nil, nil)
	})
	if err != nil {
		return nil, err
	}
	if changed {
		// Cached token lookups hold the user's role.
		s.changed(ChangeUsers)
	}
	if conflict {
		return nil, errs.E(errs.Conflict, op, "directory.not_linked", id.Username)
	}
	return &u, nil
}

// keepIdentity writes what the directory said into the identity's row,
// inserting it when it is new; userID, when set, links it.
func (s *Store) keepIdentity(tx *gorm.DB, row *ExternalIdentity, found bool, id directory.Identity, userID *int64, now time.Time) error {
	if !found {
		*row = ExternalIdentity{Provider: id.Provider, Subject: id.Subject, SubjectHash: subjectHash(id.Subject), CreatedAt: now}
	}
	row.Username = truncate(id.Username, identityWidth)
	row.DisplayName = truncate(id.DisplayName, identityWidth)
	row.Email = id.Email
	row.SeenAt = now
	if userID != nil {
		uid := *userID
		row.UserID = &uid
	}
	if !found {
		return tx.Create(row).Error
	}
	return tx.Save(row).Error
}

// ApplyDirectoryGroups applies the group rules to a linked account for the
// periodic sync: the same changes as at sign-in (each audited), without a
// sign-in entry. changed tells whether anything changed.
func (s *Store) ApplyDirectoryGroups(ctx context.Context, userID int64, id directory.Identity, defaultRole string) (changed bool, err error) {
	const op = "store.ApplyDirectoryGroups"
	id, err = cleanIdentity(op, id)
	if err != nil {
		return false, err
	}
	if defaultRole, err = validDefaultRole(op, defaultRole); err != nil {
		return false, err
	}
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		changed = false
		var u User
		if err := tx.First(&u, userID).Error; err != nil {
			return withKey(translate(op, err), "user.not_found")
		}
		row, found, err := findIdentity(tx, id)
		if err != nil {
			return err
		}
		if found && row.UserID != nil && *row.UserID == userID {
			if err := s.keepIdentity(tx, &row, true, id, nil, s.now()); err != nil {
				return err
			}
		}
		rules, err := loadRules(tx)
		if err != nil {
			return err
		}
		changed, err = s.applyGroups(ctx, tx, &u, id, rules, defaultRole)
		return err
	})
	if err != nil {
		return false, err
	}
	if changed {
		s.changed(ChangeUsers)
	}
	return changed, nil
}

// applyGroups makes u's portal role, and its memberships in the teams the
// rules manage, what the rules give the identity's groups; it takes the display name
// and mail from the directory; memberships in other teams are the admins'
// and stay. The last active admin is never demoted. Each change is audited.
func (s *Store) applyGroups(ctx context.Context, tx *gorm.DB, u *User, id directory.Identity, rules []directory.Rule, defaultRole string) (bool, error) {
	as := directory.Map(rules, id, RoleRank)
	note := byDirectory(id.Provider)
	changed := false
	before := *u
	role := as.Role
	if role == "" {
		role = defaultRole
	}
	if role != RoleAdmin {
		last, err := isLastAdmin(tx, *u)
		if err != nil {
			return false, err
		}
		if last {
			role = RoleAdmin
		}
	}
	u.Role = role
	if id.DisplayName != "" {
		u.DisplayName = id.DisplayName
	}
	if id.Email != "" {
		u.Email = id.Email
	}
	if u.Role != before.Role || u.DisplayName != before.DisplayName || u.Email != before.Email {
		u.UpdatedAt = s.now()
		if err := tx.Save(u).Error; err != nil {
			return false, err
		}
		if err := s.auditNoted(ctx, tx, "update", "user", u.ID, note, before, *u); err != nil {
			return false, err
		}
		changed = true
	}
	if len(as.Managed) == 0 {
		return changed, nil
	}
	var current []Membership
	if err := tx.Where("user_id = ? AND team_id IN ?", u.ID, as.Managed).Find(&current).Error; err != nil {
		return false, err
	}
	for _, team := range as.Managed {
		want, in := as.Teams[team]
		i := slices.IndexFunc(current, func(m Membership) bool { return m.TeamID == team })
		switch {
		case in && i < 0:
			m := Membership{TeamID: team, UserID: u.ID, Role: want, CreatedAt: s.now()}
			// Ignoring a duplicate: the same person signing in on two
			// replicas at once adds the same membership once.
			fresh, err := insertIgnoring(tx, &m)
			if err != nil {
				return false, err
			}
			if fresh {
				if err := s.auditNoted(ctx, tx, "create", "membership", m.ID, note, nil, m); err != nil {
					return false, err
				}
				changed = true
			}
		case in && current[i].Role != want:
			m := current[i]
			mBefore := m
			m.Role = want
			if err := tx.Save(&m).Error; err != nil {
				return false, err
			}
			if err := s.auditNoted(ctx, tx, "update", "membership", m.ID, note, mBefore, m); err != nil {
				return false, err
			}
			changed = true
		case !in && i >= 0:
			m := current[i]
			if err := tx.Delete(&m).Error; err != nil {
				return false, err
			}
			if err := s.auditNoted(ctx, tx, "delete", "membership", m.ID, note, m, nil); err != nil {
				return false, err
			}
			changed = true
		}
	}
	return changed, nil
}

// FindExternalAccounts lists the provider's linked identities whose
// accounts are enabled: what the periodic sync checks.
func (s *Store) FindExternalAccounts(ctx context.Context, provider string) ([]ExternalAccount, error) {
	const op = "store.FindExternalAccounts"
	var rows []ExternalIdentity
	err := s.read(ctx).Table("external_identities i").Select("i.*").Joins("JOIN users u ON u.id = i.user_id").
		Where("i.provider = ? AND u.disabled = ?", provider, false).Order("i.id").Find(&rows).Error
	if err != nil {
		return nil, translate(op, err)
	}
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, *r.UserID)
	}
	users := map[int64]User{}
	if len(ids) > 0 {
		var us []User
		if err := s.read(ctx).Where("id IN ?", ids).Find(&us).Error; err != nil {
			return nil, translate(op, err)
		}
		for _, u := range us {
			users[u.ID] = u
		}
	}
	out := make([]ExternalAccount, 0, len(rows))
	for _, r := range rows {
		if u, ok := users[*r.UserID]; ok && !u.Disabled {
			out = append(out, ExternalAccount{Identity: r, User: u})
		}
	}
	return out, nil
}

// DisableGoneUser disables an account its directory no longer has: its
// sessions end and its API tokens are revoked at once (on every replica:
// the caches are told), its bookings stay in the ledger. The last active
// admin is refused (Conflict). An account already disabled is left as it is.
func (s *Store) DisableGoneUser(ctx context.Context, userID int64, provider string) error {
	const op = "store.DisableGoneUser"
	// After the commit: cached token lookups hold the user enabled.
	defer s.changed(ChangeTokens)
	defer s.changed(ChangeUsers)
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var u User
		if err := tx.First(&u, userID).Error; err != nil {
			return withKey(translate(op, err), "user.not_found")
		}
		if u.Disabled {
			return nil
		}
		last, err := isLastAdmin(tx, u)
		if err != nil {
			return err
		}
		if last {
			return errs.E(errs.Conflict, op, "user.last_admin")
		}
		before := u
		u.Disabled = true
		u.UpdatedAt = s.now()
		if err := tx.Save(&u).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", userID).Delete(&Session{}).Error; err != nil {
			return err
		}
		if _, err := s.revokeUserTokens(ctx, tx, userID); err != nil {
			return err
		}
		return s.auditNoted(ctx, tx, "directory_disabled", "user", u.ID, byDirectory(strings.ToLower(provider)), before, u)
	})
}

// FindPendingIdentities lists the identities waiting for an admin to link
// them, most recently seen first.
func (s *Store) FindPendingIdentities(ctx context.Context) ([]ExternalIdentity, error) {
	out := []ExternalIdentity{}
	err := s.read(ctx).Where("user_id IS NULL").Order("seen_at DESC, id DESC").Find(&out).Error
	return out, translate("store.FindPendingIdentities", err)
}

// FindUserIdentities lists the directory identities linked to an account.
func (s *Store) FindUserIdentities(ctx context.Context, userID int64) ([]ExternalIdentity, error) {
	out := []ExternalIdentity{}
	err := s.read(ctx).Where("user_id = ?", userID).Order("provider, id").Find(&out).Error
	return out, translate("store.FindUserIdentities", err)
}

// AccountProviders maps every account linked to a directory to its
// providers, sorted: with whether the account has a password, where it
// signs in from (local, LDAP, OIDC) for the users list.
func (s *Store) AccountProviders(ctx context.Context) (map[int64][]string, error) {
	var rows []struct {
		UserID   int64
		Provider string
	}
	err := s.read(ctx).Model(&ExternalIdentity{}).Distinct("user_id", "provider").Where("user_id IS NOT NULL").
		Order("user_id, provider").Scan(&rows).Error
	if err != nil {
		return nil, translate("store.AccountProviders", err)
	}
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.UserID] = append(out[r.UserID], r.Provider)
	}
	return out, nil
}

// LinkIdentity links a pending identity to the local account of the same
// username, as an admin decided: from then on it signs in as that account.
func (s *Store) LinkIdentity(ctx context.Context, identityID int64) error {
	const op = "store.LinkIdentity"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var row ExternalIdentity
		if err := tx.First(&row, identityID).Error; err != nil {
			return withKey(translate(op, err), "directory.identity_not_found")
		}
		if row.UserID != nil {
			return errs.E(errs.Conflict, op, "directory.already_linked")
		}
		var u User
		if err := tx.Where("username = ?", row.Username).First(&u).Error; err != nil {
			return withKey(translate(op, err), "directory.no_local_account")
		}
		before := row
		row.UserID = &u.ID
		if err := tx.Save(&row).Error; err != nil {
			return err
		}
		n := identityNote("audit.sum.directory_identity", directory.Identity{Provider: row.Provider, Username: row.Username})
		return s.auditNoted(ctx, tx, "directory_link", "external_identity", row.ID, n, before, row)
	})
}
