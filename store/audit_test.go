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

// Every change writes exactly one audit entry naming the actor, in the same
// transaction; a refused change writes none. The entity tests check each
// entry's content; this walks every mutating method once in one place.
func TestEveryChangeIsAuditedOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		var (
			user    *store.User
			team    *store.Team
			host    *store.Host
			ct      *store.CardType
			card    *store.Card
			image   *store.Image
			tok     *store.APIToken
			session string
		)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			name           string
			do             func() int64 // returns the entity id
			action, entity string
			before, after  bool
		}{
			{"create user", func() int64 { user = MustUser(t, st, "alice", store.RoleAdmin); return user.ID }, "create", "user", false, true},
			{"update user", func() int64 {
				_, err := st.UpdateUser(ctx, user.ID, store.UserUpdate{Email: ptr("a@example.cn")})
				must(err)
				return user.ID
			}, "update", "user", true, true},
			{"change password", func() int64 { must(st.ChangePassword(ctx, user.ID, testPassword, "another secret")); return user.ID }, "update", "user", true, true},
			{"login", func() int64 {
				var err error
				session, err = st.CreateSession(ctx, user.ID)
				must(err)
				return user.ID
			}, "login", "user", false, false},
			{"logout", func() int64 { must(st.DeleteSession(ctx, session)); return user.ID }, "logout", "user", false, false},
			{"create token", func() int64 {
				var err error
				tok, _, err = st.CreateAPIToken(ctx, user.ID, "ci", store.TokenUser)
				must(err)
				return tok.ID
			}, "create", "api_token", false, true},
			{"revoke token", func() int64 { must(st.RevokeAPIToken(ctx, tok.ID, 0)); return tok.ID }, "revoke", "api_token", true, true},
			{"create team", func() int64 { team = MustTeam(t, st, "LLM"); return team.ID }, "create", "team", false, true},
			{"update team", func() int64 {
				_, err := st.UpdateTeam(ctx, team.ID, store.TeamInput{Name: "LLM", Description: "x"})
				must(err)
				return team.ID
			}, "update", "team", true, true},
			{"add member", func() int64 {
				m, err := st.SetMembership(ctx, team.ID, user.ID, store.TeamRoleMember)
				must(err)
				return m.ID
			}, "create", "membership", false, true},
			{"change member role", func() int64 {
				m, err := st.SetMembership(ctx, team.ID, user.ID, store.TeamRoleManager)
				must(err)
				return m.ID
			}, "update", "membership", true, true},
			{"remove member", func() int64 {
				ms, err := st.FindMemberships(ctx, store.MembershipFilter{TeamID: team.ID})
				must(err)
				must(st.DeleteMembership(ctx, team.ID, user.ID))
				return ms[0].ID
			}, "delete", "membership", true, false},
			{"delete team", func() int64 { must(st.DeleteTeam(ctx, team.ID)); return team.ID }, "delete", "team", true, false},
			{"create card type", func() int64 { ct = MustCardType(t, st, "H800"); return ct.ID }, "create", "card_type", false, true},
			{"update card type", func() int64 {
				_, err := st.UpdateCardType(ctx, ct.ID, h100("H800"))
				must(err)
				return ct.ID
			}, "update", "card_type", true, true},
			{"create host", func() int64 { host = MustHost(t, st, "gpu-01"); return host.ID }, "create", "host", false, true},
			{"update host", func() int64 {
				_, err := st.UpdateHost(ctx, host.ID, store.HostInput{Name: "gpu-01", Zone: "z"})
				must(err)
				return host.ID
			}, "update", "host", true, true},
			{"create card", func() int64 { card = MustCard(t, st, uuid1, 0, host.ID, ct.ID); return card.ID }, "create", "card", false, true},
			{"update card", func() int64 {
				_, err := st.UpdateCard(ctx, card.ID, store.CardInput{UUID: uuid1, HostID: host.ID, CardTypeID: ct.ID, Status: store.CardMaintenance})
				must(err)
				return card.ID
			}, "update", "card", true, true},
			{"delete card", func() int64 { must(st.DeleteCard(ctx, card.ID)); return card.ID }, "delete", "card", true, false},
			{"delete host", func() int64 { must(st.DeleteHost(ctx, host.ID)); return host.ID }, "delete", "host", true, false},
			{"delete card type", func() int64 { must(st.DeleteCardType(ctx, ct.ID)); return ct.ID }, "delete", "card_type", true, false},
			{"create image", func() int64 {
				var err error
				image, err = st.CreateImage(ctx, store.ImageInput{Name: "vllm", Reference: "r/vllm:0.6"})
				must(err)
				return image.ID
			}, "create", "image", false, true},
			{"update image", func() int64 {
				_, err := st.UpdateImage(ctx, image.ID, store.ImageInput{Name: "vllm", Reference: "r/vllm:0.7"})
				must(err)
				return image.ID
			}, "update", "image", true, true},
			{"delete image", func() int64 { must(st.DeleteImage(ctx, image.ID)); return image.ID }, "delete", "image", true, false},
			{"record event", func() int64 { must(st.RecordEvent(ctx, "export", "report", 7, "monthly")); return 7 }, "export", "report", false, false},
		}
		for _, s := range steps {
			n := auditCount(t, st)
			id := s.do()
			t.Run(s.name, func(t *testing.T) {
				wantAudit(t, st, n, s.action, s.entity, id, s.before, s.after)
			})
		}
		assertAuditTableHasNoSecrets(t, st)
	})
}

