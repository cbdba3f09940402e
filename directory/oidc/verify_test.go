package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/directory/oidc"
	"cardhour/errs"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	fakeClient = "cardhour"
	fakeSecret = "fake-client-secret-7c1e"
	fakeCode   = "fake-code-4b2a"
)

// fakeIssuer is a provider in the test: discovery, JWKS and a token endpoint
// that returns whatever ID token the test makes, so go-oidc's own
// verification meets each kind of bad token.
type fakeIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey

	mu   sync.Mutex
	down bool // every endpoint answers 503
	// idToken makes the token endpoint's id_token from the request's form.
	idToken     func(f *fakeIssuer) string
	tokenStatus int            // non-zero: the token endpoint answers this, no token
	keysStatus  int            // non-zero: the JWKS endpoint answers this
	userinfo    map[string]any // nil: no userinfo endpoint in discovery
	verifier    string         // the code_verifier of the last token request
}

func newFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		doc := map[string]any{
			"issuer":                                f.srv.URL,
			"authorization_endpoint":                f.srv.URL + "/auth",
			"token_endpoint":                        f.srv.URL + "/token",
			"jwks_uri":                              f.srv.URL + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		}
		f.mu.Lock()
		if f.userinfo != nil {
			doc["userinfo_endpoint"] = f.srv.URL + "/userinfo"
		}
		f.mu.Unlock()
		json.NewEncoder(w).Encode(doc)
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		status := f.keysStatus
		f.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if id, secret, _ := r.BasicAuth(); id != fakeClient || secret != fakeSecret {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		f.verifier = r.PostFormValue("code_verifier")
		if f.tokenStatus != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.tokenStatus)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		if r.PostFormValue("code") != fakeCode {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "fake-access", "token_type": "Bearer", "expires_in": 300, "id_token": f.idToken(f)})
	})
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer fake-access" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(f.userinfo)
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		down := f.down
		f.mu.Unlock()
		if down {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIssuer) provider(t *testing.T) *oidc.Provider {
	t.Helper()
	return MustNew(t, oidc.Config{Issuer: f.srv.URL, ClientID: fakeClient, ClientSecret: fakeSecret, RedirectURL: testRedirect})
}

// claims are those of a good ID token for nonce.
func (f *fakeIssuer) claims(nonce string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": f.srv.URL, "sub": "u-42", "aud": fakeClient, "nonce": nonce,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"preferred_username": "Alice", "name": "Alice Liddell", "email": "alice@example.com",
		"groups": []string{"gpu-train", "gpu-leads"},
	}
}

