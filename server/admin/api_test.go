package admin_test

import (
	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
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

// TestAPITokenListsCards is the acceptance: with a token the API
// lists the cards (and the card types); the token's owner is who /me says.
func TestAPITokenListsCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Demo: true})
	c := e.Client()
	cards, err := e.St.FindCards(context.Background(), store.CardFilter{})
	if err != nil || len(cards) == 0 {
		t.Fatalf("demo fleet has no cards (%v)", err)
	}

	if !e.HasRoute(http.MethodGet, "/api/v1/cards") {
		t.Fatal("GET /api/v1/cards is not in the route table; the issue's acceptance needs it (server/admin/routes.go)")
	}
	for _, role := range servertest.Roles {
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
	e := newEnv(t, servertest.Options{})
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
	if want := web.T(web.LangEN, "cardtype.price_range", store.CardTypeLimits["price"].Args()...); got.Error.Fields["price_yuan"] != want {
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
	e := newEnv(t, servertest.Options{})
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
	e := newEnv(t, servertest.Options{})
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
	servertest.MustAPIError(t, c.APICall(http.MethodPut, "/api/v1/card-types/"+strconv.FormatInt(other.ID, 10), admin, body), http.StatusConflict, "conflict")
}

func TestAPIUnknownIDIsNotFoundJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
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
