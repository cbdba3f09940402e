package notify_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"cardhour/notify"
	"cardhour/notify/notifytest"
)

func TestDingTalkDeliversSignedMarkdown(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "SECdingtalk-secret")
	o := mustDeliver(t, newSender(nil), notify.Target{Kind: notify.DingTalk, URL: robot.URL(), Secret: "SECdingtalk-secret"}, zhMessage())
	if o.Status != 200 || !strings.Contains(o.Answer, `"errcode":0`) {
		t.Errorf("outcome %+v", o)
	}
	got := robot.Received()
	if len(got) != 1 {
		t.Fatalf("received %d", len(got))
	}
	m := zhMessage()
	if got[0].Title != m.Subject || !strings.Contains(got[0].Text, "剩余 120 卡时") || got[0].Link != m.Link || got[0].Label != "打开卡时" {
		t.Errorf("received %+v", got[0])
	}
	if got[0].Query.Get("sign") == "" || got[0].Query.Get("timestamp") == "" {
		t.Errorf("no signature in %v", got[0].Query)
	}
}

func TestDingTalkWithoutSecretSendsNoSignature(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "")
	mustDeliver(t, newSender(nil), notify.Target{Kind: notify.DingTalk, URL: robot.URL()}, zhMessage())
	if q := robot.Received()[0].Query; q.Has("sign") || q.Has("timestamp") {
		t.Errorf("unsigned robot got %v", q)
	}
}

func TestDingTalkWrongSecretIsRefusedWithTheRobotsAnswer(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "SECright")
	o, err := send(t, newSender(nil), notify.Target{Kind: notify.DingTalk, URL: robot.URL(), Secret: "SECwrong"}, zhMessage())
	wantRefused(t, o, err, `"errcode":310000`)
	wantNoSecret(t, o, err, "SECwrong", tokenOf(t, robot.URL()))
	if len(robot.Received()) != 0 {
		t.Error("the robot accepted a wrong signature")
	}
}

func TestDingTalkStaleTimestampIsRefused(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "SECright")
	twoHoursAgo := func() time.Time { return time.Now().Add(-2 * time.Hour) }
	o, err := send(t, newSender(twoHoursAgo), notify.Target{Kind: notify.DingTalk, URL: robot.URL(), Secret: "SECright"}, zhMessage())
	wantRefused(t, o, err, "invalid timestamp")
	// Within the hour is still fine.
	fiftyMinutesAgo := func() time.Time { return time.Now().Add(-50 * time.Minute) }
	mustDeliver(t, newSender(fiftyMinutesAgo), notify.Target{Kind: notify.DingTalk, URL: robot.URL(), Secret: "SECright"}, zhMessage())
}

func TestDingTalkUnknownTokenIsRefused(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "")
	u := strings.Replace(robot.URL(), "access_token=", "access_token=x", 1)
	o, err := send(t, newSender(nil), notify.Target{Kind: notify.DingTalk, URL: u}, zhMessage())
	wantRefused(t, o, err, "300001")
}

func TestDingTalkServerErrorIsRetried(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "SECs")
	robot.FailNext(1, 502)
	target := notify.Target{Kind: notify.DingTalk, URL: robot.URL(), Secret: "SECs"}
	o, err := send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, 0)
	if o.Status != 502 {
		t.Errorf("status %d", o.Status)
	}
	mustDeliver(t, newSender(nil), target, zhMessage())
}

func TestDingTalkRateLimitIsRetriedAfterAMinute(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "")
	robot.RateLimitNext(1)
	target := notify.Target{Kind: notify.DingTalk, URL: robot.URL()}
	o, err := send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, time.Minute)
	if !strings.Contains(o.Answer, "130101") {
		t.Errorf("answer %q", o.Answer)
	}
}

func TestDingTalkRobotCapsMessagesPerMinute(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "")
	robot.Limit(3)
	s, target := newSender(nil), notify.Target{Kind: notify.DingTalk, URL: robot.URL()}
	for i := 0; i < 3; i++ {
		mustDeliver(t, s, target, zhMessage())
	}
	o, err := send(t, s, target, zhMessage())
	wantRetry(t, o, err, time.Minute)
	if len(robot.Received()) != 3 {
		t.Errorf("received %d, want the 3 under the cap", len(robot.Received()))
	}
}

func TestDingTalkReceiverRefusesWhatTheRobotRefuses(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "")
	for name, c := range map[string]struct{ contentType, body, want string }{
		"unknown msgtype": {"application/json", `{"msgtype":"html","html":{}}`, "40035"},
		"no title":        {"application/json", `{"msgtype":"markdown","markdown":{"text":"x"}}`, "40035"},
		"form body":       {"application/x-www-form-urlencoded", `msgtype=text`, "43004"},
	} {
		answer := rawPost(t, robot.URL(), c.contentType, c.body)
		if !strings.Contains(answer, c.want) {
			t.Errorf("%s: answer %s, want errcode %s", name, answer, c.want)
		}
	}
}

func tokenOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if v := u.Query().Get("access_token"); v != "" {
		return v
	}
	if v := u.Query().Get("key"); v != "" {
		return v
	}
	return u.Path[strings.LastIndex(u.Path, "/")+1:]
}
