// Package notifytest gives tests local stand-ins for the places notices go:
// HTTP receivers that check each robot vendor's documented request (method,
// Content-Type, body shape, signature, timestamp window) and answer the way
// the vendor does — errors included, with HTTP 200 where the vendor uses it
// — and a client for the mailpit SMTP server that scripts/testenv.sh starts.
// Only tests import it.
package notifytest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Received is one request a receiver accepted, read the way the vendor's
// client would show it.
type Received struct {
	Title  string // the headline: markdown title, post title, subject
	Text   string // the body as shown
	Link   string // the first link's URL
	Label  string // the first link's words
	Lang   string // Feishu's post language key, the webhook's lang
	Event  string // the generic webhook's event
	Body   []byte // the raw request body
	Header http.Header
	Query  url.Values
	At     time.Time // when it was accepted, for checks of a channel's rate
}

// receiver is what every vendor's stand-in shares: the server, the record of
// accepted requests and the failure knobs.
type receiver struct {
	srv *httptest.Server

	mu         sync.Mutex
	received   []Received
	failNext   int
	failStatus int
	rateNext   int
	perMinute  int
	accepted   []time.Time // accept times within the last minute, for Limit
}

// vendor is what a receiver needs from its vendor.
type vendor interface {
	// check reads an authenticated, well-formed request or writes the
	// vendor's refusal and returns false.
	check(w http.ResponseWriter, r *http.Request, body []byte) (Received, bool)
	rateLimited(w http.ResponseWriter)
	ok(w http.ResponseWriter)
}

func newReceiver(tb testing.TB, v vendor, perMinute int) *receiver {
	tb.Helper()
	rc := &receiver{perMinute: perMinute}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.serve(w, r, v)
	}))
	tb.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request, v vendor) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rc.mu.Lock()
	if rc.failNext > 0 {
		rc.failNext--
		status := rc.failStatus
		rc.mu.Unlock()
		http.Error(w, http.StatusText(status), status)
		return
	}
	if rc.rateNext > 0 {
		rc.rateNext--
		rc.mu.Unlock()
		v.rateLimited(w)
		return
	}
	rc.mu.Unlock()
	got, ok := v.check(w, r, body)
	if !ok {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	now := time.Now()
	if rc.perMinute > 0 {
		kept := rc.accepted[:0]
		for _, t := range rc.accepted {
			if now.Sub(t) < time.Minute {
				kept = append(kept, t)
			}
		}
		rc.accepted = kept
		if len(rc.accepted) >= rc.perMinute {
			v.rateLimited(w)
			return
		}
		rc.accepted = append(rc.accepted, now)
	}
	got.Body, got.Header, got.Query, got.At = body, r.Header.Clone(), r.URL.Query(), now
	rc.received = append(rc.received, got)
	v.ok(w)
}

// Received returns what was accepted so far, oldest first.
func (rc *receiver) Received() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.received...)
}

// FailNext answers the next n requests with HTTP status (e.g. 500, 502).
func (rc *receiver) FailNext(n, status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.failNext, rc.failStatus = n, status
}

// RateLimitNext answers the next n requests with the vendor's rate-limit answer.
func (rc *receiver) RateLimitNext(n int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.rateNext = n
}

// Limit sets how many requests a rolling minute accepts before the vendor's
// rate-limit answer; 0 = no limit.
func (rc *receiver) Limit(perMinute int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.perMinute = perMinute
}

// Close stops the server early, for outage tests; Cleanup closes it anyway.
func (rc *receiver) Close() { rc.srv.Close() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// isJSON tells whether the request says it carries JSON, the way the
// vendors read Content-Type (parameters such as charset allowed).
func isJSON(r *http.Request) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(r.Header.Get("Content-Type"), ";", 2)[0]))
	return ct == "application/json"
}

var markdownLinkRE = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)

// firstLink finds the first [label](url) of a Markdown text.
func firstLink(md string) (label, href string) {
	if m := markdownLinkRE.FindStringSubmatch(md); m != nil {
		return m[1], m[2]
	}
	return "", ""
}

// within tells whether t is no further than d from now, either way.
func within(t time.Time, d time.Duration) bool {
	diff := time.Since(t)
	return diff <= d && diff >= -d
}