// assertAuditTableHasNoSecrets reads audit_log directly, not through the
// store's own types, for any trace of a password or token hash.
func assertAuditTableHasNoSecrets(tb testing.TB, st *store.Store) {
	tb.Helper()
	ctx := context.Background()
	var hashes []string
	for _, q := range []string{"SELECT password_hash FROM users", "SELECT token_hash FROM api_tokens", "SELECT token_hash FROM sessions"} {
		rows, err := st.DB().QueryContext(ctx, q)
		if err != nil {
			tb.Fatal(err)
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				tb.Fatal(err)
			}
			hashes = append(hashes, h)
		}
		if err := rows.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	rows, err := st.DB().QueryContext(ctx, "SELECT id, summary, COALESCE(before_json, ''), COALESCE(after_json, '') FROM audit_log")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var (
			id                     int64
			summary, before, after string
		)
		if err := rows.Scan(&id, &summary, &before, &after); err != nil {
			tb.Fatal(err)
		}
		seen++
		text := summary + before + after
		assertNoSecrets(tb, "row", text)
		for _, h := range hashes {
			if strings.Contains(text, h) {
				tb.Errorf("audit_log row %d holds a stored hash", id)
			}
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	if seen == 0 {
		tb.Error("audit_log is empty")
	}
}

func TestRefusedChangesAreNotAudited(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		admin := MustUser(t, st, "root", store.RoleAdmin)
		host := MustHost(t, st, "gpu-01")
		ct := MustCardType(t, st, "H800")
		MustCard(t, st, uuid1, 0, host.ID, ct.ID)
		MustTeam(t, st, "LLM")
		n := auditCount(t, st)
		for name, err := range map[string]error{
			"duplicate team": func() error { _, err := st.CreateTeam(ctx, store.TeamInput{Name: "llm"}); return err }(),
			"last admin": func() error {
				_, err := st.UpdateUser(ctx, admin.ID, store.UserUpdate{Disabled: ptr(true)})
				return err
			}(),
			"host in use":      st.DeleteHost(ctx, host.ID),
			"card type in use": st.DeleteCardType(ctx, ct.ID),
			"duplicate card":   func() error { _, err := createCard(st, uuid1, host.ID, ct.ID); return err }(),
		} {
			if errs.CodeOf(err) != errs.Conflict {
				t.Errorf("%s: err = %v, want conflict", name, err)
			}
		}
		if got := auditCount(t, st); got != n {
			t.Errorf("refused changes wrote %d audit entries, want 0", got-n)
		}
	})
}

