package server

import (
	"fmt"
	"net/http"
	"strings"

	"cardhour/server/route"
)

// table is the one route table: the kernel's own routes and every area's,
// each with who may use it and, for the API, its description. The route ×
// role test and the OpenAPI document both read it.
func (s *Server) table() []route.Route {
	var t []route.Route
	t = append(t, s.gateMetrics(s.opsRoutes())...)
	t = append(t, s.account.Routes()...)
	t = append(t, s.admin.Routes()...)
	t = append(t, s.booking.Routes()...)
	t = append(t, s.planning.Routes()...)
	t = append(t, s.ledger.Routes()...)
	t = append(t, s.files.Routes()...)
	t = append(t, s.board.Routes()...)
	t = append(t, s.notify.Routes()...)
	return t
}

// Routes returns the route table, for documentation and the route × role test.
func (s *Server) Routes() []route.Route { return append([]route.Route(nil), s.routes...) }

// register checks the table's rules and hands each route to echo behind
// its access check. Every GET answers HEAD too (uptime checkers, curl -I):
// net/http drops the body a HEAD handler writes.
func (s *Server) register(routes []route.Route) error {
	seen := map[string]bool{}
	for _, r := range routes {
		key := r.Method + " " + r.Path
		switch {
		case !r.Access.Set():
			return fmt.Errorf("server: route %s declares no access", key)
		case r.Gate.Set() && r.Access != route.Public:
			return fmt.Errorf("server: route %s has a gate of its own but is not Public", key)
		case strings.HasPrefix(r.Path, "/api/v1/") && r.API == nil:
			return fmt.Errorf("server: API route %s has no description", key)
		case !strings.HasPrefix(r.Path, "/api/v1/") && r.API != nil:
			return fmt.Errorf("server: route %s is not under /api/v1 but has an API description", key)
		case seen[key]:
			return fmt.Errorf("server: route %s is registered twice", key)
		case r.Handler == nil:
			return fmt.Errorf("server: route %s has no handler", key)
		}
		seen[key] = true
		s.echo.Add(r.Method, r.Path, r.Handler, require(r.Access))
		if r.Method == http.MethodGet {
			s.echo.Add(http.MethodHead, r.Path, r.Handler, require(r.Access))
		}
	}
	return nil
}

// navRanks is the rank each GET route asks of its users, by path, for the
// navigation: it shows an item only to those its page admits. A gated
// route admits users from its gate.
func navRanks(routes []route.Route) map[string]int {
	out := map[string]int{}
	for _, r := range routes {
		if r.Method != route.GET {
			continue
		}
		a := r.Access
		if r.Gate.Set() {
			a = r.Gate
		}
		out[r.Path] = a.Rank()
	}
	return out
}
