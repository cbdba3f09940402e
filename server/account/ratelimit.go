package account

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"cardhour/cluster"
)

// loginLimiter blocks a username+address after too many failed logins in a
// window. It counts in the process (a sliding window) and, with replicas
// sharing counters (CARDHOUR_REDIS), across them too (a fixed window from
// the first failure): a key is blocked when either count is full. While
// Redis is away only the process's count holds — an attacker spreading
// tries over the replicas gets a few more, which bcrypt's cost still makes
// slow.
type loginLimiter struct {
	mu      sync.Mutex
	max     int
	window  time.Duration
	now     func() time.Time
	entries map[string][]time.Time
	shared  cluster.Counter // nil: per process only
}

// sharedKey names key's counter in Redis, without the user name or
// address in clear.
func sharedKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return "login:" + hex.EncodeToString(h[:16])
}

// blockedShared is blocked across the replicas (zero without, or while
// the counter is unreachable).
func (l *loginLimiter) blockedShared(ctx context.Context, key string) time.Duration {
	if l.shared == nil || !l.shared.Shared() {
		return 0
	}
	n, left, err := l.shared.Count(ctx, sharedKey(key))
	if err != nil || n < int64(l.max) {
		return 0
	}
	return left
}

// failShared and resetShared keep the shared count; a failure to reach it
// leaves the process's count to hold on its own.
func (l *loginLimiter) failShared(ctx context.Context, key string) {
	if l.shared != nil && l.shared.Shared() {
		_, _, _ = l.shared.Incr(ctx, sharedKey(key), l.window)
	}
}

func (l *loginLimiter) resetShared(ctx context.Context, key string) {
	if l.shared != nil && l.shared.Shared() {
		_ = l.shared.Reset(ctx, sharedKey(key))
	}
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
