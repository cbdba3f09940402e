package notifytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Variables scripts/testenv.sh exports for the mailpit server it starts.
const (
	EnvSMTPAddr   = "CARDHOUR_TEST_SMTP_ADDR"
	EnvMailpitURL = "CARDHOUR_TEST_MAILPIT_URL"
)

// SkipMailpit is the message mail tests skip with when no server is set.
const SkipMailpit = "mailpit suite skipped: " + EnvSMTPAddr + " / " + EnvMailpitURL + " are not set (make test starts mailpit and sets them)"

// Mailpit returns the test environment's SMTP address and mailpit API URL,
// or skips tb when there is none. The box is shared by every test package
// running at once: a test reads only the mail sent to addresses of its own
// (Address), never empties the box.
func Mailpit(tb testing.TB) (smtpAddr, baseURL string) {
	tb.Helper()
	smtpAddr, baseURL = os.Getenv(EnvSMTPAddr), os.Getenv(EnvMailpitURL)
	if smtpAddr == "" || baseURL == "" {
		tb.Skip(SkipMailpit)
	}
	return smtpAddr, baseURL
}

// Address is a mail address no other test uses: name plus a random tag.
func Address(name string) string { return name + "+" + randomHex(4) + "@example.com" }

// Mail is a message as mailpit parsed it (GET /api/v1/message/{ID}).
type Mail struct {
	ID        string
	MessageID string
	From      string
	To        []string
	Subject   string // decoded
	Text      string // the text/plain part
	HTML      string // the text/html part
	Username  string // the SMTP AUTH user, "" without AUTH
	Headers   map[string][]string
}

type mailpitAddress struct {
	Name, Address string
}

type mailpitMessage struct {
	ID        string
	MessageID string
	From      *mailpitAddress
	To        []mailpitAddress
	Subject   string
	Text      string
	HTML      string
	Username  string
}

// WaitMessages polls mailpit until it holds at least n messages to the
// address to or timeout passes (then tb fails), and returns them in full,
// newest first.
func WaitMessages(tb testing.TB, baseURL, to string, n int, timeout time.Duration) []Mail {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var list struct {
			Messages []struct {
				ID string
				To []mailpitAddress
			}
		}
		if err := getJSON(baseURL+"/api/v1/messages?limit=5000", &list); err != nil {
			tb.Fatalf("mailpit: %v", err)
		}
		var ids []string
		for _, m := range list.Messages {
			for _, a := range m.To {
				if strings.EqualFold(a.Address, to) {
					ids = append(ids, m.ID)
					break
				}
			}
		}
		if len(ids) >= n {
			out := make([]Mail, 0, len(ids))
			for _, id := range ids {
				out = append(out, getMail(tb, baseURL, id))
			}
			return out
		}
		if time.Now().After(deadline) {
			tb.Fatalf("mailpit holds %d messages to %s after %s, want %d", len(ids), to, timeout, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getMail(tb testing.TB, baseURL, id string) Mail {
	tb.Helper()
	var m mailpitMessage
	if err := getJSON(baseURL+"/api/v1/message/"+id, &m); err != nil {
		tb.Fatalf("mailpit: %v", err)
	}
	out := Mail{ID: m.ID, MessageID: m.MessageID, Subject: m.Subject, Text: m.Text, HTML: m.HTML, Username: m.Username}
	if m.From != nil {
		out.From = m.From.Address
	}
	for _, a := range m.To {
		out.To = append(out.To, a.Address)
	}
	if err := getJSON(baseURL+"/api/v1/message/"+id+"/headers", &out.Headers); err != nil {
		tb.Fatalf("mailpit: %v", err)
	}
	return out
}

func getJSON(u string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// randomHex makes the receivers' tokens, so no two tests share one.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
