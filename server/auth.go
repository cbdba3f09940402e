package server

import (
	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/route"
	"cardhour/store"
)

// resolveUser finds the request's user: a Bearer API token first, else
// the session cookie. No credentials is (nil, nil); bad credentials are an
// Unauthorized error; an unreachable database is Unavailable, so the user
// sees 503 rather than a login page. Handlers reach it through
// request.CurrentUser, which asks once per request.
func (s *Server) resolveUser(c echo.Context) (*store.User, error) {
	ctx := c.Request().Context()
	var u *store.User
	if secret, ok := request.BearerToken(c.Request()); ok {
		_, tu, err := s.store.FindTokenUser(ctx, secret)
		if err != nil {
			return nil, err
		}
		u = tu
		request.SetAuthKind(c, request.ByToken)
	} else if token, ok := request.SessionToken(c); ok {
		su, err := s.store.FindSessionUser(ctx, token)
		switch {
		case err == nil:
			u = su
			request.SetAuthKind(c, request.BySession)
		case errs.Is(err, errs.NotFound), errs.Is(err, errs.Unauthorized):
			s.pages.ClearSession(c)
		default:
			return nil, err
		}
	}
	if u != nil {
		c.SetRequest(c.Request().WithContext(store.WithActor(ctx, store.Actor{UserID: u.ID, Username: u.Username, IP: c.RealIP(), Role: u.Role})))
	}
	return u, nil
}

// require lets a request through when its user has the access level.
func require(access route.Access) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if access == route.Public {
				return next(c)
			}
			u, err := request.CurrentUser(c)
			if err != nil {
				return err
			}
			if u == nil {
				return errs.E(errs.Unauthorized, "server.require", "auth.required")
			}
			if store.RoleRank(u.Role) < access.Rank() {
				return errs.E(errs.Forbidden, "server.require", "auth.forbidden")
			}
			return next(c)
		}
	}
}
