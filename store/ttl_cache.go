package store

import (
	"sync"
	"time"
)

// ttlCache remembers answers read from the database for a while, for reads
// that a busy process repeats far more often than the data changes. A
// change committed in this process forgets every answer at once (forget,
// from changed); another process sharing the database is told through the
// cluster (Forget), and where it is not (no Redis, or Redis down) sees the
// change within the ttl.
type ttlCache[K comparable, V any] struct {
	ttl time.Duration
	max int // past it, expired entries are dropped, then all if need be

	mu      sync.Mutex
	gen     uint64 // raised by forget
	entries map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v     V
	until time.Time
}

func newTTLCache[K comparable, V any](ttl time.Duration, max int) ttlCache[K, V] {
	return ttlCache[K, V]{ttl: ttl, max: max}
}

// get returns the remembered answer for k.
func (c *ttlCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || time.Now().After(e.until) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// generation is read before the database is: an answer read while forget
// ran is not kept.
func (c *ttlCache[K, V]) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put remembers v for k, unless forget ran since gen was read.
func (c *ttlCache[K, V]) put(k K, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	now := time.Now()
	if c.entries == nil {
		c.entries = map[K]ttlEntry[V]{}
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[k] = ttlEntry[V]{v: v, until: now.Add(c.ttl)}
}

// forget drops every remembered answer.
func (c *ttlCache[K, V]) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// Every API request resolves its bearer token to a user; a client booking
// hundreds of times a second asked the database the same question each
// time, a read that cost as much as the booking itself on MySQL. A token
// revoked, a user disabled, demoted or given a new password forgets them
// (ChangeTokens, ChangeUsers).
const (
	tokenCacheTTL = 2 * time.Second
	tokenCacheMax = 4096
)

type cachedToken struct {
	token APIToken
	user  User
}

// Each booking answer names its cards (host and index): a query after
// every batch's commit, one of the few round trips a batch makes, so twice
// as many per booking with three replicas as with one. A card or host
// changed forgets them (ChangeInventory).
const (
	cardLabelTTL = 5 * time.Second
	cardLabelMax = 16384
)
