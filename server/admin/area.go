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
}

// New builds the area.
func New(d area.Deps) *Area { return &Area{Deps: d} }
