package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestAWrongBoardTokenIsNoAPIToken: the wall's error page names the board
// token, which is what the person at the wall typed or was given.
func TestAWrongBoardTokenIsNoAPIToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	for _, lang := range []string{web.LangZH, web.LangEN} {
		r := e.Client().Get("/board?token=chb_WRONG&lang=" + lang)
		if r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong board token: status %d", r.StatusCode)
		}
		msg := r.Doc(t).Find(`[data-testid="error-page"]`).Text()
		if want := web.T(lang, "auth.board_token_invalid"); !containsText(msg, want) {
			t.Errorf("%s: the page says %q, want %q", lang, msg, want)
		}
		if api := web.T(lang, "auth.token_invalid"); containsText(msg, api) {
			t.Errorf("%s: a board token is called an API token: %q", lang, msg)
		}
	}
}

func containsText(s, sub string) bool { return sub != "" && strings.Contains(s, sub) }
