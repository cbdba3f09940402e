package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"cardhour/directory"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

const opFinish = "oidc.Finish"

// Finish redeems the code the provider sent back, with the verifier of s,
// verifies the ID token (signature against the provider's JWKS, issuer,
// audience = ClientID, expiry) and that it carries s.Nonce, and reads the
// identity from its claims, asking userinfo for claims the token lacks.
// The caller has already matched the returned state to s.
//
// A provider that is down or answers 5xx gives Unavailable
// ("directory.unreachable"); every refusal — bad or replayed code, bad
// token, wrong nonce, no username — gives Unauthorized ("auth.sso_failed")
// with the reason wrapped. No message carries a code, token or secret.
func (p *Provider) Finish(ctx context.Context, code string, s Start) (directory.Identity, error) {
	if code == "" {
		return directory.Identity{}, refused(opFinish, errors.New("the provider sent no code"))
	}
	if s.Nonce == "" || s.Verifier == "" {
		return directory.Identity{}, refused(opFinish, errors.New("the stored start has no nonce or verifier"))
	}
	d, err := p.discover(ctx, opFinish)
	if err != nil {
		return directory.Identity{}, err
	}
	ctx = gooidc.ClientContext(ctx, p.client)
	tok, err := d.oauth.Exchange(ctx, code, oauth2.VerifierOption(s.Verifier))
	if err != nil {
		return directory.Identity{}, exchangeError(err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return directory.Identity{}, refused(opFinish, errors.New("the token response has no id_token (is the openid scope allowed for this client?)"))
	}
	idt, err := d.verify(ctx, opFinish, raw)
	if err != nil {
		return directory.Identity{}, err
	}
	// go-oidc leaves the nonce to the caller. Compared in constant time:
	// it is a secret of this sign-in.
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(s.Nonce)) != 1 {
		return directory.Identity{}, refused(opFinish, errors.New("ID token: the nonce is not the one this sign-in sent"))
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return directory.Identity{}, refused(opFinish, fmt.Errorf("ID token claims: %w", err))
	}
	if p.needsUserinfo(claims) && d.provider.UserInfoEndpoint() != "" {
		if claims, err = p.addUserinfo(ctx, d, tok, idt.Subject, claims); err != nil {
			return directory.Identity{}, err
		}
	}
	return p.identity(idt.Issuer, idt.Subject, claims)
}

// exchangeError sorts a failed code redemption: no answer or 5xx is the
// provider's trouble; a 4xx (invalid_grant for a used or expired code, a
// wrong verifier or client secret) is a refusal. Only the status and the
// OAuth error code are kept: the body may echo what was sent.
func exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		if status >= 500 {
			return unreachable(opFinish, fmt.Errorf("token endpoint answered %d", status))
		}
		return refused(opFinish, fmt.Errorf("token endpoint refused the code: %d %s", status, re.ErrorCode))
	}
	if isTransport(err) {
		return unreachable(opFinish, fmt.Errorf("token endpoint: %w", err))
	}
	return refused(opFinish, fmt.Errorf("token endpoint: %w", err))
}

// addUserinfo fills the claims the ID token lacks from the userinfo
// endpoint. Its sub must be the token's (OpenID Connect Core 5.3.2), or
// the answer is someone else's.
func (p *Provider) addUserinfo(ctx context.Context, d *discovered, tok *oauth2.Token, sub string, claims map[string]any) (map[string]any, error) {
	ui, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		if isTransport(err) {
			return nil, unreachable(opFinish, fmt.Errorf("userinfo: %w", err))
		}
		return nil, refused(opFinish, fmt.Errorf("userinfo: %w", err))
	}
	if ui.Subject != sub {
		return nil, refused(opFinish, errors.New("userinfo: its sub is not the ID token's"))
	}
	var extra map[string]any
	if err := ui.Claims(&extra); err != nil {
		return nil, refused(opFinish, fmt.Errorf("userinfo claims: %w", err))
	}
	for k, v := range extra {
		if _, ok := claims[k]; !ok {
			claims[k] = v
		}
	}
	return claims, nil
}
