package notify

// Mail over SMTP with the standard library (net/smtp, RFC 5321): "starttls"
// requires the server to offer STARTTLS (RFC 3207) before anything else is
// said, "tls" speaks SMTP inside TLS from the first byte (RFC 8314 implicit
// TLS, port 465), "none" is for a relay on the same host. AUTH PLAIN
// (RFC 4616) when a username is set; net/smtp's PlainAuth refuses to send the
// password over an unencrypted connection to anything but localhost, and
// that refusal is kept. The message is multipart/alternative (RFC 2046) with
// a text/plain and a text/html part, the Subject as an RFC 2047 encoded-word
// (mime.BEncoding, UTF-8) since the subjects are Chinese. SMTP replies: 4xx
// transient, 5xx permanent (RFC 5321 §4.2.1). The test server is mailpit
// (https://mailpit.axllent.org/docs/api-v1/).

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
)

func (s *Sender) sendMail(ctx context.Context, t Target, m Message) (Outcome, error) {
	const op = "notify.Send mail"
	c := s.mail
	if c.Addr == "" {
		return refused(op, Outcome{}, "mail is off (CARDHOUR_SMTP_ADDR is empty)")
	}
	from, err := mail.ParseAddress(c.From)
	if err != nil {
		return refused(op, Outcome{}, "from address %q: %w", c.From, err)
	}
	to, err := mail.ParseAddress(t.To)
	if err != nil {
		return refused(op, Outcome{}, "recipient %q: %w", t.To, err)
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return refused(op, Outcome{}, "SMTP address %q: want host:port", c.Addr)
	}
	msg := BuildMail(from, to, m, s.now())

	deadline := time.Now().Add(s.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := s.dialSMTP(ctx, c, host)
	if err != nil {
		return unavailable(op, Outcome{}, "connect to %s: %w", c.Addr, err)
	}
	// net/smtp has no context: the deadline on the connection bounds every
	// command, and a cancelled context closes it.
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	cl, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return smtpFailure(op, "greeting", err, c.Password)
	}
	defer cl.Close()
	if err := s.smtpSession(cl, c, host, from.Address, to.Address, msg); err != nil {
		var step stepError
		if errors.As(err, &step) {
			return smtpFailure(op, step.step, step.err, c.Password)
		}
		return smtpFailure(op, "session", err, c.Password)
	}
	return Outcome{Status: 250}, nil
}

type stepError struct {
	step string
	err  error
}

func (e stepError) Error() string { return e.step + ": " + e.err.Error() }

func (s *Sender) dialSMTP(ctx context.Context, c MailConfig, host string) (net.Conn, error) {
	d := &net.Dialer{}
	if c.Security == "tls" {
		td := &tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}}
		return td.DialContext(ctx, "tcp", c.Addr)
	}
	return d.DialContext(ctx, "tcp", c.Addr)
}

func (s *Sender) smtpSession(cl *smtp.Client, c MailConfig, host, from, to string, msg []byte) error {
	if err := cl.Hello(helloName(from)); err != nil {
		return stepError{"EHLO", err}
	}
	if c.Security == "starttls" || c.Security == "" {
		if ok, _ := cl.Extension("STARTTLS"); !ok {
			// Required, not opportunistic: falling back would send the
			// password and the notice in clear to whoever answers.
			return stepError{"STARTTLS", errors.New("the server does not offer STARTTLS (set CARDHOUR_SMTP_SECURITY=tls for port 465, or none for a local relay)")}
		}
		if err := cl.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return stepError{"STARTTLS", err}
		}
	}
	if c.Username != "" {
		if ok, _ := cl.Extension("AUTH"); !ok {
			return stepError{"AUTH", errors.New("the server offers no AUTH but a username is set")}
		}
		if err := cl.Auth(smtp.PlainAuth("", c.Username, c.Password, host)); err != nil {
			return stepError{"AUTH", err}
		}
	}
	if err := cl.Mail(from); err != nil {
		return stepError{"MAIL FROM", err}
	}
	if err := cl.Rcpt(to); err != nil {
		return stepError{"RCPT TO", err}
	}
	w, err := cl.Data()
	if err != nil {
		return stepError{"DATA", err}
	}
	if _, err := w.Write(msg); err != nil {
		return stepError{"DATA", err}
	}
	if err := w.Close(); err != nil {
		return stepError{"DATA", err}
	}
	// The message is accepted once DATA's reply came; a failing QUIT does
	// not undo that.
	_ = cl.Quit()
	return nil
}

// smtpFailure classifies a failed step by the server's reply: 4xx may pass,
// 5xx will not; no reply at all (a reset, a timeout) may pass.
func smtpFailure(op, step string, err error, password string) (Outcome, error) {
	err = scrubErr(err, []string{password})
	var te *textproto.Error
	if errors.As(err, &te) {
		o := Outcome{Status: te.Code, Answer: cutUTF8(fmt.Sprintf("%d %s", te.Code, te.Msg), maxAnswer)}
		if te.Code >= 400 && te.Code < 500 {
			return unavailable(op, o, "%s: %w", step, err)
		}
		return refused(op, o, "%s: %w", step, err)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "EOF") {
		return unavailable(op, Outcome{}, "%s: %w", step, err)
	}
	// Our own refusals (no STARTTLS, PlainAuth over clear text) and TLS
	// certificate failures repeat until someone changes the settings.
	return refused(op, Outcome{}, "%s: %w", step, err)
}

// helloName is the name given in EHLO: the From domain says who is sending
// better than "localhost", which some relays refuse.
func helloName(from string) string {
	if i := strings.LastIndex(from, "@"); i >= 0 && i < len(from)-1 {
		return from[i+1:]
	}
	return "localhost"
}

// newMessageID is a Message-ID on the sender's domain; random, so two
// notices sent in the same second never share one.
func newMessageID(from string, now time.Time) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "<" + now.UTC().Format("20060102T150405") + "." + hex.EncodeToString(b) + "@" + helloName(from) + ">"
}
