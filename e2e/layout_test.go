package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"cardhour/web"
)

// layoutPages are the pages people open on a phone, with a selector each
// must show.
var layoutPages = []struct{ name, path, has string }{
	{"home", "/", "main"},
	{"bookings", "/booking", "main"},
	{"booking-form", "/booking/new", "form"},
	{"booking", "/bookings/1", "main"},
	{"tasks", "/tasks", "main"},
	{"task", "/tasks/1", "main"},
	{"quotas", "/quotas", "main"},
	{"ledger", "/ledger", "main"},
	{"report", "/reports/monthly", "main"},
	{"audit", "/admin/audit?size=20", `[data-testid="audit-row"]`},
	{"audit-auth", "/admin/audit?view=auth", `[data-testid="audit-row"]`},
	{"admin-cardtypes", "/admin/card-types", "table"},
	{"admin-hosts", "/admin/hosts", "table"},
	{"admin-cards", "/admin/cards", "table"},
	{"admin-images", "/admin/images", "table"},
	{"admin-teams", "/admin/teams", "table"},
	{"admin-users", "/admin/users", "table"},
	{"admin-directory", "/admin/directory", `[data-testid="rule-form"]`},
}

// fitJS measures the page as a phone shows it: how much wider the document
// is than the screen, the header items (brand, menu button, language,
// bell, account, log out) that lie outside the header bar or the screen,
// and the table cells squeezed narrower than a few characters (a name
// broken to one character a line).
const fitJS = `(() => {
	const vw = window.innerWidth;
	const out = {wide: document.documentElement.scrollWidth - vw, outside: [], squeezed: []};
	const bar = document.querySelector('header.topbar');
	const hb = bar.getBoundingClientRect();
	const shown = el => { const r = el.getBoundingClientRect(); return el.checkVisibility({contentVisibilityAuto: true, visibilityProperty: true}) && r.width > 0 && r.height > 0; };
	for (const el of bar.querySelectorAll('a, button, summary, .brand')) {
		if (!shown(el)) continue;
		const r = el.getBoundingClientRect();
		if (r.left < hb.left - 0.5 || r.right > hb.right + 0.5 || r.top < hb.top - 0.5 || r.bottom > hb.bottom + 0.5 || r.right > vw + 0.5 || r.left < -0.5) {
			out.outside.push((el.dataset.testid || el.className || el.tagName) + ' ' + Math.round(r.left) + '..' + Math.round(r.right) + ' x ' + Math.round(r.top) + '..' + Math.round(r.bottom) + ' in bar ' + Math.round(hb.left) + '..' + Math.round(hb.right) + ' x ' + Math.round(hb.top) + '..' + Math.round(hb.bottom));
		}
	}
	// A cell is squeezed when its text averages under 2.5 characters a
	// line: the lines are the distinct tops of its text's line boxes.
	for (const td of document.querySelectorAll('main td, main th')) {
		if (!shown(td)) continue;
		let chars = 0;
		const tops = new Set();
		const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			const s = n.nodeValue.replace(/\s+/g, '');
			if (!s) continue;
			chars += [...s].length;
			const range = document.createRange();
			range.selectNodeContents(n);
			for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
		}
		if (chars >= 4 && tops.size > 1 && chars / tops.size < 2.5) {
			out.squeezed.push(td.innerText.trim().replace(/\s+/g, ' ').slice(0, 24) + ' (' + chars + ' characters on ' + tops.size + ' lines, ' + td.clientWidth + ' px)');
		}
	}
	return JSON.stringify(out);
})()`

type pageFit struct {
	Wide     int      `json:"wide"`
	Outside  []string `json:"outside"`
	Squeezed []string `json:"squeezed"`
}

func (b *browser) fit() pageFit {
	b.t.Helper()
	var f pageFit
	if err := json.Unmarshal([]byte(b.evalString(fitJS)), &f); err != nil {
		b.t.Fatal(err)
	}
	return f
}

