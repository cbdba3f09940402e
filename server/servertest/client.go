package servertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Client is a browser-like HTTP client: a cookie jar, redirects not
// followed so tests see them.
type Client struct {
	t    testing.TB
	env  *Env
	base *url.URL
	hc   *http.Client
}

// Client is a new client of the portal.
func (e *Env) Client() *Client {
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.TS.URL)
	return &Client{t: e.T, env: e, base: u, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Response is a finished request with its body read.
type Response struct {
	*http.Response
	Body []byte
}

func (r Response) String() string { return string(r.Body) }

// Doc parses the body as HTML.
func (r Response) Doc(tb testing.TB) *goquery.Document {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		tb.Fatalf("parse HTML: %v", err)
	}
	return doc
}

// Do sends a request. An answer of the JSON API is checked against the
// portal's OpenAPI document.
func (c *Client) Do(method, path string, body io.Reader, header http.Header) Response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base.String()+path, body)
	if err != nil {
		c.t.Fatalf("NewRequest: %v", err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := Response{Response: res, Body: b}
	if strings.HasPrefix(req.URL.Path, "/api/v1/") {
		for _, p := range c.env.checkAnswer(req, r) {
			c.t.Errorf("%s %s: the answer disagrees with the OpenAPI document: %s", method, path, p)
		}
	}
	return r
}

// Get is a GET.
func (c *Client) Get(path string) Response { return c.Do(http.MethodGet, path, nil, nil) }

// PostForm posts form values as a browser would, with the CSRF token when
// withCSRF (taken from the cookie the portal set).
func (c *Client) PostForm(path string, v url.Values, withCSRF bool) Response {
	c.t.Helper()
	if v == nil {
		v = url.Values{}
	}
	if withCSRF {
		v.Set("_csrf", c.CSRF())
	}
	return c.Do(http.MethodPost, path, strings.NewReader(v.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

// CSRF returns the CSRF token, fetching /login first when no page has set it.
func (c *Client) CSRF() string {
	c.t.Helper()
	if v := c.Cookie("cardhour_csrf"); v != "" {
		return v
	}
	c.Get("/login")
	v := c.Cookie("cardhour_csrf")
	if v == "" {
		c.t.Fatal("the portal set no cardhour_csrf cookie")
	}
	return v
}

// Cookie is the value of a cookie the portal set, "" when none.
func (c *Client) Cookie(name string) string {
	for _, ck := range c.hc.Jar.Cookies(c.base) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// Login signs in through the form, the way a browser does: the token
// comes from the page's hidden _csrf input.
func (c *Client) Login(username, password string) Response {
	c.t.Helper()
	page := c.Get("/login")
	token, ok := page.Doc(c.t).Find(`[data-testid=login-form] input[name=_csrf]`).Attr("value")
	if !ok || token == "" {
		c.t.Fatalf("login form has no _csrf input:\n%s", page)
	}
	return c.Do(http.MethodPost, "/login", strings.NewReader(url.Values{
		"_csrf": {token}, "username": {username}, "password": {password}, "next": {"/"},
	}.Encode()), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

// MustLogin signs in or fails the test.
func (c *Client) MustLogin(username, password string) {
	c.t.Helper()
	if r := c.Login(username, password); r.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("login %s: status %d, want 303:\n%s", username, r.StatusCode, r)
	}
	if c.Cookie("cardhour_session") == "" {
		c.t.Fatalf("login %s: no session cookie", username)
	}
}

// APICall sends a JSON request with a bearer token ("" for none).
func (c *Client) APICall(method, path, token, body string) Response {
	c.t.Helper()
	h := http.Header{"Accept": {"application/json"}}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	return c.Do(method, path, strings.NewReader(body), h)
}

// APIErr is the JSON body of every /api error.
type APIErr struct {
	Error struct {
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Fields  map[string]string `json:"fields"`
	} `json:"error"`
}

// MustAPIError checks status and that the body is the portal's JSON error
// with code; it returns the decoded error.
func MustAPIError(tb testing.TB, r Response, status int, code string) APIErr {
	tb.Helper()
	if r.StatusCode != status {
		tb.Fatalf("%s %s: status %d, want %d; body:\n%s", r.Request.Method, r.Request.URL.Path, r.StatusCode, status, r)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Errorf("%s: Content-Type %q, want application/json", r.Request.URL.Path, ct)
	}
	var e APIErr
	if err := json.Unmarshal(r.Body, &e); err != nil {
		tb.Fatalf("%s: body is not JSON: %v\n%s", r.Request.URL.Path, err, r)
	}
	if e.Error.Code != code {
		tb.Errorf("%s: error code %q, want %q; body: %s", r.Request.URL.Path, e.Error.Code, code, r)
	}
	if e.Error.Message == "" {
		tb.Errorf("%s: error without a message: %s", r.Request.URL.Path, r)
	}
	return e
}

// Decode checks the status and decodes the JSON body.
func Decode[T any](tb testing.TB, r Response, status int) T {
	tb.Helper()
	var v T
	if r.StatusCode != status {
		tb.Fatalf("%s %s: status %d, want %d:\n%s", r.Request.Method, r.Request.URL.Path, r.StatusCode, status, r)
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		tb.Fatalf("%s: %v\n%s", r.Request.URL.Path, err, r)
	}
	return v
}

// SetCookie gives the client a cookie for the portal, as if the portal had
// set it (a session made through the store, say).
func (c *Client) SetCookie(name, value string) {
	c.hc.Jar.SetCookies(c.base, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}
