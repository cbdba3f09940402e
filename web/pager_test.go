package web_test

import (
	"net/url"
	"testing"

	"cardhour/web"
)

// TestPageNavLinksKeepTheQuery: the pager's links change only offset and
// limit of the list's URL; the first page has no offset, a page size the
// URL chose stays, and an offset past the end links back to the last page.
func TestPageNavLinksKeepTheQuery(t *testing.T) {
	q := url.Values{"q": {"7B 续训"}, "state": {"all"}, "offset": {"50"}}
	n := web.NewPageNav("/booking", q, 123, 50, 50)
	for got, want := range map[string]string{
		n.PrevURL: "/booking?q=7B+%E7%BB%AD%E8%AE%AD&state=all",
		n.NextURL: "/booking?offset=100&q=7B+%E7%BB%AD%E8%AE%AD&state=all",
	} {
		if got != want {
			t.Errorf("link %q, want %q", got, want)
		}
	}
	if n.First() != 51 || n.Last() != 100 || n.PageNum() != 2 || n.Pages() != 3 || n.Keep != "" {
		t.Errorf("rows %d–%d, page %d of %d, keep %q", n.First(), n.Last(), n.PageNum(), n.Pages(), n.Keep)
	}
	if len(n.Sizes) != len(web.PageSizes) {
		t.Fatalf("%d sizes", len(n.Sizes))
	}
	for i, s := range n.Sizes {
		u, _ := url.Parse(s.URL)
		if u.Query().Get("limit") != web.Itoa(web.PageSizes[i]) || u.Query().Has("offset") || u.Query().Get("q") != "7B 续训" {
			t.Errorf("size link %q", s.URL)
		}
		if s.Current != (web.PageSizes[i] == 50) {
			t.Errorf("size %d current %v", s.N, s.Current)
		}
	}

	last := web.NewPageNav("/tasks", url.Values{"limit": {"20"}, "offset": {"400"}}, 45, 400, 20)
	if last.PrevURL != "/tasks?limit=20&offset=40" || last.NextURL != "" || last.First() != 0 || last.Keep != "20" {
		t.Errorf("past the end: prev %q next %q first %d keep %q", last.PrevURL, last.NextURL, last.First(), last.Keep)
	}
	empty := web.NewPageNav("/admin/cards", url.Values{}, 0, 0, 50)
	if empty.PrevURL != "" || empty.NextURL != "" || empty.Pages() != 1 || empty.First() != 0 || empty.Last() != 0 {
		t.Errorf("an empty list: %+v", empty)
	}
	first := web.NewPageNav("/admin/cards", url.Values{}, 60, 0, 50)
	if first.NextURL != "/admin/cards?offset=50" || first.PrevURL != "" {
		t.Errorf("first of two pages: prev %q next %q", first.PrevURL, first.NextURL)
	}
}
