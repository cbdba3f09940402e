package notifytest

import (
	"crypto/hmac"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"cardhour/notify"
)

// Webhook is a receiver of cardhour's generic signed webhook, checking it
// the way an integrator is told to: the signature over timestamp+"."+body
// and the timestamp within notify.WebhookTolerance.
type Webhook struct {
	*receiver
	secret string
}

// NewWebhook starts a receiver; without a secret it checks no signature.
func NewWebhook(tb testing.TB, secret string) *Webhook {
	tb.Helper()
	h := &Webhook{secret: secret}
	h.receiver = newReceiver(tb, h, 0)
	return h
}

// URL is the webhook URL to configure.
func (h *Webhook) URL() string { return h.srv.URL + "/hooks/cardhour" }

func (h *Webhook) ok(w http.ResponseWriter) { writeJSON(w, http.StatusOK, map[string]any{"ok": true}) }

func (h *Webhook) rateLimited(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "30")
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": "rate limited"})
}

func (h *Webhook) check(w http.ResponseWriter, r *http.Request, body []byte) (Received, bool) {
	switch {
	case r.URL.Path != "/hooks/cardhour":
		http.NotFound(w, r)
		return Received{}, false
	case r.Method != http.MethodPost:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return Received{}, false
	case !isJSON(r):
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]any{"error": "want application/json"})
		return Received{}, false
	}
	if h.secret != "" {
		ts, err := strconv.ParseInt(r.Header.Get(notify.WebhookTimestampHeader), 10, 64)
		if err != nil || !within(time.Unix(ts, 0), notify.WebhookTolerance) {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "stale or missing timestamp"})
			return Received{}, false
		}
		if !hmac.Equal([]byte(r.Header.Get(notify.WebhookSignatureHeader)), []byte(webhookWant(ts, h.secret, body))) {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "bad signature"})
			return Received{}, false
		}
	}
	var p notify.WebhookPayload
	if json.Unmarshal(body, &p) != nil || p.Event == "" || p.SentAt == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "want the cardhour payload"})
		return Received{}, false
	}
	return Received{Title: p.Subject, Text: p.Text, Link: p.Link, Lang: p.Lang, Event: p.Event}, true
}
