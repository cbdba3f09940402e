package store

import (
	"sync"
	"time"
)

// Every API request resolves its bearer token to a user; a client booking
// hundreds of times a second asked the database the same question each
// time, a read that cost as much as the booking itself on MySQL. So each
// process remembers a token's answer for tokenCacheTTL. A change in this
// process — a token revoked, a user disabled, demoted or given a new
// password — forgets every answer at once; another process sharing the
// database sees it within tokenCacheTTL.
const tokenCacheTTL = 2 * time.Second

// tokenCacheMax bounds the entries; past it, expired ones are dropped.
const tokenCacheMax = 4096

type tokenCache struct {
	mu      sync.Mutex
	gen     uint64 // raised by forget
	entries map[string]cachedToken
}

type cachedToken struct {
	token APIToken
	user  User
	until time.Time
}

// get returns copies of a remembered answer for the token hash.
func (c *tokenCache) get(hash string) (*APIToken, *User, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || time.Now().After(e.until) {
		return nil, nil, false
	}
	t, u := e.token, e.user
	return &t, &u, true
}

// generation is read before the database is: an answer read while forget
// ran is not kept.
func (c *tokenCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *tokenCache) put(hash string, t *APIToken, u *User, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	now := time.Now()
	if c.entries == nil {
		c.entries = map[string]cachedToken{}
	}
	if len(c.entries) >= tokenCacheMax {
		for k, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= tokenCacheMax {
			clear(c.entries)
		}
	}
	c.entries[hash] = cachedToken{token: *t, user: *u, until: now.Add(tokenCacheTTL)}
}

// forget drops every remembered answer.
func (c *tokenCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}
