package oidc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"cardhour/errs"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
)

// Message keys of the errors this package returns.
const (
	keyUnreachable = "directory.unreachable"
	keyFailed      = "auth.sso_failed"
)

// unreachable is the provider being down or broken: the person can do
// nothing but try later (a 503-style page).
func unreachable(op string, cause error) error {
	return &errs.Error{Code: errs.Unavailable, Op: op, Key: keyUnreachable, Err: cause}
}

// refused is a sign-in the provider or this package rejected: the reason is
// for the log, the person sees one message.
func refused(op string, cause error) error {
	return &errs.Error{Code: errs.Unauthorized, Op: op, Key: keyFailed, Err: cause}
}

// providerDown is a 5xx answer from the provider. go-oidc reports a 5xx of
// the userinfo or JWKS endpoint as flat text; turning it into a transport
// error lets one test (isTransport) tell "down" from "refused" everywhere.
type providerDown struct {
	status string
}

func (e providerDown) Error() string { return "the provider answered " + e.status }

type statusCheck struct {
	base http.RoundTripper
}

func (t statusCheck) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 500 {
		resp.Body.Close()
		return nil, providerDown{status: resp.Status}
	}
	return resp, nil
}

// withStatusCheck copies client with a transport that fails on 5xx.
func withStatusCheck(client *http.Client) *http.Client {
	c := *client
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = statusCheck{base: base}
	return &c
}

// isTransport tells whether err is a request that never got a usable
// answer: refused connection, timeout, DNS, or a 5xx.
func isTransport(err error) bool {
	var ue *url.Error
	var ne net.Error
	var down providerDown
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &down) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// keySet is go-oidc's remote key set with one addition: go-oidc flattens
// the key set's error into text ("failed to verify signature: %v"), so an
// unreachable JWKS endpoint would look like a bad signature. The wrapper
// records the unflattened error in the verification's context.
type keySet struct {
	inner *gooidc.RemoteKeySet
}

type keyErrKey struct{}

func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.inner.VerifySignature(ctx, jwt)
	if err != nil {
		if slot, ok := ctx.Value(keyErrKey{}).(*error); ok {
			*slot = err
		}
		return nil, err
	}
	return payload, nil
}

// verify runs go-oidc's ID token verification and says whether a failure
// was the JWKS endpoint (Unavailable) or the token (Unauthorized).
func (d *discovered) verify(ctx context.Context, op, raw string) (*gooidc.IDToken, error) {
	var keyErr error
	tok, err := d.verifier.Verify(context.WithValue(ctx, keyErrKey{}, &keyErr), raw)
	if err == nil {
		return tok, nil
	}
	if keyErr != nil && isTransport(keyErr) {
		return nil, unreachable(op, fmt.Errorf("fetching the provider's keys: %w", keyErr))
	}
	return nil, refused(op, fmt.Errorf("ID token: %w", err))
}
