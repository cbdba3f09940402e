package oidc

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// discovery is the provider's metadata, fetched once it answers. A failed
// attempt is not kept, so the next login click tries again.
type discovery struct {
	// sem lets one attempt run at a time, so a burst of clicks while the
	// provider is down sends it one request, not one each; a waiter still
	// gives up when its own request ends.
	sem  chan struct{}
	done atomic.Pointer[discovered]
}

type discovered struct {
	provider *gooidc.Provider
	oauth    oauth2.Config
	keys     *keySet
	verifier *gooidc.IDTokenVerifier
}

// discover returns the provider's metadata, fetching it on first use. Every
// failure is the provider's (down, misconfigured, answering garbage), so
// it is Unavailable with the reason wrapped.
func (p *Provider) discover(ctx context.Context, op string) (*discovered, error) {
	if d := p.disc.done.Load(); d != nil {
		return d, nil
	}
	select {
	case p.disc.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, unreachable(op, ctx.Err())
	}
	defer func() { <-p.disc.sem }()
	if d := p.disc.done.Load(); d != nil {
		return d, nil
	}
	dctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	prov, err := gooidc.NewProvider(gooidc.ClientContext(dctx, p.client), p.cfg.Issuer)
	if err != nil {
		return nil, unreachable(op, fmt.Errorf("discovery of %s: %w", p.cfg.Issuer, err))
	}
	var meta struct {
		JWKSURI     string   `json:"jwks_uri"`
		Algs        []string `json:"id_token_signing_alg_values_supported"`
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := prov.Claims(&meta); err != nil {
		return nil, unreachable(op, fmt.Errorf("discovery of %s: %w", p.cfg.Issuer, err))
	}
	ep := prov.Endpoint()
	ep.AuthStyle = authStyle(meta.AuthMethods)
	if ep.AuthURL == "" || ep.TokenURL == "" || meta.JWKSURI == "" {
		return nil, unreachable(op, fmt.Errorf("discovery of %s: the document lacks authorization_endpoint, token_endpoint or jwks_uri", p.cfg.Issuer))
	}
	// The key set is go-oidc's own, wrapped only to learn whether a failed
	// verification was the JWKS endpoint being down (see keySet).
	keys := &keySet{inner: gooidc.NewRemoteKeySet(gooidc.ClientContext(context.Background(), p.client), meta.JWKSURI)}
	d := &discovered{
		provider: prov,
		oauth: oauth2.Config{
			ClientID:     p.cfg.ClientID,
			ClientSecret: p.cfg.ClientSecret,
			Endpoint:     ep,
			RedirectURL:  p.cfg.RedirectURL,
			Scopes:       p.cfg.Scopes,
		},
		keys: keys,
		verifier: gooidc.NewVerifier(p.cfg.Issuer, keys, &gooidc.Config{
			ClientID: p.cfg.ClientID,
			// Only what the provider says it signs with; go-oidc falls back
			// to RS256 when it says nothing. "none" is never among them.
			SupportedSigningAlgs: signingAlgs(meta.Algs),
		}),
	}
	p.disc.done.Store(d)
	return d, nil
}

// signingAlgs keeps the advertised algorithms go-oidc can verify.
func signingAlgs(advertised []string) []string {
	supported := map[string]bool{
		gooidc.RS256: true, gooidc.RS384: true, gooidc.RS512: true,
		gooidc.ES256: true, gooidc.ES384: true, gooidc.ES512: true,
		gooidc.PS256: true, gooidc.PS384: true, gooidc.PS512: true,
		gooidc.EdDSA: true,
	}
	var out []string
	for _, a := range advertised {
		if supported[a] {
			out = append(out, a)
		}
	}
	return out
}

// authStyle is how the client secret goes to the token endpoint: Basic
// unless the provider lists only client_secret_post. Fixed rather than
// oauth2's auto-detection, which on any failure (a 503 too) sends the code
// a second time in the other style.
func authStyle(methods []string) oauth2.AuthStyle {
	if len(methods) == 0 || slices.Contains(methods, "client_secret_basic") || !slices.Contains(methods, "client_secret_post") {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}
