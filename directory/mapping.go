package directory

import (
	"slices"
	"strings"
)

// Rule maps one directory group to a team membership and/or a portal role.
type Rule struct {
	ID int64
	// Provider is LDAP or OIDC; "" is a rule for either.
	Provider string
	Group    string
	// TeamID is the team the group's people belong to; 0 is none.
	TeamID int64
	// TeamRole is their role in TeamID (manager, member, viewer).
	TeamRole string
	// PortalRole is the site role the group gives; "" is none.
	PortalRole string
}

// Assignment is what the rules give one identity.
type Assignment struct {
	// Role is the highest portal role the matched rules give; "" when none
	// of them gives one.
	Role string
	// Teams maps each team to the highest team role among matched rules.
	Teams map[int64]string
	// Managed lists, sorted, every team a rule for the identity's provider
	// (or for any provider) names, whether the identity matched it or not:
	// memberships in these follow the directory; memberships in other
	// teams are kept by hand and left alone.
	Managed []int64
}

// Map applies the rules to an identity. rank orders the roles (portal and
// team roles alike: store.RoleRank); a role it ranks 0 is not a role and is
// ignored, so a stale rule cannot hand out an unknown role.
func Map(rules []Rule, id Identity, rank func(role string) int) Assignment {
	a := Assignment{Teams: map[int64]string{}}
	for _, r := range rules {
		if r.Provider != "" && !strings.EqualFold(r.Provider, id.Provider) {
			continue
		}
		if r.TeamID != 0 && !slices.Contains(a.Managed, r.TeamID) {
			a.Managed = append(a.Managed, r.TeamID)
		}
		if !id.InGroup(r.Group) {
			continue
		}
		if rank(r.PortalRole) > rank(a.Role) {
			a.Role = r.PortalRole
		}
		if r.TeamID != 0 && rank(r.TeamRole) > rank(a.Teams[r.TeamID]) {
			a.Teams[r.TeamID] = r.TeamRole
		}
	}
	slices.Sort(a.Managed)
	return a
}
