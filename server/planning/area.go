// Package planning is the area of planning ahead (预约高峰、配额到期):
// quotas with amounts and expiry dates, booking templates (固化取用模板),
// the availability of card types over the next two weeks and calendar
// feeds of a team's bookings at secret URLs.
package planning

import (
	"cardhour/config"
	"cardhour/server/response"
	"cardhour/store"
)

// Area serves quotas, templates, availability and calendar feeds.
type Area struct {
	store *store.Store
	cfg   config.Config
	pages *response.Pages
}

// New builds the area.
func New(st *store.Store, cfg config.Config, pages *response.Pages) *Area {
	return &Area{store: st, cfg: cfg, pages: pages}
}
