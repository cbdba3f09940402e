package server

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/web"
)

const csrfCookie = "cardhour_csrf"

func (s *Server) middleware() {
	e := s.echo
	e.Use(middleware.RequestID())
	e.Use(s.recoverPanics)
	e.Use(s.observe)
	e.Use(middleware.BodyLimit(s.bodyLimit()))
	e.Use(middleware.SecureWithConfig(middleware.SecureConfig{
		XSSProtection:         "0",
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		ReferrerPolicy:        "same-origin",
		ContentSecurityPolicy: "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; frame-ancestors 'none'",
	}))
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{
		// Only bodies worth it; a websocket is never wrapped (the upgrade
		// needs the raw connection), nor are pushes that answer a few bytes.
		MinLength: 1024,
		// Fastest level: echo resets its pooled writer twice per response,
		// whatever the body's length, and at the default level each reset
		// clears some 600 KB of match tables — under booking load a third of
		// a replica's CPU went there. BestSpeed's reset only moves an
		// offset, and for pages and JSON it compresses nearly as well.
		Level: gzip.BestSpeed,
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return p == "/ws/board" || p == "/metrics" // promhttp compresses on its own
		},
	}))
	e.Use(s.language)
	e.Use(s.users)
	e.Use(middleware.CSRFWithConfig(middleware.CSRFConfig{
		// API clients authenticate with a bearer token that a browser never
		// attaches on its own, so they cannot be forged cross-site.
		Skipper: func(c echo.Context) bool {
			_, bearer := request.BearerToken(c.Request())
			if bearer || strings.HasPrefix(c.Path(), "/assets/") {
				return true
			}
			// An API call without a session cookie carries no ambient
			// credential to forge; let it through to the login check, which
			// answers 401 rather than a confusing CSRF 403.
			_, err := c.Cookie(request.SessionCookie)
			return err != nil && strings.HasPrefix(c.Request().URL.Path, "/api/")
		},
		TokenLookup:    "header:X-CSRF-Token,form:_csrf",
		ContextKey:     request.CSRFContextKey,
		CookieName:     csrfCookie,
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSameSite: http.SameSiteLaxMode,
		CookieMaxAge:   86400,
		ErrorHandler: func(err error, c echo.Context) error {
			return &errs.Error{Code: errs.Forbidden, Op: "server.csrf", Key: "auth.csrf", Err: err}
		},
	}))
}

// language picks the viewer's language: an explicit ?lang=, the cookie set by
// the switch, else the browser's Accept-Language (a first visit, an API
// client), else the configured default.
func (s *Server) language(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		lang := s.cfg.Lang
		if ck, err := c.Cookie(request.LangCookie); err == nil {
			lang = web.NormalizeLang(ck.Value, lang)
		} else {
			lang = web.AcceptLanguage(c.Request().Header.Get("Accept-Language"), lang)
			// A shared cache must not hand one browser's language to another.
			c.Response().Header().Add("Vary", "Accept-Language")
		}
		if q := c.QueryParam("lang"); q != "" {
			lang = web.NormalizeLang(q, lang)
		}
		request.SetLang(c, lang)
		return next(c)
	}
}

// users lets every handler ask who is calling (request.CurrentUser); the
// question costs nothing until it is asked.
func (s *Server) users(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		request.SetResolver(c, s.resolveUser)
		return next(c)
	}
}

// recoverPanics turns a panic into an internal error, logged with its stack
// by the error handler, instead of a dropped connection.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = errs.Internalf("server.panic", "panic: %v", r)
			}
		}()
		return next(c)
	}
}

// observe logs each request and records its duration by route pattern, so
// /admin/cards/1 and /admin/cards/2 are one series.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(c.Request().Method, route, strconv.Itoa(status)).Observe(d.Seconds())
		if strings.HasPrefix(route, "/assets/") || route == "/healthz" || route == "/metrics" {
			return nil
		}
		path := c.Request().URL.Path
		if strings.Contains(route, ":token") {
			// The secret in the URL is the credential: log the pattern only.
			path = route
		}
		attrs := []any{"method", c.Request().Method, "path", path, "route", route,
			"status", status, "ms", d.Milliseconds(), "ip", c.RealIP(),
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID)}
		if u := request.User(c); u != nil {
			attrs = append(attrs, "user", u.Username)
		}
		s.log.Info("request", attrs...)
		return nil
	}
}

// bodyLimit is the largest request body the portal reads: 12 MiB, or more
// when task files may be larger, so an upload at the file limit still
// reaches the handler, which answers over-size files with their own 413.
func (s *Server) bodyLimit() string {
	limit := int64(12 << 20)
	if need := s.cfg.MaxFileBytes + 2<<20; need > limit {
		limit = need
	}
	return strconv.FormatInt(limit>>20, 10) + "M"
}
