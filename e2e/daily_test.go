package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"cardhour/store"
	"cardhour/web"
)

// The pages a daily user lands on, on the demo fleet, at a phone's 390 px
// and a laptop's 1366 px in zh-CN and en: the member's home (running and
// upcoming bookings with the time left and their one action, the team's
// quotas), the manager's home (approvals waiting, today's idle card-hours)
// and the booking form warning that one H800 does not hold the 123 GiB
// task — shown as the member types the count. Each page shows its
// content, no message key or formatting slip, and its main column is no
// wider than the screen. Then the member releases the running booking
// from the home page in one click and lands back on it. A calendar feed
// issued where the portal has no public URL gives its path and the hint.
// Screenshots:
// e2e/artifacts/daily-*.png.
func TestDailyPagesAtPhoneAndLaptopWidths(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "daily", nil)
	removeShots(t, "daily")
	b := newBrowser(t, "daily")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

	check := func(name, lang string, width int64) {
		t.Helper()
		if got := b.htmlLang(); got != lang {
			t.Errorf("%s in %s: <html lang=%q>", name, lang, got)
		}
		txt := b.evalString(`['.mainnav', '.userbar', 'main'].map(s => (document.querySelector(s) || {innerText: ""}).innerText).join("\n")`)
		if k := rawKey.FindString(txt); k != "" || strings.Contains(txt, "home.") {
			t.Errorf("%s in %s shows a message key: %q", name, lang, k)
		}
		if strings.Contains(txt, "%!") {
			t.Errorf("%s in %s shows a formatting slip", name, lang)
		}
		wide, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`(() => { const m = document.querySelector('main'); return m.scrollWidth - m.clientWidth; })()`))
		if err != nil {
			b.fail("measure "+name, err)
		}
		if wide > 0 {
			t.Errorf("%s at %d px in %s: the page's content is %d px wider than its column", name, width, lang, wide)
		}
		b.screenshot(fmt.Sprintf("%s-%d.%s", name, width, lang))
	}
	widths := []int64{390, 1366}
	langs := []string{web.LangZH, web.LangEN}
	each := func(fn func(width int64, lang string)) {
		for _, w := range widths {
			if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(w, 900)); err != nil {
				t.Fatal(err)
			}
			for _, l := range langs {
				fn(w, l)
			}
		}
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
			t.Fatal(err)
		}
	}

	// The member's home.
	b.login(p.URL, "lihua", store.DemoPassword)
	if n := b.count(`[data-testid="nav-reports"]`); n != 0 {
		t.Errorf("the member lihua is offered the managers' reports in the menu")
	}
	each(func(width int64, lang string) {
		b.do("open the home page", chromedp.Navigate(p.URL+"/?lang="+lang), chromedp.WaitVisible(testid("home-mine")))
		if n := b.count(`[data-testid="home-release"]`); n != 1 {
			t.Errorf("the member's home at %d px in %s offers %d releases, want the running booking's", width, lang, n)
		}
		if n := b.count(`[data-testid="home-cancel"]`); n < 1 {
			t.Errorf("the member's home at %d px in %s offers no cancel for the booking ahead", width, lang)
		}
		if n := b.count(`[data-testid="home-quota"]`); n == 0 {
			t.Errorf("the member's home at %d px in %s shows no quota", width, lang)
		}
		check("home-member", lang, width)
	})

	// The booking form: one H800 for the 123 GiB task is warned about as
	// the count is typed, and the warning goes at two.
	b.do("open the booking form", chromedp.Navigate(p.URL+"/booking/new"), chromedp.WaitVisible(testid("task-chooser")))
	task := b.evalString(`[...document.querySelectorAll('[data-testid="task-chooser"] option')].find(o => o.textContent.includes('7B 续训 第3轮')).value`)
	each(func(width int64, lang string) {
		b.do("open the form for the 123 GiB task", chromedp.Navigate(p.URL+"/booking/new?task="+task+"&lang="+lang), chromedp.WaitVisible(testid("booking-form")))
		if got := b.evalString(`(document.querySelector('[data-testid="card-type-radio"]:checked').closest('tr').textContent || "")`); !strings.Contains(got, "H800") {
			t.Errorf("the form starts on %q, want the task's preferred H800", got)
		}
		if n := b.count(`[data-testid="vram-warning"]:not([hidden])`); n != 0 {
			t.Errorf("the form warns before the count is changed")
		}
		b.fill([][2]string{{"count", "1"}})
		b.do("the warning shows", chromedp.WaitVisible(chromedp.CSS(`[data-testid="vram-warning"]:not([hidden])`)))
		warn := b.text(`[data-testid="vram-warning"]:not([hidden])`)
		if !strings.Contains(warn, "H800") || !strings.Contains(warn, "123.0") {
			t.Errorf("the warning reads %q", warn)
		}
		// Typing scrolled the page; the full-page shot is taken from the top,
		// or the sticky header would be drawn across its middle.
		b.evalString(`window.scrollTo(0, 0); ""`)
		check("booking-form-vram", lang, width)
		b.fill([][2]string{{"count", "2"}})
		if n := b.count(`[data-testid="vram-warning"]:not([hidden])`); n != 0 {
			t.Errorf("two H800 for 123 GiB are still warned about")
		}
	})
	// The preview of one card says it too.
	b.do("open the form", chromedp.Navigate(p.URL+"/booking/new?task="+task+"&lang=zh-CN"), chromedp.WaitVisible(testid("booking-form")))
	b.fill([][2]string{{"count", "1"}})
	b.preview()
	if n := b.count(`[data-testid="preview-vram-short"]`); n != 1 {
		t.Errorf("the preview of 1 × H800 for 123 GiB does not warn")
	}
	b.screenshot("preview-vram.zh-CN")

	// A calendar feed issued on a portal without CARDHOUR_BASE_URL: the
	// path, and what to put before it, instead of a webcal link to nowhere.
	each(func(width int64, lang string) {
		// The page the feed is issued on is a POST's answer: the language
		// comes from the switch (its cookie), as for a person.
		b.do("open the calendar page", chromedp.Navigate(p.URL+"/calendar"), chromedp.WaitVisible(testid("feed-mine")))
		if b.htmlLang() != lang {
			b.do("switch the language", chromedp.Click(testid("lang-switch")), chromedp.WaitVisible(chromedp.CSS(`html[lang="`+lang+`"] [data-testid="feed-mine"]`)))
		}
		b.do("issue my calendar feed", chromedp.Click(testid("feed-mine")), chromedp.WaitVisible(testid("feed-issued")))
		if url := b.text(`[data-testid="feed-url"]`); !strings.HasPrefix(url, "/ical/") {
			t.Errorf("the feed at %d px in %s reads %q, want its path", width, lang, url)
		}
		if n := b.count(`[data-testid="feed-needs-base"]`) - b.count(`[data-testid="feed-webcal"]`); n != 1 {
			t.Errorf("the feed at %d px in %s: no hint to add the portal's address, or a webcal link", width, lang)
		}
		check("calendar-feed", lang, width)
	})

	// The manager's home.
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))
	b.login(p.URL, "wangfang", store.DemoPassword)
	if n := b.count(`[data-testid="nav-reports"]`); n != 1 {
		t.Errorf("the manager wangfang is not offered the reports")
	}
	each(func(width int64, lang string) {
		b.do("open the home page", chromedp.Navigate(p.URL+"/?lang="+lang), chromedp.WaitVisible(testid("home-manager")))
		if href := b.attr(`[data-testid="home-approvals"]`, "href"); href != "/approvals" {
			t.Errorf("the approvals figure links %q", href)
		}
		check("home-manager", lang, width)
	})

	// One click on the member's home releases the running booking and comes back.
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))
	b.login(p.URL, "lihua", store.DemoPassword)
	b.do("open the home page", chromedp.Navigate(p.URL+"/?lang=zh-CN"), chromedp.WaitVisible(testid("home-release")))
	b.evalString(`window.confirm = () => true; ""`)
	b.do("release from the home page", chromedp.Click(testid("home-release")), chromedp.WaitVisible(testid("flash")))
	if loc := b.location(); loc != p.URL+"/" {
		t.Errorf("the release lands on %s, want the home page", loc)
	}
	if n := b.count(`[data-testid="home-release"]`); n != 0 {
		t.Errorf("after the release the home still offers %d releases", n)
	}
	b.screenshot("home-member-released.zh-CN")

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}
