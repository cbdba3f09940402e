package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/directory"
	"cardhour/errs"
)

// GroupMapping is a rule from a directory group to a team membership
// and/or a portal role (directory.Rule, as stored).
type GroupMapping struct {
	ID int64 `json:"id"`
	// Provider is directory.LDAP or directory.OIDC; "" is either.
	Provider  string `json:"provider"`
	GroupName string `json:"group"`
	// TeamID is nil for a rule that gives only a portal role.
	TeamID *int64 `json:"team_id"`
	// TeamKey is TeamID or 0: the unique key cannot hold a NULL.
	TeamKey    int64     `json:"-"`
	TeamRole   string    `json:"team_role"`
	PortalRole string    `json:"portal_role"`
	CreatedAt  time.Time `json:"created_at"`
}

// TableName is the migrations' name.
func (GroupMapping) TableName() string { return "group_mappings" }

// GroupMappingView is a rule with its team's name, for lists.
type GroupMappingView struct {
	GroupMapping
	TeamName string `json:"team_name"`
}

// GroupMappingCreate is the input of CreateGroupMapping.
type GroupMappingCreate struct {
	Provider   string `json:"provider" form:"provider"`
	Group      string `json:"group" form:"group"`
	TeamID     int64  `json:"team_id,omitempty" form:"team_id"`
	TeamRole   string `json:"team_role,omitempty" form:"team_role"`
	PortalRole string `json:"portal_role,omitempty" form:"portal_role"`
}

// GroupMappingLimits: a group rule; the group is a cn or a DN.
var GroupMappingLimits = Limits{"group": maxLen(255)}

// DirectoryProviders are the providers a rule may name; "" is any.
var DirectoryProviders = []string{"", directory.LDAP, directory.OIDC}

// validate checks every field at once; teamFound is whether TeamID names
// a team (read before, so that a missing team is told with the rest).
func (in *GroupMappingCreate) validate(op string, teamFound bool) error {
	in.Provider = strings.ToLower(strings.TrimSpace(in.Provider))
	in.Group = strings.TrimSpace(in.Group)
	in.TeamRole = strings.TrimSpace(in.TeamRole)
	in.PortalRole = strings.TrimSpace(in.PortalRole)
	v := errs.NewValidation(op)
	v.Check(in.Provider == "" || in.Provider == directory.LDAP || in.Provider == directory.OIDC, "provider", "directory.provider_invalid")
	v.Check(in.Group != "", "group", "field.required")
	GroupMappingLimits.checkLen(v, "group", in.Group)
	v.Check(in.TeamID >= 0 && (in.TeamID == 0 || teamFound), "team_id", "team.not_found")
	if in.TeamID > 0 {
		v.Check(validTeamRole(in.TeamRole), "team_role", "membership.role_invalid")
	} else {
		v.Check(in.TeamRole == "", "team_id", "directory.team_required")
	}
	v.Check(in.PortalRole == "" || RoleRank(in.PortalRole) > 0, "portal_role", "user.role_invalid")
	v.Check(in.TeamID > 0 || in.TeamRole != "" || in.PortalRole != "", "portal_role", "directory.rule_empty")
	return v.Err()
}

// CreateGroupMapping adds a rule. Every bad field is reported at once; a
// second rule for the same provider, group and team is a Conflict.
func (s *Store) CreateGroupMapping(ctx context.Context, in GroupMappingCreate) (*GroupMapping, error) {
	const op = "store.CreateGroupMapping"
	var teams int64
	if in.TeamID > 0 {
		if err := s.read(ctx).Model(&Team{}).Where("id = ?", in.TeamID).Count(&teams).Error; err != nil {
			return nil, translate(op, err)
		}
	}
	if err := in.validate(op, teams > 0); err != nil {
		return nil, err
	}
	m := new(GroupMapping)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*m = GroupMapping{Provider: in.Provider, GroupName: in.Group, TeamKey: in.TeamID, TeamRole: in.TeamRole,
			PortalRole: in.PortalRole, CreatedAt: s.now()}
		if in.TeamID > 0 {
			team := in.TeamID
			m.TeamID = &team
			var n int64
			if err := tx.Model(&Team{}).Where("id = ?", team).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return fieldErr(op, "team_id", "team.not_found")
			}
		}
		if err := tx.Create(m).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "group_mapping", m.ID, m.GroupName, nil, m)
	})
	if isDuplicate(err) {
		return nil, &errs.Error{Code: errs.Conflict, Op: op, Key: "directory.rule_taken", Fields: map[string]string{"group": "directory.rule_taken"}, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DeleteGroupMapping removes a rule; the memberships it gave change at
// each person's next sign-in or sync.
func (s *Store) DeleteGroupMapping(ctx context.Context, id int64) error {
	const op = "store.DeleteGroupMapping"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var m GroupMapping
		if err := tx.First(&m, id).Error; err != nil {
			return withKey(translate(op, err), "directory.rule_not_found")
		}
		if err := tx.Delete(&m).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "delete", "group_mapping", m.ID, m.GroupName, m, nil)
	})
}

// FindGroupMappings lists the rules with their teams' names, by provider,
// group and team.
func (s *Store) FindGroupMappings(ctx context.Context) ([]GroupMappingView, error) {
	out := []GroupMappingView{}
	err := s.read(ctx).Table("group_mappings g").Select("g.*, COALESCE(t.name, '') AS team_name").
		Joins("LEFT JOIN teams t ON t.id = g.team_id").Order("g.provider, g.group_name, t.name, g.id").Scan(&out).Error
	return out, translate("store.FindGroupMappings", err)
}

// DirectoryRules are the rules as directory.Map takes them.
func (s *Store) DirectoryRules(ctx context.Context) ([]directory.Rule, error) {
	rules, err := loadRules(s.read(ctx))
	return rules, translate("store.DirectoryRules", err)
}

// loadRules reads the rules through db (a transaction, at sign-in).
func loadRules(db *gorm.DB) ([]directory.Rule, error) {
	var rows []GroupMapping
	if err := db.Order("id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]directory.Rule, 0, len(rows))
	for _, r := range rows {
		out = append(out, directory.Rule{ID: r.ID, Provider: r.Provider, Group: r.GroupName, TeamID: r.TeamKey,
			TeamRole: r.TeamRole, PortalRole: r.PortalRole})
	}
	return out, nil
}