// createCard creates an active card at index 0.
func createCard(st *store.Store, uuid string, hostID, typeID int64) (*store.Card, error) {
	return st.CreateCard(asActor(), store.CardInput{UUID: uuid, HostID: hostID, CardTypeID: typeID})
}

func TestAuditWithoutActorIsSystem(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h, err := st.CreateHost(context.Background(), store.HostInput{Name: "gpu-01"})
		if err != nil {
			t.Fatal(err)
		}
		e := lastAudit(t, st)
		if e.ActorName != "system" || e.ActorID != nil || e.RemoteIP != "" || e.EntityID != h.ID {
			t.Errorf("entry = %+v, want actor system without id or address", e)
		}
		if a := store.ActorFrom(context.Background()); a.Username != "system" || a.UserID != 0 {
			t.Errorf("ActorFrom(empty) = %+v", a)
		}
		if a := store.ActorFrom(asActor()); a != testActor {
			t.Errorf("ActorFrom = %+v, want %+v", a, testActor)
		}
	})
}

func TestFindAuditEntries(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		other := store.WithActor(context.Background(), store.Actor{UserID: 7, Username: "seven"})
		h1 := MustHost(t, st, "gpu-01")
		if _, err := st.CreateHost(other, store.HostInput{Name: "gpu-02"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateHost(other, h1.ID, store.HostInput{Name: "gpu-01", Zone: "z"}); err != nil {
			t.Fatal(err)
		}
		MustTeam(t, st, "LLM")
		// The summary is cut to the column's 255 characters, by rune.
		long := strings.Repeat("长", 300)
		if err := st.RecordEvent(other, "note", "report", 1, long); err != nil {
			t.Fatal(err)
		}

		all, total, err := st.FindAuditEntries(context.Background(), store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if total != 5 || len(all) != 5 {
			t.Fatalf("all = %d entries, total %d; want 5", len(all), total)
		}
		for i := 1; i < len(all); i++ {
			if all[i-1].ID <= all[i].ID {
				t.Errorf("entries not newest first: %d before %d", all[i-1].ID, all[i].ID)
			}
		}
		if got := []rune(all[0].Summary); len(got) != 255 || string(got) != strings.Repeat("长", 255) {
			t.Errorf("summary has %d runes, want 255", len(got))
		}

		hosts, total, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "host"})
		if err != nil || total != 3 || len(hosts) != 3 {
			t.Errorf("entity host: %d entries, total %d, %v; want 3", len(hosts), total, err)
		}
		h1s, total, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "host", EntityID: h1.ID})
		if err != nil || total != 2 || len(h1s) != 2 || h1s[0].Action != "update" || h1s[1].Action != "create" {
			t.Errorf("host %d: %+v, total %d, %v", h1.ID, h1s, total, err)
		}
		bySeven, total, err := st.FindAuditEntries(context.Background(), store.AuditFilter{ActorID: 7})
		if err != nil || total != 3 || len(bySeven) != 3 {
			t.Errorf("actor 7: %d entries, total %d, %v; want 3", len(bySeven), total, err)
		}
		for _, e := range bySeven {
			if e.ActorName != "seven" {
				t.Errorf("actor 7 filter returned %+v", e)
			}
		}
		page, total, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Limit: 2, Offset: 2})
		if err != nil || total != 5 || len(page) != 2 || page[0].ID != all[2].ID || page[1].ID != all[3].ID {
			t.Errorf("page 2 of 2 = %+v, total %d, %v", page, total, err)
		}
	})
}

