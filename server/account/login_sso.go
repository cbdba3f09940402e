package account

import (
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/directory/oidc"
	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
	"cardhour/web"
)

// ssoCookie binds a company sign-in to the browser that started it: the
// provider's answer is taken only with the state this browser was sent
// away with, so nobody can sign a victim into the attacker's account by
// sending them a callback link (login CSRF).
const ssoCookie = "cardhour_sso"

// ssoWindow is how long a person has at the provider's sign-in page.
const ssoWindow = 10 * time.Minute

// ssoStart sends the browser to the provider, keeping the state, nonce
// and PKCE verifier of this round trip in the database (any replica may
// get the answer) and the state in a cookie.
func (a *Area) ssoStart(c echo.Context) error {
	const op = "account.ssoStart"
	next := request.SafeNext(c.QueryParam("next"))
	if a.dirs.OIDC == nil {
		return errs.E(errs.NotFound, op, "auth.sso_off")
	}
	ctx := c.Request().Context()
	st, err := a.dirs.OIDC.Begin(ctx)
	if err != nil {
		return a.ssoRefused(c, err, next)
	}
	if err := a.Store.SaveLoginState(ctx, store.LoginState{State: st.State, Nonce: st.Nonce, Verifier: st.Verifier,
		Next: next, ExpiresAt: time.Now().Add(ssoWindow)}); err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{Name: ssoCookie, Value: st.State, Path: "/login/oidc", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: a.Pages.Secure(c), MaxAge: int(ssoWindow.Seconds())})
	return c.Redirect(http.StatusSeeOther, st.URL)
}

// ssoCallback takes the provider's answer: the state must be this
// browser's and unused, the code is exchanged with the verifier and the
// ID token verified (directory/oidc), then the directory's groups decide
// the account's teams and role (store.SignInExternal).
func (a *Area) ssoCallback(c echo.Context) error {
	const op = "account.ssoCallback"
	if a.dirs.OIDC == nil {
		return errs.E(errs.NotFound, op, "auth.sso_off")
	}
	c.SetCookie(&http.Cookie{Name: ssoCookie, Value: "", Path: "/login/oidc", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: a.Pages.Secure(c), MaxAge: -1})
	ctx := store.WithActor(c.Request().Context(), store.Actor{IP: c.RealIP()})
	state := c.QueryParam("state")
	if e := c.QueryParam("error"); e != "" {
		// The provider's own refusal (access_denied, …): say which,
		// in the page's words, and let them try again. Its description
		// is the provider's text, not ours, and is not shown.
		_ = a.Store.RecordEvent(ctx, "login_failed", "user", 0, "oidc: "+oauthErrorCode(e))
		_, _ = a.Store.TakeLoginState(ctx, state)
		f := web.NewForm()
		f.Error = a.Pages.Page(c, "login.title", "").T("auth.sso_denied", oauthErrorCode(e))
		return a.renderLogin(c, http.StatusUnauthorized, f, "/")
	}
	cookie, err := c.Cookie(ssoCookie)
	if err != nil || state == "" || subtle.ConstantTimeCompare([]byte(cookie.Value), []byte(state)) != 1 {
		return a.ssoRefused(c, errs.E(errs.Unauthorized, op, "auth.sso_state_invalid"), "/")
	}
	ls, err := a.Store.TakeLoginState(ctx, state)
	if err != nil {
		return a.ssoRefused(c, err, "/")
	}
	id, err := a.dirs.OIDC.Finish(ctx, c.QueryParam("code"), oidc.Start{State: ls.State, Nonce: ls.Nonce, Verifier: ls.Verifier})
	if err != nil {
		return a.ssoRefused(c, err, ls.Next)
	}
	ctx = store.WithActor(ctx, store.Actor{Username: id.Username, IP: c.RealIP()})
	u, err := a.Store.SignInExternal(ctx, id, a.dirs.DefaultRole)
	if err != nil {
		return a.ssoRefused(c, err, ls.Next)
	}
	return a.startSession(c, u, ls.Next)
}

// ssoRefused shows the sign-in page saying why the company sign-in did
// not go through; an error that is not the person's (a database fault)
// goes to the error handler.
func (a *Area) ssoRefused(c echo.Context, err error, next string) error {
	status, ok := loginRefusal(err)
	if !ok {
		return err
	}
	if status == http.StatusUnauthorized {
		ctx := store.WithActor(c.Request().Context(), store.Actor{IP: c.RealIP()})
		_ = a.Store.RecordEvent(ctx, "login_failed", "user", 0, "oidc")
	}
	f := web.NewForm()
	key, args := refusal(err)
	f.Error = a.Pages.Page(c, "login.title", "").T(key, args...)
	return a.renderLogin(c, status, f, next)
}

// oauthErrorCode keeps of the provider's error parameter what an OAuth
// error code is made of (RFC 6749 §4.1.2.1: access_denied, …), so that a
// crafted link cannot write its own words into the page or the audit log.
func oauthErrorCode(s string) string {
	out := make([]rune, 0, 40)
	for _, r := range s {
		if len(out) == 40 {
			break
		}
		if r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return string(out)
}
