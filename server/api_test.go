package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
	"cardhour/web"
)

// TestAPIRefusesRequestsWithoutAValidToken: the API answers 401 JSON to no
// token, a made-up token and a revoked one.
func TestAPIRefusesRequestsWithoutAValidToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	paths := []string{"/api/v1/card-types", "/api/v1/me"}
	if e.HasRoute(http.MethodGet, "/api/v1/cards") {
		paths = append(paths, "/api/v1/cards")
	}
	for _, p := range paths {
		got := servertest.MustAPIError(t, c.APICall(http.MethodGet, p, "", ""), http.StatusUnauthorized, "unauthorized")
		if want := web.T(web.LangZH, "auth.required"); got.Error.Message != want {
			t.Errorf("GET %s without a token: message %q, want %q", p, got.Error.Message, want)
		}
		servertest.MustAPIError(t, c.APICall(http.MethodGet, p, "cht_NOTAREALTOKEN", ""), http.StatusUnauthorized, "unauthorized")
	}

	ctx := context.Background()
	tok, secret, err := e.St.CreateAPIToken(ctx, e.Users["admin"].ID, "soon revoked", store.TokenUser)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.APICall(http.MethodGet, "/api/v1/me", secret, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("fresh token: status %d: %s", r.StatusCode, r)
	}
	if err := e.St.RevokeAPIToken(ctx, tok.ID, 0); err != nil {
		t.Fatal(err)
	}
	got := servertest.MustAPIError(t, c.APICall(http.MethodGet, "/api/v1/me", secret, ""), http.StatusUnauthorized, "unauthorized")
	if want := web.T(web.LangZH, "auth.token_invalid"); got.Error.Message != want {
		t.Errorf("revoked token: message %q, want %q", got.Error.Message, want)
	}
}

