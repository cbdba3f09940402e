package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"cardhour/web"
)

// TestTokensCopyToTheClipboard: a token shown once — an API token on the
// account page, a board token on the telemetry page — has a copy button
// (shown by app.js: the page's CSP allows no inline script); a click puts
// the token on the clipboard, read back here, and the page says it did, in
// the page's language. The text stays selectable for a browser without
// the script. Screenshots: e2e/artifacts/tokens-*.png.
func TestTokensCopyToTheClipboard(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "tokens", nil)
	removeShots(t, "tokens")
	b := newBrowser(t, "tokens")
	// Headless Chromium grants clipboard reads only when told to, and
	// only to a focused page.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true}, Setting: cdpbrowser.PermissionSettingGranted, Origin: p.URL}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("focus emulation: %v", err)
	}
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }
	b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-form")))
	b.fill([][2]string{{"username", "admin"}, {"password", adminPassword}})
	b.do("log in", chromedp.Click(testid("login-submit")), chromedp.WaitVisible(testid("nav-admin")))

	copyAndCheck := func(id, lang, shot string) {
		t.Helper()
		secret := b.text(`[data-testid="` + id + `"]`)
		if len(secret) < 20 {
			t.Fatalf("%s shows %q, not a token", id, secret)
		}
		if sel := b.evalString(`getComputedStyle(document.querySelector('[data-testid="` + id + `"]')).userSelect`); sel != "all" {
			t.Errorf("%s: user-select %q, want all (selectable without the script)", id, sel)
		}
		// Without the script the button would not copy: it is drawn
		// hidden, and stays so under the stylesheet.
		hidden := `(function(){var b=document.createElement("button");b.className="btn btn-small";b.hidden=true;` +
			`var box=document.querySelector(".secret-copy");box.appendChild(b);var d=getComputedStyle(b).display;b.remove();return d})()`
		if d := b.evalString(hidden); d != "none" {
			t.Errorf("%s: a copy button drawn hidden shows as %q, want none", id, d)
		}
		// Visible means app.js ran.
		b.do("click copy", chromedp.WaitVisible(testid(id+"-copy")), chromedp.Click(testid(id+"-copy")))
		waitEval(t, b, id+" copied", `document.querySelector('[data-testid="`+id+`-copy"]').getAttribute('data-copy-state') !== null`)
		if state := b.attr(`[data-testid="`+id+`-copy"]`, "data-copy-state"); state != "copied" {
			t.Errorf("%s: the copy %s", id, state)
		}
		if got, want := b.text(`[data-testid="`+id+`-copied"]`), web.T(lang, "copy.done"); got != want {
			t.Errorf("%s: the page says %q, want %q", id, got, want)
		}
		clip, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.fail("read the clipboard", err)
		}
		if clip != secret {
			t.Errorf("%s: the clipboard holds %q, want the token %q", id, clip, secret)
		}
		b.screenshot(shot)
	}

	// An API token on the account page, in Chinese.
	b.do("open /account", chromedp.Navigate(p.URL+"/account"), chromedp.WaitVisible(testid("token-form")))
	b.fill([][2]string{{"name", "e2e 复制"}})
	b.do("create a token", chromedp.Click(chromedp.CSS(`[data-testid="token-form"] button[type="submit"]`)), chromedp.WaitVisible(testid("new-token")))
	copyAndCheck("new-token", web.LangZH, "account.zh-CN")

	// A board token on the telemetry page, in English.
	b.do("open /admin/telemetry", chromedp.Navigate(p.URL+"/admin/telemetry"), chromedp.WaitVisible(testid("telemetry-token-form")))
	b.do("switch to English", chromedp.Click(testid("lang-switch")), chromedp.WaitReady(chromedp.CSS(`html[lang="en"]`)),
		chromedp.WaitVisible(testid("telemetry-token-form")))
	b.do("issue a board token", chromedp.SetValue(chromedp.CSS(`[data-testid="telemetry-token-form"] select[name="kind"]`), "board"),
		chromedp.Click(testid("telemetry-token-submit")), chromedp.WaitVisible(testid("new-token-secret")))
	copyAndCheck("new-token-secret", web.LangEN, "telemetry.en")

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

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
	b.do("search a task", chromedp.SendKeys(chromedp.CSS("#filter-q"), first), chromedp.Click(testid("task-filter-submit")))
	// The old page's form is visible until the new one has loaded: wait for
	// the search to reach the URL, not for the form.
	waitEval(t, b, "the search in the URL", `location.search.includes('q=')`)
	b.do("the searched list", chromedp.WaitVisible(testid("task-filter")))
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
