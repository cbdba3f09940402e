package server

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"cardhour/errs"
)

// refusals is the log of requests refused as unavailable. During an outage
// every request is refused — one line each was 140,000 lines in 20 s — so
// the first refusal after a quiet interval is logged in full (what failed
// and where), and the rest are counted and logged as one summary per
// reason once per interval ("412 requests refused in the last 10s:
// database unreachable") until an interval passes without any.
type refusals struct {
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	counts  map[string]int // refusals since the last line, by reason
	pending bool           // a flush is scheduled: the outage is on
}

func newRefusals(log *slog.Logger, every time.Duration) *refusals {
	return &refusals{log: log, every: every, counts: map[string]int{}}
}

// refused records one refused request.
func (r *refusals) refused(err error, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		r.counts[refusalReason(err)]++
		return
	}
	r.pending = true
	time.AfterFunc(r.every, r.flush)
	r.log.Warn("unavailable", "err", err, "path", path,
		"note", fmt.Sprintf("further refusals are summed up every %s", r.every))
}

// flush writes what was counted; with nothing counted the outage is over
// and the next refusal is logged in full again.
func (r *refusals) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.counts) == 0 {
		r.pending = false
		return
	}
	reasons := make([]string, 0, len(r.counts))
	for reason := range r.counts {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	for _, reason := range reasons {
		n := r.counts[reason]
		r.log.Warn(fmt.Sprintf("%d requests refused in the last %s: %s", n, r.every, reason), "refused", n, "reason", reason)
	}
	clear(r.counts)
	time.AfterFunc(r.every, r.flush)
}

// refusalReason names what an unavailable error was about, for the summary.
func refusalReason(err error) string {
	e, ok := errs.As(err)
	if !ok {
		return "unavailable"
	}
	switch e.Key {
	case "error.db_unavailable":
		return "database unreachable"
	case "error.timeout", "error.timeout_write":
		return "request deadline passed: database not answering"
	case "":
		return e.Op
	}
	return e.Key
}
