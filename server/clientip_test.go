package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
)

// loginVia posts the login form with X-Forwarded-For set, as a client
// behind (or pretending to be behind) a proxy would.
func loginVia(t *testing.T, c *servertest.Client, forwardedFor, username, password string) servertest.Response {
	t.Helper()
	page := c.Get("/login")
	token, ok := page.Doc(t).Find(`[data-testid=login-form] input[name=_csrf]`).Attr("value")
	if !ok {
		t.Fatalf("login form has no _csrf input")
	}
	body := url.Values{"_csrf": {token}, "username": {username}, "password": {password}, "next": {"/"}}.Encode()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	if forwardedFor != "" {
		h.Set("X-Forwarded-For", forwardedFor)
	}
	return c.Do(http.MethodPost, "/login", strings.NewReader(body), h)
}

// lastAuditIP is the address the newest audit entry of action recorded.
func lastAuditIP(t *testing.T, e *env, action string) string {
	t.Helper()
	entries, _, err := e.St.FindAuditEntries(context.Background(), store.AuditFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range entries {
		if a.Action == action {
			return a.RemoteIP
		}
	}
	t.Fatalf("no %s entry in the audit log", action)
	return ""
}

// TestForwardedForIsBelievedOnlyFromTrustedProxies: by default a client's
// X-Forwarded-For is ignored — rotating it neither gets round the login
// rate limit nor writes a forged address into the audit log — even though
// the test's peer is loopback, as every intranet client is "private".
// From a proxy listed in CARDHOUR_TRUSTED_PROXIES the header names the
// client; from a peer outside the list it is ignored again.
func TestForwardedForIsBelievedOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	t.Run("no proxies configured", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{})
		c := e.Client()
		for i := 1; i <= 10; i++ {
			r := loginVia(t, c, fmt.Sprintf("198.51.100.%d", i), "admin", "wrong-password")
			if r.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: status %d, want 401", i, r.StatusCode)
			}
		}
		if ip := lastAuditIP(t, e, "login_failed"); ip != "127.0.0.1" {
			t.Errorf("the audit log records the failed login from %q, want the peer 127.0.0.1 (the header is the client's word)", ip)
		}
		r := loginVia(t, c, "198.51.100.99", "admin", servertest.AdminPassword)
		if r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("after 10 failures, each with a new X-Forwarded-For: status %d, want 429 (the header got round the rate limit)", r.StatusCode)
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_TRUSTED_PROXIES": "127.0.0.1"}})
		c := e.Client()
		// A forged hop before the client's own is not believed: only the
		// hops the trusted proxy appended count.
		r := loginVia(t, c, "203.0.113.66, 198.51.100.7", e.Users["viewer"].Username, e.Users["viewer"].Password)
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("login through the proxy: %d", r.StatusCode)
		}
		if ip := lastAuditIP(t, e, "login"); ip != "198.51.100.7" {
			t.Errorf("login through a trusted proxy recorded from %q, want the client the proxy named, 198.51.100.7", ip)
		}
		// Behind the proxy, clients are told apart by the address it gives.
		other := e.Client()
		for i := 1; i <= 10; i++ {
			loginVia(t, other, "198.51.100.8", "admin", "wrong-password")
		}
		if r := loginVia(t, other, "198.51.100.8", "admin", servertest.AdminPassword); r.StatusCode != http.StatusTooManyRequests {
			t.Errorf("the failing client behind the proxy is not locked out: %d", r.StatusCode)
		}
		if r := loginVia(t, other, "198.51.100.9", "admin", servertest.AdminPassword); r.StatusCode != http.StatusSeeOther {
			t.Errorf("another client behind the proxy is locked out by the first one's failures: %d", r.StatusCode)
		}
	})
	t.Run("peer not among the proxies", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_TRUSTED_PROXIES": "10.0.0.0/8"}})
		c := e.Client()
		if r := loginVia(t, c, "10.1.2.3", e.Users["viewer"].Username, e.Users["viewer"].Password); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("login: %d", r.StatusCode)
		}
		if ip := lastAuditIP(t, e, "login"); ip != "127.0.0.1" {
			t.Errorf("a loopback peer outside CARDHOUR_TRUSTED_PROXIES had its header believed: recorded %q", ip)
		}
	})
}
