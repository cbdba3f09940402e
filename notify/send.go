package notify

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"cardhour/errs"
)

// MailConfig is how the portal reaches its SMTP server. config.Mail has the
// same fields, so the command converts one into the other without notify
// importing config.
type MailConfig struct {
	Addr     string // host:port; empty = mail off
	Security string // "starttls" (default), "tls" (implicit TLS) or "none" (a local relay)
	Username string // AUTH PLAIN when set
	Password string
	From     string // the From address, may carry a display name
}

// SenderConfig builds a Sender.
type SenderConfig struct {
	Mail MailConfig
	// Timeout bounds one delivery (HTTP request or SMTP session); 0 = 10 s.
	// A robot that has not answered in 10 s is better retried later than
	// waited on: the outbox has other rows to send.
	Timeout time.Duration
	// Now is the clock the signatures are made with; nil = time.Now.
	Now func() time.Time
}

// Sender delivers one notice on one channel. It holds no state between
// sends besides its HTTP client's connection pool, so one Sender serves
// every outbox worker.
type Sender struct {
	http    *http.Client
	mail    MailConfig
	timeout time.Duration
	now     func() time.Time
}

// NewSender builds a Sender.
func NewSender(c SenderConfig) *Sender {
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Mail.Security == "" {
		c.Mail.Security = "starttls"
	}
	return &Sender{
		// No redirects: a robot URL that redirects is misconfigured, and
		// following it would post the notice (and its signature) elsewhere.
		http: &http.Client{Timeout: c.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		mail:    c.Mail,
		timeout: c.Timeout,
		now:     c.Now,
	}
}

// Send delivers m to t. A nil error means the channel accepted it. Otherwise
// the error is coded Unavailable when trying again may pass (a timeout, a 5xx,
// a rate limit) and Invalid when it will not (a bad secret, an unknown
// robot); the Outcome says what the channel really answered either way.
func (s *Sender) Send(ctx context.Context, t Target, m Message) (Outcome, error) {
	switch t.Kind {
	case DingTalk:
		return s.sendDingTalk(ctx, t, m)
	case WeCom:
		return s.sendWeCom(ctx, t, m)
	case Feishu:
		return s.sendFeishu(ctx, t, m)
	case Webhook:
		return s.sendWebhook(ctx, t, m)
	case Mail:
		return s.sendMail(ctx, t, m)
	default:
		// In-app notices live in the database; nothing is sent for them.
		return Outcome{}, errs.Wrap(errs.Invalid, "notify.Send", fmt.Errorf("channel %q is not sent by the sender", t.Kind))
	}
}

// refused is a failure that will fail again.
func refused(op string, o Outcome, format string, args ...any) (Outcome, error) {
	o.Retry = false
	return o, errs.Wrap(errs.Invalid, op, fmt.Errorf(format, args...))
}

// unavailable is a failure that may pass later.
func unavailable(op string, o Outcome, format string, args ...any) (Outcome, error) {
	o.Retry = true
	return o, errs.Wrap(errs.Unavailable, op, fmt.Errorf(format, args...))
}
