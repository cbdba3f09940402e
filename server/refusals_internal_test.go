package server

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// An outage's refusals are one full line, then one summary per interval
// and reason; a quiet interval ends the outage, and the next refusal is
// logged in full again.
func TestRefusalsAreSummedUpPerInterval(t *testing.T) {
	var buf syncBuffer
	r := newRefusals(slog.New(slog.NewTextHandler(&buf, nil)), 100*time.Millisecond)
	down := &errs.Error{Code: errs.Unavailable, Op: "store.FindCards", Key: "error.db_unavailable"}
	late := &errs.Error{Code: errs.Unavailable, Op: "server.deadline", Key: "error.timeout"}
	for i := 0; i < 1000; i++ {
		r.refused(down, "/")
	}
	for i := 0; i < 20; i++ {
		r.refused(late, "/api/v1/cards")
	}
	waitFor := func(what string, ok func([]string) bool) []string {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if l := buf.lines(); ok(l) {
				return l
			}
		}
		t.Fatalf("%s; the log:\n%s", what, strings.Join(buf.lines(), "\n"))
		return nil
	}
	lines := waitFor("no summary after the interval", func(l []string) bool { return len(l) >= 3 })
	if len(lines) != 3 {
		t.Fatalf("1020 refusals logged as %d lines, want 3 (the first in full, a summary per reason):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], "msg=unavailable") || !strings.Contains(lines[0], "path=/") {
		t.Errorf("first line %q, want the refusal in full", lines[0])
	}
	for _, want := range []string{`"999 requests refused in the last 100ms: database unreachable"`, `"20 requests refused in the last 100ms: request deadline passed: database not answering"`} {
		if !strings.Contains(lines[1]+lines[2], want) {
			t.Errorf("summaries %q, want %s", lines[1:], want)
		}
	}
	time.Sleep(300 * time.Millisecond) // a quiet interval: the outage is over
	r.refused(down, "/bookings")
	lines = waitFor("the next outage's first refusal is not logged", func(l []string) bool { return len(l) >= 4 })
	if !strings.Contains(lines[3], "msg=unavailable") || !strings.Contains(lines[3], "path=/bookings") {
		t.Errorf("after a quiet interval: %q, want the refusal in full", lines[3])
	}
}
