package server

import (
	"compress/gzip"
	"context"
	"errors"
	"net"
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
	e.Use(s.deadline)
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
			return p == "/ws/board"
		},
	}))
	if s.cfg.SecureCookies() {
		e.Use(strictTransport)
	}
	e.Use(s.language)
	e.Use(s.users)
	e.Use(csrfFromBody)
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
		// The header only: csrfFromBody puts a form post's field there.
		// echo's form: lookup would read the URL's query string too.
		TokenLookup:    "header:" + echo.HeaderXCSRFToken,
		ContextKey:     request.CSRFContextKey,
		CookieName:     csrfCookie,
		CookiePath:     "/",
		CookieSecure:   s.cfg.SecureCookies(),
		CookieHTTPOnly: true,
		CookieSameSite: http.SameSiteLaxMode,
		CookieMaxAge:   86400,
		ErrorHandler: func(err error, c echo.Context) error {
			return &errs.Error{Code: errs.Forbidden, Op: "server.csrf", Key: "auth.csrf", Err: err}
		},
	}))
}

// clientIP is how a request's client address is found (c.RealIP: the
// login rate limit's key, the audit log, the request log). X-Forwarded-For
// is believed only when the peer is one of the configured proxies, and
// then only as far back as the hops are proxies too: any other peer could
// write what it likes there. Loopback and private peers are not trusted on
// their own — on an intranet every client is one. Without proxies the peer
// is the client; echo's own fallback, with no extractor set, would read the
// header from anyone.
func clientIP(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// csrfFromBody hands the CSRF check the _csrf field of a form post's body
// as if it were the X-CSRF-Token header. The token is accepted from the
// header or the body only, never from the URL: a token in a query string
// is written to access logs, browser history and Referer headers, and a
// link carrying it would be a forgery that passes.
func csrfFromBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		default:
			// PostFormValue reads only a urlencoded or multipart body,
			// never the query.
			if r.Header.Get(echo.HeaderXCSRFToken) == "" {
				if v := r.PostFormValue("_csrf"); v != "" {
					r.Header.Set(echo.HeaderXCSRFToken, v)
				}
			}
		}
		return next(c)
	}
}

// strictTransport tells browsers to reach the portal only over HTTPS for a
// year, once CARDHOUR_BASE_URL says it is served so. Sent on every answer,
// not only those that arrived over TLS as echo's own HSTS option does:
// behind a TLS-terminating proxy the portal sees plain HTTP, and browsers
// ignore the header on an http:// answer anyway. No includeSubDomains:
// other hosts under the portal's name are not ours to decide for.
func strictTransport(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderStrictTransportSecurity, "max-age=31536000")
		return next(c)
	}
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

// deadline gives each request a deadline (CARDHOUR_REQUEST_TIMEOUT) on its
// context, which the store's queries and transactions obey: a database
// that stops answering — stopped, frozen, a network that drops packets
// without a reset — would otherwise hold every request until the driver's
// 30 s read timeout, and then some. A request past its deadline answers
// 503 with a message that says so; a write's says it was saved whole or
// not at all (transactions roll back when their context ends), so the
// user checks before trying again.
func (s *Server) deadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		d := s.requestTimeout(c.Request())
		if d == 0 {
			return next(c)
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), d)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		err := next(c)
		// The error page is rendered after this returns, and templ renders
		// nothing under an ended context: keep the values (the actor), drop
		// the deadline.
		c.SetRequest(c.Request().WithContext(context.WithoutCancel(c.Request().Context())))
		if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) || c.Response().Committed {
			return err
		}
		key := "error.timeout_write"
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			key = "error.timeout"
		}
		return &errs.Error{Code: errs.Unavailable, Op: "server.deadline", Key: key, Args: []any{int(d.Round(time.Second) / time.Second)}, Err: err}
	}
}

// uploadTimeout is the deadline of a request with a large body: reading a
// task file over a slow link counts against it, so it gets the server's
// write timeout (Run) rather than a page's deadline.
const uploadTimeout = 2 * time.Minute

// requestTimeout is a request's deadline; 0 for none. A websocket lives as
// long as the wall screen watches: its handler keeps its own deadlines.
func (s *Server) requestTimeout(r *http.Request) time.Duration {
	switch {
	case strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		return 0
	case r.ContentLength > 1<<20, r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody:
		return max(uploadTimeout, s.cfg.RequestTimeout)
	}
	return s.cfg.RequestTimeout
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
