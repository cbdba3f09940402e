package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cardhour/store"
)

// A member, in the browser, on the demo fleet: books a card now, releases
// it early, and records what the round produced on its ledger page. Their
// team's manager then finds the output in this month's report — in
// Chinese and in English — and in the report's CSV export.
func TestOutputRecordedInTheBrowserReachesTheMonthlyReportAndCSV(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "ledger", nil)
	removeShots(t, "ledger")
	b := newBrowser(t, "ledger")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }
	eval := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err != nil {
			b.fail(what, err)
		}
	}
	login := func(user string) {
		t.Helper()
		b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-form")))
		b.fill([][2]string{{"username", user}, {"password", store.DemoPassword}})
		b.do("log in as "+user, chromedp.Click(testid("login-submit")), chromedp.WaitVisible(testid("nav-ledger")))
	}
	note := fmt.Sprintf("e2e 第%d轮 loss 1.92", time.Now().Unix()%100000)

	// 1. A round: one card now, released at once.
	login("lihua")
	b.do("open the booking form", chromedp.Navigate(p.URL+"/booking/new"), chromedp.WaitVisible(testid("booking-form")))
	sft, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`([...document.querySelectorAll('#filter-task option')].find(o => o.textContent.includes('SFT')) || {}).value || ""`))
	if err != nil || sft == "" {
		b.fail("find the SFT task", fmt.Errorf("no SFT task among the choices (%v)", err))
	}
	b.do("open the form for the SFT task", chromedp.Navigate(p.URL+"/booking/new?task="+sft), chromedp.WaitVisible(testid("booking-form")))
	eval("choose H800", `const row = [...document.querySelectorAll('[data-testid="fit-row"]')].find(r => r.textContent.includes('H800'));
		row.querySelector('input[type=radio]').checked = true; true`)
	b.fill([][2]string{{"count", "1"}, {"duration_hours", "1"}})
	b.do("book now", chromedp.Click(testid("mode-now")))
	b.preview()
	b.do("confirm", chromedp.Click(testid("booking-confirm")), chromedp.WaitVisible(testid("booking-detail")))
	id := regexp.MustCompile(`/bookings/(\d+)`).FindStringSubmatch(b.location())
	if id == nil {
		b.fail("find the booking", fmt.Errorf("not on a booking page: %s", b.location()))
	}
	// A round of whole card-seconds, so it has a cost.
	time.Sleep(1500 * time.Millisecond)
	eval("accept confirmations", `window.confirm = () => true; true`)
	b.do("release early", chromedp.Click(testid("booking-release")), chromedp.WaitVisible(testid("booking-returned")))

	// 2. The output, on the round's ledger page.
	b.do("open the ledger", chromedp.Navigate(p.URL+"/ledger"), chromedp.WaitVisible(testid("ledger-rounds")))
	row := fmt.Sprintf(`[data-testid="ledger-row"][data-id="%s"]`, id[1])
	if b.count(row) != 1 {
		b.fail("find the round in the ledger", fmt.Errorf("booking %s is not listed", id[1]))
	}
	b.screenshot("ledger")
	b.do("open the round", chromedp.Click(chromedp.CSS(row+` [data-testid="ledger-record-link"]`)), chromedp.WaitVisible(testid("output-form")))
	b.fill([][2]string{{"quantity", "three"}, {"unit", "epochs"}})
	b.do("submit a bad quantity", chromedp.Click(testid("output-submit")), chromedp.WaitVisible(testid("error-quantity")))
	b.fill([][2]string{{"quantity", "3"}, {"unit", "epochs"}, {"note", note}})
	b.do("record the output", chromedp.Click(testid("output-submit")), chromedp.WaitVisible(testid("output-entry")))
	if got := b.text(`[data-testid="output-note"]`); got != note {
		t.Errorf("history shows note %q, want %q", got, note)
	}
	b.screenshot("round")

	// 3. The manager's monthly report, zh-CN then en.
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))
	login("wangfang")
	b.do("open the monthly report", chromedp.Navigate(p.URL+"/reports/monthly"), chromedp.WaitVisible(testid("report-entries")))
	if b.htmlLang() != "zh-CN" {
		t.Errorf("report page lang %q", b.htmlLang())
	}
	entry := `[data-testid="report-entry"] [data-testid="entry-note"]`
	if !strings.Contains(b.text(`[data-testid="report-entries"]`), note) || b.count(entry) == 0 {
		t.Errorf("the report does not list the output %q:\n%s", note, b.text(`[data-testid="report-entries"]`))
	}
	if !strings.Contains(b.text(`[data-testid="report-meta"]`), "Asia/Shanghai") {
		t.Errorf("the report does not name its zone: %q", b.text(`[data-testid="report-meta"]`))
	}
	if !strings.Contains(b.text(`[data-testid="report-tasks"]`), "3 epochs") {
		t.Errorf("the task table does not show 3 epochs:\n%s", b.text(`[data-testid="report-tasks"]`))
	}
	b.screenshot("monthly-zh")
	b.do("switch to English", chromedp.Click(testid("lang-switch")), chromedp.WaitVisible(testid("report-entries")))
	if b.htmlLang() != "en" || !strings.Contains(b.text("h1"), "Monthly report") {
		t.Errorf("English report: lang %q, title %q", b.htmlLang(), b.text("h1"))
	}
	b.screenshot("monthly-en")

	// 4. The CSV export, as the browser downloads it.
	href := b.attr(`[data-testid="export-csv"]`, "href")
	csv, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`fetch(%q).then(r => r.ok ? r.text() : "HTTP " + r.status)`, href), chromedp.EvalAwaitPromise))
	if err != nil {
		b.fail("fetch the CSV", err)
	}
	var line string
	for _, l := range strings.Split(csv, "\n") {
		if strings.Contains(l, note) {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, ",3,epochs,") {
		t.Errorf("the CSV (%s) has no entry line with 3 epochs and %q:\n%.1500s", href, note, csv)
	}

	b.do("open the yearly baseline", chromedp.Navigate(p.URL+"/reports/yearly"), chromedp.WaitVisible(testid("report-baseline")))
	b.screenshot("yearly-en")

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}
