package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"cardhour/notify/notifytest"
	"cardhour/web"
)

// The reminders issue's acceptance: a team whose bookings wait for its
// manager; a member books; the manager sees "待审批 1" in the header, opens
// the approvals inbox, tries to reject without a reason (refused beside the
// field, nothing decided), then rejects with one and the flash says so.
// The member, reading English, finds the bell lit and the rejection with
// its reason on /notifications, and mailpit holds exactly one mail to the
// member — English subject and body, the reason, and a link into the portal
// at its base URL. Screenshots: e2e/artifacts/reject-*.png.
func TestRejectedBookingReachesTheMemberInBellAndMail(t *testing.T) {
	requireBrowser(t)
	smtpAddr, mailpit := notifytest.Mailpit(t) // skips without mailpit
	np := startNotifyPortal(t, "reject", smtpAddr, nil)
	removeShots(t, "reject")
	f := setupApprovalTeam(t, np)
	bookingID := f.book(t, np, 2)

	const reason = "Please book the L40S pool for the ablation runs first"
	b := newBrowser(t, "reject")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }
	zh, en := web.LangZH, web.LangEN
	id := strconv.FormatInt(bookingID, 10)

	// The manager, in the default language.
	b.login(np.URL, f.manager, memberPassword)
	if got, want := b.text(`[data-testid="nav-approvals"]`), web.T(zh, "nav.approvals", 1); got != want {
		t.Errorf("the manager's header says %q, want %q", got, want)
	}
	b.screenshot("manager-home.zh-CN")
	b.do("open /approvals", chromedp.Click(testid("nav-approvals")), chromedp.WaitVisible(testid("approvals")))
	if n := b.count(`[data-testid="approval-row"]`); n != 1 {
		t.Fatalf("the inbox lists %d bookings, want 1", n)
	}
	if got := b.attr(`[data-testid="approval-row"]`, "data-id"); got != id {
		t.Errorf("the inbox lists booking %s, want %s", got, id)
	}
	b.screenshot("approvals.zh-CN")

	// No reason: the field says why, nothing is decided.
	b.do("open the reject form", chromedp.Click(testid("approval-reject-open")), chromedp.WaitVisible(testid("approval-reason")))
	b.do("reject without a reason", chromedp.Click(testid("approval-reject")),
		chromedp.WaitVisible(testid("error-reason_"+id)))
	if got, want := b.text(`[data-testid="error-reason_`+id+`"]`), web.T(zh, "approval.reason_required"); got != want {
		t.Errorf("the empty reason is answered %q, want %q", got, want)
	}
	if b.count(`[data-testid="approval-row"]`) != 1 || b.count(`[data-testid="nav-approvals"]`) != 1 {
		t.Errorf("a rejection without a reason decided something")
	}
	b.screenshot("reject-no-reason.zh-CN")

	// With one: decided, and the flash says so.
	// The textarea came back empty: chromedp.Clear (in fill) refuses one.
	b.do("type the reason", chromedp.SendKeys(chromedp.CSS("#f-reason_"+id), reason))
	b.do("reject with a reason", chromedp.Click(testid("approval-reject")), chromedp.WaitVisible(testid("flash")))
	if got, want := b.text(`[data-testid="flash"]`), web.T(zh, "approvals.flash_rejected", 1); got != want {
		t.Errorf("flash %q, want %q", got, want)
	}
	if b.count(`[data-testid="approval-row"]`) != 0 || b.count(`[data-testid="nav-approvals"]`) != 0 {
		t.Errorf("the rejected booking still waits in the inbox or the header")
	}
	b.screenshot("rejected.zh-CN")
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))

	// The member, in English.
	b.login(np.URL, f.member, memberPassword)
	b.do("switch to English", chromedp.Click(testid("lang-switch")), chromedp.WaitReady(chromedp.CSS(`html[lang="en"]`)),
		chromedp.WaitVisible(testid("nav-bell")))
	if b.count(`[data-testid="bell-count"]`) != 1 {
		t.Fatalf("the member's bell shows no count")
	}
	if n, err := strconv.Atoi(b.text(`[data-testid="bell-count"]`)); err != nil || n < 1 {
		t.Errorf("the bell counts %q", b.text(`[data-testid="bell-count"]`))
	}
	b.screenshot("member-home.en")
	b.do("open the bell", chromedp.Click(testid("nav-bell")), chromedp.WaitVisible(testid("ntf-list")))
	item := b.evalString(fmt.Sprintf(`[...document.querySelectorAll('[data-testid="ntf-item"]')].map(e => e.innerText).find(s => s.includes(%q)) || ""`,
		web.T(en, "notify.subject.rejected")))
	if want := web.T(en, "notify.rejected", id, reason); !strings.Contains(item, want) {
		t.Errorf("/notifications shows %q, want the rejection %q", item, want)
	}
	if hasHan(item) {
		t.Errorf("the English notice has Chinese in it: %q", item)
	}
	b.screenshot("notifications.en")

	// The one mail to the member.
	mails := mailsTo(t, mailpit, f.memberEmail, 30*time.Second)
	if len(mails) != 1 {
		t.Fatalf("mailpit holds %d mails to %s, want 1", len(mails), f.memberEmail)
	}
	m := mails[0]
	if want := web.T(en, "notify.subject.rejected"); !strings.Contains(m.Subject, want) || hasHan(m.Subject) {
		t.Errorf("mail subject %q, want English with %q", m.Subject, want)
	}
	if want := web.T(en, "notify.rejected", id, reason); !strings.Contains(m.Text, want) {
		t.Errorf("mail body lacks %q:\n%s", want, m.Text)
	}
	if hasHan(m.Text) {
		t.Errorf("the English mail body has Chinese in it:\n%s", m.Text)
	}
	link := regexp.MustCompile(`https?://[^\s<>")\]]+`).FindString(m.Text)
	if want := np.URL + "/bookings/" + id; link != want {
		t.Errorf("mail link %q, want %q (the portal's base URL)", link, want)
	}
	if !strings.Contains(m.HTML, reason) || !strings.Contains(m.HTML, np.URL+"/bookings/"+id) {
		t.Errorf("the mail's HTML part lacks the reason or the link")
	}

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

