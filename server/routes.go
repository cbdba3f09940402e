package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/server/route"
)

// table is the one route table: the kernel's own routes and every area's,
// each with who may use it and, for the API, its description. The route ×
// role test and the OpenAPI document both read it.
func (s *Server) table() []route.Route {
	var t []route.Route
	t = append(t, s.opsRoutes()...)
	t = append(t, s.legacyRoutes()...)
	t = append(t, s.booking.Routes()...)
	t = append(t, s.planning.Routes()...)
	t = append(t, s.ledger.Routes()...)
	t = append(t, s.files.Routes()...)
	t = append(t, s.board.Routes()...)
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

// legacy registration, while the handlers move into their areas.
func (s *Server) add(method, path string, access route.Access, h echo.HandlerFunc) {
	s.routes = append(s.routes, route.New(method, path, access, h))
}

func (s *Server) op(method, path string, access route.Access, h echo.HandlerFunc, api route.API) {
	s.routes = append(s.routes, route.Op(method, path, access, h, api))
}

func (s *Server) legacyRoutes() []route.Route {
	s.routes = nil
	const (
		GET    = http.MethodGet
		POST   = http.MethodPost
		PUT    = http.MethodPut
		PATCH  = http.MethodPatch
		DELETE = http.MethodDelete
	)
	// Sign-in, language, account.
	s.add(GET, "/login", route.Public, s.loginPage)
	s.add(POST, "/login", route.Public, s.login)
	s.add(POST, "/logout", route.Viewer, s.logout)
	s.add(GET, "/lang", route.Public, s.switchLang)
	s.add(GET, "/account", route.Viewer, s.accountPage)
	s.add(POST, "/account/password", route.Viewer, s.changePassword)
	s.add(POST, "/account/tokens", route.Viewer, s.createOwnToken)
	s.add(POST, "/account/tokens/:id/revoke", route.Viewer, s.revokeOwnToken)
	s.add(GET, "/", route.Viewer, s.home)
	s.add(GET, "/admin", route.Admin, s.adminIndex)
	s.add(GET, "/admin/card-types", route.Admin, s.cardTypesPage)
	s.add(POST, "/admin/card-types", route.Admin, s.createCardTypeForm)
	s.add(GET, "/admin/card-types/:id", route.Admin, s.editCardTypePage)
	s.add(POST, "/admin/card-types/:id", route.Admin, s.updateCardTypeForm)
	s.add(POST, "/admin/card-types/:id/delete", route.Admin, s.deleteCardTypeForm)
	s.registerAdminPages()
	s.op(GET, "/api/v1/me", route.Viewer, s.apiMe, route.API{Tag: "meta", Summary: "The caller and their team memberships", Status: http.StatusOK, Result: route.JSON("Me", meJSON{})})
	s.op(GET, "/api/v1/card-types", route.Viewer, s.apiListCardTypes, route.API{Tag: "inventory", Summary: "List card types, cheapest first", Status: http.StatusOK, Result: route.List("card_types", "CardType", cardTypeJSON{})})
	s.op(POST, "/api/v1/card-types", route.Admin, s.apiCreateCardType, route.API{Tag: "inventory", Summary: "Add a card type", Body: route.JSON("CardTypeInput", cardTypeRequest{}, "name", "vram_gib"), Status: http.StatusCreated, Result: route.JSON("CardType", cardTypeJSON{}), Conflict: true})
	s.op(GET, "/api/v1/card-types/:id", route.Viewer, s.apiGetCardType, route.API{Tag: "inventory", Summary: "One card type", Status: http.StatusOK, Result: route.JSON("CardType", cardTypeJSON{})})
	s.op(PUT, "/api/v1/card-types/:id", route.Admin, s.apiUpdateCardType, route.API{Tag: "inventory", Summary: "Replace a card type", Body: route.JSON("CardTypeInput", cardTypeRequest{}, "name", "vram_gib"), Status: http.StatusOK, Result: route.JSON("CardType", cardTypeJSON{}), Conflict: true})
	s.op(DELETE, "/api/v1/card-types/:id", route.Admin, s.apiDeleteCardType, route.API{Tag: "inventory", Summary: "Delete a card type no card or booking uses", Status: http.StatusNoContent, Conflict: true})
	s.registerAdminAPI()
	out := s.routes
	s.routes = nil
	return out
}
