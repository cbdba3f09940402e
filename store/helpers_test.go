package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// testActor is who makes the changes in these tests; the audit log must name
// them.
var testActor = store.Actor{UserID: 4242, Username: "auditor", IP: "192.0.2.7"}

// asActor is a context carrying testActor.
func asActor() context.Context { return store.WithActor(context.Background(), testActor) }

// testPassword satisfies MinPasswordLength.
const testPassword = "correct horse"

// epoch is where test clocks start: a fixed instant keeps runs identical.
var epoch = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

func ptr[T any](v T) *T { return &v }

// MustUser creates a user with testPassword.
func MustUser(tb testing.TB, st *store.Store, username, role string) *store.User {
	tb.Helper()
	u, err := st.CreateUser(asActor(), store.UserCreate{Username: username, DisplayName: strings.ToUpper(username), Password: testPassword, Role: role})
	if err != nil {
		tb.Fatalf("create user %s: %v", username, err)
	}
	return u
}

// MustTeam creates a team.
func MustTeam(tb testing.TB, st *store.Store, name string) *store.Team {
	tb.Helper()
	t, err := st.CreateTeam(asActor(), store.TeamInput{Name: name, Description: "team " + name})
	if err != nil {
		tb.Fatalf("create team %s: %v", name, err)
	}
	return t
}

// h100 is a valid card type input.
func h100(name string) store.CardTypeInput {
	return store.CardTypeInput{Name: name, VRAMGiB: 80, TFLOPSFP32: 67, TFLOPSTF32: 494.7, TFLOPSBF16: 989.4,
		TFLOPSFP16: 989.4, TFLOPSFP8: 1978.9, TFLOPSINT8: 1978.9, PriceFen: 2200}
}

// MustCardType creates a card type.
func MustCardType(tb testing.TB, st *store.Store, name string) *store.CardType {
	tb.Helper()
	c, err := st.CreateCardType(asActor(), h100(name))
	if err != nil {
		tb.Fatalf("create card type %s: %v", name, err)
	}
	return c
}

// MustHost creates a host.
func MustHost(tb testing.TB, st *store.Store, name string) *store.Host {
	tb.Helper()
	h, err := st.CreateHost(asActor(), store.HostInput{Name: name, Zone: "华北2-可用区A"})
	if err != nil {
		tb.Fatalf("create host %s: %v", name, err)
	}
	return h
}

// MustCard creates an active card.
func MustCard(tb testing.TB, st *store.Store, uuid string, index int, hostID, typeID int64) *store.Card {
	tb.Helper()
	c, err := st.CreateCard(asActor(), store.CardInput{UUID: uuid, GPUIndex: index, HostID: hostID, CardTypeID: typeID})
	if err != nil {
		tb.Fatalf("create card %s: %v", uuid, err)
	}
	return c
}

// auditCount is the number of audit entries.
func auditCount(tb testing.TB, st *store.Store) int64 {
	tb.Helper()
	return storetest.MustCount(tb, st, "audit_log")
}

// lastAudit is the newest audit entry.
func lastAudit(tb testing.TB, st *store.Store) store.AuditEntry {
	tb.Helper()
	es, _, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Limit: 1})
	if err != nil {
		tb.Fatalf("find audit entries: %v", err)
	}
	if len(es) == 0 {
		tb.Fatal("audit log is empty")
	}
	return es[0]
}

// secretMarkers must never appear in the audit log.
var secretMarkers = []string{"password_hash", "passwordhash", "token_hash", "tokenhash", "$2a$", "$2b$"}

// wantAudit checks that exactly one entry was written since the log held
// `before` entries, that it records action on entity id by testActor, that
// its before/after JSON is present exactly when wanted and valid, and that it
// holds no secret. It returns the decoded before and after objects.
func wantAudit(tb testing.TB, st *store.Store, before int64, action, entity string, id int64, wantBefore, wantAfter bool) (map[string]any, map[string]any) {
	tb.Helper()
	if n := auditCount(tb, st); n != before+1 {
		tb.Fatalf("audit entries = %d, want %d (exactly one per change)", n, before+1)
	}
	e := lastAudit(tb, st)
	if e.Action != action || e.Entity != entity || e.EntityID != id {
		tb.Errorf("audit entry = %s %s #%d, want %s %s #%d", e.Action, e.Entity, e.EntityID, action, entity, id)
	}
	if e.ActorID == nil || *e.ActorID != testActor.UserID || e.ActorName != testActor.Username || e.RemoteIP != testActor.IP {
		tb.Errorf("audit actor = %v/%q/%q, want %d/%q/%q", e.ActorID, e.ActorName, e.RemoteIP, testActor.UserID, testActor.Username, testActor.IP)
	}
	if e.At.IsZero() {
		tb.Error("audit entry has no time")
	}
	decode := func(what string, s *string, want bool) map[string]any {
		tb.Helper()
		if (s != nil) != want {
			tb.Errorf("audit %s JSON present = %v, want %v", what, s != nil, want)
			return nil
		}
		if s == nil {
			return nil
		}
		assertNoSecrets(tb, what, *s)
		var m map[string]any
		if err := json.Unmarshal([]byte(*s), &m); err != nil {
			tb.Errorf("audit %s JSON %q: %v", what, *s, err)
			return nil
		}
		if got, ok := m["id"].(float64); !ok || int64(got) != id {
			tb.Errorf("audit %s JSON id = %v, want %d", what, m["id"], id)
		}
		return m
	}
	assertNoSecrets(tb, "summary", e.Summary)
	return decode("before", e.BeforeJSON, wantBefore), decode("after", e.AfterJSON, wantAfter)
}

func assertNoSecrets(tb testing.TB, what, s string) {
	tb.Helper()
	low := strings.ToLower(s)
	for _, m := range secretMarkers {
		if strings.Contains(low, m) {
			tb.Errorf("audit %s contains %q: %s", what, m, s)
		}
	}
}

// fieldsEqual reports a difference between the field map of err and want.
func assertFields(tb testing.TB, got, want map[string]string) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("fields = %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			tb.Errorf("fields = %v, want %v", got, want)
			return
		}
	}
}

// openTwoStores opens two stores on one migrated database, as two server
// processes would; now replaces their clock when not nil.
func openTwoStores(t *testing.T, dialect string, now func() time.Time) (one, two *store.Store) {
	t.Helper()
	var dsn string
	if dialect == store.SQLite {
		dsn = filepath.Join(t.TempDir(), "twin.db")
	} else {
		dsn, _ = storetest.MySQLDSN(t)
	}
	open := func() *store.Store {
		st, err := store.Open(context.Background(), store.Options{Dialect: dialect, DSN: dsn, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	one = open()
	if err := one.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return one, open()
}
