package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"cardhour/directory"
	"cardhour/directory/directorytest"
	"cardhour/server"
	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// closedURL is an address nothing listens on.
func closedURL(t *testing.T, scheme string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return scheme + "://" + addr
}

// mustTeam makes a team with a fresh name.
func mustTeam(t *testing.T, e *servertest.Env) *store.Team {
	t.Helper()
	team, err := e.St.CreateTeam(e.AdminCtx(), store.TeamInput{Name: directorytest.Name("team")})
	if err != nil {
		t.Fatal(err)
	}
	return team
}

func mustRule(t *testing.T, e *servertest.Env, in store.GroupMappingCreate) {
	t.Helper()
	if _, err := e.St.CreateGroupMapping(e.AdminCtx(), in); err != nil {
		t.Fatalf("CreateGroupMapping %+v: %v", in, err)
	}
}

// teamRole is the user's role in the team, "" when not a member.
func teamRole(t *testing.T, e *servertest.Env, username string, teamID int64) string {
	t.Helper()
	u, err := e.St.FindUserByUsername(context.Background(), username)
	if err != nil {
		t.Fatalf("find %s: %v", username, err)
	}
	ms, err := e.St.FindMemberships(context.Background(), store.MembershipFilter{UserID: u.ID, TeamID: teamID})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		return ""
	}
	return ms[0].Role
}

func portalRole(t *testing.T, e *servertest.Env, username string) string {
	t.Helper()
	u, err := e.St.FindUserByUsername(context.Background(), username)
	if err != nil {
		t.Fatalf("find %s: %v", username, err)
	}
	return u.Role
}

// wantLoginMessage checks a refused sign-in: its status and the page's
// message, in the page's language.
func wantLoginMessage(t *testing.T, r servertest.Response, status int, key string, args ...any) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("status %d, want %d:\n%s", r.StatusCode, status, r)
	}
	got := strings.TrimSpace(r.Doc(t).Find(`[data-testid="form-error"]`).Text())
	if want := web.T(web.LangZH, key, args...); got != want {
		t.Errorf("sign-in message %q, want %q (%s)", got, want, key)
	}
}

// TestLDAPSignInFollowsTheGroups: a person of the company directory signs
// in with their directory password; the account is made at the first
// sign-in, lands in the team and with the portal role their groups map
// to, and loses the membership at the next sign-in after leaving the group.
func TestLDAPSignInFollowsTheGroups(t *testing.T) {
	l := directorytest.NewLDAP(t)
	uid, pw := directorytest.Name("ada"), "ada-Pw-1843"
	train, leads := directorytest.Name("train"), directorytest.Name("leads")
	l.AddUser(t, uid, pw, "Ada Lovelace", train, leads)
	e := servertest.New(t, servertest.Options{Vars: l.Vars()})
	team := mustTeam(t, e)
	mustRule(t, e, store.GroupMappingCreate{Provider: directory.LDAP, Group: train, TeamID: team.ID, TeamRole: store.TeamRoleMember})
	mustRule(t, e, store.GroupMappingCreate{Group: leads, PortalRole: store.RoleManager})

	page := e.Client().Get("/login")
	if page.Doc(t).Find(`[data-testid="login-directory-hint"]`).Length() != 1 {
		t.Errorf("the sign-in page does not say that directory passwords work")
	}
	c := e.Client()
	c.MustLogin(uid, pw)
	if got := teamRole(t, e, uid, team.ID); got != store.TeamRoleMember {
		t.Errorf("after the first sign-in %s is %q in the team, want member", uid, got)
	}
	if got := portalRole(t, e, uid); got != store.RoleManager {
		t.Errorf("portal role %q, want manager (group %s)", got, leads)
	}
	u, _ := e.St.FindUserByUsername(context.Background(), uid)
	if u.DisplayName != "Ada Lovelace" || u.Email != uid+"@cardhour.test" {
		t.Errorf("the account took name %q and mail %q from the directory", u.DisplayName, u.Email)
	}
	if acc := c.Get("/account"); !strings.Contains(acc.String(), team.Name) {
		t.Errorf("the account page does not list the team %s", team.Name)
	}

	// Out of the training group: at the next sign-in, out of the team.
	l.Leave(t, uid, train)
	c.PostForm("/logout", nil, true)
	c.MustLogin(uid, pw)
	if got := teamRole(t, e, uid, team.ID); got != "" {
		t.Errorf("after leaving %s and signing in again %s is still %q in the team", train, uid, got)
	}
	l.Leave(t, uid, leads)
	c.PostForm("/logout", nil, true)
	c.MustLogin(uid, pw)
	if got := portalRole(t, e, uid); got != store.RoleViewer {
		t.Errorf("with no group giving a role the portal role is %q, want the default viewer", got)
	}

	entries, _, err := e.St.FindAuditEntries(context.Background(), store.AuditFilter{Actions: []string{"directory_login"}})
	if err != nil || len(entries) != 3 {
		t.Errorf("%d directory_login audit entries (%v), want 3", len(entries), err)
	}

	// A wrong directory password is a wrong password, counted as one.
	wantLoginMessage(t, e.Client().Login(uid, "not-"+pw), http.StatusUnauthorized, "auth.bad_credentials")
	wantLoginMessage(t, e.Client().Login(uid, ""), http.StatusUnauthorized, "auth.bad_credentials")
	if strings.Contains(e.Logs.String(), pw) {
		t.Errorf("the server log holds the directory password")
	}
}

