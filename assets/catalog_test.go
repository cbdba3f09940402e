package assets_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"cardhour/assets"
)

const (
	immutable   = "public, max-age=31536000, immutable"
	revalidated = "no-cache"
)

var hashedURL = regexp.MustCompile(`^/assets/css/app\.[0-9a-f]{12}\.css$`)

func mustCatalog(tb testing.TB, fsys fstest.MapFS) *assets.Catalog {
	tb.Helper()
	c, err := assets.New(fsys)
	if err != nil {
		tb.Fatalf("assets.New: %v", err)
	}
	return c
}

func sample() fstest.MapFS {
	return fstest.MapFS{
		"css/app.css":         {Data: []byte(`body{background:url(../vendor/font/x.svg)} .a{background:url("img.svg")}`)},
		"css/img.svg":         {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"vendor/font/x.svg":   {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>`)},
		"js/app.js":           {Data: []byte(`console.log(1)`)},
		"vendor/lib/LICENSE":  {Data: []byte(`MIT`)},
		"vendor/lib/x.min.js": {Data: []byte(`var x`)},
	}
}

// get asks h for target with the given method and If-None-Match.
func get(tb testing.TB, h http.Handler, method, target, inm string) *http.Response {
	tb.Helper()
	req := httptest.NewRequest(method, target, nil)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(tb testing.TB, res *http.Response) string {
	tb.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestHashDiffersWhenContentDiffers(t *testing.T) {
	a, b := assets.Hash([]byte("body{color:red}")), assets.Hash([]byte("body{color:blue}"))
	if a == b {
		t.Fatalf("two contents share the hash %s", a)
	}
	if a != assets.Hash([]byte("body{color:red}")) {
		t.Fatal("the hash of one content changed between calls")
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(a) {
		t.Fatalf("hash %q is not 12 hex digits", a)
	}
}

func TestURLChangesWhenContentChanges(t *testing.T) {
	old := mustCatalog(t, fstest.MapFS{"css/app.css": {Data: []byte("body{color:red}")}})
	upgraded := mustCatalog(t, fstest.MapFS{"css/app.css": {Data: []byte("body{color:blue}")}})
	u1, u2 := old.URL("css/app.css"), upgraded.URL("css/app.css")
	if u1 == u2 {
		t.Fatalf("both releases link %s", u1)
	}
	for _, u := range []string{u1, u2} {
		if !hashedURL.MatchString(u) {
			t.Errorf("URL %q does not put the hash before the extension", u)
		}
	}
	if want := "/assets/css/app." + assets.Hash([]byte("body{color:red}")) + ".css"; u1 != want {
		t.Errorf("URL = %s, want %s", u1, want)
	}
}

func TestURLOfNamesWithoutOrWithSeveralDots(t *testing.T) {
	c := mustCatalog(t, sample())
	h := c.Handler()
	for _, name := range []string{"vendor/lib/LICENSE", "vendor/lib/x.min.js"} {
		u := c.URL(name)
		if u == "/assets/"+name {
			t.Errorf("URL(%q) is not hashed", name)
		}
		res := get(t, h, http.MethodGet, u, "")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != immutable {
			t.Errorf("GET %s: %d %q", u, res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
}

func TestHashedURLIsImmutableWithETag(t *testing.T) {
	fsys := sample()
	c := mustCatalog(t, fsys)
	u := c.URL("css/app.css")
	res := get(t, c.Handler(), http.MethodGet, u, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, res.StatusCode)
	}
	if got := res.Header.Get("Cache-Control"); got != immutable {
		t.Errorf("Cache-Control = %q, want %q", got, immutable)
	}
	want := `"` + assets.Hash(fsys["css/app.css"].Data) + `"`
	if got := res.Header.Get("ETag"); got != want {
		t.Errorf("ETag = %q, want %q", got, want)
	}
	if got := res.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/css") {
		t.Errorf("Content-Type = %q, want text/css", got)
	}
	if got := body(t, res); got != string(fsys["css/app.css"].Data) {
		t.Errorf("body = %q", got)
	}
	js := get(t, c.Handler(), http.MethodGet, c.URL("js/app.js"), "")
	if got := js.Header.Get("Content-Type"); !strings.Contains(got, "javascript") {
		t.Errorf("js Content-Type = %q", got)
	}
}

func TestIfNoneMatchAnswers304(t *testing.T) {
	c := mustCatalog(t, sample())
	for _, u := range []string{c.URL("css/app.css"), "/assets/css/app.css"} {
		first := get(t, c.Handler(), http.MethodGet, u, "")
		etag := first.Header.Get("ETag")
		res := get(t, c.Handler(), http.MethodGet, u, etag)
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %s: %d, want 304", u, etag, res.StatusCode)
		}
		if b := body(t, res); b != "" {
			t.Errorf("304 of %s has a body: %q", u, b)
		}
		if got, want := res.Header.Get("Cache-Control"), first.Header.Get("Cache-Control"); got != want {
			t.Errorf("304 of %s: Cache-Control %q, want %q", u, got, want)
		}
		if res := get(t, c.Handler(), http.MethodGet, u, `"000000000000"`); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s with another ETag: %d, want 200", u, res.StatusCode)
		}
	}
}

func TestPlainNameIsRevalidated(t *testing.T) {
	fsys := sample()
	c := mustCatalog(t, fsys)
	res := get(t, c.Handler(), http.MethodGet, "/assets/css/app.css", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET plain name: %d", res.StatusCode)
	}
	if got := res.Header.Get("Cache-Control"); got != revalidated {
		t.Errorf("Cache-Control = %q, want %q", got, revalidated)
	}
	if res.Header.Get("ETag") == "" {
		t.Error("plain name has no ETag to revalidate with")
	}
	if got := body(t, res); got != string(fsys["css/app.css"].Data) {
		t.Errorf("body = %q", got)
	}
}

// A page drawn by the previous release links the previous hash: it gets the
// current file, never cached as if it were the old one.
func TestStaleHashGetsCurrentFileRevalidated(t *testing.T) {
	old := mustCatalog(t, fstest.MapFS{"css/app.css": {Data: []byte("body{color:red}")}})
	upgraded := mustCatalog(t, fstest.MapFS{"css/app.css": {Data: []byte("body{color:blue}")}})
	res := get(t, upgraded.Handler(), http.MethodGet, old.URL("css/app.css"), "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET stale hash: %d", res.StatusCode)
	}
	if got := res.Header.Get("Cache-Control"); got != revalidated {
		t.Errorf("Cache-Control = %q, want %q", got, revalidated)
	}
	if got := body(t, res); got != "body{color:blue}" {
		t.Errorf("body = %q, want the current file", got)
	}
}

func TestUnknownFilesAre404(t *testing.T) {
	c := mustCatalog(t, sample())
	for _, u := range []string{
		"/assets/css/missing.css",
		"/assets/css/missing.0123456789ab.css",
		"/assets/css",
		"/assets/css/",
		"/assets/",
		"/assets/../css/app.css",
		"/css/app.css",
	} {
		if res := get(t, c.Handler(), http.MethodGet, u, ""); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", u, res.StatusCode)
		}
	}
	if u := c.URL("css/missing.css"); u != "/assets/css/missing.css" {
		t.Errorf("URL of a missing file = %q, want its plain (404) URL", u)
	}
}

func TestHEADAnswersHeadersWithoutBody(t *testing.T) {
	fsys := sample()
	c := mustCatalog(t, fsys)
	res := get(t, c.Handler(), http.MethodHead, c.URL("css/app.css"), "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HEAD: %d", res.StatusCode)
	}
	if got := res.Header.Get("Cache-Control"); got != immutable {
		t.Errorf("Cache-Control = %q", got)
	}
	if res.Header.Get("ETag") == "" {
		t.Error("HEAD has no ETag")
	}
	if b := body(t, res); b != "" {
		t.Errorf("HEAD has a body: %q", b)
	}
	if res := get(t, c.Handler(), http.MethodPost, c.URL("css/app.css"), ""); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", res.StatusCode)
	}
}

// cssRef and jsRef find the relative references a stylesheet or a script
// makes to other files: url(...), @import, import ... from and import().
var (
	cssRef = regexp.MustCompile(`url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)`)
	jsRef  = regexp.MustCompile(`(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}/[^'"]+)['"]`)
)

// references lists the relative references of the file name.
func references(name, src string) []string {
	var re *regexp.Regexp
	switch {
	case strings.HasSuffix(name, ".css"):
		re = cssRef
	case strings.HasSuffix(name, ".js"):
		re = jsRef
	default:
		return nil
	}
	var refs []string
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		ref := m[1]
		if ref == "" && len(m) > 2 {
			ref = m[2]
		}
		if ref == "" || strings.HasPrefix(ref, "#") || strings.Contains(ref, ":") {
			continue // data:, https:, fragments: not files of ours
		}
		refs = append(refs, ref)
	}
	return refs
}

// checkReferences loads each file under its hashed URL, resolves its
// relative references against that URL as a browser does, and loads those.
func checkReferences(t *testing.T, c *assets.Catalog, read func(string) string) int {
	t.Helper()
	n := 0
	for _, name := range c.Names() {
		base, _ := url.Parse(c.URL(name))
		for _, ref := range references(name, read(name)) {
			n++
			r, err := url.Parse(ref)
			if err != nil {
				t.Errorf("%s: reference %q: %v", name, ref, err)
				continue
			}
			target := base.ResolveReference(r).Path
			if res := get(t, c.Handler(), http.MethodGet, target, ""); res.StatusCode != http.StatusOK {
				t.Errorf("%s refers to %q: GET %s answers %d", name, ref, target, res.StatusCode)
			}
		}
	}
	return n
}

func TestRelativeReferencesResolveFromHashedURL(t *testing.T) {
	fsys := sample()
	c := mustCatalog(t, fsys)
	if n := checkReferences(t, c, func(name string) string { return string(fsys[name].Data) }); n != 2 {
		t.Fatalf("found %d references in the sample, want 2", n)
	}
}

func TestEmbeddedFilesServeAndTheirReferencesResolve(t *testing.T) {
	c := assets.Default()
	for _, name := range []string{"css/app.css", "css/board.css", "js/app.js", "js/board.js", "js/booking.js", "favicon.svg"} {
		if !c.Has(name) {
			t.Errorf("the embedded catalog lacks %s", name)
		}
	}
	for _, name := range c.Names() {
		u := c.URL(name)
		res := get(t, c.Handler(), http.MethodGet, u, "")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != immutable {
			t.Errorf("GET %s: %d %q", u, res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
	checkReferences(t, c, func(name string) string {
		b, err := assets.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	})
	if assets.URL("css/app.css") != c.URL("css/app.css") {
		t.Error("assets.URL and Default().URL disagree")
	}
}
