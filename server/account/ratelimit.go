package account

import (
	"sync"
	"time"
)

// loginLimiter blocks a username+address after too many failed logins in a
// window. It is per process: with several processes an attacker gets a few
// more tries, which bcrypt's cost still makes slow.
type loginLimiter struct {
	mu      sync.Mutex
	max     int
	window  time.Duration
	now     func() time.Time
	entries map[string][]time.Time
}

func newLoginLimiter(max int, window time.Duration) *loginLimiter {
	return &loginLimiter{max: max, window: window, now: time.Now, entries: map[string][]time.Time{}}
}

// blocked returns how long key must wait, zero when it may try.
func (l *loginLimiter) blocked(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	fails := l.prune(key)
	if len(fails) < l.max {
		return 0
	}
	return fails[0].Add(l.window).Sub(l.now())
}

func (l *loginLimiter) fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[key] = append(l.prune(key), l.now())
	// Bound memory against a flood of distinct keys.
	if len(l.entries) > 100000 {
		for k := range l.entries {
			if len(l.prune(k)) == 0 {
				delete(l.entries, k)
			}
		}
	}
}

func (l *loginLimiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.entries, key)
}

func (l *loginLimiter) prune(key string) []time.Time {
	cut := l.now().Add(-l.window)
	fails := l.entries[key]
	i := 0
	for i < len(fails) && fails[i].Before(cut) {
		i++
	}
	fails = fails[i:]
	if len(fails) == 0 {
		delete(l.entries, key)
		return nil
	}
	l.entries[key] = fails
	return fails
}
