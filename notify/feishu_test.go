package notify_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/notify"
	"cardhour/notify/notifytest"
)

func TestFeishuDeliversSignedPost(t *testing.T) {
	bot := notifytest.NewFeishu(t, "feishu-secret")
	mustDeliver(t, newSender(nil), notify.Target{Kind: notify.Feishu, URL: bot.URL(), Secret: "feishu-secret"}, zhMessage())
	got := bot.Received()
	m := zhMessage()
	if len(got) != 1 || got[0].Title != m.Subject || got[0].Lang != "zh_cn" || got[0].Link != m.Link || got[0].Label != m.LinkLabel ||
		!strings.Contains(got[0].Text, "剩余 120 卡时") {
		t.Fatalf("received %+v", got)
	}
	var body map[string]any
	_ = json.Unmarshal(got[0].Body, &body)
	if _, ok := body["timestamp"].(string); !ok || body["sign"] == "" || body["msg_type"] != "post" {
		t.Errorf("body %s", got[0].Body)
	}
}

func TestFeishuEnglishAndUnsigned(t *testing.T) {
	bot := notifytest.NewFeishu(t, "")
	m := zhMessage()
	m.Lang, m.Subject = "en", "Quota expiring"
	mustDeliver(t, newSender(nil), notify.Target{Kind: notify.Feishu, URL: bot.URL()}, m)
	got := bot.Received()
	if len(got) != 1 || got[0].Lang != "en_us" || got[0].Title != "Quota expiring" {
		t.Fatalf("received %+v", got)
	}
	if strings.Contains(string(got[0].Body), `"sign"`) || strings.Contains(string(got[0].Body), `"timestamp"`) {
		t.Errorf("unsigned bot got %s", got[0].Body)
	}
}

func TestFeishuWrongSecretOrStaleTimestampIsRefused(t *testing.T) {
	bot := notifytest.NewFeishu(t, "right")
	o, err := send(t, newSender(nil), notify.Target{Kind: notify.Feishu, URL: bot.URL(), Secret: "wrong"}, zhMessage())
	wantRefused(t, o, err, `"code":19021`)
	wantNoSecret(t, o, err, "wrong", tokenOf(t, bot.URL()))
	late := func() time.Time { return time.Now().Add(-61 * time.Minute) }
	o, err = send(t, newSender(late), notify.Target{Kind: notify.Feishu, URL: bot.URL(), Secret: "right"}, zhMessage())
	wantRefused(t, o, err, "19021")
	if len(bot.Received()) != 0 {
		t.Error("the bot accepted a bad signature")
	}
}

func TestFeishuRateLimitAndServerErrorAreRetried(t *testing.T) {
	bot := notifytest.NewFeishu(t, "")
	target := notify.Target{Kind: notify.Feishu, URL: bot.URL()}
	bot.RateLimitNext(1)
	o, err := send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, 0)
	if !strings.Contains(o.Answer, "11232") {
		t.Errorf("answer %q", o.Answer)
	}
	bot.FailNext(2, 503)
	o, err = send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, 0)
}

func TestFeishuOldAnswerShapeIsRead(t *testing.T) {
	for answer, wantErr := range map[string]errs.Code{
		`{"StatusCode":0,"StatusMessage":"success"}`:                          "",
		`{"StatusCode":19021,"StatusMessage":"sign match fail"}`:              errs.Invalid,
		`{"StatusCode":0,"StatusMessage":"","code":9499,"msg":"Bad Request"}`: errs.Invalid,
		`<html>gateway</html>`: errs.Unavailable,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(answer)) }))
		_, err := send(t, newSender(nil), notify.Target{Kind: notify.Feishu, URL: srv.URL + "/open-apis/bot/v2/hook/tok"}, zhMessage())
		srv.Close()
		if errs.CodeOf(err) != wantErr {
			t.Errorf("answer %s: got %v, want code %q", answer, err, wantErr)
		}
	}
}
