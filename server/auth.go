package server

import (
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/web"
)

const (
	sessionCookie = "cardhour_session"
	ctxUser       = "cardhour.user"
	ctxUserDone   = "cardhour.user_resolved"
	ctxAuthKind   = "cardhour.auth_kind"
)

// Ways a request can be authenticated.
const (
	authSession = "session"
	authToken   = "token"
)

// currentUser resolves the request's user once: a Bearer API token first,
// else the session cookie. No credentials is (nil, nil); bad credentials are
// an Unauthorized error; an unreachable database is Unavailable, so the user
// sees 503 rather than a login page.
func (s *Server) currentUser(c echo.Context) (*store.User, error) {
	if c.Get(ctxUserDone) != nil {
		u, _ := c.Get(ctxUser).(*store.User)
		return u, nil
	}
	ctx := c.Request().Context()
	var u *store.User
	if secret, ok := bearerToken(c.Request()); ok {
		_, tu, err := s.store.FindTokenUser(ctx, secret)
		if err != nil {
			return nil, err
		}
		u = tu
		c.Set(ctxAuthKind, authToken)
	} else if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		su, err := s.store.FindSessionUser(ctx, ck.Value)
		switch {
		case err == nil:
			u = su
			c.Set(ctxAuthKind, authSession)
		case errs.Is(err, errs.NotFound), errs.Is(err, errs.Unauthorized):
			s.clearSessionCookie(c)
		default:
			return nil, err
		}
	}
	c.Set(ctxUserDone, true)
	c.Set(ctxUser, u)
	if u != nil {
		c.SetRequest(c.Request().WithContext(store.WithActor(ctx, store.Actor{UserID: u.ID, Username: u.Username, IP: c.RealIP(), Role: u.Role})))
	}
	return u, nil
}

// optionalUser is currentUser for public pages: any failure means anonymous.
func (s *Server) optionalUser(c echo.Context) *store.User {
	u, err := s.currentUser(c)
	if err != nil {
		return nil
	}
	return u
}

// mustUser is for handlers behind require(): the user is known to exist.
func mustUser(c echo.Context) *store.User {
	u, _ := c.Get(ctxUser).(*store.User)
	return u
}

func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get(echo.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

func (s *Server) setSessionCookie(c echo.Context, token string) {
	c.SetCookie(&http.Cookie{
		Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secure(c),
		Expires: time.Now().Add(store.SessionTTL), MaxAge: int(store.SessionTTL.Seconds()),
	})
}

func (s *Server) clearSessionCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secure(c), MaxAge: -1})
}

// secure tells whether cookies get the Secure flag: when the public URL is
// https, or the request came over TLS (directly or via a proxy).
func (s *Server) secure(c echo.Context) bool {
	return s.cfg.SecureCookies() || c.Request().TLS != nil || c.Request().Header.Get("X-Forwarded-Proto") == "https"
}

// safeNext keeps redirects on this site: only absolute paths, never //host.
// Control characters are refused too: browsers drop tabs and newlines from
// a URL, so "/\t/evil.com" would arrive as "//evil.com".
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.IndexFunc(next, unicode.IsControl) >= 0 {
		return "/"
	}
	return next
}

func (s *Server) loginPage(c echo.Context) error {
	if u := s.optionalUser(c); u != nil {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	p := s.page(c, "login.title", "")
	return s.render(c, http.StatusOK, web.LoginPage(p, web.NewForm(), safeNext(c.QueryParam("next"))))
}

func (s *Server) login(c echo.Context) error {
	username := strings.TrimSpace(c.FormValue("username"))
	password := c.FormValue("password")
	next := safeNext(c.FormValue("next"))
	p := s.page(c, "login.title", "")
	f := web.NewForm()
	f.Values["username"] = username

	key := strings.ToLower(username) + "|" + c.RealIP()
	if wait := s.limiter.blocked(key); wait > 0 {
		f.Error = p.T("auth.rate_limited", int(wait.Seconds())+1)
		c.Response().Header().Set("Retry-After", itoa(int(wait.Seconds())+1))
		return s.render(c, http.StatusTooManyRequests, web.LoginPage(p, f, next))
	}
	ctx := store.WithActor(c.Request().Context(), store.Actor{Username: username, IP: c.RealIP()})
	u, err := s.store.Authenticate(ctx, username, password)
	if err != nil {
		if !errs.Is(err, errs.Unauthorized) {
			return err
		}
		s.limiter.fail(key)
		_ = s.store.RecordEvent(ctx, "login_failed", "user", 0, username)
		f.Error = p.T("auth.bad_credentials")
		return s.render(c, http.StatusUnauthorized, web.LoginPage(p, f, next))
	}
	s.limiter.reset(key)
	ctx = store.WithActor(ctx, store.Actor{UserID: u.ID, Username: u.Username, IP: c.RealIP()})
	token, err := s.store.CreateSession(ctx, u.ID)
	if err != nil {
		return err
	}
	s.setSessionCookie(c, token)
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		if err := s.store.DeleteSession(c.Request().Context(), ck.Value); err != nil {
			return err
		}
	}
	s.clearSessionCookie(c)
	return c.Redirect(http.StatusSeeOther, "/login")
}

// switchLang stores the language choice in a cookie and goes back.
func (s *Server) switchLang(c echo.Context) error {
	lang := web.NormalizeLang(c.QueryParam("to"), s.cfg.Lang)
	c.SetCookie(&http.Cookie{Name: langCookie, Value: lang, Path: "/", MaxAge: 365 * 24 * 3600,
		SameSite: http.SameSiteLaxMode, Secure: s.secure(c)})
	return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
}
