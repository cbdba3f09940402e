package server_test

import (
	"net/http"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
)

// A page that does not exist keeps a logged-in user's navigation, so they
// can go on from the 404 rather than look logged out.
func TestNotFoundPageKeepsTheLoggedInHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.Client()
	member := e.Users[store.RoleMember]
	c.MustLogin(member.Username, member.Password)
	r := c.Get("/no/such/page")
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want 404", r.StatusCode)
	}
	doc := r.Doc(t)
	if doc.Find(`[data-testid=error-page]`).Length() != 1 || doc.Find(`[data-testid=nav-booking]`).Length() != 1 {
		t.Errorf("the 404 page for a logged-in member lacks the error or the navigation:\n%s", r)
	}
	anon := e.Client().Get("/no/such/page")
	if anon.Doc(t).Find(`[data-testid=nav-booking]`).Length() != 0 {
		t.Errorf("an anonymous 404 shows the navigation")
	}
}
