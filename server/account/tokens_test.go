package account_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// apiStatus is the status GET /api/v1/me answers with the token.
func apiStatus(c *servertest.Client, token string) int {
	return c.APICall(http.MethodGet, "/api/v1/me", token, "").StatusCode
}

// TestRevokeAllMyTokens: the account page offers to revoke every API token
// of the user at once, in both languages; the form needs the CSRF token,
// the revocations are audited, and other users' tokens are untouched.
func TestRevokeAllMyTokens(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{})
	member, viewer := e.Users[store.RoleMember], e.Users[store.RoleViewer]
	_, second, err := e.St.CreateAPIToken(e.ActorCtx(member), member.ID, "laptop", store.TokenUser)
	if err != nil {
		t.Fatal(err)
	}
	c := e.Client()
	c.MustLogin(member.Username, member.Password)
	for _, lang := range []string{web.LangZH, web.LangEN} {
		doc := c.Get("/account?lang=" + lang).Doc(t)
		btn := doc.Find(`[data-testid=revoke-all-tokens-form] [data-testid=revoke-all-tokens]`)
		if got := strings.TrimSpace(btn.Text()); got != web.T(lang, "account.tokens_revoke_all") {
			t.Errorf("account page (%s): revoke-all button %q, want %q", lang, got, web.T(lang, "account.tokens_revoke_all"))
		}
		if q, _ := doc.Find(`[data-testid=revoke-all-tokens-form]`).Attr("data-confirm"); q != web.T(lang, "account.tokens_revoke_all_q") {
			t.Errorf("account page (%s): the form does not ask first: %q", lang, q)
		}
	}
	if r := c.PostForm("/account/tokens/revoke-all", nil, false); r.StatusCode != http.StatusForbidden {
		t.Errorf("revoke-all without the CSRF token: %d, want 403", r.StatusCode)
	}
	if s := apiStatus(c, member.Token); s != http.StatusOK {
		t.Fatalf("a refused revoke-all revoked the token: %d", s)
	}
	audits := e.AuditTotal()

	c.Get("/lang?to=" + web.LangEN + "&next=/account")
	r := c.PostForm("/account/tokens/revoke-all", nil, true)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/account" {
		t.Fatalf("revoke-all: %d %s, want 303 to /account", r.StatusCode, r.Header.Get("Location"))
	}
	page := c.Get("/account")
	if got := page.Doc(t).Find(`[data-testid=flash]`).Text(); !strings.Contains(got, web.T(web.LangEN, "account.tokens_revoked_all", 2)) {
		t.Errorf("flash %q, want %q", got, web.T(web.LangEN, "account.tokens_revoked_all", 2))
	}
	if page.Doc(t).Find(`[data-testid=revoke-all-tokens]`).Length() != 0 {
		t.Error("the button still shows with nothing left to revoke")
	}
	for name, tok := range map[string]string{"test": member.Token, "laptop": second} {
		if s := apiStatus(c, tok); s != http.StatusUnauthorized {
			t.Errorf("token %q after revoke-all: %d, want 401", name, s)
		}
	}
	if s := apiStatus(c, viewer.Token); s != http.StatusOK {
		t.Errorf("another user's token after revoke-all: %d, want 200", s)
	}
	if got := e.AuditTotal() - audits; got < 2 {
		t.Errorf("revoke-all added %d audit entries, want one per token (2)", got)
	}
	entries, _, err := e.St.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "api_token", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range entries {
		if a.Action != "revoke" || a.ActorName != member.Username {
			t.Errorf("audit entry %s %s by %q, want revoke by %s", a.Action, a.Entity, a.ActorName, member.Username)
		}
	}
}

// TestPasswordChangeEndsOtherSessionsAndRevokesTokens: changing one's
// password (or an admin resetting it) leaves no way in that the old
// password could have made: the other sessions end and the API tokens are
// revoked. The session that changed it stays logged in.
func TestPasswordChangeEndsOtherSessionsAndRevokesTokens(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{})
	member, viewer := e.Users[store.RoleMember], e.Users[store.RoleViewer]
	here, elsewhere := e.Client(), e.Client()
	here.MustLogin(member.Username, member.Password)
	elsewhere.MustLogin(member.Username, member.Password)

	r := here.PostForm("/account/password", url.Values{"current": {member.Password}, "new": {"a-brand-new-secret"}}, true)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("change password: %d\n%.800s", r.StatusCode, r)
	}
	if page := here.Get("/account"); page.StatusCode != http.StatusOK {
		t.Errorf("the session that changed the password was logged out: %d", page.StatusCode)
	} else if got := page.Doc(t).Find(`[data-testid=flash]`).Text(); !strings.Contains(got, web.T(web.LangZH, "account.password_changed")) {
		t.Errorf("flash %q, want %q", got, web.T(web.LangZH, "account.password_changed"))
	}
	if page := elsewhere.Get("/account"); page.StatusCode == http.StatusOK {
		t.Errorf("another session of the account survived the password change")
	}
	if s := apiStatus(here, member.Token); s != http.StatusUnauthorized {
		t.Errorf("the API token after its user changed the password: %d, want 401", s)
	}

	// An admin's reset does the same to the user's tokens.
	admin := e.Client()
	admin.MustLogin("admin", servertest.AdminPassword)
	r = admin.PostForm("/admin/users/"+strconv.FormatInt(viewer.ID, 10), url.Values{"display_name": {""}, "email": {""}, "role": {store.RoleViewer},
		"password": {"reset-by-the-admin"}}, true)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin reset: %d\n%.800s", r.StatusCode, r)
	}
	if s := apiStatus(admin, viewer.Token); s != http.StatusUnauthorized {
		t.Errorf("the API token after an admin reset its user's password: %d, want 401", s)
	}
	if s := apiStatus(admin, e.Users[store.RoleAdmin].Token); s != http.StatusOK {
		t.Errorf("the admin's own token after resetting someone else's password: %d, want 200", s)
	}
}
