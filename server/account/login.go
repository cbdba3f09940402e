package account

import (
	"context"
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

// loginView is what the sign-in page offers this visitor.
func (a *Area) loginView(ctx context.Context, next string) (web.LoginView, error) {
	v := web.LoginView{Next: next, Directory: a.dirs.LDAP != nil}
	if a.dirs.OIDC != nil {
		v.SSO = a.dirs.OIDC.Label()
	}
	on, err := a.Store.LocalLoginEnabled(ctx)
	if err != nil {
		return v, err
	}
	v.LocalOff = !on
	return v, nil
}

// renderLogin shows the sign-in page with f's values and message.
func (a *Area) renderLogin(c echo.Context, status int, f web.Form, next string) error {
	v, err := a.loginView(c.Request().Context(), next)
	if err != nil {
		return err
	}
	return response.Render(c, status, web.LoginPage(a.Pages.Page(c, "login.title", ""), f, v))
}

func (a *Area) loginPage(c echo.Context) error {
	if u := request.OptionalUser(c); u != nil {
		return c.Redirect(http.StatusSeeOther, request.SafeNext(c.QueryParam("next")))
	}
	return a.renderLogin(c, http.StatusOK, web.NewForm(), request.SafeNext(c.QueryParam("next")))
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
		return a.renderLogin(c, http.StatusTooManyRequests, f, next)
	}
	ctx = store.WithActor(ctx, store.Actor{Username: username, IP: c.RealIP()})
	u, err := a.checkPassword(ctx, username, password)
	if err != nil {
		status, ok := loginRefusal(err)
		if !ok {
			return err
		}
		if status == http.StatusUnauthorized {
			a.limiter.fail(key)
			a.limiter.failShared(ctx, key)
			_ = a.Store.RecordEvent(ctx, "login_failed", "user", 0, username)
		}
		key, args := refusal(err)
		f.Error = p.T(key, args...)
		return a.renderLogin(c, status, f, next)
	}
	a.limiter.reset(key)
	a.limiter.resetShared(ctx, key)
	return a.startSession(c, u, next)
}

// checkPassword signs in with a password: a local account's, or — when
// the portal has a company directory — the directory's. A local account
// is tried first, so the bootstrap admin signs in while the directory is
// down; when an admin turned local passwords off, only the bootstrap
// admin's is tried.
func (a *Area) checkPassword(ctx context.Context, username, password string) (*store.User, error) {
	const op = "account.checkPassword"
	on, err := a.Store.LocalLoginEnabled(ctx)
	if err != nil {
		return nil, err
	}
	if on || strings.EqualFold(username, store.BootstrapUsername) {
		u, err := a.Store.Authenticate(ctx, username, password)
		if err == nil || !errs.Is(err, errs.Unauthorized) {
			return u, err
		}
		if a.dirs.LDAP == nil {
			return nil, err
		}
	} else if a.dirs.LDAP == nil {
		return nil, errs.E(errs.Forbidden, op, "auth.local_off")
	}
	id, err := a.dirs.LDAP.Authenticate(ctx, username, password)
	if err != nil {
		return nil, err
	}
	return a.Store.SignInExternal(ctx, id, a.dirs.DefaultRole)
}

// loginRefusal tells the status of a sign-in that did not go through and
// whether the sign-in page says why (else the error handler answers).
func loginRefusal(err error) (int, bool) {
	switch {
	case errs.Is(err, errs.Unauthorized):
		return http.StatusUnauthorized, true
	case errs.Is(err, errs.Forbidden):
		return http.StatusForbidden, true
	case errs.Is(err, errs.Conflict):
		return http.StatusConflict, true
	case errs.Is(err, errs.Unavailable):
		// The directory or the provider is away: a 503 page that says
		// so, not a 500 — and not counted as a failed attempt.
		return http.StatusServiceUnavailable, true
	}
	return 0, false
}

// refusal is the message of a refused sign-in: the error's own where it
// has one meant for the person, else the general one — which never tells
// whether the name or the password was wrong.
func refusal(err error) (key string, args []any) {
	if e, ok := errs.As(err); ok {
		switch e.Key {
		case "auth.disabled", "auth.local_off", "auth.sso_failed", "auth.sso_state_invalid",
			"directory.unreachable", "directory.not_linked", "directory.username_invalid":
			return e.Key, e.Args
		}
	}
	if errs.Is(err, errs.Unavailable) {
		return "directory.unreachable", nil
	}
	return "auth.bad_credentials", nil
}

// startSession signs u in and goes on to next.
func (a *Area) startSession(c echo.Context, u *store.User, next string) error {
	ctx := store.WithActor(c.Request().Context(), store.Actor{UserID: u.ID, Username: u.Username, IP: c.RealIP()})
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