func sign(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// signIn runs Begin and Finish against f, whose token endpoint answers with
// the ID token that token makes from the sign-in's nonce.
func signIn(t *testing.T, f *fakeIssuer, token func(nonce string) string) (oidc.Start, error) {
	t.Helper()
	p := f.provider(t)
	s := MustBegin(t, p)
	f.mu.Lock()
	f.idToken = func(*fakeIssuer) string { return token(s.Nonce) }
	f.mu.Unlock()
	_, err := p.Finish(context.Background(), fakeCode, s)
	return s, err
}

func TestFinishReadsTheVerifiedToken(t *testing.T) {
	f := newFakeIssuer(t)
	p := f.provider(t)
	s := MustBegin(t, p)
	f.idToken = func(f *fakeIssuer) string { return sign(t, f.key, f.claims(s.Nonce)) }
	id, err := p.Finish(context.Background(), fakeCode, s)
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != f.srv.URL+" u-42" || id.Username != "alice" || id.DisplayName != "Alice Liddell" ||
		id.Email != "alice@example.com" || !slices.Equal(id.Groups, []string{"gpu-train", "gpu-leads"}) {
		t.Errorf("identity %+v", id)
	}

	// The authorization URL carries state, nonce and the S256 challenge of
	// the verifier the code was redeemed with.
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	sum := sha256.Sum256([]byte(s.Verifier))
	if q.Get("state") != s.State || q.Get("nonce") != s.Nonce || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") != base64.RawURLEncoding.EncodeToString(sum[:]) || q.Get("client_id") != fakeClient ||
		q.Get("redirect_uri") != testRedirect || q.Get("scope") != "openid profile email" {
		t.Errorf("authorization URL %s", s.URL)
	}
	if f.verifier != s.Verifier {
		t.Errorf("the token request carried verifier %q, want the start's", f.verifier)
	}
	if again := MustBegin(t, p); again.State == s.State || again.Nonce == s.Nonce || again.Verifier == s.Verifier {
		t.Error("two Begins share a state, nonce or verifier")
	}
}

// Each is a token go-oidc (or Finish) must refuse: Unauthorized, with no
// token, code or secret in the message.
func TestFinishRefusesBadTokens(t *testing.T) {
	f := newFakeIssuer(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(change func(map[string]any)) func(string) string {
		return func(nonce string) string {
			c := f.claims(nonce)
			change(c)
			return sign(t, f.key, c)
		}
	}
	for name, token := range map[string]func(string) string{
		"wrong audience": with(func(c map[string]any) { c["aud"] = "another-app" }),
		"expired": with(func(c map[string]any) {
			c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
			c["exp"] = time.Now().Add(-time.Hour).Unix()
		}),
		"wrong issuer":       with(func(c map[string]any) { c["iss"] = "https://evil.example.com" }),
		"nonce mismatch":     with(func(c map[string]any) { c["nonce"] = "another-sign-in" }),
		"no nonce":           with(func(c map[string]any) { delete(c, "nonce") }),
		"no username":        with(func(c map[string]any) { delete(c, "preferred_username") }),
		"groups not strings": with(func(c map[string]any) { c["groups"] = []any{"gpu-train", 7} }),
		"bad signature": func(nonce string) string {
			return sign(t, other, f.claims(nonce)) // same kid, another key
		},
		"alg none": func(nonce string) string {
			b64 := func(v any) string { j, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(j) }
			return b64(map[string]string{"alg": "none", "typ": "JWT"}) + "." + b64(f.claims(nonce)) + "."
		},
		"not a JWT": func(string) string { return "garbage" },
	} {
		t.Run(name, func(t *testing.T) {
			_, err := signIn(t, f, token)
			wantCode(t, err, errs.Unauthorized, "auth.sso_failed")
			t.Logf("refused: %v", err)
			if msg := err.Error(); strings.Contains(msg, fakeCode) || strings.Contains(msg, fakeSecret) || strings.Contains(msg, "fake-access") || strings.Contains(msg, "eyJ") {
				t.Errorf("the error quotes a secret: %v", err)
			}
		})
	}
}

func TestClaimsMissingFromTheTokenComeFromUserinfo(t *testing.T) {
	f := newFakeIssuer(t)
	f.userinfo = map[string]any{"sub": "u-42", "preferred_username": "alice", "groups": "gpu-viewers", "email": "a@example.com"}
	p := f.provider(t)
	s := MustBegin(t, p)
	f.idToken = func(f *fakeIssuer) string {
		c := f.claims(s.Nonce)
		delete(c, "groups")
		return sign(t, f.key, c)
	}
	id, err := p.Finish(context.Background(), fakeCode, s)
	if err != nil {
		t.Fatal(err)
	}
	// The token's own claims win; only the missing one is taken.
	if !slices.Equal(id.Groups, []string{"gpu-viewers"}) || id.Email != "alice@example.com" {
		t.Errorf("identity %+v", id)
	}

	// Userinfo about someone else is refused.
	f.userinfo["sub"] = "u-43"
	s = MustBegin(t, p)
	_, err = p.Finish(context.Background(), fakeCode, s)
	wantCode(t, err, errs.Unauthorized, "auth.sso_failed")
}

func TestTokenEndpointAnswers(t *testing.T) {
	f := newFakeIssuer(t)
	p := f.provider(t)
	for status, want := range map[int]errs.Code{
		http.StatusServiceUnavailable: errs.Unavailable,
		http.StatusBadGateway:         errs.Unavailable,
		http.StatusBadRequest:         errs.Unauthorized,
	} {
		f.mu.Lock()
		f.tokenStatus = status
		f.mu.Unlock()
		_, err := p.Finish(context.Background(), fakeCode, MustBegin(t, p))
		if errs.CodeOf(err) != want {
			t.Errorf("token endpoint %d: %v, want %s", status, err, want)
		}
	}
	f.tokenStatus = 0
	f.idToken = func(*fakeIssuer) string { return "unused" }
	_, err := p.Finish(context.Background(), "a-replayed-code", MustBegin(t, p))
	wantCode(t, err, errs.Unauthorized, "auth.sso_failed")
}

// A JWKS endpoint that is down is the provider's trouble, not a bad
// signature: go-oidc says "failed to verify signature" for both.
func TestKeysEndpointDownIsUnavailable(t *testing.T) {
	f := newFakeIssuer(t)
	f.keysStatus = http.StatusServiceUnavailable
	_, err := signIn(t, f, func(nonce string) string { return sign(t, f.key, f.claims(nonce)) })
	wantCode(t, err, errs.Unavailable, "directory.unreachable")

	f.mu.Lock()
	f.keysStatus = 0
	f.mu.Unlock()
	if _, err := signIn(t, f, func(nonce string) string { return sign(t, f.key, f.claims(nonce)) }); err != nil {
		t.Errorf("with the keys back: %v", err)
	}
}

// Discovery is lazy: New works while the provider is down, Begin says
// Unavailable, and the same Provider works once the provider answers.
func TestDiscoveryIsRetriedUntilItWorks(t *testing.T) {
	f := newFakeIssuer(t)
	f.down = true
	p := f.provider(t)
	_, err := p.Begin(context.Background())
	wantCode(t, err, errs.Unavailable, "directory.unreachable")
	_, err = p.Finish(context.Background(), fakeCode, oidc.Start{Nonce: "n", Verifier: "v"})
	wantCode(t, err, errs.Unavailable, "directory.unreachable")
	f.mu.Lock()
	f.down = false
	f.mu.Unlock()
	if _, err := p.Begin(context.Background()); err != nil {
		t.Fatalf("once the provider answers: %v", err)
	}
}

func TestNewChecksTheConfig(t *testing.T) {
	good := oidc.Config{Issuer: "https://sso.example.com/realms/main", ClientID: "cardhour", RedirectURL: "https://cardhour.example.com/login/oidc/callback"}
	if _, err := oidc.New(good, nil); err != nil {
		t.Fatalf("good config: %v", err)
	}
	for name, change := range map[string]func(*oidc.Config){
		"no issuer":         func(c *oidc.Config) { c.Issuer = "" },
		"relative issuer":   func(c *oidc.Config) { c.Issuer = "sso.example.com" },
		"http issuer":       func(c *oidc.Config) { c.Issuer = "http://sso.example.com" },
		"no client id":      func(c *oidc.Config) { c.ClientID = " " },
		"no redirect URL":   func(c *oidc.Config) { c.RedirectURL = "" },
		"relative redirect": func(c *oidc.Config) { c.RedirectURL = "/login/oidc/callback" },
	} {
		c := good
		change(&c)
		if _, err := oidc.New(c, nil); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	local := good
	local.Issuer = "http://127.0.0.1:8080"
	p, err := oidc.New(local, nil)
	if err != nil {
		t.Fatalf("http on loopback: %v", err)
	}
	if p.Label() != "SSO" {
		t.Errorf("default label %q", p.Label())
	}
}
