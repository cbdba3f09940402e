package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"cardhour/web"
)

// TestListsAtTwoWidthsInBothLanguages: the booking, task and card lists
// of the demo fleet, searched and filtered, at a phone's 390 px and a
// laptop's 1366 px in zh-CN and en: each shows its filter form and its
// pager ("1–20 of N") within the screen; a search typed into the box
// comes back in the URL and the pager's links. Screenshots:
// e2e/artifacts/lists-*.png.
func TestListsAtTwoWidthsInBothLanguages(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "lists", nil)
	removeShots(t, "lists")
	b := newBrowser(t, "lists")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }
	b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-form")))
	b.fill([][2]string{{"username", "admin"}, {"password", adminPassword}})
	b.do("log in", chromedp.Click(testid("login-submit")), chromedp.WaitVisible(testid("nav-admin")))

	// A search typed into the task list's box.
	b.do("open /tasks", chromedp.Navigate(p.URL+"/tasks?limit=20"), chromedp.WaitVisible(testid("task-filter")))
	before := b.count(`[data-testid="task-row"]`)
	first := b.text(`[data-testid="task-row"] [data-testid="task-link"]`)
	b.do("search a task", chromedp.SendKeys(chromedp.CSS("#filter-q"), first), chromedp.Click(testid("task-filter-submit")),
		chromedp.WaitVisible(testid("task-filter")))
	if loc := b.location(); !strings.Contains(loc, "q=") || !strings.Contains(loc, "limit=20") {
		t.Errorf("after the search the URL is %s, want q= and the page size kept", loc)
	}
	if n := b.count(`[data-testid="task-row"]`); n == 0 || n > before {
		t.Errorf("searching %q shows %d of %d tasks", first, n, before)
	}

	pages := []struct{ name, path, rows string }{
		{"bookings", "/booking?state=all&limit=20", `[data-testid="team-bookings"] [data-testid="booking-row"]`},
		{"tasks", "/tasks?limit=20", `[data-testid="task-row"]`},
		{"cards", "/admin/cards?limit=20", `[data-testid="card-row"]`},
	}
	for _, width := range []int64{390, 1366} {
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		for _, lang := range []string{web.LangZH, web.LangEN} {
			for _, pg := range pages {
				b.do("open "+pg.path, chromedp.Navigate(p.URL+pg.path+"&lang="+lang), chromedp.WaitVisible(chromedp.CSS(".pager")))
				if got := b.htmlLang(); got != lang {
					t.Errorf("%s: <html lang=%q>, want %q", pg.path, got, lang)
				}
				if n := b.count(pg.rows); n == 0 || n > 20 {
					t.Errorf("%s at %d px: %d rows, want 1 to 20", pg.path, width, n)
				}
				total := b.attr(`[data-testid="pager-count"]`, "data-total")
				if want := web.T(lang, "pager.showing", 1, min(20, atoi(total)), atoi(total)); atoi(total) > 0 && b.text(`[data-testid="pager-count"]`) != want {
					t.Errorf("%s in %s: pager says %q, want %q", pg.path, lang, b.text(`[data-testid="pager-count"]`), want)
				}
				for _, sel := range []string{".list-filters", ".pager"} {
					over := b.evalString(fmt.Sprintf(`(function(){var r=document.querySelector(%q).getBoundingClientRect();return String(Math.round(r.right-window.innerWidth))})()`, sel))
					if atoi(over) > 0 {
						t.Errorf("%s at %d px in %s: %s ends %s px past the screen", pg.path, width, lang, sel, over)
					}
				}
				b.screenshot(fmt.Sprintf("%s-%d.%s", pg.name, width, lang))
			}
		}
	}
	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
