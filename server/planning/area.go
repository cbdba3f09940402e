// Package planning is the area of planning ahead (预约高峰、配额到期):
// quotas with amounts and expiry dates, booking templates (固化取用模板),
// the availability of card types over the next two weeks and calendar
// feeds of a team's bookings at secret URLs.
package planning

import (
	"cardhour/server/area"
)

// Area serves quotas, templates, availability and calendar feeds.
type Area struct {
	area.Deps
}

// New builds the area.
func New(d area.Deps) *Area { return &Area{Deps: d} }
