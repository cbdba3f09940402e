package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"cardhour/notify/notifytest"
	"cardhour/server/servertest"
	"cardhour/store"
)

// world is a fleet whose team llm has a webhook robot carrying quota
// expiry notices, and whose manager and member have mail addresses.
type world struct {
	*servertest.Fleet
	hook *notifytest.Webhook
	chID int64
}

func newWorld(t *testing.T, vars map[string]string) *world {
	t.Helper()
	f := servertest.NewFleet(t, servertest.Options{Vars: vars}, 2, 1000)
	w := &world{Fleet: f, hook: notifytest.NewWebhook(t, "wh-secret-1")}
	body := fmt.Sprintf(`{"team_id":%d,"kind":"webhook","name":"llm hook","url":%q,"secret":"wh-secret-1","lang":"en","enabled":true,"events":["quota_expiring"]}`,
		f.LLM.ID, w.hook.URL())
	ch := servertest.Decode[struct {
		ID int64 `json:"id"`
	}](t, f.Call(http.MethodPost, "/api/v1/notify-channels", f.Token(store.RoleManager), body), http.StatusCreated)
	w.chID = ch.ID
	return w
}

// dueQuotas gives team llm three more quotas that expire in 14, 6 and 1
// days (three card types), so a scan has three notices for the robot.
func (w *world) dueQuotas(t *testing.T) {
	t.Helper()
	ctx := w.E.AdminCtx()
	now := time.Now().UTC()
	for i, days := range []int{14, 6, 1} {
		ct, err := w.E.St.CreateCardType(ctx, store.CardTypeInput{Name: fmt.Sprintf("L%d", i), VRAMGiB: 48, TFLOPSBF16: 300, PriceFen: 500})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.E.St.CreateQuota(ctx, store.QuotaInput{TeamID: w.LLM.ID, CardTypeID: ct.ID, CardHours: 100,
			ValidFrom: now.Add(-time.Hour), ExpiresAt: now.Add(time.Duration(days)*24*time.Hour - time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.E.St.ScanReminders(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// drainUntil runs the sender until cond holds or 40 s pass; it waits for
// the retries' backoff, it does not time anything.
func (w *world) drainUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(40 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if err := w.E.Srv.Notices().Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done after 40 s; outbox: %+v", w.outbox(t, ""))
		}
	}
}

func (w *world) outbox(t *testing.T, state string) []store.OutboxRow {
	t.Helper()
	rows, err := w.E.St.FindOutbox(context.Background(), store.OutboxFilter{State: state, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var mine []store.OutboxRow
	for _, r := range rows {
		if r.ChannelID != nil && *r.ChannelID == w.chID {
			mine = append(mine, r)
		}
	}
	return mine
}

// TestChannelDownForAWhileLosesNothing: the robot answers 500 five times;
// with backoff the three notices all arrive once it recovers, each exactly
// once, signed, in the channel's language, with a link into the portal.
func TestChannelDownForAWhileLosesNothing(t *testing.T) {
	w := newWorld(t, map[string]string{"CARDHOUR_NOTICE_BACKOFF": "1s", "CARDHOUR_NOTICE_TRIES": "8", "CARDHOUR_BASE_URL": "https://cardhour.example.com"})
	w.hook.FailNext(5, http.StatusInternalServerError)
	w.dueQuotas(t)
	w.drainUntil(t, func() bool { return len(w.outbox(t, store.OutboxSent)) == 3 })
	got := w.hook.Received()
	if len(got) != 3 {
		t.Fatalf("receiver got %d notices, want 3", len(got))
	}
	seen := map[string]bool{}
	retried := 0
	for _, r := range got {
		if seen[r.Text] {
			t.Errorf("notice delivered twice: %q", r.Text)
		}
		seen[r.Text] = true
		if r.Event != "quota_expiring" || r.Lang != "en" || !strings.Contains(r.Text, "expires in") || !strings.HasPrefix(r.Link, "https://cardhour.example.com/quotas") {
			t.Errorf("notice %+v: want the English quota reminder with a portal link", r)
		}
	}
	for _, r := range w.outbox(t, "") {
		if r.State != store.OutboxSent {
			t.Errorf("notice %d is %s after the channel recovered", r.ID, r.State)
		}
		if r.Attempts > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no notice needed a second try, so the outage was not exercised")
	}
}

// TestChannelThatStaysDownIsMarkedFailedAndSentAgain: after its last try a
// notice is failed, admins hear of it in the bell and see it with the
// channel's answer on /admin/notify; once the channel is mended, "send
// again" delivers it once.
func TestChannelThatStaysDownIsMarkedFailedAndSentAgain(t *testing.T) {
	w := newWorld(t, map[string]string{"CARDHOUR_NOTICE_BACKOFF": "1s", "CARDHOUR_NOTICE_TRIES": "2"})
	w.hook.FailNext(1000, http.StatusBadGateway)
	w.dueQuotas(t)
	w.drainUntil(t, func() bool { return len(w.outbox(t, store.OutboxFailed)) == 3 })
	if n := len(w.hook.Received()); n != 0 {
		t.Fatalf("receiver accepted %d while down", n)
	}
	admin := w.E.LoggedIn(store.RoleAdmin)
	page := admin.Get("/admin/notify")
	doc := page.Doc(t)
	if n := doc.Find("[data-testid=outbox-row]").Length(); n != 3 {
		t.Fatalf("/admin/notify lists %d failed notices, want 3", n)
	}
	if !strings.Contains(doc.Find("[data-testid=outbox-row] code").First().Text(), "502") {
		t.Errorf("failed row shows %q, want the channel's 502", doc.Find("[data-testid=outbox-row] code").First().Text())
	}
	bell := admin.Get("/notifications").Doc(t).Find("[data-testid=ntf-subject]").Text()
	if !strings.Contains(bell, "通知发送失败") {
		t.Errorf("admin's bell %q lacks the delivery failure", bell)
	}
	if c := doc.Find("[data-testid=bell-count]").Text(); c == "" || c == "0" {
		t.Errorf("bell count %q, want the unread failures", c)
	}
	w.hook.FailNext(0, 0)
	failed := w.outbox(t, store.OutboxFailed)
	r := admin.PostForm(fmt.Sprintf("/admin/notify/%d/retry", failed[0].ID), url.Values{}, true)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d %s", r.StatusCode, r.Body)
	}
	w.drainUntil(t, func() bool { return len(w.hook.Received()) == 1 })
	time.Sleep(300 * time.Millisecond)
	if err := w.E.Srv.Notices().Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(w.hook.Received()); n != 1 {
		t.Errorf("after one retry the receiver has %d, want 1", n)
	}
	// A notice not failed cannot be queued again.
	servertest.MustAPIError(t, w.Call(http.MethodPost, fmt.Sprintf("/api/v1/notify-outbox/%d/retry", failed[0].ID), w.Token(store.RoleAdmin), ""),
		http.StatusConflict, "conflict")
}

// TestChannelSecretsAreNeverShown: the URL's token and the secret appear in
// no page and no API answer once saved; the list shows the host only.
func TestChannelSecretsAreNeverShown(t *testing.T) {
	w := newWorld(t, nil)
	token := strings.TrimPrefix(w.hook.URL(), "http://")
	mgr := w.E.LoggedIn(store.RoleManager)
	for _, path := range []string{"/channels", fmt.Sprintf("/channels/%d", w.chID)} {
		body := mgr.Get(path).String()
		if strings.Contains(body, "wh-secret-1") || strings.Contains(body, "/hooks/cardhour") {
			t.Errorf("%s shows the channel's secret or URL path", path)
		}
	}
	list := w.Call(http.MethodGet, "/api/v1/notify-channels", w.Token(store.RoleManager), "")
	if strings.Contains(list.String(), "wh-secret-1") || strings.Contains(list.String(), "/hooks/cardhour") {
		t.Errorf("API list shows the secret or URL: %s", list)
	}
	var out struct {
		Channels []struct {
			URLHint   string `json:"url_hint"`
			HasSecret bool   `json:"has_secret"`
		} `json:"channels"`
	}
	if err := json.Unmarshal(list.Body, &out); err != nil || len(out.Channels) != 1 || !out.Channels[0].HasSecret || strings.Contains(out.Channels[0].URLHint, "hooks") {
		t.Errorf("channel list %s, want one channel with a secret and a host-only hint (token %s)", list, token)
	}
	if strings.Contains(w.E.Logs.String(), "wh-secret-1") {
		t.Error("the secret reached the log")
	}
}

// TestSendTestShowsTheChannelsRealAnswer: "send test" on a DingTalk robot
// shows DingTalk's answer; with the wrong secret, its refusal.
func TestSendTestShowsTheChannelsRealAnswer(t *testing.T) {
	f := servertest.NewFleet(t, servertest.Options{}, 1, 100)
	ding := notifytest.NewDingTalk(t, "SECgood")
	mgr := f.E.LoggedIn(store.RoleManager)
	add := func(secret string) int64 {
		r := mgr.PostForm("/channels", url.Values{"name": {"ding " + secret}, "scope": {fmt.Sprint(f.LLM.ID)}, "kind": {"dingtalk"},
			"url": {ding.URL()}, "secret": {secret}, "lang": {"zh-CN"}, "rate_per_minute": {"20"}, "enabled": {"1"}}, true)
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("add channel: %d %s", r.StatusCode, r.Body)
		}
		chans, err := f.E.St.FindNotifyChannels(f.E.ActorCtx(f.E.Users[store.RoleManager]), store.ChannelFilter{TeamID: f.LLM.ID})
		if err != nil {
			t.Fatal(err)
		}
		return chans[len(chans)-1].ID
	}
	good, bad := add("SECgood"), add("SECbad")
	flash := func(id int64) string {
		r := mgr.PostForm(fmt.Sprintf("/channels/%d/test", id), url.Values{}, true)
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("test: %d %s", r.StatusCode, r.Body)
		}
		return mgr.Get("/channels").Doc(t).Find("[data-testid=flash]").Text()
	}
	if msg := flash(good); !strings.Contains(msg, "已送达") || !strings.Contains(msg, `"errcode":0`) {
		t.Errorf("good channel's test: %q, want delivered with DingTalk's answer", msg)
	}
	if msg := flash(bad); !strings.Contains(msg, "未送达") || !strings.Contains(msg, "310000") {
		t.Errorf("bad secret's test: %q, want DingTalk's sign refusal 310000", msg)
	}
	if n := len(ding.Received()); n != 1 {
		t.Errorf("robot accepted %d test messages, want 1", n)
	}
	// A member may not configure robots; another team's channel is not there.
	if r := f.E.LoggedIn(store.RoleMember).Get("/channels"); r.StatusCode != http.StatusForbidden {
		t.Errorf("member on /channels: %d, want 403", r.StatusCode)
	}
	vision, err := f.E.St.CreateUser(f.E.AdminCtx(), store.UserCreate{Username: "t-vision-boss", Password: "password-vb", Role: store.RoleManager})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.E.St.SetMembership(f.E.AdminCtx(), f.Vision.ID, vision.ID, store.TeamRoleManager); err != nil {
		t.Fatal(err)
	}
	other := f.E.Client()
	other.MustLogin("t-vision-boss", "password-vb")
	if r := other.Get(fmt.Sprintf("/channels/%d", good)); r.StatusCode != http.StatusNotFound {
		t.Errorf("another team's manager on llm's channel: %d, want 404", r.StatusCode)
	}
	if r := other.PostForm(fmt.Sprintf("/channels/%d/test", good), url.Values{}, true); r.StatusCode != http.StatusNotFound {
		t.Errorf("another team's manager testing llm's channel: %d, want 404", r.StatusCode)
	}
}

// TestBellCountsAndMarksRead: the header's bell counts unread notices on
// every page; marking one read lowers it, marking all clears it.
func TestBellCountsAndMarksRead(t *testing.T) {
	w := newWorld(t, nil)
	w.dueQuotas(t)
	mgr := w.E.LoggedIn(store.RoleManager)
	count := func(path string) string { return mgr.Get(path).Doc(t).Find("[data-testid=bell-count]").Text() }
	// Three quota reminders and the manager's daily digest (due at 09:00
	// in the portal's zone, once a day: the test may run before it).
	want := 3 + len(bellOf(t, w, notifyDigest))
	for _, path := range []string{"/booking", "/ledger", "/notifications"} {
		if c := count(path); c != fmt.Sprint(want) {
			t.Errorf("%s: bell count %q, want %d", path, c, want)
		}
	}
	id, _ := mgr.Get("/notifications").Doc(t).Find("[data-testid=ntf-item]").First().Attr("data-id")
	if r := mgr.PostForm("/notifications/"+id+"/read", url.Values{}, true); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("mark read: %d", r.StatusCode)
	}
	if c := count("/booking"); c != fmt.Sprint(want-1) {
		t.Errorf("after one read: %q, want %d", c, want-1)
	}
	// Another user's notice is not there for this one.
	if r := w.E.LoggedIn(store.RoleMember).PostForm("/notifications/"+id+"/read", url.Values{}, true); r.StatusCode != http.StatusNotFound {
		t.Errorf("member marking the manager's notice: %d, want 404", r.StatusCode)
	}
	r := servertest.Decode[struct {
		Unread int `json:"unread"`
	}](t, w.Call(http.MethodPost, "/api/v1/notifications/read", w.Token(store.RoleManager), `{}`), http.StatusOK)
	if r.Unread != 0 {
		t.Errorf("after mark all: %d unread", r.Unread)
	}
	if c := count("/booking"); c != "" {
		t.Errorf("bell count %q after all read, want none", c)
	}
}

// TestNoticeSettingsSaveAndRefuse: the settings page switches an event's
// mail off and sets quiet hours; a time outside the day is refused in
// place with nothing saved.
func TestNoticeSettingsSaveAndRefuse(t *testing.T) {
	w := newWorld(t, nil)
	mgr := w.E.LoggedIn(store.RoleManager)
	// Each sees the events that can reach them: a member no approvals to
	// decide nor digests, a manager no admin events.
	for role, want := range map[string]int{store.RoleMember: 17, store.RoleManager: 19, store.RoleAdmin: 24} {
		doc := w.E.LoggedIn(role).Get("/account/notifications").Doc(t)
		if n := doc.Find("[data-testid=ntf-pref]").Length(); n != want {
			t.Errorf("%s's settings list %d events, want %d", role, n, want)
		}
	}
	form := url.Values{"lang": {"en"}, "quiet_from": {"1320"}, "quiet_to": {"420"}, "digest_minute": {"510"}, "chat_quota_expiring": {"1"}}
	if r := mgr.PostForm("/account/notifications", form, true); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.StatusCode, r.Body)
	}
	set := servertest.Decode[struct {
		Lang         string `json:"lang"`
		QuietFrom    int    `json:"quiet_from"`
		DigestMinute int    `json:"digest_minute"`
		Events       []struct {
			Event      string `json:"event"`
			Mail, Chat bool
		} `json:"events"`
	}](t, w.Call(http.MethodGet, "/api/v1/me/notify-settings", w.Token(store.RoleManager), ""), http.StatusOK)
	if set.Lang != "en" || set.QuietFrom != 1320 || set.DigestMinute != 510 {
		t.Errorf("saved %+v", set)
	}
	for _, e := range set.Events {
		if e.Event == "quota_expiring" && (e.Mail || !e.Chat) {
			t.Errorf("quota_expiring: mail %v chat %v, want mail off, chat on", e.Mail, e.Chat)
		}
		// Not on the manager's page, so the form cannot have switched it.
		if e.Event == "alert_unbooked" && !e.Mail {
			t.Error("saving the page switched off an event it did not offer")
		}
	}
	form.Set("quiet_to", "1500")
	r := mgr.PostForm("/account/notifications", form, true)
	if r.StatusCode != http.StatusUnprocessableEntity || r.Doc(t).Find(".has-error #f-quiet_to").Length() == 0 {
		t.Errorf("quiet_to 1500: %d, want 422 with the field marked", r.StatusCode)
	}
	servertest.MustAPIError(t, w.Call(http.MethodPut, "/api/v1/me/notify-settings", w.Token(store.RoleManager),
		`{"lang":"fr","quiet_from":0,"quiet_to":0,"digest_minute":540,"events":[]}`), http.StatusUnprocessableEntity, "invalid")
}

