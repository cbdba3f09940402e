// Package account is the area of the person: signing in and out (with a
// rate limit on failed logins), the language switch, the home page, the
// account page (password, API tokens) and GET /api/v1/me.
package account

import (
	"time"

	"cardhour/config"
	"cardhour/server/response"
	"cardhour/store"
)

// Area serves sign-in, the home page and the account.
type Area struct {
	store   *store.Store
	cfg     config.Config
	pages   *response.Pages
	limiter *loginLimiter
}

// New builds the area.
func New(st *store.Store, cfg config.Config, pages *response.Pages) *Area {
	return &Area{store: st, cfg: cfg, pages: pages, limiter: newLoginLimiter(10, 15*time.Minute)}
}
