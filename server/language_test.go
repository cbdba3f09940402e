package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/web"
)

// TestLanguageFollowsAcceptLanguage: a first visit (no cookie, no ?lang=)
// gets the language its browser asks for, pages and API errors alike; the
// switch's cookie and ?lang= still win over the header.
func TestLanguageFollowsAcceptLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_LANG": web.LangZH}})
	for _, c := range []struct {
		name, header, cookie, query, want string
	}{
		{"no header", "", "", "", web.LangZH},
		{"English", "en-US,en;q=0.9", "", "", web.LangEN},
		{"Chinese first", "zh-CN,zh;q=0.9,en;q=0.8", "", "", web.LangZH},
		{"Chinese by q-value", "en;q=0.3, zh-Hans;q=0.7", "", "", web.LangZH},
		{"English by q-value", "zh;q=0.2, en-GB;q=0.8", "", "", web.LangEN},
		{"unspoken first", "fr-FR, de;q=0.9, en;q=0.5", "", "", web.LangEN},
		{"nothing spoken", "fr, de;q=0.5", "", "", web.LangZH},
		{"refused by q=0", "en;q=0", "", "", web.LangZH},
		{"cookie over header", "en", web.LangZH, "", web.LangZH},
		{"query over header", "zh-CN", "", web.LangEN, web.LangEN},
	} {
		t.Run(c.name, func(t *testing.T) {
			send := func(path string, api bool) *httptest.ResponseRecorder {
				if c.query != "" {
					path += "?lang=" + c.query
				}
				req := httptest.NewRequest(http.MethodGet, path, nil)
				if c.header != "" {
					req.Header.Set("Accept-Language", c.header)
				}
				if c.cookie != "" {
					req.AddCookie(&http.Cookie{Name: "cardhour_lang", Value: c.cookie})
				}
				if api {
					req.Header.Set("Accept", "application/json")
				}
				rec := httptest.NewRecorder()
				e.Srv.Handler().ServeHTTP(rec, req)
				return rec
			}
			page := send("/login", false)
			doc, err := goquery.NewDocumentFromReader(page.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Find("html").AttrOr("lang", ""); got != c.want {
				t.Errorf("Accept-Language %q: the login page is in %q, want %q", c.header, got, c.want)
			}
			api := send("/api/v1/me", true)
			var body servertest.APIErr
			if err := json.Unmarshal(api.Body.Bytes(), &body); err != nil {
				t.Fatalf("GET /api/v1/me: %v\n%s", err, api.Body)
			}
			if want := web.T(c.want, "auth.required"); body.Error.Message != want {
				t.Errorf("Accept-Language %q: the API error says %q, want %q", c.header, body.Error.Message, want)
			}
		})
	}
}