const notifyDigest = "digest"

func bellOf(t *testing.T, w *world, kind string) []store.Notification {
	t.Helper()
	ns, err := w.E.St.FindNotifications(context.Background(), w.E.Users[store.RoleManager].ID, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Notification
	for _, n := range ns {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// TestAHangingRobotDelaysOnlyItsOwnNotices: while one team robot does not
// answer, another channel's notices of the same claim still go out.
func TestAHangingRobotDelaysOnlyItsOwnNotices(t *testing.T) {
	w := newWorld(t, nil)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(8 * time.Second):
		}
		rw.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	body := fmt.Sprintf(`{"team_id":%d,"kind":"webhook","name":"hangs","url":%q,"lang":"en","enabled":true,"events":["quota_expiring"]}`, w.LLM.ID, hang.URL+"/hook")
	servertest.Decode[map[string]any](t, w.Call(http.MethodPost, "/api/v1/notify-channels", w.Token(store.RoleManager), body), http.StatusCreated)
	// The healthy robot again, after the hanging one: its notices come
	// second in the claim.
	if r := w.Call(http.MethodDelete, fmt.Sprintf("/api/v1/notify-channels/%d", w.chID), w.Token(store.RoleManager), ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	again := fmt.Sprintf(`{"team_id":%d,"kind":"webhook","name":"llm hook","url":%q,"secret":"wh-secret-1","lang":"en","enabled":true,"events":["quota_expiring"]}`,
		w.LLM.ID, w.hook.URL())
	servertest.Decode[map[string]any](t, w.Call(http.MethodPost, "/api/v1/notify-channels", w.Token(store.RoleManager), again), http.StatusCreated)
	w.dueQuotas(t)
	done := make(chan error, 1)
	go func() { done <- w.E.Srv.Notices().Drain(context.Background()) }()
	for deadline := time.Now().Add(20 * time.Second); len(w.hook.Received()) < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the healthy robot got %d of 3 while the other hung", len(w.hook.Received()))
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
