package notify_test

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"cardhour/notify/notifytest"
	"cardhour/server/servertest"
	"cardhour/store/storetest"
)

// TestTwoProcessesTellEachExpiryStageOnceOnEveryChannel is the issue's
// acceptance: two server processes on one MariaDB, each scanning for
// reminders every second and sending, while a quota goes through its last
// 30 days (its expiry moved nearer step by step, as the clock would). Every
// configured channel — DingTalk, WeCom, Feishu, the webhook, the
// manager's mail — gets the 30/15/7/1-day notices exactly once each; the
// member with a core task gets mail from 15 days on.
func TestTwoProcessesTellEachExpiryStageOnceOnEveryChannel(t *testing.T) {
	if os.Getenv(storetest.EnvMySQL) == "" {
		t.Skip("two-process notice test skipped: " + storetest.EnvMySQL + " is not set; run it with `scripts/testenv.sh go test -count=1 -run TestTwoProcesses ./server/notify/`")
	}
	smtp, mailpit := notifytest.Mailpit(t)
	bin := servertest.BuildBinary(t, "../..")
	dsn, _ := storetest.MySQLDSN(t)
	vars := map[string]string{
		"CARDHOUR_DB": "mysql://" + dsn, "CARDHOUR_DEMO": "false", "CARDHOUR_ADMIN_PASSWORD": servertest.AdminPassword,
		"CARDHOUR_LOG_LEVEL": "warn", "CARDHOUR_REMINDER_INTERVAL": "1s", "CARDHOUR_NOTICE_BACKOFF": "1s",
		"CARDHOUR_SMTP_ADDR": smtp, "CARDHOUR_SMTP_SECURITY": "none", "CARDHOUR_SMTP_FROM": "卡时 <noreply@cardhour.test>",
		"CARDHOUR_BASE_URL": "https://cardhour.test",
	}
	a := servertest.StartProcess(t, bin, "a", vars)
	b := servertest.StartProcess(t, bin, "b", vars)
	admin := servertest.CLIToken(t, bin, vars, "admin")
	api := func(base, token, method, path string, body any, want int) map[string]any {
		t.Helper()
		return servertest.MustCallJSON(t, base, token, method, path, body, want)
	}
	id := servertest.ID

	bossMail, devMail := notifytest.Address("boss"), notifytest.Address("dev")
	api(a.URL, admin, http.MethodPost, "/api/v1/card-types", map[string]any{"name": "NP-H800", "vram_gib": 80, "tflops_bf16": 989, "price_fen": 1500}, http.StatusCreated)
	team := api(b.URL, admin, http.MethodPost, "/api/v1/teams", map[string]any{"name": "np-team"}, http.StatusCreated)
	boss := api(a.URL, admin, http.MethodPost, "/api/v1/users", map[string]any{"username": "np-boss", "password": "np-password-1", "role": "manager", "email": bossMail}, http.StatusCreated)
	dev := api(b.URL, admin, http.MethodPost, "/api/v1/users", map[string]any{"username": "np-dev", "password": "np-password-2", "role": "member", "email": devMail}, http.StatusCreated)
	api(a.URL, admin, http.MethodPut, fmt.Sprintf("/api/v1/teams/%d/members/%d", id(team), id(boss)), map[string]any{"role": "manager"}, http.StatusOK)
	api(a.URL, admin, http.MethodPut, fmt.Sprintf("/api/v1/teams/%d/members/%d", id(team), id(dev)), map[string]any{"role": "member"}, http.StatusOK)
	bossTok, devTok := servertest.CLIToken(t, bin, vars, "np-boss"), servertest.CLIToken(t, bin, vars, "np-dev")
	api(b.URL, devTok, http.MethodPost, "/api/v1/tasks", map[string]any{"team": "np-team", "name": "pretrain", "priority": "core",
		"estimate_card_hours": 100, "data_readiness": "ready"}, http.StatusCreated)
	// No digests in this test: they would be mail too.
	for _, tok := range []string{bossTok, devTok} {
		api(a.URL, tok, http.MethodPut, "/api/v1/me/notify-settings", map[string]any{"lang": "en", "quiet_from": 0, "quiet_to": 0, "digest_minute": -1, "events": []any{}}, http.StatusOK)
	}

	ding, wecom := notifytest.NewDingTalk(t, "SECnp-ding"), notifytest.NewWeCom(t, "")
	feishu, hook := notifytest.NewFeishu(t, "np-feishu"), notifytest.NewWebhook(t, "np-hook")
	type robot struct {
		kind, url, secret string
		received          func() []notifytest.Received
	}
	robots := []robot{{"dingtalk", ding.URL(), "SECnp-ding", ding.Received}, {"wecom", wecom.URL(), "", wecom.Received},
		{"feishu", feishu.URL(), "np-feishu", feishu.Received}, {"webhook", hook.URL(), "np-hook", hook.Received}}
	for i, r := range robots {
		base := []string{a.URL, b.URL}[i%2]
		api(base, bossTok, http.MethodPost, "/api/v1/notify-channels", map[string]any{"team_id": id(team), "kind": r.kind, "name": "np " + r.kind,
			"url": r.url, "secret": r.secret, "lang": "en", "enabled": true, "events": []string{"quota_expiring"}}, http.StatusCreated)
	}

	start := time.Now().UTC()
	quota := func(days int) map[string]any {
		return map[string]any{"team": "np-team", "card_type": "NP-H800", "card_hours": 500, "max_cards": 0,
			"valid_from": start.Add(-time.Hour).Format(time.RFC3339), "expires_at": start.Add(time.Duration(days)*24*time.Hour - time.Hour).Format(time.RFC3339)}
	}
	q := api(a.URL, admin, http.MethodPost, "/api/v1/quotas", quota(31), http.StatusCreated)

	stageRE := regexp.MustCompile(`expires in (\d+) days`)
	stages := func(rs []notifytest.Received) []int {
		var out []int
		for _, r := range rs {
			if m := stageRE.FindStringSubmatch(r.Text); m != nil {
				n, _ := strconv.Atoi(m[1])
				out = append(out, n)
			}
		}
		return out
	}
	want := []int{}
	for _, days := range []int{31, 30, 22, 15, 9, 7, 3, 1} {
		if days != 31 {
			api([]string{a.URL, b.URL}[days%2], admin, http.MethodPut, fmt.Sprintf("/api/v1/quotas/%d", id(q)), quota(days), http.StatusOK)
		}
		if slices.Contains([]int{30, 15, 7, 1}, days) {
			want = append(want, days)
		}
		// Wait until every robot has the stages due so far (it waits, it
		// does not time: both processes scan every second).
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			done := true
			for _, r := range robots {
				done = done && len(r.received()) >= len(want)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d days left: robots did not get %v within 30 s", days, want)
			}
		}
	}
	// Both processes scan a few more times with nothing new due.
	time.Sleep(3 * time.Second)
	for _, r := range robots {
		if got := stages(r.received()); !slices.Equal(got, []int{30, 15, 7, 1}) {
			t.Errorf("%s got stages %v, want [30 15 7 1] once each", r.kind, got)
		}
	}
	mailStages := func(to string, n int) []int {
		var out []int
		for _, m := range notifytest.WaitMessages(t, mailpit, to, n, 20*time.Second) {
			if s := stageRE.FindStringSubmatch(m.Text); s != nil {
				d, _ := strconv.Atoi(s[1])
				out = append(out, d)
			}
		}
		slices.Sort(out)
		return out
	}
	if got := mailStages(bossMail, 4); !slices.Equal(got, []int{1, 7, 15, 30}) {
		t.Errorf("manager's mail stages %v, want 1 7 15 30 once each", got)
	}
	if got := mailStages(devMail, 3); !slices.Equal(got, []int{1, 7, 15}) {
		t.Errorf("core member's mail stages %v, want 1 7 15 once each", got)
	}
	bell := api(b.URL, bossTok, http.MethodGet, "/api/v1/notifications", nil, http.StatusOK)
	if n := len(bell["notifications"].([]any)); n != 4 {
		t.Errorf("manager's bell holds %d notices, want 4", n)
	}
	a.Stop(t)
	b.Stop(t)
}
