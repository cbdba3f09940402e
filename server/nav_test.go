package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// TestNavShowsOnlyWhatTheViewerMayOpen: the menu hides the items whose
// page the route table does not admit the viewer to — a member sees no
// reports (managers' pages) and no admin; a manager sees reports, which
// open the report itself; an admin sees both.
func TestNavShowsOnlyWhatTheViewerMayOpen(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{})
	for _, c := range []struct {
		role  string
		shown []string
	}{
		{store.RoleViewer, []string{"booking", "board", "ledger"}},
		{store.RoleMember, []string{"booking", "board", "ledger"}},
		{store.RoleManager, []string{"booking", "board", "ledger", "reports"}},
		{store.RoleAdmin, []string{"booking", "board", "ledger", "reports", "admin"}},
	} {
		cl := e.LoggedIn(c.role)
		r := cl.Get("/")
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: GET /: %d", c.role, r.StatusCode)
		}
		doc := r.Doc(t)
		var got []string
		doc.Find(`nav.mainnav a`).Each(func(_ int, s *goquery.Selection) {
			got = append(got, strings.TrimPrefix(s.AttrOr("data-testid", ""), "nav-"))
			href := s.AttrOr("href", "")
			if r := cl.Get(href); r.StatusCode != http.StatusOK {
				t.Errorf("%s: the menu links %s, which answers %d", c.role, href, r.StatusCode)
			}
		})
		if strings.Join(got, ",") != strings.Join(c.shown, ",") {
			t.Errorf("%s sees the menu %v, want %v", c.role, got, c.shown)
		}
	}
	// The rule reads the route table: every item the menu can show is a
	// page the table serves.
	for _, p := range web.NavPaths() {
		if !e.HasRoute(http.MethodGet, p) {
			t.Errorf("the menu links %s, which is not in the route table", p)
		}
	}
}
