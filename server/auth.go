package server

import (
	"crypto/subtle"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/config"
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

// gateMetrics puts /metrics behind its gate. Its series name every card,
// host, team's load and route, which is no one's business off the
// monitoring network: a scraper is admitted from CARDHOUR_METRICS_ALLOW
// (loopback by default) or with CARDHOUR_METRICS_TOKEN, and otherwise a
// logged-in admin. The rule is applied to the table here, in the access
// layer, so that what serves the metrics need not know who may read them.
func (s *Server) gateMetrics(routes []route.Route) []route.Route {
	for i, r := range routes {
		if r.Path == "/metrics" {
			routes[i] = route.Gated(r.Method, r.Path, route.Admin, s.metricsGate(r.Handler))
		}
	}
	return routes
}

func (s *Server) metricsGate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.scraperAdmitted(c) {
			return next(c)
		}
		u, err := request.CurrentUser(c)
		if err != nil {
			return err
		}
		if u == nil {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="cardhour metrics"`)
			return errs.E(errs.Unauthorized, "server.metrics", "metrics.denied")
		}
		if store.RoleRank(u.Role) < route.Admin.Rank() {
			return errs.E(errs.Forbidden, "server.metrics", "metrics.denied")
		}
		return next(c)
	}
}

// scraperAdmitted tells whether a request may read /metrics without a
// login: it carries the metrics token, or its client is on an allowed
// network. A request that a proxy forwarded (it carries X-Forwarded-For)
// from a peer that is not a trusted proxy is not admitted by address: the
// peer's own address — loopback, for nginx on the same host — is not the
// client's, and the client's is unknown.
func (s *Server) scraperAdmitted(c echo.Context) bool {
	if want := s.cfg.MetricsToken; want != "" {
		if got, ok := request.BearerToken(c.Request()); ok && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1 {
			return true
		}
	}
	r := c.Request()
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	if forwarded(r) && !config.InNetworks(s.cfg.TrustedProxies, net.ParseIP(peer)) {
		return false
	}
	return config.InNetworks(s.cfg.MetricsAllow, net.ParseIP(c.RealIP()))
}

func forwarded(r *http.Request) bool {
	h := r.Header
	return h.Get(echo.HeaderXForwardedFor) != "" || h.Get(echo.HeaderXRealIP) != "" || h.Get("Forwarded") != ""
}
