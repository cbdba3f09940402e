// Package oidc signs people in through an OpenID Connect provider
// (Keycloak, Authing, Entra ID, Feishu…): the authorization code flow with
// PKCE (S256), the ID token verified by go-oidc (signature against the
// provider's JWKS, issuer, audience, expiry) and its nonce compared, and
// the result given as a directory.Identity.
//
// It keeps nothing between Begin and Finish: the caller stores the Start
// and matches the returned state to it (single use, so a replayed state is
// refused there).
package oidc

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"cardhour/errs"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
)

// Defaults of the optional Config fields.
const (
	DefaultUsernameClaim = "preferred_username"
	DefaultGroupsClaim   = "groups"
	DefaultDisplayName   = "SSO"
)

// Config is how the portal is registered with the provider. config.OIDC has
// the same fields in the same order, so the command converts it with
// oidc.Config(cfg.OIDC).
type Config struct {
	Issuer, ClientID, ClientSecret string
	// Scopes default to openid profile email; openid is always asked for.
	Scopes []string
	// RedirectURL is the portal's BaseURL + "/login/oidc/callback": fixed
	// by configuration, never taken from a request's Host.
	RedirectURL string
	// UsernameClaim names the login name's claim (default
	// preferred_username); a token without it is refused, not guessed at.
	UsernameClaim string
	// GroupsClaim names the groups' claim (default groups): a string or an
	// array of strings, in the ID token or, when absent there, in userinfo.
	GroupsClaim string
	// DisplayName is the button's label ("Keycloak", "飞书"); default SSO.
	DisplayName string
}

// Provider is one configured OpenID Connect provider. It is safe for
// concurrent use.
type Provider struct {
	cfg    Config
	client *http.Client
	disc   discovery
}

// discoveryTimeout bounds the first contact with the provider, so a login
// click against a provider that does not answer fails within seconds.
const discoveryTimeout = 10 * time.Second

// New checks cfg and fills its defaults. It does not contact the provider:
// the portal must start while the provider is down, and discovery happens
// at the first Begin (retried until it works, then kept). client is used
// for every request to the provider; nil means one with a 10 s timeout.
func New(cfg Config, client *http.Client) (*Provider, error) {
	const op = "oidc.New"
	cfg.Issuer = strings.TrimSpace(cfg.Issuer)
	if err := checkIssuer(cfg.Issuer); err != nil {
		return nil, errs.Wrap(errs.Invalid, op, err)
	}
	if cfg.ClientID = strings.TrimSpace(cfg.ClientID); cfg.ClientID == "" {
		return nil, errs.Wrap(errs.Invalid, op, fmt.Errorf("client id is required"))
	}
	u, err := url.Parse(cfg.RedirectURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errs.Wrap(errs.Invalid, op, fmt.Errorf("redirect URL %q: want an absolute http(s) URL", cfg.RedirectURL))
	}
	cfg.Scopes = withOpenID(cfg.Scopes)
	if cfg.UsernameClaim = strings.TrimSpace(cfg.UsernameClaim); cfg.UsernameClaim == "" {
		cfg.UsernameClaim = DefaultUsernameClaim
	}
	if cfg.GroupsClaim = strings.TrimSpace(cfg.GroupsClaim); cfg.GroupsClaim == "" {
		cfg.GroupsClaim = DefaultGroupsClaim
	}
	if cfg.DisplayName = strings.TrimSpace(cfg.DisplayName); cfg.DisplayName == "" {
		cfg.DisplayName = DefaultDisplayName
	}
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	p := &Provider{cfg: cfg, client: withStatusCheck(client)}
	p.disc.sem = make(chan struct{}, 1)
	return p, nil
}

// Label is the text of the "Sign in with …" button.
func (p *Provider) Label() string { return p.cfg.DisplayName }

// checkIssuer accepts an absolute https URL, or http for a provider on this
// host (a test or a sidecar): anything else would send the client secret
// and the tokens in clear.
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("issuer %q: want an absolute https URL such as https://sso.example.com/realms/main", issuer)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("issuer %q: http is allowed only for a provider on this host (localhost, 127.0.0.1, ::1); use https", issuer)
	}
	return fmt.Errorf("issuer %q: want an absolute https URL", issuer)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// withOpenID puts openid first (without it the provider answers with plain
// OAuth 2 and no ID token) and drops blanks and repeats.
func withOpenID(scopes []string) []string {
	if len(scopes) == 0 {
		scopes = []string{"profile", "email"}
	}
	out := []string{gooidc.ScopeOpenID}
	for _, s := range scopes {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
