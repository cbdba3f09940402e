package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"cardhour/assets"
	"cardhour/web"
)

var assetCall = regexp.MustCompile(`\basset\("([^"]+)"\)`)

// Templates name assets through asset(), never as a literal /assets/ path
// (which the browser would cache across an upgrade), and every name exists.
func TestTemplatesLinkAssetsByHashedURL(t *testing.T) {
	files, err := filepath.Glob("*.templ")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, `"/assets/`) {
				t.Errorf("%s:%d links an asset by its plain path: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		for _, m := range assetCall.FindAllStringSubmatch(string(src), -1) {
			calls++
			if !assets.Default().Has(m[1]) {
				t.Errorf("%s links asset %q, which is not embedded", path, m[1])
			}
		}
	}
	if calls < 5 {
		t.Fatalf("found only %d asset() calls; the scan no longer matches the templates", calls)
	}
}

// Every /assets/ URL of the rendered pages that load assets answers 200
// under its hashed, immutable URL.
func TestRenderedAssetURLsResolve(t *testing.T) {
	p := web.Page{Lang: web.LangEN, User: &web.Viewer{ID: 1, Username: "a", Role: "admin"}}
	pages := map[string]templ.Component{
		"layout":          web.Layout(p),
		"login":           web.LoginPage(p, web.NewForm(), web.LoginView{Next: "/"}),
		"board":           web.BoardPage(p, web.BoardProps{}),
		"heatmap":         web.HeatmapPage(p, web.HeatmapProps{}),
		"telemetry admin": web.TelemetryAdminPage(p, web.TelemetryAdminProps{}, web.NewForm()),
		"booking form":    web.BookingFormPage(p, web.BookingFormProps{}, web.NewForm()),
	}
	h := assets.Default().Handler()
	for name, comp := range pages {
		var buf bytes.Buffer
		if err := comp.Render(context.Background(), &buf); err != nil {
			t.Fatalf("%s: render: %v", name, err)
		}
		doc, err := goquery.NewDocumentFromReader(&buf)
		if err != nil {
			t.Fatalf("%s: parse: %v", name, err)
		}
		found := 0
		doc.Find("link[href], script[src]").Each(func(_ int, s *goquery.Selection) {
			u := s.AttrOr("href", s.AttrOr("src", ""))
			if !strings.HasPrefix(u, assets.Prefix) {
				return
			}
			found++
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("%s links %s, which answers %d", name, u, rec.Code)
			} else if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
				t.Errorf("%s links %s, which is not a current hashed URL (Cache-Control %q)", name, u, cc)
			}
		})
		if found == 0 {
			t.Errorf("%s links no assets", name)
		}
	}
}
