package notify_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/notify"
	"cardhour/notify/notifytest"
)

func mailSender(c notify.MailConfig) *notify.Sender {
	return notify.NewSender(notify.SenderConfig{Mail: c, Timeout: 5 * time.Second})
}

// The message itself, read back with the standard library: no server needed.
func TestBuildMailIsMultipartWithEncodedSubject(t *testing.T) {
	from, _ := mail.ParseAddress(`卡时 <noreply@cardhour.example.com>`)
	to, _ := mail.ParseAddress("wangfang@example.com")
	m := zhMessage()
	m.Text = "<b>不是标签</b> & 剩余 120 卡时"
	raw := notify.BuildMail(from, to, m, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil || subject != m.Subject || !strings.HasPrefix(msg.Header.Get("Subject"), "=?UTF-8?b?") {
		t.Errorf("subject %q (raw %q, %v)", subject, msg.Header.Get("Subject"), err)
	}
	for _, h := range []string{"Date", "Message-Id", "Mime-Version", "From", "To"} {
		if msg.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if msg.Header.Get("Content-Language") != "zh-CN" {
		t.Errorf("Content-Language %q", msg.Header.Get("Content-Language"))
	}
	mt, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if mt != "multipart/alternative" {
		t.Fatalf("content type %s", mt)
	}
	parts := map[string]string{}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts[ct] = string(b)
	}
	if !strings.Contains(parts["text/plain"], "<b>不是标签</b>") || !strings.Contains(parts["text/plain"], m.Link) {
		t.Errorf("text part %q", parts["text/plain"])
	}
	html := parts["text/html"]
	if !strings.Contains(html, "&lt;b&gt;不是标签&lt;/b&gt; &amp;") || !strings.Contains(html, `<a href="https://cardhour.example.com/quotas/7?tab=renew&amp;x=1">打开卡时</a>`) {
		t.Errorf("html part %q", html)
	}
}

func TestMailSubjectCannotInjectHeaders(t *testing.T) {
	from, _ := mail.ParseAddress("noreply@example.com")
	to, _ := mail.ParseAddress("a@example.com")
	m := zhMessage()
	m.Subject = "hi\r\nBcc: victim@example.com"
	raw := string(notify.BuildMail(from, to, m, time.Now()))
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	if strings.Contains(head, "\r\nBcc:") {
		t.Errorf("header injected:\n%s", head)
	}
}

func TestMailToMailpitWithoutTLS(t *testing.T) {
	addr, api := notifytest.Mailpit(t)
	s := mailSender(notify.MailConfig{Addr: addr, Security: "none", From: "卡时 <noreply@cardhour.example.com>"})
	to := notifytest.Address("wangfang")
	o, err := s.Send(context.Background(), notify.Target{Kind: notify.Mail, To: to}, zhMessage())
	if err != nil || o.Status != 250 {
		t.Fatalf("Send: %v, %+v", err, o)
	}
	got := notifytest.WaitMessages(t, api, to, 1, 10*time.Second)
	m := zhMessage()
	g := got[0]
	if g.Subject != m.Subject || len(g.To) != 1 || g.To[0] != to || g.From != "noreply@cardhour.example.com" {
		t.Errorf("mail %+v", g)
	}
	if !strings.Contains(g.Text, "剩余 120 卡时") || !strings.Contains(g.Text, m.Link) {
		t.Errorf("text part %q", g.Text)
	}
	if !strings.Contains(g.HTML, `<a href="https://cardhour.example.com/quotas/7?tab=renew&amp;x=1">打开卡时</a>`) {
		t.Errorf("html part %q", g.HTML)
	}
	if g.Headers["Content-Language"][0] != "zh-CN" || g.Username != "" {
		t.Errorf("headers %v, username %q", g.Headers, g.Username)
	}
}

func TestMailToMailpitWithAuth(t *testing.T) {
	addr, api := notifytest.Mailpit(t)
	// mailpit accepts any credentials; net/smtp sends PLAIN in clear only to
	// localhost, which 127.0.0.1 is.
	s := mailSender(notify.MailConfig{Addr: addr, Security: "none", Username: "cardhour", Password: "pw-secret", From: "noreply@example.com"})
	to := notifytest.Address("lihua")
	if _, err := s.Send(context.Background(), notify.Target{Kind: notify.Mail, To: to}, zhMessage()); err != nil {
		t.Fatal(err)
	}
	if got := notifytest.WaitMessages(t, api, to, 1, 10*time.Second); got[0].Username != "cardhour" {
		t.Errorf("AUTH user %q, want cardhour", got[0].Username)
	}
}

func TestMailStartTLSIsRequiredNotOpportunistic(t *testing.T) {
	addr, _ := notifytest.Mailpit(t) // mailpit here offers no STARTTLS
	s := mailSender(notify.MailConfig{Addr: addr, Security: "starttls", From: "noreply@example.com"})
	o, err := s.Send(context.Background(), notify.Target{Kind: notify.Mail, To: "a@example.com"}, zhMessage())
	if !errs.Is(err, errs.Invalid) || o.Retry || !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("got %v, %+v; want a refusal naming STARTTLS", err, o)
	}
}

func TestMailOffOrBadAddressIsInvalid(t *testing.T) {
	for name, c := range map[string]struct {
		cfg notify.MailConfig
		to  string
	}{
		"mail off":      {notify.MailConfig{}, "a@example.com"},
		"bad recipient": {notify.MailConfig{Addr: "127.0.0.1:1", Security: "none", From: "n@example.com"}, "not an address"},
	} {
		_, err := mailSender(c.cfg).Send(context.Background(), notify.Target{Kind: notify.Mail, To: c.to}, zhMessage())
		if !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// fakeSMTP answers RCPT with reply, to show how replies are classified
// (mailpit accepts everything).
func fakeSMTP(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				fmt.Fprint(c, "220 fake ESMTP\r\n")
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					switch cmd := strings.ToUpper(strings.Fields(line + " x")[0]); cmd {
					case "EHLO":
						fmt.Fprint(c, "250-fake\r\n250 8BITMIME\r\n")
					case "RCPT":
						fmt.Fprint(c, reply+"\r\n")
					case "QUIT":
						fmt.Fprint(c, "221 bye\r\n")
						return
					default:
						fmt.Fprint(c, "250 ok\r\n")
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestMailRepliesDecideRetry(t *testing.T) {
	for reply, retry := range map[string]bool{
		"451 4.7.1 greylisted, try again later": true,
		"550 5.1.1 no such user":                false,
	} {
		s := mailSender(notify.MailConfig{Addr: fakeSMTP(t, reply), Security: "none", From: "n@example.com"})
		o, err := s.Send(context.Background(), notify.Target{Kind: notify.Mail, To: "a@example.com"}, zhMessage())
		if err == nil || o.Retry != retry || o.Answer != reply || o.Status != int(reply[0]-'0')*100+int(reply[1]-'0')*10+int(reply[2]-'0') {
			t.Errorf("%s: outcome %+v, err %v; want retry=%v", reply, o, err, retry)
		}
	}
	// Nobody listening: may pass later.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	o, err := mailSender(notify.MailConfig{Addr: addr, Security: "none", From: "n@example.com"}).
		Send(context.Background(), notify.Target{Kind: notify.Mail, To: "a@example.com"}, zhMessage())
	wantRetry(t, o, err, 0)
}