// TestCSRF: a browser session must send the CSRF token with every form; the
// token the page carries works.
func TestCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	c.MustLogin("admin", servertest.AdminPassword)
	form := url.Values{"name": {"NVIDIA H20 96GB"}, "vram_gib": {"96"}, "price": {"9.5"}, "tflops_bf16": {"148"}}
	types := storetest.MustCount(t, e.St, "card_types")

	for name, send := range map[string]func() servertest.Response{
		"no token": func() servertest.Response {
			return c.PostForm("/admin/card-types", url.Values(servertest.CloneValues(form)), false)
		},
		"wrong token": func() servertest.Response {
			v := servertest.CloneValues(form)
			v.Set("_csrf", "forged")
			return c.PostForm("/admin/card-types", v, false)
		},
		"cross-site": func() servertest.Response {
			v := servertest.CloneValues(form)
			v.Set("_csrf", c.CSRF())
			return c.Do(http.MethodPost, "/admin/card-types", strings.NewReader(v.Encode()), http.Header{
				"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"cross-site"},
			})
		},
	} {
		r := send()
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, r.StatusCode)
			continue
		}
		page := r.Doc(t).Find(`[data-testid=error-page]`)
		if page.Length() != 1 || page.AttrOr("data-status", "") != "403" {
			t.Errorf("%s: want the 403 error page, got:\n%.500s", name, r)
		}
		if name != "cross-site" {
			if msg := r.Doc(t).Find(`[data-testid=error-message]`).Text(); msg != web.T(web.LangZH, "auth.csrf") {
				t.Errorf("%s: message %q, want %q", name, msg, web.T(web.LangZH, "auth.csrf"))
			}
		}
	}
	if n := storetest.MustCount(t, e.St, "card_types"); n != types {
		t.Fatalf("a request without a valid CSRF token created a card type")
	}

	// The token as the page renders it, the way the browser submits the form.
	page := c.Get("/admin/card-types")
	token, ok := page.Doc(t).Find(`[data-testid=cardtype-form] input[name=_csrf]`).Attr("value")
	if !ok || token == "" {
		t.Fatalf("card type form has no _csrf input")
	}
	v := servertest.CloneValues(form)
	v.Set("_csrf", token)
	r := c.PostForm("/admin/card-types", v, false)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/admin/card-types" {
		t.Fatalf("with the token: status %d Location %q, want 303 to /admin/card-types:\n%.800s", r.StatusCode, r.Header.Get("Location"), r)
	}
	list := c.Get("/admin/card-types").Doc(t)
	if !strings.Contains(list.Find(`[data-testid=cardtypes-table]`).Text(), "NVIDIA H20 96GB") {
		t.Errorf("the new card type is not listed")
	}
	if list.Find(`[data-testid=flash]`).Length() != 1 {
		t.Errorf("no flash message after creating")
	}

	// The API with a bearer token needs no CSRF token: browsers never send
	// the header on their own.
	r = c.APICall(http.MethodPost, "/api/v1/card-types", e.Users["admin"].Token,
		`{"name":"NVIDIA L20 48GB","vram_gib":48,"price_fen":450,"tflops_bf16":119.5}`)
	if r.StatusCode != http.StatusCreated {
		t.Errorf("API POST with a bearer token and session cookie, no CSRF token: status %d: %s", r.StatusCode, r)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	if r := c.Get("/healthz"); r.StatusCode != http.StatusOK || !strings.Contains(r.String(), `"ok"`) {
		t.Errorf("/healthz: %d %s", r.StatusCode, r)
	}
	var ready map[string]string
	r := c.Get("/readyz")
	if err := json.Unmarshal(r.Body, &ready); err != nil || r.StatusCode != http.StatusOK || ready["status"] != "ready" || ready["migrations"] != "current" {
		t.Errorf("/readyz: %d %s", r.StatusCode, r)
	}
	c.Get("/login")
	m := c.Get("/metrics").String()
	for _, want := range []string{
		"cardhour_http_request_duration_seconds_bucket",
		`route="/login"`,
		"go_sql_max_open_connections",
		"go_sql_open_connections",
		"go_goroutines",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(m, `route="/login?`) {
		t.Errorf("/metrics labels routes with query strings")
	}

	// A store that cannot answer: not ready, but alive, so an orchestrator
	// stops sending traffic without killing the process.
	if err := e.St.Close(); err != nil {
		t.Fatal(err)
	}
	r = c.Get("/readyz")
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the store closed: %d, want 503", r.StatusCode)
	}
	ready = nil
	if err := json.Unmarshal(r.Body, &ready); err != nil || ready["status"] != "unavailable" || ready["database"] != "unreachable" {
		t.Errorf("/readyz with the store closed: %s", r)
	}
	if r := c.Get("/healthz"); r.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the store closed: %d, want 200", r.StatusCode)
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	doc := c.Get("/login").Doc(t)
	if l := doc.Find("html").AttrOr("lang", ""); l != "zh-CN" {
		t.Errorf("default language: html lang %q, want zh-CN", l)
	}
	if h := doc.Find("h1").First().Text(); h != web.T(web.LangZH, "login.title") {
		t.Errorf("zh-CN title %q", h)
	}
	if href := doc.Find(`[data-testid=lang-switch]`).AttrOr("href", ""); href != "/lang?to=en&next=%2Flogin" {
		t.Errorf("language switch links to %q", href)
	}

	doc = c.Get("/login?lang=en").Doc(t)
	if l := doc.Find("html").AttrOr("lang", ""); l != "en" {
		t.Errorf("?lang=en: html lang %q", l)
	}
	if h := doc.Find("h1").First().Text(); h != "Log in to cardhour" {
		t.Errorf("?lang=en: title %q", h)
	}
	if c.Cookie("cardhour_lang") != "" {
		t.Errorf("?lang= must not stick; it set the cookie")
	}

	r := c.Get("/lang?to=en&next=/x")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/x" {
		t.Errorf("/lang?to=en&next=/x: %d to %q, want 303 to /x", r.StatusCode, r.Header.Get("Location"))
	}
	if c.Cookie("cardhour_lang") != "en" {
		t.Errorf("/lang?to=en did not set cardhour_lang=en")
	}
	doc = c.Get("/login").Doc(t)
	if l := doc.Find("html").AttrOr("lang", ""); l != "en" {
		t.Errorf("after the switch: html lang %q, want en", l)
	}
	if txt := doc.Find(`[data-testid=lang-switch]`).Text(); txt != web.T(web.LangEN, "nav.language") {
		t.Errorf("after the switch the language link says %q", txt)
	}
	c.MustLogin(e.Users["viewer"].Username, e.Users["viewer"].Password)
	if nav := c.Get("/").Doc(t).Find(`[data-testid=nav-booking]`).Text(); nav != "Booking" {
		t.Errorf("English nav: %q, want Booking", nav)
	}
	c.Get("/lang?to=zh-CN&next=/")
	if nav := c.Get("/").Doc(t).Find(`[data-testid=nav-booking]`).Text(); nav != web.T(web.LangZH, "nav.booking") {
		t.Errorf("back in Chinese, nav: %q", nav)
	}

	for next, want := range map[string]string{
		"/admin?tab=1":       "/admin?tab=1",
		"":                   "/",
		"//evil.com":         "/",
		"//evil.com/x":       "/",
		"https://evil.com":   "/",
		"/\\evil.com":        "/",
		"\\\\evil.com":       "/",
		"evil.com":           "/",
		"/\t/evil.com":       "/", // browsers drop tabs and newlines: "/\t/x" is "//x"
		"/\n/evil.com":       "/",
		"javascript:alert()": "/",
	} {
		// Straight to the handler: Go's client refuses to follow a Location
		// with control characters, a browser does not.
		rec := httptest.NewRecorder()
		e.Srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/lang?to=en&next="+url.QueryEscape(next), nil))
		if got := rec.Header().Get("Location"); got != want {
			t.Errorf("/lang next=%q: redirects to %q, want %q", next, got, want)
		}
	}
}

