// Package account is the area of the person: signing in and out (with a
// rate limit on failed logins), the language switch, the home page, the
// account page (password, API tokens) and GET /api/v1/me.
package account

import (
	"cardhour/server/area"
	"time"
)

// Area serves sign-in, the home page and the account.
type Area struct {
	area.Deps
	limiter *loginLimiter
}

// New builds the area.
func New(d area.Deps) *Area {
	return &Area{Deps: d, limiter: newLoginLimiter(10, 15*time.Minute)}
}
