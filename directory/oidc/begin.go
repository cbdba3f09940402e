package oidc

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Start is what the portal keeps between sending the browser to the
// provider and its return: the state it must match, the nonce the ID token
// must carry and the PKCE verifier the code is redeemed with. All three are
// secrets of this one sign-in; store them server-side, never in the page.
type Start struct {
	URL, State, Nonce, Verifier string
}

// Begin makes a fresh state, nonce and PKCE verifier and the provider's
// authorization URL carrying them (the verifier only as its S256
// challenge). It fails with Unavailable while the provider cannot be
// discovered.
func (p *Provider) Begin(ctx context.Context) (Start, error) {
	d, err := p.discover(ctx, "oidc.Begin")
	if err != nil {
		return Start{}, err
	}
	s := Start{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier()}
	s.URL = d.oauth.AuthCodeURL(s.State, gooidc.Nonce(s.Nonce), oauth2.S256ChallengeOption(s.Verifier))
	return s, nil
}

// random is 256 bits, URL-safe: too many to guess a state or a nonce.
func random() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}
