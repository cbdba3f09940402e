package servertest

import (
	"net/http"
	"strings"
	"testing"
)

// TestAnswersAreHeldToTheDocument: the check every API call of the tests
// goes through reports an answer whose shape departs from the generated
// document — a null list, a field the document lacks, a missing one, a
// wrong type, an undocumented status or media type, an error body that is
// not the portal's — and passes the real answer.
func TestAnswersAreHeldToTheDocument(t *testing.T) {
	t.Parallel()
	e := New(t, Options{})
	real := e.Client().APICall(http.MethodGet, "/api/v1/me", e.Users["admin"].Token, "")
	if real.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/me: %d", real.StatusCode)
	}
	body := string(real.Body)
	if !strings.Contains(body, `"memberships":[]`) {
		t.Fatalf("this test edits the memberships list; the answer has none: %s", body)
	}
	req, _ := http.NewRequest(http.MethodGet, e.TS.URL+"/api/v1/me", nil)
	answer := func(status int, ctype, b string) Response {
		return Response{Response: &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ctype}}}, Body: []byte(b)}
	}
	const js = "application/json; charset=UTF-8"
	if p := e.checkAnswer(req, answer(http.StatusOK, js, body)); len(p) != 0 {
		t.Errorf("the real answer was refused: %q", p)
	}
	for _, c := range []struct {
		name   string
		status int
		ctype  string
		body   string
		want   string
	}{
		{"null list", 200, js, strings.Replace(body, `"memberships":[]`, `"memberships":null`, 1), "null where the document says array"},
		{"extra field", 200, js, strings.Replace(body, `"memberships":[]`, `"memberships":[],"teams":[]`, 1), `the field "teams" is not in the document`},
		{"missing field", 200, js, strings.Replace(body, `,"memberships":[]`, ``, 1), `the required field "memberships" is missing`},
		{"wrong type", 200, js, strings.Replace(body, `"username":"admin"`, `"username":7`, 1), "where the document says a string"},
		{"undocumented status", http.StatusTeapot, js, body, "answered 418, which it does not list"},
		{"undocumented media type", 200, "text/csv", "a,b\n", `answered Content-Type "text/csv"`},
		{"error of another shape", http.StatusUnauthorized, js, `{"message":"no"}`, `the required field "error" is missing`},
	} {
		p := e.checkAnswer(req, answer(c.status, c.ctype, c.body))
		if !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.name, p, c.want)
		}
	}
}
