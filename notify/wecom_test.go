package notify_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"cardhour/notify"
	"cardhour/notify/notifytest"
)

func TestWeComDeliversMarkdown(t *testing.T) {
	robot := notifytest.NewWeCom(t, "")
	mustDeliver(t, newSender(nil), notify.Target{Kind: notify.WeCom, URL: robot.URL()}, zhMessage())
	got := robot.Received()
	m := zhMessage()
	if len(got) != 1 || got[0].Title != m.Subject || !strings.Contains(got[0].Text, "剩余 120 卡时") || got[0].Link != m.Link {
		t.Errorf("received %+v", got)
	}
}

func TestWeComBadKeyIsRefused(t *testing.T) {
	robot := notifytest.NewWeCom(t, "right-key-123")
	u := strings.Replace(robot.URL(), "right-key-123", "wrong-key-456", 1)
	o, err := send(t, newSender(nil), notify.Target{Kind: notify.WeCom, URL: u}, zhMessage())
	wantRefused(t, o, err, "93000")
	wantNoSecret(t, o, err, "wrong-key-456")
}

func TestWeComServerErrorAndRateLimitAreRetried(t *testing.T) {
	robot := notifytest.NewWeCom(t, "")
	target := notify.Target{Kind: notify.WeCom, URL: robot.URL()}
	robot.FailNext(1, 500)
	o, err := send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, 0)
	robot.RateLimitNext(1)
	o, err = send(t, newSender(nil), target, zhMessage())
	wantRetry(t, o, err, time.Minute)
	if !strings.Contains(o.Answer, "45009") {
		t.Errorf("answer %q", o.Answer)
	}
	wantNoSecret(t, o, err, tokenOf(t, robot.URL()))
}

func TestWeComLongTextIsCutAt4096BytesKeepingTheLink(t *testing.T) {
	m := zhMessage()
	m.Text = strings.Repeat("卡时", 1500) // 9000 bytes
	content := notify.WeComContent(m)
	if len(content) > 4096 || !utf8.ValidString(content) || !strings.HasSuffix(content, "("+m.Link+")") {
		t.Fatalf("content is %d bytes, valid %v, ends %q", len(content), utf8.ValidString(content), content[len(content)-80:])
	}
	robot := notifytest.NewWeCom(t, "")
	mustDeliver(t, newSender(nil), notify.Target{Kind: notify.WeCom, URL: robot.URL()}, m)
	if got := robot.Received(); len(got) != 1 || got[0].Link != m.Link {
		t.Errorf("received %+v", got)
	}
	// The robot refuses what is not cut, so the cut is what makes it pass.
	answer := rawPost(t, robot.URL(), "application/json", `{"msgtype":"markdown","markdown":{"content":"`+m.Text+`"}}`)
	if !strings.Contains(answer, "40058") {
		t.Errorf("uncut content answered %s", answer)
	}
	if answer := rawPost(t, robot.URL(), "application/json", `{"msgtype":"card","card":{}}`); !strings.Contains(answer, "40008") {
		t.Errorf("unknown msgtype answered %s", answer)
	}
}