// TestMainPagesFitAPhone opens the main pages as an admin at a phone's
// 390 px, a laptop's 1366 px and a wall's 1920 px, in zh-CN and en: at no
// width is the document wider than the screen; at 390 px every header item
// lies inside the header bar, the sections sit behind a menu button that
// opens them (by pointer and by keyboard) within the screen, and no table
// cell is squeezed to a sliver (tables stack into cards or scroll in their
// own box). With -short, only 390 px. Screenshots:
// e2e/artifacts/layout-*.png.
func TestMainPagesFitAPhone(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "layout", nil)
	removeShots(t, "layout")
	b := newBrowserWithin(t, "layout", 20*time.Minute)
	b.login(p.URL, "admin", adminPassword)

	widths := []int64{390, 1366, 1920}
	if testing.Short() {
		widths = widths[:1]
	}
	for _, width := range widths {
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		for _, lang := range []string{web.LangZH, web.LangEN} {
			for _, pg := range layoutPages {
				sep := "?"
				if strings.Contains(pg.path, "?") {
					sep = "&"
				}
				b.do("open "+pg.path, chromedp.Navigate(p.URL+pg.path+sep+"lang="+lang), chromedp.WaitVisible(chromedp.CSS(pg.has)))
				where := fmt.Sprintf("%s at %d px in %s", pg.path, width, lang)
				f := b.fit()
				if f.Wide > 0 {
					t.Errorf("%s: the page is %d px wider than the screen", where, f.Wide)
				}
				if width == 390 {
					for _, o := range f.Outside {
						t.Errorf("%s: a header item lies outside the header bar: %s", where, o)
					}
					for _, s := range f.Squeezed {
						t.Errorf("%s: a table cell is squeezed: %s", where, s)
					}
				}
				b.screenshot(fmt.Sprintf("%s-%d.%s", pg.name, width, lang))
			}
		}
		if width == 390 {
			checkMenu(t, b, p.URL)
		}
	}
	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

// checkMenu: at 390 px the sections are hidden behind the menu button;
// opened by a tap or from the keyboard, every section is on the screen and
// can be followed.
func checkMenu(t *testing.T, b *browser, base string) {
	t.Helper()
	wait := func(what string, steps ...chromedp.Action[chromedp.Void]) bool {
		t.Helper()
		// A bound of its own: a missing menu fails here, not at the walk's end.
		ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Errorf("%s: %v", what, err)
			return false
		}
		return true
	}
	for _, lang := range []string{web.LangZH, web.LangEN} {
		if !wait(lang+": the menu button", chromedp.Navigate(base+"/?lang="+lang), chromedp.WaitVisible(chromedp.CSS(`[data-testid="menu-toggle"]`))) {
			continue
		}
		if n := b.count(`.mainnav a`); n < 5 {
			t.Errorf("%s: the menu holds %d sections", lang, n)
		}
		if vis := b.evalString(`String(document.querySelector('[data-testid="nav-ledger"]').checkVisibility({contentVisibilityAuto: true}))`); vis != "false" {
			t.Errorf("%s: at 390 px the sections show before the menu is opened", lang)
		}
		b.screenshot("menu-closed-390." + lang)
		if wait(lang+": tap the menu open", chromedp.Click(chromedp.CSS(`[data-testid="menu-toggle"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-ledger"]`))) {
			checkMenuOnScreen(t, b, lang+" (tapped)")
			b.screenshot("menu-open-390." + lang)
		}
		b.do("tap the menu closed", chromedp.Click(chromedp.CSS(`[data-testid="menu-toggle"]`)))
		waitHidden(t, b, lang+": tapped closed")
		if wait(lang+": open it from the keyboard", chromedp.Focus(chromedp.CSS(`[data-testid="menu-toggle"]`)), chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-ledger"]`))) {
			checkMenuOnScreen(t, b, lang+" (keyboard)")
			b.do("press Escape", chromedp.KeyEvent(kb.Escape))
			waitHidden(t, b, lang+": Escape")
			if f := b.evalString(`document.activeElement.dataset.testid || ""`); f != "menu-toggle" {
				t.Errorf("%s: after Escape the focus is on %q, want the menu button", lang, f)
			}
		}
		if wait(lang+": open it again", chromedp.Click(chromedp.CSS(`[data-testid="menu-toggle"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-ledger"]`))) {
			wait(lang+": follow a section", chromedp.Click(chromedp.CSS(`[data-testid="nav-ledger"]`)),
				chromedp.WaitReady(chromedp.CSS(`[data-testid="nav-ledger"][aria-current="page"]`)))
		}
	}
}

// waitHidden waits for the closed menu to hide its sections. (chromedp's
// WaitNotVisible looks for a box, which content-visibility keeps.)
func waitHidden(t *testing.T, b *browser, where string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b.evalString(`String(document.querySelector('[data-testid="nav-ledger"]').checkVisibility({contentVisibilityAuto: true}))`) == "false" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: the menu's sections still show", where)
			return
		}
	}
}

func checkMenuOnScreen(t *testing.T, b *browser, where string) {
	t.Helper()
	off := b.evalString(`[...document.querySelectorAll('.mainnav a')].filter(a => { const r = a.getBoundingClientRect();
		return !a.checkVisibility({contentVisibilityAuto: true}) || r.left < 0 || r.right > window.innerWidth + 0.5 || r.width === 0; }).map(a => a.dataset.testid).join(' ')`)
	if off != "" {
		t.Errorf("%s: opened, the menu leaves sections off the screen: %s", where, off)
	}
	if wide := b.evalString(`String(document.documentElement.scrollWidth - window.innerWidth)`); wide != "0" && !strings.HasPrefix(wide, "-") {
		t.Errorf("%s: the open menu makes the page %s px wider than the screen", where, wide)
	}
}
