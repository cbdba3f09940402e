package account_test

import (
	"cardhour/server/servertest"
	"cardhour/web"
	"net/http"
	"testing"
)

// TestLoginRateLimit: after ten wrong passwords the account is locked for
// that address, even for the right password, with 429 and Retry-After.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{})
	c := e.Client()
	for i := 1; i <= 10; i++ {
		r := c.Login("admin", "wrong-password")
		if r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i, r.StatusCode)
		}
		if msg := r.Doc(t).Find(`[data-testid=form-error]`).Text(); msg != web.T(web.LangZH, "auth.bad_credentials") {
			t.Fatalf("failure %d: form error %q", i, msg)
		}
	}
	r := c.Login("admin", servertest.AdminPassword)
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 10 failures: status %d, want 429", r.StatusCode)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	if r.Doc(t).Find(`[data-testid=form-error]`).Length() != 1 {
		t.Errorf("429 page does not say why")
	}
	if c.Cookie("cardhour_session") != "" {
		t.Errorf("a locked-out login got a session")
	}
	// The lock is per account and address: another account still logs in.
	other := e.Client()
	other.MustLogin(e.Users["viewer"].Username, e.Users["viewer"].Password)
}
