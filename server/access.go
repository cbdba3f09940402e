package server

import (
	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
)

// Access is who may use a route. Every route declares one; the zero value
// is refused at registration so a route cannot be left unprotected by
// accident.
type Access int

const (
	accessUnset Access = iota
	// Public routes answer anyone: login, health, static assets.
	Public
	// Viewer routes need any logged-in user.
	Viewer
	// Member routes need a member or above (booking, recording output).
	Member
	// Manager routes need a manager or above (approvals, quotas, reports).
	Manager
	// Admin routes need an admin (inventory, people, tokens of others).
	Admin
)

func (a Access) String() string {
	switch a {
	case Public:
		return "public"
	case Viewer:
		return "viewer"
	case Member:
		return "member"
	case Manager:
		return "manager"
	case Admin:
		return "admin"
	}
	return "unset"
}

// rank is the role rank an access level needs (store.RoleRank scale).
func (a Access) rank() int {
	switch a {
	case Viewer:
		return store.RoleRank(store.RoleViewer)
	case Member:
		return store.RoleRank(store.RoleMember)
	case Manager:
		return store.RoleRank(store.RoleManager)
	case Admin:
		return store.RoleRank(store.RoleAdmin)
	}
	return 0
}

// Route is one entry of the route table.
type Route struct {
	Method string
	Path   string
	Access Access
}

// Routes returns the route table, for documentation and the route × role test.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// add registers a route with its access level.
func (s *Server) add(method, path string, access Access, h echo.HandlerFunc) {
	if access == accessUnset {
		panic("server: route " + method + " " + path + " declares no access")
	}
	s.routes = append(s.routes, Route{Method: method, Path: path, Access: access})
	s.echo.Add(method, path, h, s.require(access))
}

// require lets a request through when its user has the access level.
func (s *Server) require(access Access) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if access == Public {
				return next(c)
			}
			u, err := s.currentUser(c)
			if err != nil {
				return err
			}
			if u == nil {
				return errs.E(errs.Unauthorized, "server.require", "auth.required")
			}
			if store.RoleRank(u.Role) < access.rank() {
				return errs.E(errs.Forbidden, "server.require", "auth.forbidden")
			}
			return next(c)
		}
	}
}
