// Package response is what a handler writes: a page in the portal's frame
// (language, user, CSRF token, the flash a redirect left), a redirect with
// a flash message, the portal's cookies, and the one mapping of an error to
// its status, code and message in the viewer's language — used by the
// kernel's error handler and by forms that show a refusal in place.
package response

import (
	"bytes"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"cardhour/config"
	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
	"cardhour/web"
)

const flashCookie = "cardhour_flash"

// Pages builds page frames and writes the portal's cookies.
type Pages struct {
	store   *store.Store // the header's counts: unread notices, approvals waiting
	tz      *time.Location
	version string
	secure  bool // the public URL is https: every cookie is Secure
	// navOpen tells, for each path the navigation links to, which site
	// roles may open it (SetNavRanks): the menu shows a viewer only the
	// items whose page admits them. Read-only once set; every page shares it.
	navOpen map[string]map[string]bool
}

// SetNavRanks takes the rank (store.RoleRank) each GET route requires, by
// path, from the route table once it is built; a navigation path missing
// from it is shown to no one.
func (p *Pages) SetNavRanks(ranks map[string]int) {
	p.navOpen = map[string]map[string]bool{}
	for _, path := range web.NavPaths() {
		rank, ok := ranks[path]
		roles := map[string]bool{}
		for _, r := range store.Roles {
			roles[r] = ok && store.RoleRank(r) >= rank
		}
		p.navOpen[path] = roles
	}
}

// NewPages is the page frame of a deployment.
func NewPages(cfg config.Config, version string, st *store.Store) *Pages {
	return &Pages{store: st, tz: cfg.TZ, version: version, secure: cfg.SecureCookies()}
}

// Render writes a templ component as the response. It renders into a
// buffer first so a failing component gives an error page, not half a page.
func Render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return errs.Internalf("response.Render", "render: %w", err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// Base fills what every page needs without touching the database.
func (p *Pages) Base(c echo.Context) web.Page {
	return web.Page{
		Lang:    request.Lang(c),
		CSRF:    request.CSRF(c),
		Path:    c.Request().URL.RequestURI(),
		TZ:      p.tz,
		Version: p.version,
		NavOpen: p.navOpen,
	}
}

// Page builds the props of a page titled by titleKey in the nav section
// nav, taking any flash message left by the previous redirect.
func (p *Pages) Page(c echo.Context, titleKey, nav string) web.Page {
	pg := p.Base(c)
	pg.Title = pg.T(titleKey)
	pg.Nav = nav
	u := request.User(c)
	pg.User = Viewer(u)
	if u != nil && p.store != nil {
		// The bell and the approvals badge are on every page; a count that
		// cannot be read leaves its badge off rather than the page.
		ctx := c.Request().Context()
		pg.Unread, _ = p.store.CountUnread(ctx, u.ID)
		pg.Approvals, _ = p.store.CountAwaitingApproval(ctx, u)
	}
	if ck, err := c.Cookie(flashCookie); err == nil && ck.Value != "" {
		if msg, err := url.QueryUnescape(ck.Value); err == nil {
			pg.Flash = msg
		}
		c.SetCookie(&http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	return pg
}

// Viewer is the user as a page shows them.
func Viewer(u *store.User) *web.Viewer {
	if u == nil {
		return nil
	}
	return &web.Viewer{ID: u.ID, Username: u.Username, Name: u.Name(), Role: u.Role}
}

// RedirectWithFlash sends the browser on after a POST with a message for
// the next page (post/redirect/get, so a reload does not resubmit).
func (p *Pages) RedirectWithFlash(c echo.Context, to, msg string) error {
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: "/", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: p.Secure(c)})
	return c.Redirect(http.StatusSeeOther, to)
}

// Secure tells whether cookies get the Secure flag: when the public URL is
// https, or the request came over TLS (directly or via a proxy).
func (p *Pages) Secure(c echo.Context) bool {
	return p.secure || c.Request().TLS != nil || c.Request().Header.Get("X-Forwarded-Proto") == "https"
}

// SetSession gives the browser its session cookie.
func (p *Pages) SetSession(c echo.Context, token string) {
	c.SetCookie(&http.Cookie{
		Name: request.SessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: p.Secure(c),
		Expires: time.Now().Add(store.SessionTTL), MaxAge: int(store.SessionTTL.Seconds()),
	})
}

// ClearSession removes the session cookie.
func (p *Pages) ClearSession(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: request.SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: p.Secure(c), MaxAge: -1})
}

// SetLang remembers the viewer's language choice for a year.
func (p *Pages) SetLang(c echo.Context, lang string) {
	c.SetCookie(&http.Cookie{Name: request.LangCookie, Value: lang, Path: "/", MaxAge: 365 * 24 * 3600,
		SameSite: http.SameSiteLaxMode, Secure: p.Secure(c)})
}
