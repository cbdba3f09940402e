package server_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"cardhour/server/servertest"
)

// rawGet sends a GET or HEAD without the client's transparent gzip, so the
// test sees the bytes as they left the portal.
func rawGet(t *testing.T, e *env, method, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.TS.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// TestHeadAnswersEveryGet: uptime checkers and curl -I ask with HEAD; every
// GET route answers it with the GET's status and headers and no body, and
// a route that has no GET still says 405.
func TestHeadAnswersEveryGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	admin := http.Header{"Authorization": {"Bearer " + e.Users["admin"].Token}}
	for _, c := range []struct {
		path   string
		header http.Header
		status int
		ctype  string
	}{
		{"/healthz", nil, http.StatusOK, "application/json"},
		{"/login", nil, http.StatusOK, "text/html"},
		{"/api/v1/openapi.json", nil, http.StatusOK, "application/json"},
		{"/api/v1/me", admin, http.StatusOK, "application/json"},
		{"/api/v1/me", nil, http.StatusUnauthorized, ""},
		{"/admin", nil, http.StatusUnauthorized, ""},
	} {
		get, _ := rawGet(t, e, http.MethodGet, c.path, c.header)
		head, body := rawGet(t, e, http.MethodHead, c.path, c.header)
		if head.StatusCode != c.status || get.StatusCode != head.StatusCode {
			t.Errorf("HEAD %s: %d (GET %d), want %d", c.path, head.StatusCode, get.StatusCode, c.status)
		}
		if len(body) != 0 {
			t.Errorf("HEAD %s: a body of %d bytes", c.path, len(body))
		}
		if c.ctype != "" && !strings.HasPrefix(head.Header.Get("Content-Type"), c.ctype) {
			t.Errorf("HEAD %s: Content-Type %q, want %s", c.path, head.Header.Get("Content-Type"), c.ctype)
		}
	}
	if res, _ := rawGet(t, e, http.MethodHead, "/logout", nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("HEAD /logout (a POST route): %d, want 405", res.StatusCode)
	}
}

// TestGzipForPagesJSONAndTheDocument: HTML, JSON and the OpenAPI document
// go compressed to clients that accept it, and plain to those that do
// not; /metrics, streamed by its own handler, is compressed once.
func TestGzipForPagesJSONAndTheDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Demo: true})
	token := "Bearer " + e.Users["admin"].Token
	for _, path := range []string{"/login", "/api/v1/openapi.json", "/api/v1/cards", "/metrics"} {
		auth := http.Header{}
		if strings.HasPrefix(path, "/api/v1/cards") {
			auth.Set("Authorization", token)
		}
		gz := http.Header{"Accept-Encoding": {"gzip"}, "Authorization": auth["Authorization"]}
		res, body := rawGet(t, e, http.MethodGet, path, gz)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		if res.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("GET %s with Accept-Encoding gzip: Content-Encoding %q", path, res.Header.Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(strings.NewReader(string(body)))
		if err != nil {
			t.Errorf("GET %s: not gzip: %v", path, err)
			continue
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			continue
		}
		if len(plain) <= len(body) {
			t.Errorf("GET %s: %d bytes compressed to %d", path, len(plain), len(body))
		}
		if strings.HasPrefix(string(plain), "\x1f\x8b") {
			t.Errorf("GET %s: compressed twice", path)
		}
		plainRes, plainBody := rawGet(t, e, http.MethodGet, path, auth)
		if plainRes.Header.Get("Content-Encoding") != "" || string(plainBody) == "" {
			t.Errorf("GET %s without Accept-Encoding: Content-Encoding %q, %d bytes", path, plainRes.Header.Get("Content-Encoding"), len(plainBody))
		}
	}
}
