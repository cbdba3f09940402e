package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestAPITokenLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()
		alice, bob := MustUser(t, st, "alice", store.RoleMember), MustUser(t, st, "bob", store.RoleMember)

		n := auditCount(t, st)
		tok, secret, err := st.CreateAPIToken(ctx, alice.ID, "  ci  ", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, "cht_") || tok.Prefix != secret[:8] || tok.Name != "ci" || tok.Kind != store.TokenUser ||
			tok.UserID != alice.ID || tok.RevokedAt != nil || tok.LastUsedAt != nil {
			t.Errorf("created %+v with secret %q", tok, secret)
		}
		_, after := wantAudit(t, st, n, "create", "api_token", tok.ID, false, true)
		if after["prefix"] != tok.Prefix {
			t.Errorf("audit after = %v", after)
		}
		assertNotInAudit(t, st, secret, store.HashSecret(secret))
		assertSecretNotStored(t, st, "api_tokens", secret)

		unnamed, _, err := st.CreateAPIToken(ctx, bob.ID, "", store.TokenUser)
		if err != nil || unnamed.Name != "api" {
			t.Errorf("token without a name = %+v, %v; want name api", unnamed, err)
		}

		got, user, err := st.FindTokenUser(context.Background(), secret)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != tok.ID || user.ID != alice.ID {
			t.Errorf("FindTokenUser = token %d user %d, want %d %d", got.ID, user.ID, tok.ID, alice.ID)
		}
		// Use is recorded at most once a minute, and without an audit entry.
		lastUsed := func() *time.Time {
			t.Helper()
			ts, err := st.FindAPITokens(context.Background(), alice.ID)
			if err != nil || len(ts) != 1 {
				t.Fatalf("FindAPITokens(alice) = %+v, %v", ts, err)
			}
			return ts[0].LastUsedAt
		}
		if lu := lastUsed(); lu == nil || !lu.Equal(clock.Now()) {
			t.Errorf("last_used_at = %v, want %v", lu, clock.Now())
		}
		firstUse := clock.Now()
		clock.Advance(30 * time.Second)
		if _, _, err := st.FindTokenUser(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
		if lu := lastUsed(); lu == nil || !lu.Equal(firstUse) {
			t.Errorf("last_used_at = %v after 30 s, want still %v", lu, firstUse)
		}
		clock.Advance(31 * time.Second)
		if _, _, err := st.FindTokenUser(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
		if lu := lastUsed(); lu == nil || !lu.Equal(clock.Now()) {
			t.Errorf("last_used_at = %v after 61 s, want %v", lu, clock.Now())
		}

		all, err := st.FindAPITokens(ctx, 0)
		if err != nil || len(all) != 2 || all[0].ID != unnamed.ID {
			t.Errorf("FindAPITokens(all) = %+v, %v; want both, newest first", all, err)
		}

		for _, bad := range []string{"", "cht_", secret + "x", store.HashSecret(secret), tok.Prefix} {
			_, _, err := st.FindTokenUser(ctx, bad)
			storetest.AssertCode(t, err, errs.Unauthorized, "auth.token_invalid")
		}

		// Only its owner (or an admin, with user 0) may revoke a token.
		before := storetest.MustCounts(t, st)
		err = st.RevokeAPIToken(ctx, tok.ID, bob.ID)
		storetest.AssertCode(t, err, errs.NotFound, "token.not_found")
		err = st.RevokeAPIToken(ctx, 999, 0)
		storetest.AssertCode(t, err, errs.NotFound, "token.not_found")
		storetest.AssertUnchanged(t, st, before)

		clock.Advance(time.Minute)
		n = auditCount(t, st)
		if err := st.RevokeAPIToken(ctx, tok.ID, alice.ID); err != nil {
			t.Fatal(err)
		}
		b, a := wantAudit(t, st, n, "revoke", "api_token", tok.ID, true, true)
		if b["revoked_at"] != nil || a["revoked_at"] == nil {
			t.Errorf("audit revoked_at %v -> %v", b["revoked_at"], a["revoked_at"])
		}
		assertNotInAudit(t, st, secret, store.HashSecret(secret))
		_, _, err = st.FindTokenUser(ctx, secret)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.token_invalid")
		ts, err := st.FindAPITokens(ctx, alice.ID)
		if err != nil || len(ts) != 1 || ts[0].RevokedAt == nil || !ts[0].RevokedAt.Equal(clock.Now()) {
			t.Errorf("revoked token = %+v, %v; want revoked_at %v", ts, err, clock.Now())
		}
		// Revoking again is a no-op.
		n = auditCount(t, st)
		if err := st.RevokeAPIToken(ctx, tok.ID, 0); err != nil {
			t.Errorf("second revoke: %v", err)
		}
		if c := auditCount(t, st); c != n {
			t.Errorf("second revoke wrote %d audit entries", c-n)
		}
	})
}

func TestAPITokenRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)
		before := storetest.MustCounts(t, st)

		_, secret, err := st.CreateAPIToken(ctx, u.ID, "board", "board")
		if secret != "" {
			t.Error("a refused token came with a secret")
		}
		e := storetest.AssertCode(t, err, errs.Invalid, "token.kind_invalid")
		assertFields(t, e.Fields, map[string]string{"kind": "token.kind_invalid"})
		_, _, err = st.CreateAPIToken(ctx, u.ID, strings.Repeat("n", 101), store.TokenUser)
		storetest.AssertCode(t, err, errs.Invalid, "field.too_long")
		_, _, err = st.CreateAPIToken(ctx, 999, "ci", store.TokenUser)
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
		storetest.AssertUnchanged(t, st, before)

		_, secret, err = st.CreateAPIToken(ctx, u.ID, "ci", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateUser(ctx, u.ID, store.UserUpdate{Disabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		_, _, err = st.FindTokenUser(ctx, secret)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.disabled")
	})
}

// assertNotInAudit fails when any audit entry mentions one of the strings.
func assertNotInAudit(tb testing.TB, st *store.Store, secrets ...string) {
	tb.Helper()
	es, _, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range es {
		text := e.Summary + deref(e.BeforeJSON) + deref(e.AfterJSON)
		for _, s := range secrets {
			if strings.Contains(text, s) {
				tb.Errorf("audit entry %d (%s %s) holds a secret: %s", e.ID, e.Action, e.Entity, text)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// A user's API tokens go all at once (revoke-all, a new password); the
// agent and board tokens an admin issued are the fleet's and stay.
func TestRevokeUserAPITokensLeavesTelemetryTokens(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		st := storetest.MustOpenWith(t, dialect, store.Options{})
		admin := MustUser(t, st, "root", store.RoleAdmin)
		ctx := store.WithActor(context.Background(), store.Actor{UserID: admin.ID, Username: admin.Username})
		_, user1, err := st.CreateAPIToken(ctx, admin.ID, "ci", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		_, agent, err := st.CreateTelemetryToken(ctx, store.TokenAgent, "gpu-01", "gpu-01")
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.RevokeUserAPITokens(ctx, admin.ID)
		if err != nil || n != 1 {
			t.Fatalf("RevokeUserAPITokens = %d, %v; want 1", n, err)
		}
		if _, _, err := st.FindTokenUser(ctx, user1); !errs.Is(err, errs.Unauthorized) {
			t.Errorf("a revoked user token still resolves: %v", err)
		}
		if _, err := st.FindTelemetryToken(ctx, store.TokenAgent, agent); err != nil {
			t.Errorf("revoking the admin's tokens revoked the fleet's agent token: %v", err)
		}
		if n, err := st.RevokeUserAPITokens(ctx, admin.ID); err != nil || n != 0 {
			t.Errorf("again: %d, %v; want 0", n, err)
		}

		_, user2, err := st.CreateAPIToken(ctx, admin.ID, "laptop", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		pw := "a new password"
		if _, err := st.UpdateUser(ctx, admin.ID, store.UserUpdate{Password: &pw}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.FindTokenUser(ctx, user2); !errs.Is(err, errs.Unauthorized) {
			t.Errorf("a user token survived a new password: %v", err)
		}
		if _, err := st.FindTelemetryToken(ctx, store.TokenAgent, agent); err != nil {
			t.Errorf("a new password revoked the fleet's agent token: %v", err)
		}
	})
}
