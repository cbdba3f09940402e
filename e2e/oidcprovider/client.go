package main

import (
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// client is the one confidential web client. Its redirect URIs may be
// globs (op.HasRedirectGlobs): the portal under test listens on a random
// port, so the test registers http://127.0.0.1:*/login/oidc/callback.
type client struct {
	id, secret string
	exact      []string
	globs      []string
}

func newClient(id, secret string, redirects []string) *client {
	c := &client{id: id, secret: secret}
	for _, r := range redirects {
		switch r = strings.TrimSpace(r); {
		case r == "":
		case strings.Contains(r, "*"):
			c.globs = append(c.globs, r)
		default:
			c.exact = append(c.exact, r)
		}
	}
	return c
}

func (c *client) GetID() string                        { return c.id }
func (c *client) RedirectURIs() []string               { return c.exact }
func (c *client) RedirectURIGlobs() []string           { return c.globs }
func (c *client) PostLogoutRedirectURIs() []string     { return nil }
func (c *client) PostLogoutRedirectURIGlobs() []string { return nil }
func (c *client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode}
}
func (c *client) LoginURL(id string) string           { return "/login/username?authRequestID=" + id }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration      { return time.Hour }

// DevMode stays off: http redirects are allowed anyway for a confidential
// client in the code flow.
func (c *client) DevMode() bool { return false }

func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// IsScopeAllowed lets a relying party ask for "groups", as Keycloak and
// others expect.
func (c *client) IsScopeAllowed(scope string) bool { return scope == "groups" }

// IDTokenUserinfoClaimsAssertion puts profile and email claims into the ID
// token even though an access token is issued too (what most providers do
// and what the portal reads first).
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) ClockSkew() time.Duration             { return 0 }
