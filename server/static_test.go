package server_test

import (
	"cardhour/server/servertest"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

var hashedAsset = regexp.MustCompile(`^/assets/[a-z/]+\.[0-9a-f]{12}\.(css|js)$`)

// The login page links its stylesheets and scripts by hashed URL, and the
// portal serves those for a year; plain names are revalidated.
func TestStaticAssetsHashedAndImmutable(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	doc := c.Get("/login").Doc(t)
	var urls []string
	doc.Find(`link[rel="stylesheet"], script[src]`).Each(func(_ int, s *goquery.Selection) {
		urls = append(urls, s.AttrOr("href", s.AttrOr("src", "")))
	})
	if len(urls) == 0 {
		t.Fatal("the login page links no stylesheet or script")
	}
	for _, u := range urls {
		if !hashedAsset.MatchString(u) {
			t.Errorf("login page links %q, not a hashed /assets/ URL", u)
			continue
		}
		res := c.Get(u)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", u, res.StatusCode)
			continue
		}
		if got := res.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q", u, got)
		}
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", u)
		}
		if res := c.Do(http.MethodGet, u, nil, http.Header{"If-None-Match": {etag}}); res.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match: %d, want 304", u, res.StatusCode)
		}
	}
	plain := c.Get("/assets/css/app.css")
	if plain.StatusCode != http.StatusOK || plain.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET plain name: %d %q", plain.StatusCode, plain.Header.Get("Cache-Control"))
	}
	if res := c.Get("/assets/css/missing.css"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET missing asset: %d", res.StatusCode)
	}
}

func TestFaviconRedirectsToHashedURL(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	res := c.Get("/favicon.ico")
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/assets/favicon.") || !strings.HasSuffix(loc, ".svg") {
		t.Fatalf("GET /favicon.ico: %d → %q", res.StatusCode, loc)
	}
	if res := c.Get(loc); res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") {
		t.Errorf("GET %s: %d %q", loc, res.StatusCode, res.Header.Get("Content-Type"))
	}
}
