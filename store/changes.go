package store

import "sync/atomic"

// Change names what a write changed that a process may have cached: its
// own caches forget at once; OnChange tells the other replicas (through
// cluster), whose Forget does the same there.
type Change string

// Changes.
const (
	// ChangeTokens: an API or telemetry token revoked or bound to a host.
	ChangeTokens Change = "tokens"
	// ChangeUsers: a user changed (disabled, role, password, OS accounts).
	ChangeUsers Change = "users"
	// ChangeInventory: cards, hosts or card types changed.
	ChangeInventory Change = "inventory"
)

// Changes lists every Change, for forgetting everything at once.
var Changes = []Change{ChangeTokens, ChangeUsers, ChangeInventory}

// changeHook is what OnChange set.
type changeHook = atomic.Pointer[func(Change)]

// OnChange sets fn to be told of every change this process commits, after
// its own caches forgot: the portal publishes them to the other replicas.
func (s *Store) OnChange(fn func(Change)) { s.onChange.Store(&fn) }

// Forget drops what this process cached about c: another replica changed it.
func (s *Store) Forget(c Change) {
	switch c {
	case ChangeTokens, ChangeUsers:
		s.tokenCache.forget()
	case ChangeInventory:
		s.cardLabels.forget()
	}
}

// changed forgets c here and tells the hook; called after the commit.
func (s *Store) changed(c Change) {
	s.Forget(c)
	if fn := s.onChange.Load(); fn != nil {
		(*fn)(c)
	}
}
