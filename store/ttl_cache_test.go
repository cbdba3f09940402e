package store_test

import (
	"context"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestTokenAnswersFollowChanges: a process remembers a token's user for a
// moment (ttl_cache.go), but a revocation, a disabled account or a new
// role made in that process count at once, and one made by another process
// on the same database within two seconds.
func TestTokenAnswersFollowChanges(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		one, two := openTwoStores(t, dialect, nil)
		ctx := asActor()
		alice := MustUser(t, one, "alice", store.RoleMember)
		lookup := func(st *store.Store, secret string) (*store.User, error) {
			_, u, err := st.FindTokenUser(context.Background(), secret)
			return u, err
		}
		tok, secret, err := one.CreateAPIToken(ctx, alice.ID, "ci", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []*store.Store{one, two} {
			if u, err := lookup(st, secret); err != nil || u.ID != alice.ID || u.Role != store.RoleMember {
				t.Fatalf("lookup: %+v, %v", u, err)
			}
		}

		// A new role, made in this process: its next lookup has it.
		manager := store.RoleManager
		if _, err := one.UpdateUser(ctx, alice.ID, store.UserUpdate{Role: &manager}); err != nil {
			t.Fatal(err)
		}
		if u, err := lookup(one, secret); err != nil || u.Role != store.RoleManager {
			t.Errorf("after promotion, same process: %+v, %v", u, err)
		}
		// The other process within the cache's two seconds.
		waitFor := func(what string, ok func() bool) {
			t.Helper()
			for deadline := time.Now().Add(3 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("other process: %s not seen after 3 s", what)
				}
			}
		}
		waitFor("promotion", func() bool { u, err := lookup(two, secret); return err == nil && u.Role == store.RoleManager })

		// Disabled in this process: refused at once here.
		off := true
		if _, err := one.UpdateUser(ctx, alice.ID, store.UserUpdate{Disabled: &off}); err != nil {
			t.Fatal(err)
		}
		_, err = lookup(one, secret)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.disabled")
		waitFor("disabling", func() bool { _, err := lookup(two, secret); return errs.Is(err, errs.Unauthorized) })
		on := false
		if _, err := one.UpdateUser(ctx, alice.ID, store.UserUpdate{Disabled: &on}); err != nil {
			t.Fatal(err)
		}
		waitFor("enabling", func() bool { _, err := lookup(two, secret); return err == nil })

		// Revoked by the other process: refused there at once, here soon.
		if _, err := lookup(one, secret); err != nil {
			t.Fatal(err)
		}
		if err := two.RevokeAPIToken(ctx, tok.ID, 0); err != nil {
			t.Fatal(err)
		}
		_, err = lookup(two, secret)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.token_invalid")
		waitFor("revocation", func() bool { _, err := lookup(one, secret); return errs.Is(err, errs.Unauthorized) })
	})
}
