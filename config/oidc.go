package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// CallbackPath is where the provider sends the browser back; with
// CARDHOUR_BASE_URL in front it is the redirect URI to register there.
const CallbackPath = "/login/oidc/callback"

// OIDC is how the portal signs people in through an OpenID Connect
// provider; Issuer empty = off. It has oidc.Config's fields (package
// directory/oidc) in the same order, so the command converts it with
// oidc.Config(cfg.OIDC) and config need not import the client.
type OIDC struct {
	Issuer, ClientID, ClientSecret string
	Scopes                         []string
	RedirectURL                    string
	UsernameClaim                  string
	GroupsClaim                    string
	DisplayName                    string
}

// loadOIDC reads the OpenID Connect options. The secret is taken as given
// and never quoted in an error.
func (c *Config) loadOIDC(get func(string) string, secret string) error {
	o := OIDC{
		Issuer:        get("oidc-issuer"),
		ClientID:      get("oidc-client-id"),
		ClientSecret:  secret,
		Scopes:        parseScopes(get("oidc-scopes")),
		UsernameClaim: get("oidc-username-claim"),
		GroupsClaim:   get("oidc-groups-claim"),
		DisplayName:   get("oidc-name"),
	}
	if o.Issuer == "" {
		// Like mail: a client without an issuer is a half-done
		// configuration, not a wish for OIDC to be off.
		if o.ClientID != "" || o.ClientSecret != "" {
			return fmt.Errorf("CARDHOUR_OIDC_CLIENT_ID / CARDHOUR_OIDC_CLIENT_SECRET are set but CARDHOUR_OIDC_ISSUER is empty: set it to turn OpenID Connect sign-in on, or unset them")
		}
		return nil
	}
	if err := checkIssuer(o.Issuer); err != nil {
		return fmt.Errorf("CARDHOUR_OIDC_ISSUER %q: %w", o.Issuer, err)
	}
	if o.ClientID == "" {
		return fmt.Errorf("CARDHOUR_OIDC_CLIENT_ID: required with CARDHOUR_OIDC_ISSUER (the portal's client id at the provider)")
	}
	// The redirect URI is registered at the provider and must not follow
	// a request's Host header, which the client chooses.
	if c.BaseURL == "" {
		return fmt.Errorf("CARDHOUR_BASE_URL: required with CARDHOUR_OIDC_ISSUER: the redirect URI registered at the provider is CARDHOUR_BASE_URL%s", CallbackPath)
	}
	o.RedirectURL = c.BaseURL + CallbackPath
	if len(o.Scopes) == 0 {
		return fmt.Errorf("CARDHOUR_OIDC_SCOPES: want scopes separated by commas or spaces, e.g. openid profile email groups")
	}
	for _, claim := range []struct{ env, v string }{{"CARDHOUR_OIDC_USERNAME_CLAIM", o.UsernameClaim}, {"CARDHOUR_OIDC_GROUPS_CLAIM", o.GroupsClaim}} {
		if claim.v == "" || strings.ContainsAny(claim.v, " \t,") {
			return fmt.Errorf("%s %q: want one claim name such as preferred_username or groups", claim.env, claim.v)
		}
	}
	if n := utf8.RuneCountInString(o.DisplayName); n == 0 || n > 40 {
		return fmt.Errorf("CARDHOUR_OIDC_NAME %q: want a button label of 1 to 40 characters, e.g. Keycloak or 飞书", o.DisplayName)
	}
	c.OIDC = o
	return nil
}

// checkIssuer wants https, or http for a provider on this host only: the
// code, the client secret and the tokens cross this connection.
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("want an absolute https URL such as https://sso.example.com/realms/main")
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("http is allowed only for a provider on this host (localhost, 127.0.0.1, ::1); use https")
	}
	return nil
}

// parseScopes splits on commas and spaces, puts openid first (without it
// there is no ID token) and drops repeats.
func parseScopes(v string) []string {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return nil
	}
	out := []string{"openid"}
	for _, f := range fields {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
