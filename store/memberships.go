package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Team roles. A team manager approves and sets priorities for the team; a
// member books for it; a viewer only reads.
const (
	TeamRoleManager = "manager"
	TeamRoleMember  = "member"
	TeamRoleViewer  = "viewer"
)

// TeamRoles lists the roles a membership can have.
var TeamRoles = []string{TeamRoleManager, TeamRoleMember, TeamRoleViewer}

// Membership puts a user in a team with a role.
type Membership struct {
	ID        int64     `json:"id"`
	TeamID    int64     `json:"team_id"`
	UserID    int64     `json:"user_id"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// MembershipView is a membership with names, for lists.
type MembershipView struct {
	Membership
	TeamName    string `json:"team_name"`
	Username    string `json:"username"`
	DisplayName string `json:"display_name"`
}

// MembershipFilter narrows FindMemberships.
type MembershipFilter struct {
	TeamID int64
	UserID int64
}

func validTeamRole(r string) bool {
	return r == TeamRoleManager || r == TeamRoleMember || r == TeamRoleViewer
}

// SetMembership adds the user to the team or changes their role there.
func (s *Store) SetMembership(ctx context.Context, teamID, userID int64, role string) (*Membership, error) {
	const op = "store.SetMembership"
	v := errs.NewValidation(op)
	v.Check(validTeamRole(role), "role", "membership.role_invalid")
	v.Check(teamID > 0, "team_id", "team.not_found")
	v.Check(userID > 0, "user_id", "user.not_found")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var m Membership
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A failed run may have left its new row's id in m, which gorm
		// would add to the lookup below and then insert again.
		m = Membership{}
		if err := tx.First(&Team{}, teamID).Error; err != nil {
			return withKey(translate(op, err), "team.not_found")
		}
		if err := tx.First(&User{}, userID).Error; err != nil {
			return withKey(translate(op, err), "user.not_found")
		}
		find := func() error { return tx.Where("team_id = ? AND user_id = ?", teamID, userID).First(&m).Error }
		err := find()
		if errs.Is(translate(op, err), errs.NotFound) {
			m = Membership{TeamID: teamID, UserID: userID, Role: role, CreatedAt: s.now()}
			fresh, ierr := insertIgnoring(tx, &m)
			if ierr != nil {
				return ierr
			}
			if fresh {
				return s.audit(ctx, tx, "create", "membership", m.ID, "", nil, m)
			}
			// Another call added it since the lookup (committed through
			// another node, or on one server while this one looked): this
			// call changes its role, as if it had come second.
			m = Membership{}
			err = find()
		}
		if err != nil {
			return err
		}
		before := m
		m.Role = role
		if err := tx.Save(&m).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "membership", m.ID, "", before, m)
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// DeleteMembership removes the user from the team.
func (s *Store) DeleteMembership(ctx context.Context, teamID, userID int64) error {
	const op = "store.DeleteMembership"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var m Membership
		if err := tx.Where("team_id = ? AND user_id = ?", teamID, userID).First(&m).Error; err != nil {
			return withKey(translate(op, err), "membership.not_found")
		}
		if err := tx.Delete(&m).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "delete", "membership", m.ID, "", m, nil)
	})
}

// FindMemberships lists memberships with team and user names.
func (s *Store) FindMemberships(ctx context.Context, f MembershipFilter) ([]MembershipView, error) {
	q := s.read(ctx).Table("memberships m").
		Select("m.id, m.team_id, m.user_id, m.role, m.created_at, t.name AS team_name, u.username, u.display_name").
		Joins("JOIN teams t ON t.id = m.team_id").
		Joins("JOIN users u ON u.id = m.user_id")
	if f.TeamID != 0 {
		q = q.Where("m.team_id = ?", f.TeamID)
	}
	if f.UserID != 0 {
		q = q.Where("m.user_id = ?", f.UserID)
	}
	var out []MembershipView
	if err := q.Order("t.name, u.username").Scan(&out).Error; err != nil {
		return nil, translate("store.FindMemberships", err)
	}
	return out, nil
}

// TeamIDsOf lists the teams the user belongs to with any role.
func (s *Store) TeamIDsOf(ctx context.Context, userID int64) ([]int64, error) {
	ids := []int64{}
	err := s.read(ctx).Model(&Membership{}).Where("user_id = ?", userID).Order("team_id").Pluck("team_id", &ids).Error
	return ids, translate("store.TeamIDsOf", err)
}

// BookableTeamIDs lists the teams the user may book for: all for admins,
// else the teams where they are a member or manager.
func (s *Store) BookableTeamIDs(ctx context.Context, u *User) ([]int64, error) {
	ids := []int64{}
	q := s.read(ctx)
	var err error
	if u.Role == RoleAdmin {
		err = q.Model(&Team{}).Order("id").Pluck("id", &ids).Error
	} else if RoleRank(u.Role) >= RoleRank(RoleMember) {
		err = q.Model(&Membership{}).Where("user_id = ? AND role IN ?", u.ID, []string{TeamRoleManager, TeamRoleMember}).
			Order("team_id").Pluck("team_id", &ids).Error
	}
	return ids, translate("store.BookableTeamIDs", err)
}

// ManagedTeamIDs lists the teams the user manages: all for admins.
func (s *Store) ManagedTeamIDs(ctx context.Context, u *User) ([]int64, error) {
	ids := []int64{}
	q := s.read(ctx)
	var err error
	if u.Role == RoleAdmin {
		err = q.Model(&Team{}).Order("id").Pluck("id", &ids).Error
	} else if RoleRank(u.Role) >= RoleRank(RoleManager) {
		err = q.Model(&Membership{}).Where("user_id = ? AND role = ?", u.ID, TeamRoleManager).Order("team_id").Pluck("team_id", &ids).Error
	}
	return ids, translate("store.ManagedTeamIDs", err)
}
