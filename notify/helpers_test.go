package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/notify"
)

func zhMessage() notify.Message {
	return notify.Message{
		Event:     "quota_expiring",
		Lang:      "zh-CN",
		Subject:   "配额即将到期：视觉组 A100",
		Text:      "视觉组的 A100 配额将于 3 天后到期。\n剩余 120 卡时。",
		Link:      "https://cardhour.example.com/quotas/7?tab=renew&x=1",
		LinkLabel: "打开卡时",
	}
}

func newSender(now func() time.Time) *notify.Sender {
	return notify.NewSender(notify.SenderConfig{Now: now, Timeout: 5 * time.Second})
}

func send(t *testing.T, s *notify.Sender, target notify.Target, m notify.Message) (notify.Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, target, m)
}

func mustDeliver(t *testing.T, s *notify.Sender, target notify.Target, m notify.Message) notify.Outcome {
	t.Helper()
	o, err := send(t, s, target, m)
	if err != nil {
		t.Fatalf("Send: %v (outcome %+v)", err, o)
	}
	return o
}

// wantRefused checks a failure that will not pass: Invalid, no retry, and
// the vendor's own answer kept in the Outcome.
func wantRefused(t *testing.T, o notify.Outcome, err error, answer string) {
	t.Helper()
	if !errs.Is(err, errs.Invalid) || o.Retry {
		t.Fatalf("want a refusal (invalid, no retry), got %v, outcome %+v", err, o)
	}
	if !strings.Contains(o.Answer, answer) {
		t.Errorf("Answer %q does not carry %q", o.Answer, answer)
	}
}

// wantRetry checks a failure that may pass later.
func wantRetry(t *testing.T, o notify.Outcome, err error, after time.Duration) {
	t.Helper()
	if !errs.Is(err, errs.Unavailable) || !o.Retry {
		t.Fatalf("want unavailable with retry, got %v, outcome %+v", err, o)
	}
	if o.After != after {
		t.Errorf("After = %s, want %s", o.After, after)
	}
}

// wantNoSecret checks that neither the error nor the answer quotes a secret.
func wantNoSecret(t *testing.T, o notify.Outcome, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("error %q quotes the secret %q", err, s)
		}
		if strings.Contains(o.Answer, s) {
			t.Errorf("answer %q quotes the secret %q", o.Answer, s)
		}
	}
}
