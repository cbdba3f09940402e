package notify

// The generic webhook is cardhour's own contract, shaped like the signed
// webhooks of GitHub (X-Hub-Signature-256: sha256=<hex>) and Stripe (the
// timestamp inside the signed string, so a captured request cannot be
// replayed later): https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
// POST application/json {"event","lang","subject","text","link","sent_at"};
// with a secret, X-Cardhour-Timestamp: <unix seconds> and
// X-Cardhour-Signature: sha256=<hex HMAC-SHA256(secret, timestamp+"."+body)>.
// Receivers should refuse a timestamp more than WebhookTolerance away from
// their clock. 2xx = delivered; 429 (Retry-After honoured) and 5xx = try
// again; any other status = refused.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Header names and the replay window of the generic webhook.
const (
	WebhookTimestampHeader = "X-Cardhour-Timestamp"
	WebhookSignatureHeader = "X-Cardhour-Signature"
	WebhookTolerance       = 5 * time.Minute
)

// WebhookPayload is the generic webhook's body.
type WebhookPayload struct {
	Event   string `json:"event"`
	Lang    string `json:"lang"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
	Link    string `json:"link"`
	SentAt  string `json:"sent_at"` // RFC 3339, UTC
}

// WebhookSign is the value of X-Cardhour-Signature for timestamp and body.
func WebhookSign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func (s *Sender) sendWebhook(ctx context.Context, t Target, m Message) (Outcome, error) {
	const op = "notify.Send webhook"
	now := s.now()
	body, _ := json.Marshal(WebhookPayload{Event: m.Event, Lang: m.Lang, Subject: m.Subject, Text: m.Text, Link: m.Link,
		SentAt: now.UTC().Format(time.RFC3339)})
	h := http.Header{}
	if t.Secret != "" {
		h.Set(WebhookTimestampHeader, strconv.FormatInt(now.Unix(), 10))
		h.Set(WebhookSignatureHeader, WebhookSign(t.Secret, now.Unix(), body))
	}
	_, o, err := s.post(ctx, op, t.URL, body, h, secretsOf(t))
	return o, err
}
