package directory_test

import (
	"maps"
	"slices"
	"testing"

	"cardhour/directory"
)

// rank is store.RoleRank's order (the directory package must not import
// the store): admin > manager > member > viewer, anything else 0.
func rank(role string) int {
	return map[string]int{"admin": 4, "manager": 3, "member": 2, "viewer": 1}[role]
}

func TestMap(t *testing.T) {
	t.Parallel()
	const llm, vision, infra = 1, 2, 3
	rules := []directory.Rule{
		{ID: 1, Group: "llm-dev", TeamID: llm, TeamRole: "member"},
		{ID: 2, Group: "llm-leads", TeamID: llm, TeamRole: "manager", PortalRole: "manager"},
		{ID: 3, Provider: directory.LDAP, Group: "cn=vision,ou=groups,dc=example,dc=com", TeamID: vision, TeamRole: "viewer"},
		{ID: 4, Provider: directory.OIDC, Group: "infra", TeamID: infra, TeamRole: "member"},
		{ID: 5, Group: "platform", PortalRole: "admin"},
		{ID: 6, Group: "readers", PortalRole: "viewer"},
		{ID: 7, Group: "stale", TeamID: vision, TeamRole: "owner", PortalRole: "root"},
	}
	ldapManaged := []int64{llm, vision}
	oidcManaged := []int64{llm, vision, infra}
	for _, tc := range []struct {
		name     string
		provider string
		groups   []string
		role     string
		teams    map[int64]string
		managed  []int64
	}{
		{"no groups match: no role, no teams, yet the rules' teams are managed", directory.LDAP, []string{"sales"}, "", map[int64]string{}, ldapManaged},
		{"a group gives its team and role", directory.LDAP, []string{"llm-dev"}, "", map[int64]string{llm: "member"}, ldapManaged},
		{"the higher team role of two rules wins", directory.LDAP, []string{"llm-dev", "llm-leads"}, "manager", map[int64]string{llm: "manager"}, ldapManaged},
		{"the higher portal role of two rules wins", directory.OIDC, []string{"readers", "platform", "llm-leads"}, "admin", map[int64]string{llm: "manager"}, oidcManaged},
		{"groups compare without regard to case or blanks", directory.LDAP, []string{" CN=Vision,OU=Groups,DC=example,DC=com "}, "", map[int64]string{vision: "viewer"}, ldapManaged},
		{"an LDAP rule does not apply to an OIDC sign-in", directory.OIDC, []string{"cn=vision,ou=groups,dc=example,dc=com"}, "", map[int64]string{}, oidcManaged},
		{"an OIDC rule does not apply, nor manage its team, for LDAP", directory.LDAP, []string{"infra"}, "", map[int64]string{}, ldapManaged},
		{"an OIDC rule applies to OIDC", directory.OIDC, []string{"infra"}, "", map[int64]string{infra: "member"}, oidcManaged},
		{"unknown roles in a rule give nothing", directory.LDAP, []string{"stale"}, "", map[int64]string{}, ldapManaged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := directory.Map(rules, directory.Identity{Provider: tc.provider, Subject: "s", Username: "alice", Groups: tc.groups}, rank)
			if got.Role != tc.role {
				t.Errorf("Role = %q, want %q", got.Role, tc.role)
			}
			if !maps.Equal(got.Teams, tc.teams) {
				t.Errorf("Teams = %v, want %v", got.Teams, tc.teams)
			}
			if !slices.Equal(got.Managed, tc.managed) {
				t.Errorf("Managed = %v, want %v", got.Managed, tc.managed)
			}
		})
	}
}

func TestMapWithoutRules(t *testing.T) {
	t.Parallel()
	got := directory.Map(nil, directory.Identity{Provider: directory.LDAP, Groups: []string{"x"}}, rank)
	if got.Role != "" || len(got.Teams) != 0 || len(got.Managed) != 0 || got.Teams == nil {
		t.Errorf("Map(no rules) = %+v, want nothing assigned and an empty (non-nil) team map", got)
	}
}
