package oidc_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"cardhour/directory"
	"cardhour/directory/directorytest"
	"cardhour/directory/oidc"
	"cardhour/errs"
)

// The redirect URI the test provider accepts (any port of 127.0.0.1); the
// login below stops at it, so nothing needs to listen there.
const testRedirect = "http://127.0.0.1:9/login/oidc/callback"

// realProvider is the provider scripts/testenv.sh starts (e2e/oidcprovider).
func realProvider(t *testing.T) oidc.Config {
	t.Helper()
	issuer := os.Getenv("CARDHOUR_TEST_OIDC_ISSUER")
	if issuer == "" {
		t.Skip("CARDHOUR_TEST_OIDC_ISSUER is not set: run under scripts/testenv.sh for the real OpenID Connect provider")
	}
	return oidc.Config{
		Issuer:       issuer,
		ClientID:     os.Getenv("CARDHOUR_TEST_OIDC_CLIENT_ID"),
		ClientSecret: os.Getenv("CARDHOUR_TEST_OIDC_CLIENT_SECRET"),
		RedirectURL:  testRedirect,
		DisplayName:  "Zitadel",
	}
}

func MustNew(tb testing.TB, cfg oidc.Config) *oidc.Provider {
	tb.Helper()
	p, err := oidc.New(cfg, nil)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return p
}

func MustBegin(tb testing.TB, p *oidc.Provider) oidc.Start {
	tb.Helper()
	s, err := p.Begin(context.Background())
	if err != nil {
		tb.Fatalf("Begin: %v", err)
	}
	return s
}

// MustLogIn plays the browser at the test provider (directorytest) and
// returns the code and state it sent back to the redirect URI.
func MustLogIn(tb testing.TB, authURL, username, password string) (code, state string) {
	tb.Helper()
	loc := directorytest.NewOIDC(tb).LogIn(tb, authURL, username, password, testRedirect)
	return loc.Query().Get("code"), loc.Query().Get("state")
}

func wantCode(t *testing.T, err error, code errs.Code, key string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code || e.Key != key {
		t.Fatalf("error %v, want %s %s", err, code, key)
	}
}

func TestSignInThroughARealProvider(t *testing.T) {
	cfg := realProvider(t)
	p := MustNew(t, cfg)
	if p.Label() != "Zitadel" {
		t.Errorf("label %q", p.Label())
	}
	s := MustBegin(t, p)
	code, state := MustLogIn(t, s.URL, "alice", "alice-pass")
	if state != s.State || code == "" {
		t.Fatalf("came back with state %q (want %q), code %q", state, s.State, code)
	}
	id, err := p.Finish(context.Background(), code, s)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	want := directory.Identity{Provider: directory.OIDC, Subject: cfg.Issuer + " alice", Username: "alice",
		DisplayName: "Alice Liddell", Email: "alice@example.com", Groups: []string{"gpu-train", "gpu-leads"}}
	if id.Provider != want.Provider || id.Subject != want.Subject || id.Username != want.Username ||
		id.DisplayName != want.DisplayName || id.Email != want.Email || !slices.Equal(id.Groups, want.Groups) {
		t.Errorf("identity %+v, want %+v", id, want)
	}

	// The provider deletes a code once redeemed: a replay is refused.
	_, err = p.Finish(context.Background(), code, s)
	wantCode(t, err, errs.Unauthorized, "auth.sso_failed")
	if strings.Contains(err.Error(), code) || strings.Contains(err.Error(), cfg.ClientSecret) {
		t.Errorf("the error quotes the code or the secret: %v", err)
	}
}

func TestRealProviderRefusesTheWrongVerifier(t *testing.T) {
	p := MustNew(t, realProvider(t))
	s := MustBegin(t, p)
	code, _ := MustLogIn(t, s.URL, "bob", "bob-pass")
	other := MustBegin(t, p)
	s.Verifier = other.Verifier // PKCE: only the verifier of this sign-in redeems its code
	_, err := p.Finish(context.Background(), code, s)
	wantCode(t, err, errs.Unauthorized, "auth.sso_failed")
}

func TestGroupsAreReadAtEachLogin(t *testing.T) {
	p := MustNew(t, realProvider(t))
	path := os.Getenv("CARDHOUR_TEST_OIDC_USERS")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(path, orig, 0o600) })
	var users []map[string]any
	if err := json.Unmarshal(orig, &users); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u["username"] == "bob" {
			u["groups"] = []string{"gpu-viewers"}
		}
	}
	changed, _ := json.Marshal(users)
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	s := MustBegin(t, p)
	code, _ := MustLogIn(t, s.URL, "bob", "bob-pass")
	id, err := p.Finish(context.Background(), code, s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(id.Groups, []string{"gpu-viewers"}) {
		t.Errorf("groups %v after the change, want [gpu-viewers]", id.Groups)
	}
}

// Stopping the provider: a fresh Provider cannot discover it (Unavailable),
// one that discovered it earlier cannot redeem a code (Unavailable), and
// once it is back the same Provider works without a restart of the portal.
func TestProviderDownIsUnavailable(t *testing.T) {
	cfg := realProvider(t)
	ctl := os.Getenv("CARDHOUR_TEST_OIDC_CTL")
	earlier := MustNew(t, cfg)
	s := MustBegin(t, earlier)
	code, _ := MustLogIn(t, s.URL, "carol", "carol-pass")

	run := func(arg string) {
		t.Helper()
		if out, err := exec.Command(ctl, arg).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", ctl, arg, err, out)
		}
	}
	run("stop")
	t.Cleanup(func() { exec.Command(ctl, "start").Run() })

	fresh := MustNew(t, cfg)
	_, err := fresh.Begin(context.Background())
	wantCode(t, err, errs.Unavailable, "directory.unreachable")
	_, err = earlier.Finish(context.Background(), code, s)
	wantCode(t, err, errs.Unavailable, "directory.unreachable")

	run("start")
	s = MustBegin(t, fresh)
	code, _ = MustLogIn(t, s.URL, "carol", "carol-pass")
	id, err := fresh.Finish(context.Background(), code, s)
	if err != nil || !slices.Equal(id.Groups, []string{"gpu-viewers"}) {
		t.Fatalf("after the restart: %+v, %v", id, err)
	}
}
