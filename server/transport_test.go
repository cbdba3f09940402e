package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/web"
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

// adminPost sends a form post as the logged-in admin to the host named
// in target (http://HOST/path), the Host header a proxy or a crafted
// request could set.
func adminPost(e *env, target string, form url.Values, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.AddCookie(&http.Cookie{Name: "cardhour_session", Value: e.Session("admin")})
	req.AddCookie(&http.Cookie{Name: "cardhour_csrf", Value: "board-url-csrf"})
	req.Header.Set("X-CSRF-Token", "board-url-csrf")
	rec := httptest.NewRecorder()
	e.Srv.Handler().ServeHTTP(rec, req)
	return rec
}

// TestBoardURLNeverFromTheHostHeader: the URL given out with a new board
// token (and the agent commands on the same page) comes from
// CARDHOUR_BASE_URL; without one, the page and the API give the board's
// path and a placeholder, and say why — never an address built from the
// request's Host, which would hand the token to whatever host it names.
func TestBoardURLNeverFromTheHostHeader(t *testing.T) {
	t.Parallel()
	const evil = "evil.example"
	t.Run("no base URL", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{})
		for _, lang := range []string{web.LangZH, web.LangEN} {
			rec := adminPost(e, "http://"+evil+"/admin/telemetry/tokens?lang="+lang, url.Values{"kind": {"board"}, "name": {"wall " + lang}},
				http.Header{"X-Forwarded-Proto": {"https"}})
			if rec.Code != http.StatusCreated {
				t.Fatalf("issue a board token (%s): %d\n%.800s", lang, rec.Code, rec.Body)
			}
			body := rec.Body.String()
			if strings.Contains(body, evil) {
				t.Errorf("the page (%s) prints the request's Host %q", lang, evil)
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if href, _ := doc.Find(`[data-testid=new-board-url]`).Attr("href"); !strings.HasPrefix(href, "/board?token=chb_") {
				t.Errorf("board URL (%s) %q, want the path /board?token=chb_…", lang, href)
			}
			if got := doc.Find(`[data-testid=board-url-path-only]`).Text(); got != web.T(lang, "telemetry.board_path_only") {
				t.Errorf("the page (%s) does not say why only the path is given: %q", lang, got)
			}
			if doc.Find(`[data-testid=portal-url-placeholder]`).Length() != 1 || !strings.Contains(doc.Find(`pre code`).First().Text(), "--server PORTAL_URL") {
				t.Errorf("the agent command (%s) does not use the explained placeholder: %q", lang, doc.Find(`pre code`).First().Text())
			}
		}
		req := httptest.NewRequest(http.MethodPost, "http://"+evil+"/api/v1/board-tokens", strings.NewReader(`{"name":"lobby"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.Users["admin"].Token)
		rec := httptest.NewRecorder()
		e.Srv.Handler().ServeHTTP(rec, req)
		var out struct {
			Token    string `json:"token"`
			BoardURL string `json:"board_url"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != http.StatusCreated {
			t.Fatalf("POST /api/v1/board-tokens: %d %s", rec.Code, rec.Body)
		}
		if out.BoardURL != "/board?token="+out.Token {
			t.Errorf("API board_url %q, want the path /board?token=%s", out.BoardURL, out.Token)
		}
	})
	t.Run("base URL", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_BASE_URL": "https://cardhour.example.com"}})
		rec := adminPost(e, "http://"+evil+"/admin/telemetry/tokens", url.Values{"kind": {"board"}}, nil)
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if err != nil || rec.Code != http.StatusCreated {
			t.Fatalf("issue a board token: %d %v", rec.Code, err)
		}
		if href, _ := doc.Find(`[data-testid=new-board-url]`).Attr("href"); !strings.HasPrefix(href, "https://cardhour.example.com/board?token=chb_") {
			t.Errorf("board URL %q, want it under CARDHOUR_BASE_URL", href)
		}
		if doc.Find(`[data-testid=board-url-path-only], [data-testid=portal-url-placeholder]`).Length() != 0 {
			t.Error("with a base URL the page still explains its absence")
		}
		if !strings.Contains(doc.Find(`pre code`).First().Text(), "--server https://cardhour.example.com ") {
			t.Errorf("agent command %q, want the base URL", doc.Find(`pre code`).First().Text())
		}
	})
}
