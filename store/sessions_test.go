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

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)

		n := auditCount(t, st)
		token, err := st.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(token, "chs_") || len(token) < 30 {
			t.Errorf("token = %q, want chs_ and 32 random characters", token)
		}
		wantAudit(t, st, n, "login", "user", u.ID, false, false)
		assertSecretNotStored(t, st, "sessions", token)

		got, err := st.FindSessionUser(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID {
			t.Errorf("session user %d, want %d", got.ID, u.ID)
		}
		_, err = st.FindSessionUser(ctx, token+"x")
		storetest.AssertCode(t, err, errs.NotFound, "auth.session_expired")
		_, err = st.FindSessionUser(ctx, store.HashSecret(token))
		storetest.AssertCode(t, err, errs.NotFound, "auth.session_expired")

		// Alive up to the last microsecond of its lifetime, gone at its end.
		clock.Advance(store.SessionTTL - time.Microsecond)
		if _, err := st.FindSessionUser(ctx, token); err != nil {
			t.Errorf("session a microsecond before expiry: %v", err)
		}
		clock.Advance(time.Microsecond)
		_, err = st.FindSessionUser(ctx, token)
		storetest.AssertCode(t, err, errs.NotFound, "auth.session_expired")

		// The next login sweeps expired sessions.
		clock.Advance(time.Second)
		other, err := st.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c := storetest.MustCount(t, st, "sessions"); c != 1 {
			t.Errorf("sessions = %d after a login past expiry, want 1 (the expired one swept)", c)
		}

		n = auditCount(t, st)
		if err := st.DeleteSession(ctx, other); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "logout", "user", u.ID, false, false)
		_, err = st.FindSessionUser(ctx, other)
		storetest.AssertCode(t, err, errs.NotFound, "auth.session_expired")
		// Logging out twice is not an error and records nothing.
		n = auditCount(t, st)
		if err := st.DeleteSession(ctx, other); err != nil {
			t.Errorf("second logout: %v", err)
		}
		if c := auditCount(t, st); c != n {
			t.Errorf("second logout wrote %d audit entries", c-n)
		}
	})
}

func TestSessionOfDisabledUser(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)
		token, err := st.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateUser(ctx, u.ID, store.UserUpdate{Disabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		_, err = st.FindSessionUser(ctx, token)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.disabled")
	})
}

func TestCreateSessionForMissingUser(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		before := storetest.MustCounts(t, st)
		token, err := st.CreateSession(asActor(), 999)
		if token != "" {
			t.Errorf("token = %q, want none", token)
		}
		// The same answer on both dialects, not whatever the foreign key says.
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
		storetest.AssertUnchanged(t, st, before)
	})
}

// assertSecretNotStored fails when any text column of table holds secret,
// and when no row holds its hash: only the hash may be at rest.
func assertSecretNotStored(tb testing.TB, st *store.Store, table, secret string) {
	tb.Helper()
	rows, err := st.DB().QueryContext(context.Background(), "SELECT * FROM "+table)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	hash, sawHash := store.HashSecret(secret), false
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		for i, v := range vals {
			var s string
			switch v := v.(type) {
			case string:
				s = v
			case []byte:
				s = string(v)
			default:
				continue
			}
			if strings.Contains(s, secret) || strings.Contains(s, secret[4:]) {
				tb.Errorf("%s.%s holds the secret", table, cols[i])
			}
			if cols[i] == "token_hash" && s == hash {
				sawHash = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	if !sawHash {
		tb.Errorf("%s holds no row with the secret's hash", table)
	}
}
