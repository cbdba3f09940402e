// Package admin is the area of the platform owner: the inventory (card
// types with their VRAM, precisions and prices, hosts, cards, environment
// images), people (teams, members and their team roles, users and site
// roles) and the audit log, as pages and as API.
package admin

import (
	"cardhour/server/area"
)

// Area serves the admin pages and API.
type Area struct {
	area.Deps
	// DirectoryStatus says which directories (LDAP, OIDC) the portal is
	// configured for, for the directory page; the kernel sets it from the
	// configuration. Nil, both show as not configured.
	DirectoryStatus func() []ProviderStatus
}

// New builds the area.
func New(d area.Deps) *Area { return &Area{Deps: d} }
