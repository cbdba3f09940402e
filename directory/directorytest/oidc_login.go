package directorytest

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// LogIn plays the person at the provider: it opens the authorization URL
// the portal sent the browser to, fills in and posts the provider's login
// form, and follows the provider's redirects until the one back to the
// portal (a URL starting with back), which it returns unvisited.
func (o OIDC) LogIn(tb testing.TB, authURL, username, password, back string) *url.URL {
	tb.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), back) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := c.Get(authURL)
	if err != nil {
		tb.Fatalf("GET the authorization URL: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("the provider's login page: %d %v", resp.StatusCode, err)
	}
	form := doc.Find("form").First()
	if form.Find("input#username").Length() != 1 || form.Find("input#password").Length() != 1 {
		tb.Fatalf("the provider's login page has no username/password form")
	}
	values := url.Values{}
	form.Find("input").Each(func(_ int, in *goquery.Selection) {
		values.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	values.Set("username", username)
	values.Set("password", password)
	action, err := resp.Request.URL.Parse(form.AttrOr("action", ""))
	if err != nil {
		tb.Fatal(err)
	}
	resp, err = c.PostForm(action.String(), values)
	if err != nil {
		tb.Fatalf("POST the provider's login form: %v", err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil || !strings.HasPrefix(loc.String(), back) {
		tb.Fatalf("after the provider's login: %d, not sent back to %s (%v)", resp.StatusCode, back, err)
	}
	return loc
}