// TestErrorPages: 404, 401 and 403 are the portal's page, in the viewer's
// language; the API gets JSON and htmx a fragment.
func TestErrorPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	anon := e.Client()
	viewer := e.Client()
	viewer.MustLogin(e.Users["viewer"].Username, e.Users["viewer"].Password)
	for _, lang := range []string{web.LangZH, web.LangEN} {
		for _, tc := range []struct {
			who    *servertest.Client
			path   string
			status int
			msgKey string
		}{
			{anon, "/no-such-page", http.StatusNotFound, "error.not_found"},
			{anon, "/admin/card-types", http.StatusUnauthorized, "auth.required"},
			{viewer, "/admin/card-types", http.StatusForbidden, "auth.forbidden"},
			{viewer, "/admin/card-types/999999", http.StatusForbidden, "auth.forbidden"},
			{viewer, "/no-such-page", http.StatusNotFound, "error.not_found"},
		} {
			r := tc.who.Get(tc.path + "?lang=" + lang)
			if r.StatusCode != tc.status {
				t.Errorf("%s %s: status %d, want %d", lang, tc.path, r.StatusCode, tc.status)
				continue
			}
			doc := r.Doc(t)
			page := doc.Find(`[data-testid=error-page]`)
			if page.Length() != 1 || page.AttrOr("data-status", "") != strconv.FormatInt(int64(tc.status), 10) {
				t.Errorf("%s %s: no error page with data-status %d:\n%.600s", lang, tc.path, tc.status, r)
				continue
			}
			if l := doc.Find("html").AttrOr("lang", ""); l != lang {
				t.Errorf("%s %s: html lang %q", lang, tc.path, l)
			}
			if h := page.Find("h1").Text(); h != web.T(lang, "status."+strconv.FormatInt(int64(tc.status), 10)) {
				t.Errorf("%s %s: heading %q", lang, tc.path, h)
			}
			if msg := page.Find(`[data-testid=error-message]`).Text(); msg != web.T(lang, tc.msgKey) {
				t.Errorf("%s %s: message %q, want %q", lang, tc.path, msg, web.T(lang, tc.msgKey))
			}
			if tc.status == http.StatusUnauthorized {
				if href := page.Find(`a[href^="/login"]`).AttrOr("href", ""); !strings.HasPrefix(href, "/login?next=/admin/card-types") {
					t.Errorf("%s 401 page: login link %q should come back to the page", lang, href)
				}
			}
			// A 404 for a path no route matches is rendered before anyone
			// is looked up, so only refusals show the user.
			if tc.who == viewer && tc.status == http.StatusForbidden && doc.Find(`[data-testid=nav-account]`).Length() != 1 {
				t.Errorf("%s %s: the error page forgot who is logged in", lang, tc.path)
			}
		}
	}
	r := anon.Do(http.MethodGet, "/no-such-page", nil, http.Header{"HX-Request": {"true"}})
	if r.StatusCode != http.StatusNotFound || r.Doc(t).Find(`[data-testid=error-fragment]`).Length() != 1 {
		t.Errorf("htmx 404: %d, want the error fragment:\n%.300s", r.StatusCode, r)
	}
	if r.Doc(t).Find("html body header").Length() != 0 {
		t.Errorf("htmx error came with the whole layout")
	}
}
