package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cardhour/store"
)

// A member, in the browser, on the demo fleet: sizes a model with the
// estimator, writes a task baseline from it, books 2 cards now and 4 cards
// next Tuesday — seeing the cost before confirming each — then releases the
// first early and sees the card-hours it gave back.
func TestMemberBooksAndReleasesInTheBrowser(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "booking", nil)
	removeShots(t, "booking")
	b := newBrowser(t, "booking")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }
	// Destructive forms ask window.confirm; a person clicks OK.
	acceptConfirms := chromedp.Evaluate[bool](`window.confirm = () => true; true`)
	eval := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err != nil {
			b.fail(what, err)
		}
	}

	b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-form")))
	b.fill([][2]string{{"username", "lihua"}, {"password", store.DemoPassword}})
	b.do("log in as the member lihua", chromedp.Click(testid("login-submit")), chromedp.WaitVisible(testid("nav-booking")))

	// 1. The estimator: full fine-tune of a 7B model in bf16.
	b.do("open the estimator", chromedp.Navigate(p.URL+"/estimator"), chromedp.WaitVisible(testid("estimator-form")))
	b.fill([][2]string{{"params_b", "7"}, {"batch", "1"}, {"context", "2048"}})
	eval("choose bf16 full fine-tune", `document.querySelector('#f-precision').value='bf16';
		document.querySelector('#f-workload').value='full'; true`)
	b.do("estimate", chromedp.Click(testid("estimator-submit")), chromedp.WaitVisible(testid("estimator-result")))
	total, err := strconv.ParseFloat(b.attr(`[data-testid="estimator-total"]`, "data-gib"), 64)
	if err != nil || total < 100 || total > 140 {
		t.Errorf("7B full fine-tune estimated at %v GiB (%v), want about 120", total, err)
	}
	b.screenshot("estimator")

	// 2. A task baseline, pre-filled from the estimate.
	b.do("use the estimate for a new task", chromedp.Click(testid("estimator-use")), chromedp.WaitVisible(testid("task-form")))
	if v := b.value("#f-vram_gib"); v == "" {
		t.Errorf("the task form was not pre-filled with the VRAM need")
	}
	b.fill([][2]string{{"name", "e2e 续训 第4轮"}, {"estimate_card_hours", "100"}})
	eval("choose team, priority, readiness and H800", `
		const team = [...document.querySelectorAll('#f-team_id option')].find(o => o.textContent.includes('大模型组'));
		if (team) document.querySelector('#f-team_id').value = team.value;
		document.querySelector('#f-priority').value = 'normal';
		document.querySelector('#f-data_readiness').value = 'ready';
		const h800 = [...document.querySelectorAll('[data-testid="task-card-types"] label')].find(l => l.textContent.includes('H800'));
		if (h800) h800.querySelector('input').checked = true;
		true`)
	b.screenshot("task-form")
	b.do("save the task", chromedp.Click(testid("task-submit")), chromedp.WaitVisible(testid("task-baseline")))
	taskID := regexp.MustCompile(`/tasks/(\d+)`).FindStringSubmatch(b.location())
	if taskID == nil {
		b.fail("find the new task", fmt.Errorf("not on a task page: %s", b.location()))
	}
	b.screenshot("task")

	// 3. Two cards now: the preview shows the cost before anything is booked.
	b.do("book for this task", chromedp.Click(testid("task-book")), chromedp.WaitVisible(testid("booking-form")))
	chooseH800 := `const row = [...document.querySelectorAll('[data-testid="fit-row"]')].find(r => r.textContent.includes('H800'));
		row.querySelector('input[type=radio]').checked = true; true`
	eval("choose H800", chooseH800)
	b.fill([][2]string{{"count", "2"}, {"duration_hours", "2"}})
	b.do("book now", chromedp.Click(testid("mode-now")))
	b.preview()
	// 2 cards × 2 h × ¥22 = ¥88.00
	if fen := b.attr(`[data-testid="preview-cost"]`, "data-fen"); fen != "8800" {
		t.Errorf("preview cost %s fen (%q), want 8800 = 2 cards × 2 h × ¥22", fen, b.text(`[data-testid="preview-cost"]`))
	}
	b.screenshot("preview-now")
	b.do("confirm", chromedp.Click(testid("booking-confirm")), chromedp.WaitVisible(testid("booking-detail")))
	nowURL := b.location()
	if n := b.count(`[data-testid="booking-card"]`); n != 2 {
		t.Errorf("the booking holds %d cards, want 2", n)
	}
	if st := b.attr(`[data-testid="booking-state"]`, "data-state"); st != "active" {
		t.Errorf("booking now is %q, want active", st)
	}
	b.screenshot("booked-now")

	// 4. Four cards next Tuesday, 10:00–14:00 in the portal's zone.
	loc, _ := time.LoadLocation("Asia/Shanghai")
	now := time.Now().In(loc)
	days := (int(time.Tuesday) - int(now.Weekday()) + 7) % 7
	if days == 0 {
		days = 7
	}
	tue := time.Date(now.Year(), now.Month(), now.Day()+days, 10, 0, 0, 0, loc)
	b.do("new booking for the task", chromedp.Navigate(p.URL+"/booking/new?task="+taskID[1]), chromedp.WaitVisible(testid("booking-form")))
	eval("choose H800", chooseH800)
	b.fill([][2]string{{"count", "4"}})
	b.do("choose a window", chromedp.Click(testid("mode-window")))
	eval("set next Tuesday", fmt.Sprintf(`document.querySelector('#f-start').value = %q;
		document.querySelector('#f-end').value = %q; true`, tue.Format("2006-01-02T15:04"), tue.Add(4*time.Hour).Format("2006-01-02T15:04")))
	b.preview()
	if fen := b.attr(`[data-testid="preview-cost"]`, "data-fen"); fen != "35200" {
		t.Errorf("preview cost %s fen, want 35200 = 4 cards × 4 h × ¥22", fen)
	}
	b.screenshot("preview-tuesday")
	b.do("confirm", chromedp.Click(testid("booking-confirm")), chromedp.WaitVisible(testid("booking-detail")))
	if n := b.count(`[data-testid="booking-card"]`); n != 4 {
		t.Errorf("Tuesday's booking holds %d cards, want 4", n)
	}
	if st := b.attr(`[data-testid="booking-state"]`, "data-state"); st != "confirmed" {
		t.Errorf("Tuesday's booking is %q, want confirmed", st)
	}
	b.screenshot("booked-tuesday")

	// 5. Release the first early: the hours not used come back.
	b.do("open the first booking", chromedp.Navigate(nowURL), chromedp.WaitVisible(testid("booking-release")))
	if _, err := chromedp.Run(b.ctx, acceptConfirms); err != nil {
		b.fail("accept confirmations", err)
	}
	b.do("release early", chromedp.Click(testid("booking-release")), chromedp.WaitVisible(testid("booking-returned")))
	returned := b.text(`[data-testid="booking-returned"]`)
	m := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`).FindString(returned)
	hours, _ := strconv.ParseFloat(m, 64)
	if hours < 3.5 || hours > 4.0 {
		t.Errorf("returned %q, want close to 4 card-hours (2 cards × the 2 h not used)", returned)
	}
	if !strings.Contains(b.text(`[data-testid="flash"]`), m) {
		t.Errorf("the flash %q does not say the returned hours %s", b.text(`[data-testid="flash"]`), m)
	}
	if st := b.attr(`[data-testid="booking-state"]`, "data-state"); st != "released" {
		t.Errorf("after release the booking is %q", st)
	}
	b.screenshot("released")

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(document.querySelector(%q) || {getAttribute: () => ""}).getAttribute(%q) || ""`, sel, name)))
	if err != nil {
		b.fail("read "+sel+"@"+name, err)
	}
	return v
}

func (b *browser) value(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).value || ""`, sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return v
}

func (b *browser) location() string {
	b.t.Helper()
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.fail("read the location", err)
	}
	return u
}

// preview submits the booking form and waits for the preview, or fails
// with the form's message when the portal refused the request.
func (b *browser) preview() {
	b.t.Helper()
	b.do("preview", chromedp.Click(chromedp.CSS(`[data-testid="booking-preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preview-cost"], [data-testid="form-error"]`)))
	if b.count(`[data-testid="preview-cost"]`) == 0 {
		b.fail("preview", fmt.Errorf("refused: %s", b.text(`[data-testid="form-error"]`)))
	}
}
