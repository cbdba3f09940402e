// Package request is what a handler reads from a request: who sent it
// (resolved once by the kernel's middleware), in which language, and its
// input — JSON bodies, path ids, form values, times in the portal's zone,
// records named by name or id. Every area reads requests through it, so
// one input is read one way everywhere.
package request

import (
	"net/http"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"cardhour/store"
	"cardhour/web"
)

// Cookie and context names shared by the kernel and the areas.
const (
	// SessionCookie holds a browser session's secret.
	SessionCookie = "cardhour_session"
	// LangCookie holds the language a viewer chose.
	LangCookie = "cardhour_lang"
	// CSRFContextKey is where the CSRF middleware leaves the form token.
	CSRFContextKey = "csrf"

	ctxLang     = "cardhour.lang"
	ctxUser     = "cardhour.user"
	ctxUserDone = "cardhour.user_resolved"
	ctxResolver = "cardhour.user_resolver"
)

// Resolver finds a request's user from its credentials: (nil, nil) when
// it carries none, an Unauthorized error for bad ones.
type Resolver func(c echo.Context) (*store.User, error)

// SetResolver is called by the kernel on every request, so that any
// handler — also on a public route — can ask who is calling.
func SetResolver(c echo.Context, r Resolver) { c.Set(ctxResolver, r) }

// CurrentUser resolves the caller once per request (later calls answer
// from the first). No credentials is (nil, nil).
func CurrentUser(c echo.Context) (*store.User, error) {
	if c.Get(ctxUserDone) != nil {
		u, _ := c.Get(ctxUser).(*store.User)
		return u, nil
	}
	r, _ := c.Get(ctxResolver).(Resolver)
	if r == nil {
		return nil, nil
	}
	u, err := r(c)
	if err != nil {
		return nil, err
	}
	c.Set(ctxUserDone, true)
	c.Set(ctxUser, u)
	return u, nil
}

// OptionalUser is CurrentUser where any failure means anonymous: public
// pages, error pages.
func OptionalUser(c echo.Context) *store.User {
	u, err := CurrentUser(c)
	if err != nil {
		return nil
	}
	return u
}

// User is the caller of a route behind an access check, where it is known
// to exist; nil elsewhere when nobody was resolved.
func User(c echo.Context) *store.User {
	u, _ := c.Get(ctxUser).(*store.User)
	return u
}

// SetLang records the viewer's language (the kernel's middleware does).
func SetLang(c echo.Context, lang string) { c.Set(ctxLang, lang) }

// Lang is the viewer's language.
func Lang(c echo.Context) string {
	if l, ok := c.Get(ctxLang).(string); ok {
		return l
	}
	return web.LangZH
}

// CSRF is the token forms must carry.
func CSRF(c echo.Context) string {
	t, _ := c.Get(CSRFContextKey).(string)
	return t
}

// BearerToken is the secret of an "Authorization: Bearer …" header.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get(echo.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

// SessionToken is the browser session's secret, when a cookie carries one.
func SessionToken(c echo.Context) (string, bool) {
	ck, err := c.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return "", false
	}
	return ck.Value, true
}

// How a request proved who it is.
const (
	BySession = "session" // the browser's session cookie
	ByToken   = "token"   // an API token
)

const ctxAuthKind = "cardhour.auth_kind"

// SetAuthKind records how the caller proved who they are.
func SetAuthKind(c echo.Context, kind string) { c.Set(ctxAuthKind, kind) }

// AuthKind is BySession, ByToken, or "" for nobody.
func AuthKind(c echo.Context) string {
	k, _ := c.Get(ctxAuthKind).(string)
	return k
}

// SafeNext keeps redirects on this site: only absolute paths, never //host.
// Control characters are refused too: browsers drop tabs and newlines from
// a URL, so "/\t/evil.com" would arrive as "//evil.com".
func SafeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.IndexFunc(next, unicode.IsControl) >= 0 {
		return "/"
	}
	return next
}
