package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxAnswer is how much of a reply is kept: enough for any vendor's error
// answer, small enough for an outbox column.
const maxAnswer = 2048

// reply is an HTTP channel's answer before the vendor's rules read it.
type reply struct {
	Status     int
	Body       []byte
	RetryAfter time.Duration
}

// post sends body as JSON to rawURL. A transport failure, a 5xx and a 429
// come back as errors already classified (Retry set); any other status is
// left to the vendor's reader, because the robots answer their refusals
// with HTTP 200 and an error code in the body.
func (s *Sender) post(ctx context.Context, op, rawURL string, body []byte, header http.Header, secrets []string) (reply, Outcome, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		o, err := refused(op, Outcome{}, "want an absolute http(s) URL, got %s", Redact(rawURL))
		return reply{}, o, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		o, err := refused(op, Outcome{}, "build request to %s: %w", Redact(rawURL), err)
		return reply{}, o, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "cardhour-notify")
	resp, err := s.http.Do(req)
	if err != nil {
		// url.Error repeats the whole URL, token included: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// Nothing was answered, so Answer stays empty; the error says why.
		o, err := unavailable(op, Outcome{}, "post %s: %w", Redact(rawURL), scrubErr(err, secrets))
		return reply{}, o, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	r := reply{Status: resp.StatusCode, Body: raw, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), s.now())}
	o := Outcome{Status: resp.StatusCode, Answer: scrub(trimAnswer(raw), secrets)}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		o.After = r.RetryAfter
		o, err := unavailable(op, o, "%s answered HTTP %d (rate limited)", Redact(rawURL), resp.StatusCode)
		return r, o, err
	case resp.StatusCode >= 500:
		o, err := unavailable(op, o, "%s answered HTTP %d", Redact(rawURL), resp.StatusCode)
		return r, o, err
	case resp.StatusCode >= 300:
		o, err := refused(op, o, "%s answered HTTP %d", Redact(rawURL), resp.StatusCode)
		return r, o, err
	}
	return r, o, nil
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

// trimAnswer keeps at most maxAnswer bytes, cut on a rune boundary, without
// surrounding white space.
func trimAnswer(b []byte) string {
	return cutUTF8(strings.TrimSpace(string(b)), maxAnswer)
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Redact hides what a robot URL carries as its credential — the query
// string (DingTalk's access_token, WeCom's key) or else the last path
// segment (Feishu's hook token) — so the URL can appear in errors and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	out := u.Scheme + "://" + u.Host
	if u.RawQuery != "" {
		return out + u.EscapedPath() + "?***"
	}
	p := u.EscapedPath()
	if i := strings.LastIndex(p, "/"); i >= 0 && i < len(p)-1 {
		p = p[:i+1] + "***"
	}
	return out + p
}

// urlSecrets are the parts of a URL that Redact hides, so that a reply or
// an error quoting them can be scrubbed too.
func urlSecrets(rawURL string) []string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	var out []string
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= 6 {
				out = append(out, v)
			}
		}
	}
	if i := strings.LastIndex(u.Path, "/"); i >= 0 && len(u.Path)-i > 6 {
		out = append(out, u.Path[i+1:])
	}
	return out
}

func scrub(s string, secrets []string) string {
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "***")
		}
	}
	return s
}

// scrubErr keeps err's chain (so errors.Is still sees a timeout) unless its
// text quotes a secret.
func scrubErr(err error, secrets []string) error {
	if t := scrub(err.Error(), secrets); t != err.Error() {
		return errors.New(t)
	}
	return err
}

// secretsOf lists what must never be quoted for t.
func secretsOf(t Target) []string {
	return append(urlSecrets(t.URL), t.Secret)
}

// vendorCode formats a robot's refusal for the error text.
func vendorCode(vendor string, code int, msg string) string {
	return fmt.Sprintf("%s answered code %d: %s", vendor, code, cutUTF8(msg, 200))
}
