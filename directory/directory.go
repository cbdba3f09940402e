// Package directory is what the portal learns from a company's directory
// when someone signs in through it — LDAP / Active Directory (package
// directory/ldap) or an OpenID Connect provider (directory/oidc) — and the
// rule that turns the directory's groups into team memberships and a
// portal role (Map). It does no I/O of its own.
package directory

import (
	"slices"
	"strings"
)

// Providers an identity can come from.
const (
	LDAP = "ldap"
	OIDC = "oidc"
)

// Identity is who a directory says signed in.
type Identity struct {
	// Provider is LDAP or OIDC.
	Provider string
	// Subject is the directory's own name for the person, which stays
	// when their login name changes: the entry's DN for LDAP, the
	// issuer and the `sub` claim joined by a space for OIDC.
	Subject string
	// Username is the login name (uid, sAMAccountName, preferred_username),
	// lower case.
	Username    string
	DisplayName string
	Email       string
	// Groups are the person's group names as the directory gives them:
	// for LDAP each group's cn and its DN, for OIDC the values of the
	// groups claim.
	Groups []string
}

// InGroup tells whether the identity is in the group, compared as
// directories do: without regard to case.
func (id Identity) InGroup(group string) bool {
	return slices.ContainsFunc(id.Groups, func(g string) bool { return strings.EqualFold(strings.TrimSpace(g), strings.TrimSpace(group)) })
}
