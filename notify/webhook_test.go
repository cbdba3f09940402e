package notify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/notify"
	"cardhour/notify/notifytest"
)

func TestWebhookDeliversSignedPayload(t *testing.T) {
	hook := notifytest.NewWebhook(t, "hook-secret")
	mustDeliver(t, newSender(nil), notify.Target{Kind: notify.Webhook, URL: hook.URL(), Secret: "hook-secret"}, zhMessage())
	got := hook.Received()
	m := zhMessage()
	if len(got) != 1 || got[0].Event != m.Event || got[0].Title != m.Subject || got[0].Text != m.Text || got[0].Link != m.Link || got[0].Lang != "zh-CN" {
		t.Fatalf("received %+v", got)
	}
	if !strings.HasPrefix(got[0].Header.Get(notify.WebhookSignatureHeader), "sha256=") || got[0].Header.Get(notify.WebhookTimestampHeader) == "" {
		t.Errorf("headers %v", got[0].Header)
	}
}

func TestWebhookBadSignatureOrReplayIsRefused(t *testing.T) {
	hook := notifytest.NewWebhook(t, "right")
	o, err := send(t, newSender(nil), notify.Target{Kind: notify.Webhook, URL: hook.URL(), Secret: "wrong"}, zhMessage())
	wantRefused(t, o, err, "bad signature")
	if o.Status != 401 {
		t.Errorf("status %d", o.Status)
	}
	old := func() time.Time { return time.Now().Add(-10 * time.Minute) }
	o, err = send(t, newSender(old), notify.Target{Kind: notify.Webhook, URL: hook.URL(), Secret: "right"}, zhMessage())
	wantRefused(t, o, err, "stale")
}

func TestWebhookStatusesDecideRetry(t *testing.T) {
	hook := notifytest.NewWebhook(t, "")
	target := notify.Target{Kind: notify.Webhook, URL: hook.URL()}
	hook.RateLimitNext(1)
	o, err := send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, 30*time.Second)
	hook.FailNext(1, 500)
	o, err = send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, 0)
	hook.FailNext(1, 404)
	o, err = send(t, newSender(nil), target, zhMessage())
	wantRefused(t, o, err, "Not Found")
	mustDeliver(t, newSender(nil), target, zhMessage())
}

func TestUnreachableRobotIsRetriedAndItsTokenHidden(t *testing.T) {
	robot := notifytest.NewDingTalk(t, "SECx")
	robot.Close()
	o, err := send(t, newSender(nil), notify.Target{Kind: notify.DingTalk, URL: robot.URL(), Secret: "SECx"}, zhMessage())
	wantRetry(t, o, err, 0)
	wantNoSecret(t, o, err, tokenOf(t, robot.URL()), "SECx")
	if !strings.Contains(err.Error(), "?***") {
		t.Errorf("error %q does not show the redacted URL", err)
	}
	bot := notifytest.NewFeishu(t, "")
	bot.Close()
	o, err = send(t, newSender(nil), notify.Target{Kind: notify.Feishu, URL: bot.URL()}, zhMessage())
	wantRetry(t, o, err, 0)
	wantNoSecret(t, o, err, tokenOf(t, bot.URL()))
}

func TestSlowRobotTimesOutAsRetry(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := notify.NewSender(notify.SenderConfig{Timeout: 200 * time.Millisecond})
	o, err := s.Send(context.Background(), notify.Target{Kind: notify.Webhook, URL: srv.URL}, zhMessage())
	wantRetry(t, o, err, 0)
}

func TestRedactHidesTokens(t *testing.T) {
	for in, want := range map[string]string{
		"https://oapi.dingtalk.com/robot/send?access_token=abc123456":        "https://oapi.dingtalk.com/robot/send?***",
		"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k-123456":      "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?***",
		"https://open.feishu.cn/open-apis/bot/v2/hook/0f1e2d3c-aaaa-bbbb-cc": "https://open.feishu.cn/open-apis/bot/v2/hook/***",
	} {
		if got := notify.Redact(in); got != want {
			t.Errorf("Redact(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestUnknownKindIsInvalid(t *testing.T) {
	_, err := newSender(nil).Send(context.Background(), notify.Target{Kind: notify.InApp}, zhMessage())
	if !errs.Is(err, errs.Invalid) {
		t.Errorf("in-app: %v", err)
	}
}
