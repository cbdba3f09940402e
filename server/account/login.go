package account

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

func (a *Area) loginPage(c echo.Context) error {
	if u := request.OptionalUser(c); u != nil {
		return c.Redirect(http.StatusSeeOther, request.SafeNext(c.QueryParam("next")))
	}
	p := a.Pages.Page(c, "login.title", "")
	return response.Render(c, http.StatusOK, web.LoginPage(p, web.NewForm(), request.SafeNext(c.QueryParam("next"))))
}

func (a *Area) login(c echo.Context) error {
	username := strings.TrimSpace(c.FormValue("username"))
	password := c.FormValue("password")
	next := request.SafeNext(c.FormValue("next"))
	p := a.Pages.Page(c, "login.title", "")
	f := web.NewForm()
	f.Values["username"] = username

	key := strings.ToLower(username) + "|" + c.RealIP()
	ctx := c.Request().Context()
	if wait := max(a.limiter.blocked(key), a.limiter.blockedShared(ctx, key)); wait > 0 {
		f.Error = p.T("auth.rate_limited", int(wait.Seconds())+1)
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		return response.Render(c, http.StatusTooManyRequests, web.LoginPage(p, f, next))
	}
	ctx = store.WithActor(ctx, store.Actor{Username: username, IP: c.RealIP()})
	u, err := a.Store.Authenticate(ctx, username, password)
	if err != nil {
		if !errs.Is(err, errs.Unauthorized) {
			return err
		}
		a.limiter.fail(key)
		a.limiter.failShared(ctx, key)
		_ = a.Store.RecordEvent(ctx, "login_failed", "user", 0, username)
		f.Error = p.T("auth.bad_credentials")
		return response.Render(c, http.StatusUnauthorized, web.LoginPage(p, f, next))
	}
	a.limiter.reset(key)
	a.limiter.resetShared(ctx, key)
	ctx = store.WithActor(ctx, store.Actor{UserID: u.ID, Username: u.Username, IP: c.RealIP()})
	token, err := a.Store.CreateSession(ctx, u.ID)
	if err != nil {
		return err
	}
	a.Pages.SetSession(c, token)
	return c.Redirect(http.StatusSeeOther, next)
}

func (a *Area) logout(c echo.Context) error {
	if token, ok := request.SessionToken(c); ok {
		if err := a.Store.DeleteSession(c.Request().Context(), token); err != nil {
			return err
		}
	}
	a.Pages.ClearSession(c)
	return c.Redirect(http.StatusSeeOther, "/login")
}

// switchLang stores the language choice in a cookie and goes back.
func (a *Area) switchLang(c echo.Context) error {
	lang := web.NormalizeLang(c.QueryParam("to"), a.Config.Lang)
	a.Pages.SetLang(c, lang)
	// A signed-in user's choice is theirs, not only the browser's: their
	// mail speaks it too. A GET may change it because it changes nothing
	// but the language a person asked for.
	if u := request.OptionalUser(c); u != nil && u.Lang != lang {
		if err := a.Store.SetUserLang(c.Request().Context(), u.ID, lang); err != nil {
			return err
		}
	}
	return c.Redirect(http.StatusSeeOther, request.SafeNext(c.QueryParam("next")))
}
