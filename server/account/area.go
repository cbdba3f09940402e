// Package account is the area of the person: signing in and out (with a
// rate limit on failed logins), the language switch, the home page, the
// account page (password, API tokens) and GET /api/v1/me.
package account

import (
	"time"

	"cardhour/cluster"
	"cardhour/server/area"
)

// Area serves sign-in, the home page and the account.
type Area struct {
	area.Deps
	limiter *loginLimiter
	dirs    Directories
}

// New builds the area; dirs are the company directories people may sign
// in through (none: local accounts only).
func New(d area.Deps, dirs Directories) *Area {
	l := newLoginLimiter(10, 15*time.Minute)
	// With replicas sharing counters (Redis), failed logins count across
	// them; the process's own count stays, for when Redis is away.
	if c, ok := d.Cluster.(cluster.Counter); ok {
		l.shared = c
	}
	return &Area{Deps: d, limiter: l, dirs: dirs}
}