// TestUnreachableDirectoryIsA503: with the directory away, a sign-in
// through it says so (503, not 500, not "wrong password"), and the local
// admin still signs in.
func TestUnreachableDirectoryIsA503(t *testing.T) {
	vars := map[string]string{"CARDHOUR_LDAP_URL": closedURL(t, "ldap"), "CARDHOUR_LDAP_STARTTLS": "false",
		"CARDHOUR_LDAP_USER_BASE": "ou=people,dc=cardhour,dc=test"}
	e := servertest.New(t, servertest.Options{Vars: vars})
	wantLoginMessage(t, e.Client().Login("someone", "their-password"), http.StatusServiceUnavailable, "directory.unreachable")
	e.Client().MustLogin("admin", servertest.AdminPassword)
}

// TestLocalAccountIsNotMergedSilently: a directory person whose login
// name a local account has already is refused until an admin links them;
// then they sign in to that account.
func TestLocalAccountIsNotMergedSilently(t *testing.T) {
	l := directorytest.NewLDAP(t)
	uid, pw := directorytest.Name("dup"), "dup-Pw-2024"
	l.AddUser(t, uid, pw, "Dup Licate")
	e := servertest.New(t, servertest.Options{Vars: l.Vars()})
	local, err := e.St.CreateUser(e.AdminCtx(), store.UserCreate{Username: uid, Password: "local-password-1", Role: store.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	wantLoginMessage(t, e.Client().Login(uid, pw), http.StatusConflict, "directory.not_linked", uid)
	pending, err := e.St.FindPendingIdentities(context.Background())
	if err != nil || len(pending) != 1 || pending[0].Username != uid {
		t.Fatalf("pending identities %+v (%v), want %s's", pending, err, uid)
	}
	// The local password still opens the local account meanwhile.
	e.Client().MustLogin(uid, "local-password-1")

	if err := e.St.LinkIdentity(e.AdminCtx(), pending[0].ID); err != nil {
		t.Fatal(err)
	}
	e.Client().MustLogin(uid, pw)
	u, _ := e.St.FindUserByUsername(context.Background(), uid)
	if u.ID != local.ID {
		t.Errorf("after the link the directory sign-in reached account %d, want the local %d", u.ID, local.ID)
	}
}

// TestLocalSignInTurnedOff: with password sign-in off for local accounts
// only the bootstrap admin signs in with a password.
func TestLocalSignInTurnedOff(t *testing.T) {
	e := servertest.New(t, servertest.Options{})
	if err := e.St.SetLocalLogin(e.AdminCtx(), false); err != nil {
		t.Fatal(err)
	}
	m := e.Users[store.RoleMember]
	// With no company sign-in configured the form stays open: it is the
	// only way in.
	if page := e.Client().Get("/login").Doc(t); page.Find(`[data-testid="login-form"]`).Length() != 1 {
		t.Errorf("the sign-in page lost its form")
	}
	wantLoginMessage(t, e.Client().Login(m.Username, m.Password), http.StatusForbidden, "auth.local_off")
	e.Client().MustLogin("admin", servertest.AdminPassword)
}

// TestLDAPSyncDisablesDeparted: someone who leaves the company is
// disabled by the next sync: their API tokens and sessions stop at once;
// a sync that cannot reach the directory disables no one.
func TestLDAPSyncDisablesDeparted(t *testing.T) {
	l := directorytest.NewLDAP(t)
	uid, pw := directorytest.Name("gone"), "gone-Pw-77"
	l.AddUser(t, uid, pw, "Soon Gone")
	e := servertest.New(t, servertest.Options{Vars: l.Vars()})
	c := e.Client()
	c.MustLogin(uid, pw)
	u, _ := e.St.FindUserByUsername(context.Background(), uid)
	_, token, err := e.St.CreateAPIToken(context.Background(), u.ID, "ci", store.TokenUser)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.APICall(http.MethodGet, "/api/v1/me", token, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("the token before the sync: %d", r.StatusCode)
	}

	// The same database, a directory that does not answer: no one is disabled.
	cfg := e.Cfg
	cfg.LDAP.URL, cfg.LDAP.StartTLS, cfg.LDAP.CAFile = closedURL(t, "ldap"), false, ""
	away := server.New(cfg, e.St, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
	res, err := away.Account().SyncDirectory(context.Background())
	if err == nil || res.Disabled != 0 {
		t.Fatalf("a sync without the directory: %+v %v, want an error and no one disabled", res, err)
	}
	if u, _ := e.St.FindUserByUsername(context.Background(), uid); u.Disabled {
		t.Fatalf("a sync that could not reach the directory disabled %s", uid)
	}

	l.Remove(t, uid)
	res, err = e.Srv.Account().SyncDirectory(context.Background())
	if err != nil || res.Disabled != 1 || res.Checked != 1 {
		t.Fatalf("sync: %+v %v, want 1 checked, 1 disabled", res, err)
	}
	if r := c.APICall(http.MethodGet, "/api/v1/me", token, ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the departed's API token after the sync: %d, want 401", r.StatusCode)
	}
	if r := c.Get("/account"); r.StatusCode == http.StatusOK {
		t.Errorf("the departed's session still opens /account")
	}
	wantLoginMessage(t, e.Client().Login(uid, pw), http.StatusUnauthorized, "auth.bad_credentials")
	entries, _, err := e.St.FindAuditEntries(context.Background(), store.AuditFilter{Actions: []string{"directory_sync"}})
	if err != nil || len(entries) < 1 {
		t.Errorf("no directory_sync audit entry (%v)", err)
	}
}

// TestOIDCSignIn: the "Sign in with …" button through a real provider:
// the person lands in the team their groups claim maps to; the answer
// is single use and bound to the browser that asked; their groups are
// read again at the next sign-in.
func TestOIDCSignIn(t *testing.T) {
	o := directorytest.NewOIDC(t)
	user, pw := directorytest.Name("sso"), "sso-Pw-5"
	grp := directorytest.Name("infer")
	o.AddUser(t, user, pw, "Sso User", grp)
	e := servertest.New(t, servertest.Options{Vars: o.Vars(), OwnBaseURL: true})
	team := mustTeam(t, e)
	mustRule(t, e, store.GroupMappingCreate{Provider: directory.OIDC, Group: grp, TeamID: team.ID, TeamRole: store.TeamRoleManager})
	callback := e.TS.URL + "/login/oidc/callback"

	if b := e.Client().Get("/login").Doc(t).Find(`[data-testid="login-sso"]`); strings.TrimSpace(b.Text()) != web.T(web.LangZH, "login.sso", "Test SSO") {
		t.Errorf("the sign-in button reads %q", b.Text())
	}
	signIn := func(c *servertest.Client) (back string) {
		t.Helper()
		r := c.Get("/login/oidc?next=/account")
		if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), o.Issuer) {
			t.Fatalf("GET /login/oidc: %d to %q, want a redirect to the provider", r.StatusCode, r.Header.Get("Location"))
		}
		loc := o.LogIn(t, r.Header.Get("Location"), user, pw, callback)
		return loc.RequestURI()
	}
	c := e.Client()
	back := signIn(c)
	r := c.Get(back)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/account" || c.Cookie("cardhour_session") == "" {
		t.Fatalf("callback: %d to %q, want a session and /account:\n%s", r.StatusCode, r.Header.Get("Location"), r)
	}
	if got := teamRole(t, e, user, team.ID); got != store.TeamRoleManager {
		t.Errorf("after the sign-in %s is %q in the team, want manager", user, got)
	}

	// The same answer again, even with the state cookie put back: refused.
	state := strings.Split(strings.SplitN(back, "state=", 2)[1], "&")[0]
	replay := e.Client()
	replay.SetCookie("cardhour_sso", state)
	wantLoginMessage(t, replay.Get(back), http.StatusUnauthorized, "auth.sso_state_invalid")
	// A fresh answer taken to another browser (one that never asked): refused.
	other := e.Client()
	wantLoginMessage(t, other.Get(signIn(e.Client())), http.StatusUnauthorized, "auth.sso_state_invalid")
	// The provider's refusal is said, not a 500.
	wantLoginMessage(t, e.Client().Get("/login/oidc/callback?error=access_denied&state=x"), http.StatusUnauthorized, "auth.sso_denied", "access_denied")

	// Out of the group at the provider: out of the team at the next sign-in.
	o.SetGroups(t, user)
	c2 := e.Client()
	if r := c2.Get(signIn(c2)); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d:\n%s", r.StatusCode, r)
	}
	if got := teamRole(t, e, user, team.ID); got != "" {
		t.Errorf("after leaving %s at the provider %s is still %q in the team", grp, user, got)
	}
}

// TestOIDCProviderDownIsA503: the provider away, the button answers 503
// with a message, and the portal serves on.
func TestOIDCProviderDownIsA503(t *testing.T) {
	e := servertest.New(t, servertest.Options{OwnBaseURL: true, Vars: map[string]string{
		"CARDHOUR_OIDC_ISSUER": closedURL(t, "http"), "CARDHOUR_OIDC_CLIENT_ID": "cardhour", "CARDHOUR_OIDC_CLIENT_SECRET": "s3cret-value"}})
	wantLoginMessage(t, e.Client().Get("/login/oidc"), http.StatusServiceUnavailable, "directory.unreachable")
	e.Client().MustLogin("admin", servertest.AdminPassword)
}
