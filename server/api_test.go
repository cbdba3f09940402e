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
	"cardhour/web"
)

func countCardTypes(tb testing.TB, st *store.Store) int {
	tb.Helper()
	ts, err := st.FindCardTypes(context.Background())
	if err != nil {
		tb.Fatalf("FindCardTypes: %v", err)
	}
	return len(ts)
}

func countAudit(tb testing.TB, st *store.Store) int64 {
	tb.Helper()
	_, n, err := st.FindAuditEntries(context.Background(), store.AuditFilter{})
	if err != nil {
		tb.Fatalf("FindAuditEntries: %v", err)
	}
	return n
}

// TestAPIRefusesRequestsWithoutAValidToken: the API answers 401 JSON to no
// token, a made-up token and a revoked one.
func TestAPIRefusesRequestsWithoutAValidToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
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

// TestAPITokenListsCards is the acceptance: with a token the API
// lists the cards (and the card types); the token's owner is who /me says.
func TestAPITokenListsCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{Demo: true})
	c := e.Client()
	cards, err := e.St.FindCards(context.Background(), store.CardFilter{})
	if err != nil || len(cards) == 0 {
		t.Fatalf("demo fleet has no cards (%v)", err)
	}

	if !e.HasRoute(http.MethodGet, "/api/v1/cards") {
		t.Fatal("GET /api/v1/cards is not in the route table; the issue's acceptance needs it (registerAdminAPI in server/admin_more.go)")
	}
	for _, role := range roles {
		r := c.APICall(http.MethodGet, "/api/v1/cards", e.Users[role].Token, "")
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/v1/cards as %s: status %d: %s", role, r.StatusCode, r)
		}
		for _, cd := range []store.CardView{cards[0], cards[len(cards)-1]} {
			if !strings.Contains(r.String(), cd.UUID) {
				t.Errorf("GET /api/v1/cards as %s does not list card %s", role, cd.UUID)
			}
		}
		if !json.Valid(r.Body) {
			t.Errorf("GET /api/v1/cards: body is not JSON")
		}
	}

	r := c.APICall(http.MethodGet, "/api/v1/card-types", e.Users["viewer"].Token, "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/card-types: %d: %s", r.StatusCode, r)
	}
	var list struct {
		CardTypes []struct {
			ID        int64  `json:"id"`
			Name      string `json:"name"`
			PriceFen  int64  `json:"price_fen"`
			PriceYuan string `json:"price_yuan"`
		} `json:"card_types"`
	}
	if err := json.Unmarshal(r.Body, &list); err != nil {
		t.Fatalf("card types JSON: %v", err)
	}
	if len(list.CardTypes) != countCardTypes(t, e.St) || len(list.CardTypes) == 0 {
		t.Errorf("listed %d card types, the store has %d", len(list.CardTypes), countCardTypes(t, e.St))
	}

	r = c.APICall(http.MethodGet, "/api/v1/me", e.Users["member"].Token, "")
	var me struct {
		User struct {
			Username string `json:"username"`
			Role     string `json:"role"`
		} `json:"user"`
	}
	if err := json.Unmarshal(r.Body, &me); err != nil || me.User.Username != e.Users["member"].Username || me.User.Role != "member" {
		t.Errorf("GET /api/v1/me with the member's token: %d %s", r.StatusCode, r)
	}
	if strings.Contains(r.String(), `"password"`) || strings.Contains(r.String(), "hash") {
		t.Errorf("GET /api/v1/me leaks a password field: %s", r)
	}
}

// TestAPIRejectsInvalidCardTypeWithFields: every broken field is named in
// "fields", in the caller's language, and nothing reaches the database.
func TestAPIRejectsInvalidCardTypeWithFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.Client()
	admin := e.Users["admin"].Token
	types, audits := countCardTypes(t, e.St), countAudit(t, e.St)

	got := servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/card-types", admin,
		`{"name":"  ","vram_gib":0,"price_fen":-5,"tflops_fp8":-1}`), http.StatusUnprocessableEntity, "invalid")
	for _, f := range []string{"name", "vram_gib", "price", "tflops_fp8"} {
		if got.Error.Fields[f] == "" {
			t.Errorf("fields lacks %q: %v", f, got.Error.Fields)
		}
	}
	if want := web.T(web.LangZH, "field.required"); got.Error.Fields["name"] != want {
		t.Errorf("fields.name = %q, want %q", got.Error.Fields["name"], want)
	}

	got = servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/card-types?lang=en", admin,
		`{"name":"X","vram_gib":80,"price_yuan":"abc","tflops_bf16":1}`), http.StatusUnprocessableEntity, "invalid")
	if want := web.T(web.LangEN, "cardtype.price_range"); got.Error.Fields["price_yuan"] != want {
		t.Errorf("fields.price_yuan = %q, want the English %q", got.Error.Fields["price_yuan"], want)
	}

	if n := countCardTypes(t, e.St); n != types {
		t.Errorf("card types: %d after rejected requests, want %d", n, types)
	}
	if n := countAudit(t, e.St); n != audits {
		t.Errorf("audit entries: %d after rejected requests, want %d", n, audits)
	}
}

