// Package admin is the area of the platform owner: the inventory (card
// types with their VRAM, precisions and prices, hosts, cards, environment
// images), people (teams, members and their team roles, users and site
// roles) and the audit log, as pages and as API.
package admin

import (
	"cardhour/config"
	"cardhour/server/response"
	"cardhour/store"
)

// Area serves the admin pages and API.
type Area struct {
	store *store.Store
	cfg   config.Config
	pages *response.Pages
}

// New builds the area.
func New(st *store.Store, cfg config.Config, pages *response.Pages) *Area {
	return &Area{store: st, cfg: cfg, pages: pages}
}