// memberPassword is the password of the users the notify tests create.
const memberPassword = "e2e-member-pw"

// notifyPortal is a portal whose base URL is known before it starts, so
// that mail links can point at it.
type notifyPortal struct {
	*portal
	data  string
	admin string // an admin API token
}

// startNotifyPortal starts the binary on SQLite without demo data or
// simulator, mailing through smtpAddr, at a base URL of its own port.
func startNotifyPortal(t *testing.T, name, smtpAddr string, vars map[string]string) *notifyPortal {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	data := t.TempDir()
	all := map[string]string{
		"CARDHOUR_ADDR":           addr,
		"CARDHOUR_BASE_URL":       "http://" + addr,
		"CARDHOUR_DATA":           data,
		"CARDHOUR_DEMO":           "false",
		"CARDHOUR_SIMULATOR":      "false",
		"CARDHOUR_SMTP_ADDR":      smtpAddr,
		"CARDHOUR_SMTP_SECURITY":  "none",
		"CARDHOUR_SMTP_FROM":      "cardhour <noreply@cardhour.test>",
		"CARDHOUR_NOTICE_BACKOFF": "1s",
	}
	for k, v := range vars {
		all[k] = v
	}
	p := startPortal(t, name, all)
	if p.URL != "http://"+addr {
		t.Fatalf("the portal listens on %s, want http://%s", p.URL, addr)
	}
	return &notifyPortal{portal: p, data: data, admin: adminToken(t, data)}
}

// approvalTeam is a team whose members' bookings wait for its manager,
// with one card type of four cards, a quota and a task.
type approvalTeam struct {
	teamID, typeID, taskID, quotaID int64
	manager, member, memberEmail    string
	memberToken                     string
}

type idJSON struct {
	ID int64 `json:"id"`
}

