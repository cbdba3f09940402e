package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"cardhour/server/servertest"
)

// TestHTTPSBaseURLSecuresTheCSRFCookieAndSendsHSTS: with an https public
// URL every cookie the portal sets is Secure — the CSRF cookie too, which
// echo's middleware sets itself — and every answer carries
// Strict-Transport-Security, even though the portal behind its proxy sees
// plain HTTP. Without one (plain-http intranet), neither.
func TestHTTPSBaseURLSecuresTheCSRFCookieAndSendsHSTS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base   string
		secure bool
	}{{"https://cardhour.example.com", true}, {"", false}, {"http://cardhour.intranet", false}} {
		t.Run("base="+c.base, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{}
			if c.base != "" {
				vars["CARDHOUR_BASE_URL"] = c.base
			}
			e := newEnv(t, servertest.Options{Vars: vars})
			for _, path := range []string{"/login", "/healthz", "/api/v1/openapi.json"} {
				res, _ := rawGet(t, e, http.MethodGet, path, nil)
				hsts := res.Header.Get("Strict-Transport-Security")
				if c.secure && !strings.HasPrefix(hsts, "max-age=") {
					t.Errorf("GET %s: Strict-Transport-Security %q, want max-age=…", path, hsts)
				}
				if !c.secure && hsts != "" {
					t.Errorf("GET %s over a plain-http portal: Strict-Transport-Security %q", path, hsts)
				}
			}
			res, _ := rawGet(t, e, http.MethodGet, "/login", nil)
			var csrf *http.Cookie
			for _, ck := range res.Cookies() {
				if ck.Name == "cardhour_csrf" {
					csrf = ck
				}
			}
			if csrf == nil {
				t.Fatal("GET /login set no cardhour_csrf cookie")
			}
			if csrf.Secure != c.secure {
				t.Errorf("cardhour_csrf Secure=%v, want %v (Set-Cookie: %s)", csrf.Secure, c.secure, res.Header.Values("Set-Cookie"))
			}
		})
	}
}

// TestCSRFTokenNeverFromTheURL: a browser's form post proves itself with
// the token in its body or the X-CSRF-Token header, never in the query
// string, where it would leak through logs, history and Referer, and where
// a link would carry it.
func TestCSRFTokenNeverFromTheURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	c.MustLogin(e.Users["member"].Username, e.Users["member"].Password)
	token := c.CSRF()
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	post := func(path string, body url.Values, h http.Header) int {
		return c.Do(http.MethodPost, path, strings.NewReader(body.Encode()), h).StatusCode
	}
	if s := post("/account/tokens?_csrf="+url.QueryEscape(token), url.Values{"name": {"from-the-query"}}, form); s != http.StatusForbidden {
		t.Errorf("token in the query string: status %d, want 403", s)
	}
	if s := post("/account/tokens", url.Values{"name": {"from-the-body"}, "_csrf": {token}}, form); s != http.StatusCreated {
		t.Errorf("token in the form body: status %d, want 201", s)
	}
	withHeader := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Csrf-Token": {token}}
	if s := post("/account/tokens", url.Values{"name": {"from-the-header"}}, withHeader); s != http.StatusCreated {
		t.Errorf("token in the header: status %d, want 201", s)
	}
	if s := post("/account/tokens", url.Values{"name": {"forged"}, "_csrf": {"not-the-token"}}, form); s != http.StatusForbidden {
		t.Errorf("a wrong token in the body: status %d, want 403", s)
	}
	toks, err := e.St.FindAPITokens(e.AdminCtx(), e.Users["member"].ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if tk.Name == "from-the-query" || tk.Name == "forged" {
			t.Errorf("a refused post created token %q", tk.Name)
		}
	}
}