// TestAuditSummariesAreKeyed: a summary in words is kept as a message key
// with its arguments (a name as text, a kind as a key to translate), never
// as English; a bare name stays plain text.
func TestAuditSummariesAreKeyed(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		u := MustUser(t, st, "auditor", store.RoleAdmin)
		ctx := store.WithActor(context.Background(), store.Actor{UserID: u.ID, Username: u.Username})
		if _, _, err := st.CreateTelemetryToken(ctx, store.TokenBoard, "大厅看板"); err != nil {
			t.Fatal(err)
		}
		e := lastAudit(t, st)
		if e.Summary != "" || e.SummaryKey != "audit.sum.token_kind" {
			t.Errorf("token entry: summary %q, key %q; want no text and the key", e.Summary, e.SummaryKey)
		}
		want := []store.AuditArg{{Key: "telemetry.kind.board"}, {Text: "大厅看板"}}
		if got := e.Args(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("token entry args = %+v, want %+v", got, want)
		}
		MustHost(t, st, "gpu-07")
		if e := lastAudit(t, st); e.Summary != "gpu-07" || e.SummaryKey != "" || e.Args() != nil {
			t.Errorf("host entry: %+v, want the plain name", e)
		}
	})
}

// TestAuditFilters: by who, by action (any of, none of), by time; the
// choices offered for the filters follow the entries a view holds.
func TestAuditFilters(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		other := store.WithActor(ctx, store.Actor{UserID: 7, Username: "seven"})
		MustHost(t, st, "gpu-01")
		if _, err := st.CreateHost(other, store.HostInput{Name: "gpu-02"}); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{"login", "logout", "login_failed"} {
			if err := st.RecordEvent(other, a, "user", 7, ""); err != nil {
				t.Fatal(err)
			}
		}
		count := func(f store.AuditFilter) int64 {
			t.Helper()
			_, n, err := st.FindAuditEntries(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		now := time.Now()
		for name, c := range map[string]struct {
			f    store.AuditFilter
			want int64
		}{
			"everything":         {store.AuditFilter{}, 5},
			"by seven":           {store.AuditFilter{ActorName: "seven"}, 4},
			"by the auditor":     {store.AuditFilter{ActorName: "auditor"}, 1},
			"sign-ins":           {store.AuditFilter{Actions: store.AuthActions}, 3},
			"changes":            {store.AuditFilter{ExceptActions: store.AuthActions}, 2},
			"seven's changes":    {store.AuditFilter{ActorName: "seven", ExceptActions: store.AuthActions}, 1},
			"logouts":            {store.AuditFilter{Actions: []string{"logout"}}, 1},
			"since an hour ago":  {store.AuditFilter{From: now.Add(-time.Hour)}, 5},
			"from in an hour":    {store.AuditFilter{From: now.Add(time.Hour)}, 0},
			"before an hour ago": {store.AuditFilter{Before: now.Add(-time.Hour)}, 0},
			"this hour":          {store.AuditFilter{From: now.Add(-time.Hour), Before: now.Add(time.Hour)}, 5},
		} {
			if got := count(c.f); got != c.want {
				t.Errorf("%s: %d entries, want %d", name, got, c.want)
			}
		}
		acts, err := st.FindAuditActions(ctx, store.AuditFilter{Actions: store.AuthActions})
		if err != nil || strings.Join(acts, ",") != "login,login_failed,logout" {
			t.Errorf("sign-in actions = %q, %v", acts, err)
		}
		acts, err = st.FindAuditActions(ctx, store.AuditFilter{ExceptActions: store.AuthActions})
		if err != nil || strings.Join(acts, ",") != "create" {
			t.Errorf("change actions = %q, %v", acts, err)
		}
		who, err := st.FindAuditActors(ctx, store.AuditFilter{Actions: store.AuthActions})
		if err != nil || strings.Join(who, ",") != "seven" {
			t.Errorf("who signed in = %q, %v", who, err)
		}
	})
}