func setupApprovalTeam(t *testing.T, np *notifyPortal) *approvalTeam {
	t.Helper()
	base, admin := np.URL+"/api/v1", np.admin
	f := &approvalTeam{manager: "wangfang", member: "zhaolei", memberEmail: notifytest.Address("zhaolei")}
	var team, ct, host, task, quota idJSON
	apiJSON(t, http.MethodPost, base+"/teams", admin, map[string]any{"name": "视觉组", "description": "e2e", "requires_approval": true}, &team)
	f.teamID = team.ID
	var mgr, mem idJSON
	apiJSON(t, http.MethodPost, base+"/users", admin, map[string]any{"username": f.manager, "display_name": "王芳",
		"email": notifytest.Address("wangfang"), "password": memberPassword, "role": "manager"}, &mgr)
	apiJSON(t, http.MethodPost, base+"/users", admin, map[string]any{"username": f.member, "display_name": "赵磊",
		"email": f.memberEmail, "password": memberPassword, "role": "member"}, &mem)
	apiJSON(t, http.MethodPut, fmt.Sprintf("%s/teams/%d/members/%d", base, team.ID, mgr.ID), admin, map[string]string{"role": "manager"}, nil)
	apiJSON(t, http.MethodPut, fmt.Sprintf("%s/teams/%d/members/%d", base, team.ID, mem.ID), admin, map[string]string{"role": "member"}, nil)

	apiJSON(t, http.MethodPost, base+"/card-types", admin, map[string]any{"name": "NVIDIA L40S 48GB", "vram_gib": 48,
		"tflops_bf16": 362, "price_fen": 650}, &ct)
	f.typeID = ct.ID
	apiJSON(t, http.MethodPost, base+"/hosts", admin, map[string]any{"name": "gpu-e2e-l40s-01", "zone": "e2e"}, &host)
	for i := range 4 {
		apiJSON(t, http.MethodPost, base+"/cards", admin, map[string]any{"uuid": fmt.Sprintf("GPU-e2e0l40s-0000-4000-8000-00000000000%d", i),
			"index": i, "host_id": host.ID, "card_type_id": ct.ID, "status": "active"}, nil)
	}
	now := time.Now().UTC()
	apiJSON(t, http.MethodPost, base+"/quotas", admin, map[string]any{"team": team.ID, "card_type": ct.ID, "card_hours": 500,
		"max_cards": 4, "valid_from": now.Add(-time.Hour).Format(time.RFC3339), "expires_at": now.AddDate(0, 0, 60).Format(time.RFC3339),
		"note": "e2e"}, &quota)
	f.quotaID = quota.ID
	apiJSON(t, http.MethodPost, base+"/tasks", admin, map[string]any{"team_id": team.ID, "name": "检测模型 消融实验", "priority": "normal",
		"estimate_card_hours": 40, "data_readiness": "ready", "card_type_ids": []int64{ct.ID}}, &task)
	f.taskID = task.ID

	// The member reads English, mail included; no quiet hours.
	f.memberToken = userToken(t, np.data, f.member)
	apiJSON(t, http.MethodPut, base+"/me/notify-settings", f.memberToken, map[string]any{"lang": "en", "quiet_from": 0, "quiet_to": 0,
		"digest_minute": -1}, nil)
	return f
}

// book asks, as the member, for count cards for two hours from an hour
// from now; it must wait for approval.
func (f *approvalTeam) book(t *testing.T, np *notifyPortal, count int) int64 {
	t.Helper()
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	var bk struct {
		ID         int64  `json:"id"`
		State      string `json:"state"`
		WaitReason string `json:"wait_reason"`
	}
	apiJSON(t, http.MethodPost, np.URL+"/api/v1/bookings", f.memberToken, map[string]any{"task_id": f.taskID, "card_type": f.typeID,
		"count": count, "start": start.Format(time.RFC3339), "end": start.Add(2 * time.Hour).Format(time.RFC3339)}, &bk)
	if bk.State != "pending" {
		t.Fatalf("the member's booking is %q (%q), want pending for approval", bk.State, bk.WaitReason)
	}
	return bk.ID
}

// userToken is an API token of username from the CLI.
func userToken(t *testing.T, data, username string) string {
	t.Helper()
	out, err := exec.Command(binPath, "token", "--user", username, "--data", data).CombinedOutput()
	if err != nil {
		t.Fatalf("cardhour token --user %s: %v\n%s", username, err, out)
	}
	return strings.TrimSpace(string(out))
}

