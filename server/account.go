package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

func (s *Server) accountProps(c echo.Context) (web.AccountProps, error) {
	u := request.User(c)
	ctx := c.Request().Context()
	a := web.AccountProps{Username: u.Username, DisplayName: u.DisplayName, Email: u.Email, Role: u.Role}
	ms, err := s.store.FindMemberships(ctx, store.MembershipFilter{UserID: u.ID})
	if err != nil {
		return a, err
	}
	lang := request.Lang(c)
	for _, m := range ms {
		a.Teams = append(a.Teams, m.TeamName+" ("+web.T(lang, "role."+m.Role)+")")
	}
	toks, err := s.store.FindAPITokens(ctx, u.ID)
	if err != nil {
		return a, err
	}
	p := s.pages.Base(c)
	for _, t := range toks {
		a.Tokens = append(a.Tokens, web.TokenRow{ID: t.ID, Name: t.Name, Prefix: t.Prefix, Created: p.Time(t.CreatedAt),
			LastUsed: p.TimePtr(t.LastUsedAt, p.T("account.token_never")), Revoked: t.RevokedAt != nil})
	}
	return a, nil
}

func (s *Server) renderAccount(c echo.Context, status int, newToken string, pw, tok web.Form) error {
	a, err := s.accountProps(c)
	if err != nil {
		return err
	}
	a.NewToken = newToken
	return response.Render(c, status, web.AccountPage(s.pages.Page(c, "account.title", "account"), a, pw, tok))
}

func (s *Server) accountPage(c echo.Context) error {
	return s.renderAccount(c, http.StatusOK, "", web.NewForm(), web.NewForm())
}

func (s *Server) changePassword(c echo.Context) error {
	u := request.User(c)
	pw := web.NewForm()
	err := s.store.ChangePassword(c.Request().Context(), u.ID, c.FormValue("current"), c.FormValue("new"))
	if err != nil {
		if !response.FormFailed(request.Lang(c), err, &pw) {
			return err
		}
		if e, ok := errs.As(err); ok && e.Fields["password"] != "" {
			pw.Errors["new"] = pw.Errors["password"]
		}
		return s.renderAccount(c, response.StatusOf(err), "", pw, web.NewForm())
	}
	// The password change ended every session, this one too; start a new one
	// so the user stays logged in here.
	token, err := s.store.CreateSession(c.Request().Context(), u.ID)
	if err != nil {
		return err
	}
	s.pages.SetSession(c, token)
	return s.pages.RedirectWithFlash(c, "/account", web.T(request.Lang(c), "account.password_changed"))
}

func (s *Server) createOwnToken(c echo.Context) error {
	u := request.User(c)
	_, secret, err := s.store.CreateAPIToken(c.Request().Context(), u.ID, c.FormValue("name"), store.TokenUser)
	if err != nil {
		tok := request.Form(c, "name")
		if !response.FormFailed(request.Lang(c), err, &tok) {
			return err
		}
		return s.renderAccount(c, response.StatusOf(err), "", web.NewForm(), tok)
	}
	// Rendered directly, not redirected: the secret must not travel in a
	// cookie or URL, and this is the only time it is shown.
	return s.renderAccount(c, http.StatusCreated, secret, web.NewForm(), web.NewForm())
}

func (s *Server) revokeOwnToken(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := s.store.RevokeAPIToken(c.Request().Context(), id, request.User(c).ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/account")
}