// TestAPIRejectsMalformedJSON: broken JSON is the caller's error (4xx with a
// JSON body), never a 500, and writes nothing.
func TestAPIRejectsMalformedJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.Client()
	admin := e.Users["admin"].Token
	types := countCardTypes(t, e.St)
	for name, body := range map[string]string{
		"truncated":     `{"name":"NVIDIA H20 96GB","vram_gib":`,
		"not JSON":      `name=NVIDIA`,
		"wrong type":    `{"name":"X","vram_gib":"ninety-six","price_fen":950,"tflops_bf16":148}`,
		"unknown field": `{"name":"X","vram":96,"price_fen":950,"tflops_bf16":148}`,
		"trailing data": `{"name":"X","vram_gib":96,"price_fen":950,"tflops_bf16":148} {"name":"Y"}`,
		"array":         `[{"name":"X"}]`,
		"empty":         ``,
	} {
		t.Run(name, func(t *testing.T) {
			r := c.Do(http.MethodPost, "/api/v1/card-types", strings.NewReader(body), http.Header{
				"Authorization": {"Bearer " + admin}, "Content-Type": {"application/json"},
			})
			if r.StatusCode != http.StatusBadRequest && r.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 400 or 422; body: %s", r.StatusCode, r)
			}
			servertest.MustAPIError(t, r, r.StatusCode, "invalid")
		})
	}
	if n := countCardTypes(t, e.St); n != types {
		t.Errorf("card types: %d after malformed requests, want %d", n, types)
	}
}

func TestAPIDuplicateCardTypeNameIsConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.Client()
	admin := e.Users["admin"].Token
	const body = `{"name":"NVIDIA H20 96GB","vram_gib":96,"price_yuan":"9.5","tflops_bf16":148}`
	r := c.APICall(http.MethodPost, "/api/v1/card-types", admin, body)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create: status %d: %s", r.StatusCode, r)
	}
	var created struct {
		ID        int64  `json:"id"`
		PriceFen  int64  `json:"price_fen"`
		PriceYuan string `json:"price_yuan"`
	}
	if err := json.Unmarshal(r.Body, &created); err != nil || created.PriceFen != 950 {
		t.Errorf("created card type: price_fen %d, want 950 (9.5 yuan); body %s", created.PriceFen, r)
	}
	types := countCardTypes(t, e.St)
	servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/card-types", admin, body), http.StatusConflict, "conflict")
	servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/card-types", admin,
		strings.Replace(body, `"NVIDIA H20 96GB"`, `"  NVIDIA H20 96GB "`, 1)), http.StatusConflict, "conflict")
	if n := countCardTypes(t, e.St); n != types {
		t.Errorf("card types: %d after duplicates, want %d", n, types)
	}

	// Renaming another type onto the taken name is the same conflict.
	r = c.APICall(http.MethodPost, "/api/v1/card-types", admin, strings.Replace(body, "H20 96GB", "L20 48GB", 1))
	var other struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.Body, &other); err != nil || other.ID == 0 {
		t.Fatalf("create second: %d %s", r.StatusCode, r)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodPut, "/api/v1/card-types/"+itoa(other.ID), admin, body), http.StatusConflict, "conflict")
}

func TestAPIUnknownIDIsNotFoundJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.Client()
	admin := e.Users["admin"].Token
	valid := `{"name":"X","vram_gib":96,"price_fen":950,"tflops_bf16":148}`
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/card-types/999999", ""},
		{http.MethodGet, "/api/v1/card-types/abc", ""},
		{http.MethodGet, "/api/v1/card-types/-1", ""},
		{http.MethodPut, "/api/v1/card-types/999999", valid},
		{http.MethodDelete, "/api/v1/card-types/999999", ""},
		{http.MethodGet, "/api/v1/no-such-thing", ""},
	} {
		got := servertest.MustAPIError(t, c.APICall(tc.method, tc.path, admin, tc.body), http.StatusNotFound, "not_found")
		if strings.Contains(got.Error.Message, "record not found") || strings.Contains(got.Error.Message, "store.") {
			t.Errorf("%s %s: message leaks internals: %q", tc.method, tc.path, got.Error.Message)
		}
	}
	got := servertest.MustAPIError(t, c.APICall(http.MethodGet, "/api/v1/card-types/999999?lang=en", admin, ""), http.StatusNotFound, "not_found")
	if want := web.T(web.LangEN, "cardtype.not_found"); got.Error.Message != want {
		t.Errorf("message %q, want %q", got.Error.Message, want)
	}
}

// TestCSRF: a browser session must send the CSRF token with every form; the
// token the page carries works.
func TestCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c := e.Client()
	c.MustLogin("admin", adminPassword)
	form := url.Values{"name": {"NVIDIA H20 96GB"}, "vram_gib": {"96"}, "price": {"9.5"}, "tflops_bf16": {"148"}}
	types := countCardTypes(t, e.St)

	for name, send := range map[string]func() response{
		"no token": func() response {
			return c.PostForm("/admin/card-types", url.Values(servertest.CloneValues(form)), false)
		},
		"wrong token": func() response {
			v := servertest.CloneValues(form)
			v.Set("_csrf", "forged")
			return c.PostForm("/admin/card-types", v, false)
		},
		"cross-site": func() response {
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
	if n := countCardTypes(t, e.St); n != types {
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

// TestLoginRateLimit: after ten wrong passwords the account is locked for
// that address, even for the right password, with 429 and Retry-After.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
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
	r := c.Login("admin", adminPassword)
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

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
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
	e := newEnv(t, envOptions{})
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
	e := newEnv(t, envOptions{})
	anon := e.Client()
	viewer := e.Client()
	viewer.MustLogin(e.Users["viewer"].Username, e.Users["viewer"].Password)
	for _, lang := range []string{web.LangZH, web.LangEN} {
		for _, tc := range []struct {
			who    *client
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
			if page.Length() != 1 || page.AttrOr("data-status", "") != itoa(int64(tc.status)) {
				t.Errorf("%s %s: no error page with data-status %d:\n%.600s", lang, tc.path, tc.status, r)
				continue
			}
			if l := doc.Find("html").AttrOr("lang", ""); l != lang {
				t.Errorf("%s %s: html lang %q", lang, tc.path, l)
			}
			if h := page.Find("h1").Text(); h != web.T(lang, "status."+itoa(int64(tc.status))) {
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

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