// mailsTo waits until mailpit holds a mail to addr and returns every mail
// to addr, after a short grace for a second one that should not come.
func mailsTo(t *testing.T, mailpit, addr string, timeout time.Duration) []notifytest.Mail {
	t.Helper()
	pick := func() []notifytest.Mail { return notifytest.WaitMessages(t, mailpit, addr, 1, timeout) }
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got := pick(); len(got) > 0 {
			time.Sleep(2 * time.Second) // the sender runs every second: a duplicate would be out by now
			return pick()
		}
	}
	return nil
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// login opens /login and logs in as username.
func (b *browser) login(base, username, password string) {
	b.t.Helper()
	b.do("open /login", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-form"]`)))
	b.fill([][2]string{{"username", username}, {"password", password}})
	b.do("log in as "+username, chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="nav-bell"]`)))
}

func (b *browser) evalString(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.fail("evaluate", err)
	}
	return s
}

// The notify area's pages and the pages the issue changed — the bell's
// list with a few notices, notice settings, the channels after a "send
// test" to a DingTalk robot (the flash shows the robot's real answer), the
// outbox with a notice a webhook kept refusing, the approvals inbox with
// one waiting booking and the quotas page with a pending renewal — at a
// phone's 390 px, a laptop's 1366 px and a wall's 1920 px, in zh-CN and
// en: each shows its content, nothing (the header bar included) is wider
// than the screen, no message key or the other language's labels show,
// and the pages report no script error. Screenshots:
// e2e/artifacts/notify-pages-*.png.
func TestNotifyPagesAtThreeWidthsInBothLanguages(t *testing.T) {
	requireBrowser(t)
	smtpAddr := ""
	if os.Getenv(notifytest.EnvSMTPAddr) != "" {
		smtpAddr, _ = notifytest.Mailpit(t) // settings then show mail on
	}
	np := startNotifyPortal(t, "notify-pages", smtpAddr, map[string]string{"CARDHOUR_NOTICE_TRIES": "1", "CARDHOUR_REMINDER_INTERVAL": "1s"})
	removeShots(t, "notify-pages")
	f := setupApprovalTeam(t, np)
	base, admin := np.URL+"/api/v1", np.admin

	// A team robot for the "send test", and a system-wide webhook for the
	// approval requests that answers 500 to everything: with one try, its
	// notice ends failed in the outbox.
	robot := notifytest.NewDingTalk(t, "SECdt-e2e-secret")
	hook := notifytest.NewWebhook(t, "whsec-e2e")
	hook.FailNext(100, http.StatusInternalServerError)
	apiJSON(t, http.MethodPost, base+"/notify-channels", admin, map[string]any{"team_id": f.teamID, "kind": "dingtalk", "name": "视觉组钉钉群",
		"url": robot.URL(), "secret": "SECdt-e2e-secret", "lang": "zh-CN", "rate_per_minute": 20, "enabled": true}, nil)
	apiJSON(t, http.MethodPost, base+"/notify-channels", admin, map[string]any{"kind": "webhook", "name": "ops webhook",
		"url": hook.URL(), "secret": "whsec-e2e", "lang": "en", "events": []string{"approval_waiting"}, "rate_per_minute": 60, "enabled": true}, nil)

	// Three bookings: one rejected, one approved, one left waiting; and a
	// renewal the manager asks for.
	mgr := userToken(t, np.data, f.manager)
	rejected, approved, waiting := f.book(t, np, 1), f.book(t, np, 1), f.book(t, np, 2)
	apiJSON(t, http.MethodPost, fmt.Sprintf("%s/bookings/%d/reject", base, rejected), mgr, map[string]string{"reason": "先用 L40S 空闲池跑消融 / use the idle pool first"}, nil)
	apiJSON(t, http.MethodPost, fmt.Sprintf("%s/bookings/%d/approve", base, approved), mgr, nil, nil)
	apiJSON(t, http.MethodPost, fmt.Sprintf("%s/quotas/%d/requests", base, f.quotaID), mgr, map[string]any{"kind": "renew",
		"expires_at": time.Now().UTC().AddDate(0, 0, 120).Format(time.RFC3339), "reason": "第二季度的检测模型迭代还要继续，申请续期到下季度末。"}, nil)
	waitFailedNotice(t, base, admin, 30*time.Second)

	b := newBrowser(t, "notify-pages")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

	// The admin sends the robot a test from /channels: the flash is the robot's answer.
	b.login(np.URL, "admin", adminPassword)
	b.do("open /channels", chromedp.Navigate(np.URL+"/channels"), chromedp.WaitVisible(testid("channels-table")))
	row := `[...document.querySelectorAll('[data-testid="channel-row"]')].find(r => r.innerText.includes('视觉组钉钉群'))`
	b.evalString(row + `.querySelector('[data-testid="channel-test"]').click(); ""`)
	b.do("wait for the test's answer", chromedp.WaitVisible(testid("flash")))
	flash := b.text(`[data-testid="flash"]`)
	if !strings.HasPrefix(flash, web.T(web.LangZH, "ntf.ch.test_ok", 200, "")[:12]) || !strings.Contains(flash, `"errcode":0`) {
		t.Errorf("the test's flash says %q, want delivered with the robot's answer", flash)
	}
	if got := robot.Received(); len(got) == 0 {
		t.Errorf("the DingTalk robot received nothing from the test")
	}
	b.screenshot("channel-tested.zh-CN")

	type pageCheck struct {
		name, path, has string
		data            []string // the test's own words, which may be Chinese on an English page
	}
	people := []string{"视觉组", "王芳", "赵磊", "检测模型", "消融实验", "钉钉群", "中文", "先用", "空闲池跑消融", "第二季度的检测模型迭代还要继续，申请续期到下季度末。"}
	adminPages := []pageCheck{
		{"channels", "/channels", `[data-testid="channel-row"]`, people},
		{"outbox", "/admin/notify", `[data-testid="outbox-row"]`, people},
		{"approvals", "/approvals", `[data-testid="approval-row"]`, people},
		{"quotas", "/quotas", "main", people},
		// The waiting booking's own page offers approve and reject with a reason.
		{"booking-waiting", fmt.Sprintf("/bookings/%d", waiting), `[data-testid="booking-reject-form"]`, people},
		{"booking-rejected", fmt.Sprintf("/bookings/%d", rejected), "main", people},
	}
	memberPages := []pageCheck{
		{"notifications", "/notifications", `[data-testid="ntf-item"]`, people},
		{"settings", "/account/notifications", `[data-testid="ntf-pref"]`, people},
	}
	shoot := func(who string, pages []pageCheck) {
		for _, width := range []int64{390, 1366, 1920} {
			if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(width, 900)); err != nil {
				t.Fatal(err)
			}
			for _, lang := range []string{web.LangZH, web.LangEN} {
				for _, pg := range pages {
					b.do("open "+pg.path, chromedp.Navigate(np.URL+pg.path+"?lang="+lang), chromedp.WaitVisible(chromedp.CSS("main")))
					if got := b.htmlLang(); got != lang {
						t.Errorf("%s in %s: <html lang=%q>", pg.path, lang, got)
					}
					if b.count(pg.has) == 0 {
						t.Errorf("%s at %d px in %s shows no %s", pg.path, width, lang, pg.has)
					}
					checkPageWords(t, b, pg.path, lang, pg.data)
					wide, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
					if err != nil {
						b.fail("measure "+pg.path, err)
					}
					if wide > 0 {
						t.Errorf("%s at %d px in %s is %d px wider than the screen", pg.path, width, lang, wide)
					}
					b.screenshot(fmt.Sprintf("%s-%s-%d.%s", who, pg.name, width, lang))
				}
			}
		}
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.text(`[data-testid="nav-approvals"]`); got != web.T(web.LangZH, "nav.approvals", 1) {
		t.Errorf("the admin's header says %q", got)
	}
	shoot("admin", adminPages)
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))
	b.login(np.URL, f.member, memberPassword)
	shoot("member", memberPages)
	_ = waiting

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

// waitFailedNotice waits until the outbox holds a failed notice.
func waitFailedNotice(t *testing.T, base, admin string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(250 * time.Millisecond) {
		var out struct {
			Notices []struct {
				ID int64 `json:"id"`
			} `json:"notices"`
		}
		apiJSON(t, http.MethodGet, base+"/notify-outbox?state=failed", admin, nil, &out)
		if len(out.Notices) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notice failed in %s", timeout)
		}
	}
}

var rawKey = regexp.MustCompile(`\b(ntf|notify|approvals?|quota_request|quotas?|nav|admin|bk[a-z]*|pl|plan|field|form|role|status)\.[a-z_]+\b`)

// checkPageWords fails on a message key or a formatting slip in main, and
// on an English page on Chinese outside the test's own data.
func checkPageWords(t *testing.T, b *browser, path, lang string, data []string) {
	t.Helper()
	// The header's words (the brand mark 卡 is a logo, in every language) and the page's.
	txt := b.evalString(`['.mainnav', '.userbar', 'main'].map(s => (document.querySelector(s) || {innerText: ""}).innerText).join("\n")`)
	if k := rawKey.FindString(txt); k != "" {
		t.Errorf("%s in %s shows the key %q", path, lang, k)
	}
	if strings.Contains(txt, "%!") {
		t.Errorf("%s in %s shows a formatting slip: %q", path, lang, txt)
	}
	if lang != web.LangEN {
		return
	}
	data = slices.Clone(data)
	slices.SortFunc(data, func(a, b string) int { return len(b) - len(a) }) // a longer datum holds a shorter one
	for _, d := range data {
		txt = strings.ReplaceAll(txt, d, "")
	}
	var han []string
	for _, line := range strings.Split(txt, "\n") {
		if hasHan(line) {
			han = append(han, strings.TrimSpace(line))
		}
	}
	if len(han) > 0 {
		t.Errorf("the English %s shows Chinese: %q", path, han)
	}
}
