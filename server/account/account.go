package account

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

func (a *Area) accountProps(c echo.Context) (web.AccountProps, error) {
	u := request.User(c)
	ctx := c.Request().Context()
	v := web.AccountProps{Username: u.Username, DisplayName: u.DisplayName, Email: u.Email, Role: u.Role, OSAccounts: u.OSAccounts}
	if u.PasswordHash == "" {
		ids, err := a.Store.FindUserIdentities(ctx, u.ID)
		if err != nil {
			return v, err
		}
		if len(ids) > 0 {
			v.Directory = ids[0].Provider
		}
	}
	ms, err := a.Store.FindMemberships(ctx, store.MembershipFilter{UserID: u.ID})
	if err != nil {
		return v, err
	}
	lang := request.Lang(c)
	for _, m := range ms {
		v.Teams = append(v.Teams, m.TeamName+" ("+web.T(lang, "role."+m.Role)+")")
	}
	toks, err := a.Store.FindAPITokens(ctx, u.ID)
	if err != nil {
		return v, err
	}
	p := a.Pages.Base(c)
	for _, t := range toks {
		v.Tokens = append(v.Tokens, web.TokenRow{ID: t.ID, Name: t.Name, Prefix: t.Prefix, Created: p.Time(t.CreatedAt),
			LastUsed: p.TimePtr(t.LastUsedAt, p.T("account.token_never")), Revoked: t.RevokedAt != nil})
	}
	return v, nil
}

func (a *Area) renderAccount(c echo.Context, status int, newToken string, pw, tok web.Form) error {
	v, err := a.accountProps(c)
	if err != nil {
		return err
	}
	v.NewToken = newToken
	return response.Render(c, status, web.AccountPage(a.Pages.Page(c, "account.title", "account"), v, pw, response.Limited(tok, store.TokenLimits)))
}

func (a *Area) accountPage(c echo.Context) error {
	return a.renderAccount(c, http.StatusOK, "", web.NewForm(), web.NewForm())
}

func (a *Area) changePassword(c echo.Context) error {
	u := request.User(c)
	pw := web.NewForm()
	err := a.Store.ChangePassword(c.Request().Context(), u.ID, c.FormValue("current"), c.FormValue("new"))
	if err != nil {
		if !response.FormFailed(request.Lang(c), err, &pw) {
			return err
		}
		if e, ok := errs.As(err); ok && e.Fields["password"] != "" {
			pw.Errors["new"] = pw.Errors["password"]
		}
		return a.renderAccount(c, response.StatusOf(err), "", pw, web.NewForm())
	}
	// The password change ended every session, this one too, and revoked the
	// API tokens; start a new session so the user stays logged in here.
	token, err := a.Store.CreateSession(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	a.Pages.SetSession(c, token)
	return a.Pages.RedirectWithFlash(c, "/account", web.T(request.Lang(c), "account.password_changed"))
}

func (a *Area) createOwnToken(c echo.Context) error {
	u := request.User(c)
	_, secret, err := a.Store.CreateAPIToken(c.Request().Context(), u.ID, c.FormValue("name"), store.TokenUser)
	if err != nil {
		tok := request.Form(c, "name")
		if !response.FormFailed(request.Lang(c), err, &tok) {
			return err
		}
		return a.renderAccount(c, response.StatusOf(err), "", web.NewForm(), tok)
	}
	// Rendered directly, not redirected: the secret must not travel in a
	// cookie or URL, and this is the only time it is shown.
	return a.renderAccount(c, http.StatusCreated, secret, web.NewForm(), web.NewForm())
}

func (a *Area) revokeOwnToken(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.RevokeAPIToken(c.Request().Context(), id, request.User(c).ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/account")
}

// revokeAllOwnTokens revokes every API token of the user at once, for a
// token that leaked without the user knowing which.
func (a *Area) revokeAllOwnTokens(c echo.Context) error {
	n, err := a.Store.RevokeUserAPITokens(c.Request().Context(), request.User(c).ID)
	if err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/account", web.T(request.Lang(c), "account.tokens_revoked_all", n))
}
