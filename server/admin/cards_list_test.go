package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// TestAdminCardListSearchesAndPages: the card list searches by uuid, host
// and type beside its host, type and status filters, shows a page at a
// time with the total, and its pager keeps the filters; the API takes
// limit and offset and answers the total.
func TestAdminCardListSearchesAndPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Demo: true})
	c := e.LoggedIn(store.RoleAdmin)
	cards, err := e.St.FindCards(context.Background(), store.CardFilter{})
	if err != nil || len(cards) != 32 {
		t.Fatalf("demo cards: %d, %v", len(cards), err)
	}
	rows := func(path string) (ids []string, doc *goquery.Document) {
		t.Helper()
		r := c.Get(path)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, r.StatusCode)
		}
		doc = r.Doc(t)
		doc.Find(`[data-testid=card-row]`).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-id", "")) })
		return ids, doc
	}
	ids, doc := rows("/admin/cards?limit=20")
	if len(ids) != 20 {
		t.Errorf("first page: %d rows, want 20", len(ids))
	}
	if got, want := strings.TrimSpace(doc.Find(`[data-testid=pager-count]`).Text()), web.T(web.LangZH, "pager.showing", 1, 20, 32); got != want {
		t.Errorf("pager count %q, want %q", got, want)
	}
	if got, want := strings.TrimSpace(doc.Find(`.page-header .muted`).First().Text()), web.T(web.LangZH, "admin.count", 32); got != want {
		t.Errorf("the header counts %q, want %q (the whole list)", got, want)
	}
	if ids, _ := rows("/admin/cards?limit=20&offset=20"); len(ids) != 12 {
		t.Errorf("second page: %d rows, want 12", len(ids))
	}

	// A card by its uuid; a host's cards by the host's name.
	one := cards[5]
	if ids, _ := rows("/admin/cards?q=" + url.QueryEscape(one.UUID)); len(ids) != 1 {
		t.Errorf("search by uuid: %d rows, want 1", len(ids))
	}
	onHost := 0
	for _, cd := range cards {
		if strings.Contains(strings.ToLower(cd.HostName), strings.ToLower(one.HostName)) {
			onHost++
		}
	}
	q := url.Values{"q": {one.HostName}, "card_type_id": {web.I64(one.CardTypeID)}, "limit": {"20"}}
	ids, doc = rows("/admin/cards?" + q.Encode())
	if len(ids) == 0 || len(ids) > onHost {
		t.Errorf("search by host %s within its type: %d rows, want 1 to %d", one.HostName, len(ids), onHost)
	}
	if v := doc.Find(`#filter-q`).AttrOr("value", ""); v != one.HostName {
		t.Errorf("the search box shows %q", v)
	}
	doc.Find(`[data-testid=pager-size]`).Each(func(_ int, s *goquery.Selection) {
		u, err := url.Parse(s.AttrOr("href", ""))
		if err != nil || u.Query().Get("q") != one.HostName || u.Query().Get("card_type_id") != web.I64(one.CardTypeID) {
			t.Errorf("page size link %q loses the filters", s.AttrOr("href", ""))
		}
	})
	if ids, _ := rows("/admin/cards?q=no-such-card"); len(ids) != 0 {
		t.Errorf("a search for nothing lists %d cards", len(ids))
	}

	type page struct {
		Cards  []store.CardView `json:"cards"`
		Total  int64            `json:"total"`
		Limit  int              `json:"limit"`
		Offset int              `json:"offset"`
	}
	tok := e.Users[store.RoleViewer].Token
	p := servertest.Decode[page](t, e.Client().APICall(http.MethodGet, "/api/v1/cards?limit=10&offset=30", tok, ""), http.StatusOK)
	if p.Total != 32 || p.Limit != 10 || p.Offset != 30 || len(p.Cards) != 2 {
		t.Errorf("API page: total %d limit %d offset %d, %d rows", p.Total, p.Limit, p.Offset, len(p.Cards))
	}
	p = servertest.Decode[page](t, e.Client().APICall(http.MethodGet, "/api/v1/cards?q="+url.QueryEscape(one.UUID), tok, ""), http.StatusOK)
	if p.Total != 1 || len(p.Cards) != 1 || p.Cards[0].ID != one.ID {
		t.Errorf("API search by uuid: total %d, %d rows", p.Total, len(p.Cards))
	}
	servertest.MustAPIError(t, e.Client().APICall(http.MethodGet, "/api/v1/cards?limit=5000", tok, ""), http.StatusUnprocessableEntity, "invalid")
}
