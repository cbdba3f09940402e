package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"cardhour/directory"
	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// ldapID is an LDAP identity of username in groups.
func ldapID(username string, groups ...string) directory.Identity {
	return directory.Identity{Provider: directory.LDAP, Subject: "uid=" + username + ",ou=people,dc=example,dc=com",
		Username: username, DisplayName: "Dir " + username, Email: username + "@example.com", Groups: groups}
}

// MustRule adds a group rule.
func MustRule(tb testing.TB, st *store.Store, in store.GroupMappingCreate) *store.GroupMapping {
	tb.Helper()
	m, err := st.CreateGroupMapping(asActor(), in)
	if err != nil {
		tb.Fatalf("create rule %+v: %v", in, err)
	}
	return m
}

// teamRoles are the user's memberships, team → role.
func teamRoles(tb testing.TB, st *store.Store, userID int64) map[int64]string {
	tb.Helper()
	ms, err := st.FindMemberships(context.Background(), store.MembershipFilter{UserID: userID})
	if err != nil {
		tb.Fatal(err)
	}
	out := map[int64]string{}
	for _, m := range ms {
		out[m.TeamID] = m.Role
	}
	return out
}

// auditActions are the actions of the entries written after the log held n.
func auditActions(tb testing.TB, st *store.Store, n int64) []string {
	tb.Helper()
	es, total, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range es[:total-n] {
		out = append(out, e.Action+" "+e.Entity)
	}
	slices.Sort(out)
	return out
}

func TestSignInExternalFollowsTheGroups(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		llm, vision, byHand := MustTeam(t, st, "LLM"), MustTeam(t, st, "Vision"), MustTeam(t, st, "ByHand")
		MustUser(t, st, "root", store.RoleAdmin)
		MustRule(t, st, store.GroupMappingCreate{Group: "llm-dev", TeamID: llm.ID, TeamRole: store.TeamRoleMember})
		MustRule(t, st, store.GroupMappingCreate{Provider: directory.LDAP, Group: "vision", TeamID: vision.ID, TeamRole: store.TeamRoleManager, PortalRole: store.RoleManager})
		MustRule(t, st, store.GroupMappingCreate{Provider: directory.OIDC, Group: "llm-dev", PortalRole: store.RoleAdmin})

		n := auditCount(t, st)
		u, err := st.SignInExternal(ctx, ldapID("alice", "LLM-Dev", "vision"), store.RoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		if u.Username != "alice" || u.Role != store.RoleManager || u.DisplayName != "Dir alice" || u.Email != "alice@example.com" || u.PasswordHash != "" {
			t.Errorf("created %+v", u)
		}
		if got := teamRoles(t, st, u.ID); len(got) != 2 || got[llm.ID] != store.TeamRoleMember || got[vision.ID] != store.TeamRoleManager {
			t.Errorf("memberships = %v, want LLM member and Vision manager", got)
		}
		want := []string{"create membership", "create membership", "create user", "directory_login user"}
		if got := auditActions(t, st, n); !slices.Equal(got, want) {
			t.Errorf("audited %v, want %v", got, want)
		}
		if e := lastAudit(t, st); e.SummaryKey != "audit.sum.directory_identity" || len(e.Args()) != 2 || e.Args()[1].Text != "alice" {
			t.Errorf("login audit = %+v", e)
		}
		// No password: a directory account never signs in locally.
		for _, pw := range []string{"", testPassword} {
			_, err := st.Authenticate(context.Background(), "alice", pw)
			storetest.AssertCode(t, err, errs.Unauthorized, "auth.bad_credentials")
		}

		// A membership in a team no rule names stays; leaving a group ends
		// its membership; no rule left gives a role: the default.
		if _, err := st.SetMembership(ctx, byHand.ID, u.ID, store.TeamRoleViewer); err != nil {
			t.Fatal(err)
		}
		again, err := st.SignInExternal(ctx, ldapID("alice", "llm-dev"), store.RoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != u.ID || again.Role != store.RoleViewer {
			t.Errorf("second sign-in = %+v, want the same account, now viewer", again)
		}
		if got := teamRoles(t, st, u.ID); len(got) != 2 || got[llm.ID] != store.TeamRoleMember || got[byHand.ID] != store.TeamRoleViewer {
			t.Errorf("memberships = %v, want LLM member and ByHand kept", got)
		}
		// The same groups again change nothing but the login entry.
		n = auditCount(t, st)
		if _, err := st.SignInExternal(ctx, ldapID("alice", "llm-dev"), store.RoleViewer); err != nil {
			t.Fatal(err)
		}
		if got := auditActions(t, st, n); !slices.Equal(got, []string{"directory_login user"}) {
			t.Errorf("an unchanged sign-in audited %v", got)
		}
		ids, err := st.FindUserIdentities(ctx, u.ID)
		if err != nil || len(ids) != 1 || ids[0].Provider != directory.LDAP || ids[0].Username != "alice" {
			t.Errorf("FindUserIdentities = %+v, %v", ids, err)
		}
		sources, err := st.AccountProviders(ctx)
		if err != nil || !slices.Equal(sources[u.ID], []string{directory.LDAP}) || len(sources) != 1 {
			t.Errorf("AccountProviders = %v, %v", sources, err)
		}

		// Sync: the same rules, no login entry; changed tells.
		changed, err := st.ApplyDirectoryGroups(ctx, u.ID, ldapID("alice", "vision"), store.RoleViewer)
		if err != nil || !changed {
			t.Fatalf("ApplyDirectoryGroups = %v, %v; want changed", changed, err)
		}
		if got := teamRoles(t, st, u.ID); got[vision.ID] != store.TeamRoleManager || got[llm.ID] != "" {
			t.Errorf("after sync memberships = %v", got)
		}
		n = auditCount(t, st)
		changed, err = st.ApplyDirectoryGroups(ctx, u.ID, ldapID("alice", "vision"), store.RoleViewer)
		if err != nil || changed || auditCount(t, st) != n {
			t.Errorf("an unchanged sync = %v, %v, %d entries", changed, err, auditCount(t, st)-n)
		}
		accounts, err := st.FindExternalAccounts(ctx, directory.LDAP)
		if err != nil || len(accounts) != 1 || accounts[0].User.ID != u.ID || accounts[0].Identity.Subject != ldapID("alice").Subject {
			t.Errorf("FindExternalAccounts = %+v, %v", accounts, err)
		}
		if none, err := st.FindExternalAccounts(ctx, directory.OIDC); err != nil || len(none) != 0 {
			t.Errorf("FindExternalAccounts(oidc) = %+v, %v", none, err)
		}
	})
}

func TestSignInExternalNeverTakesOverALocalAccount(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		bob := MustUser(t, st, "bob", store.RoleMember)
		n := auditCount(t, st)
		_, err := st.SignInExternal(ctx, ldapID("bob"), store.RoleMember)
		storetest.AssertCode(t, err, errs.Conflict, "directory.not_linked")
		wantAudit(t, st, n, "directory_conflict", "external_identity", lastAudit(t, st).EntityID, false, true)
		if ids, _ := st.FindUserIdentities(ctx, bob.ID); len(ids) != 0 {
			t.Errorf("bob got identities %+v without a link", ids)
		}
		// Twice: still one pending identity, still refused.
		_, err = st.SignInExternal(ctx, ldapID("bob"), store.RoleMember)
		storetest.AssertCode(t, err, errs.Conflict, "directory.not_linked")
		pending, err := st.FindPendingIdentities(ctx)
		if err != nil || len(pending) != 1 || pending[0].Username != "bob" || pending[0].UserID != nil {
			t.Fatalf("pending = %+v, %v", pending, err)
		}
		// The local password still works; the account is unchanged.
		if _, err := st.Authenticate(ctx, "bob", testPassword); err != nil {
			t.Errorf("bob's own password: %v", err)
		}

		n = auditCount(t, st)
		if err := st.LinkIdentity(ctx, pending[0].ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "directory_link", "external_identity", pending[0].ID, true, true)
		storetest.AssertCode(t, st.LinkIdentity(ctx, pending[0].ID), errs.Conflict, "directory.already_linked")
		storetest.AssertCode(t, st.LinkIdentity(ctx, 999999), errs.NotFound, "directory.identity_not_found")
		u, err := st.SignInExternal(ctx, ldapID("bob"), store.RoleMember)
		if err != nil || u.ID != bob.ID {
			t.Fatalf("after the link sign-in = %+v, %v; want bob", u, err)
		}
		if pending, _ := st.FindPendingIdentities(ctx); len(pending) != 0 {
			t.Errorf("pending after the link = %+v", pending)
		}
	})
}

func TestSignInExternalRefusesAndProtects(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		// The only admin signs in through the directory, which gives no role:
		// they stay admin.
		boss, err := st.SignInExternal(ctx, ldapID("boss"), store.RoleAdmin)
		if err != nil || boss.Role != store.RoleAdmin {
			t.Fatalf("boss = %+v, %v", boss, err)
		}
		again, err := st.SignInExternal(ctx, ldapID("boss"), store.RoleMember)
		if err != nil || again.Role != store.RoleAdmin {
			t.Errorf("the last admin was demoted: %+v, %v", again, err)
		}
		storetest.AssertCode(t, st.DisableGoneUser(ctx, boss.ID, directory.LDAP), errs.Conflict, "user.last_admin")

		carol, err := st.SignInExternal(ctx, ldapID("carol"), store.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		disabled := true
		if _, err := st.UpdateUser(ctx, carol.ID, store.UserUpdate{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
		_, err = st.SignInExternal(ctx, ldapID("carol"), store.RoleMember)
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.disabled")

		bad := ldapID("Not A Name!")
		_, err = st.SignInExternal(ctx, bad, store.RoleMember)
		storetest.AssertCode(t, err, errs.Invalid, "directory.username_invalid")
		if n := storetest.MustCount(t, st, "users"); n != 2 {
			t.Errorf("users = %d, want 2", n)
		}
	})
}

func TestDisableGoneUser(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		MustUser(t, st, "root", store.RoleAdmin)
		dave, err := st.SignInExternal(ctx, ldapID("dave"), store.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		session, err := st.CreateSession(ctx, dave.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := st.CreateAPIToken(ctx, dave.ID, "ci", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		// Looked up once: the token cache now holds dave enabled.
		if _, _, err := st.FindTokenUser(ctx, secret); err != nil {
			t.Fatal(err)
		}
		n := auditCount(t, st)
		if err := st.DisableGoneUser(ctx, dave.ID, directory.LDAP); err != nil {
			t.Fatal(err)
		}
		if got := auditActions(t, st, n); !slices.Equal(got, []string{"directory_disabled user", "revoke api_token"}) {
			t.Errorf("audited %v", got)
		}
		_, _, err = st.FindTokenUser(ctx, secret)
		storetest.AssertCode(t, err, errs.Unauthorized, "")
		if _, err := st.FindSessionUser(ctx, session); err == nil {
			t.Error("dave's session still works")
		}
		if u, _ := st.FindUserByID(ctx, dave.ID); !u.Disabled {
			t.Error("dave is not disabled")
		}
		if accounts, _ := st.FindExternalAccounts(ctx, directory.LDAP); len(accounts) != 0 {
			t.Errorf("a disabled account is still synced: %+v", accounts)
		}
		// Again: nothing more happens.
		n = auditCount(t, st)
		if err := st.DisableGoneUser(ctx, dave.ID, directory.LDAP); err != nil || auditCount(t, st) != n {
			t.Errorf("disabling twice: %v, %d entries", err, auditCount(t, st)-n)
		}
	})
}

func TestGroupMappings(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		llm := MustTeam(t, st, "LLM")
		_, err := st.CreateGroupMapping(ctx, store.GroupMappingCreate{Provider: "ad", Group: "", TeamID: 0, TeamRole: "boss", PortalRole: "root"})
		e := storetest.AssertCode(t, err, errs.Invalid, "")
		want := map[string]string{"provider": "directory.provider_invalid", "group": "field.required", "team_id": "directory.team_required", "portal_role": "user.role_invalid"}
		for f, k := range want {
			if e.Fields[f] != k {
				t.Errorf("field %s = %q, want %q (all: %v)", f, e.Fields[f], k, e.Fields)
			}
		}
		_, err = st.CreateGroupMapping(ctx, store.GroupMappingCreate{Group: "x", TeamID: 424242, TeamRole: "boss"})
		e = storetest.AssertCode(t, err, errs.Invalid, "")
		if e.Fields["team_id"] != "team.not_found" || e.Fields["team_role"] != "membership.role_invalid" {
			t.Errorf("fields = %v", e.Fields)
		}
		_, err = st.CreateGroupMapping(ctx, store.GroupMappingCreate{Group: "x"})
		storetest.AssertCode(t, err, errs.Invalid, "directory.rule_empty")

		n := auditCount(t, st)
		team := MustRule(t, st, store.GroupMappingCreate{Provider: "LDAP", Group: " llm-dev ", TeamID: llm.ID, TeamRole: store.TeamRoleMember})
		wantAudit(t, st, n, "create", "group_mapping", team.ID, false, true)
		role := MustRule(t, st, store.GroupMappingCreate{Group: "llm-dev", PortalRole: store.RoleManager})
		for _, dup := range []store.GroupMappingCreate{
			{Provider: directory.LDAP, Group: "LLM-DEV", TeamID: llm.ID, TeamRole: store.TeamRoleViewer},
			{Group: "llm-dev", PortalRole: store.RoleViewer},
		} {
			_, err := st.CreateGroupMapping(ctx, dup)
			storetest.AssertCode(t, err, errs.Conflict, "directory.rule_taken")
		}
		views, err := st.FindGroupMappings(ctx)
		if err != nil || len(views) != 2 || views[0].ID != role.ID || views[1].TeamName != "LLM" || views[1].Provider != "ldap" || views[1].GroupName != "llm-dev" {
			t.Errorf("FindGroupMappings = %+v, %v", views, err)
		}
		rules, err := st.DirectoryRules(ctx)
		if err != nil || len(rules) != 2 || rules[0].TeamID != llm.ID || rules[1].TeamID != 0 || rules[1].PortalRole != store.RoleManager {
			t.Errorf("DirectoryRules = %+v, %v", rules, err)
		}
		n = auditCount(t, st)
		if err := st.DeleteGroupMapping(ctx, role.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "group_mapping", role.ID, true, false)
		storetest.AssertCode(t, st.DeleteGroupMapping(ctx, role.ID), errs.NotFound, "directory.rule_not_found")
		// A team's rules go with it.
		if err := st.DeleteTeam(ctx, llm.ID); err != nil {
			t.Fatal(err)
		}
		if n := storetest.MustCount(t, st, "group_mappings"); n != 0 {
			t.Errorf("rules after the team went: %d", n)
		}
	})
}

func TestLoginStatesAreSingleUse(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := context.Background()
		in := store.LoginState{State: "st-1", Nonce: "n-1", Verifier: "v-1", Next: "/booking", ExpiresAt: epoch.Add(10 * time.Minute)}
		if err := st.SaveLoginState(ctx, in); err != nil {
			t.Fatal(err)
		}
		var raw string
		if err := st.DB().QueryRow("SELECT state_hash FROM login_states").Scan(&raw); err != nil || raw != store.HashSecret("st-1") {
			t.Errorf("stored state %q, %v; want its hash", raw, err)
		}
		got, err := st.TakeLoginState(ctx, "st-1")
		if err != nil || got.Nonce != "n-1" || got.Verifier != "v-1" || got.Next != "/booking" {
			t.Fatalf("TakeLoginState = %+v, %v", got, err)
		}
		_, err = st.TakeLoginState(ctx, "st-1")
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.sso_state_invalid")
		_, err = st.TakeLoginState(ctx, "never")
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.sso_state_invalid")

		if err := st.SaveLoginState(ctx, store.LoginState{State: "st-2", Nonce: "n", Verifier: "v", ExpiresAt: epoch.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Minute)
		_, err = st.TakeLoginState(ctx, "st-2")
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.sso_state_invalid")
		if n := storetest.MustCount(t, st, "login_states"); n != 0 {
			t.Errorf("an expired state stayed: %d rows", n)
		}

		// Racing callbacks with one state: exactly one takes it.
		if err := st.SaveLoginState(ctx, store.LoginState{State: "st-3", Nonce: "n", Verifier: "v", ExpiresAt: clock.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([]error, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, results[i] = st.TakeLoginState(ctx, "st-3")
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range results {
			if err == nil {
				won++
			} else if !errs.Is(err, errs.Unauthorized) {
				t.Errorf("a racing take failed otherwise: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d callbacks took one state, want 1", won)
		}
	})
}

func TestLocalLoginSwitch(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		if on, err := st.LocalLoginEnabled(ctx); err != nil || !on {
			t.Fatalf("default = %v, %v; want on", on, err)
		}
		for _, on := range []bool{false, false, true, false} {
			n := auditCount(t, st)
			if err := st.SetLocalLogin(ctx, on); err != nil {
				t.Fatal(err)
			}
			if e := lastAudit(t, st); auditCount(t, st) != n+1 || e.Action != "update" || e.Entity != "portal_setting" || e.ActorName != testActor.Username {
				t.Errorf("audit = %+v", e)
			}
			if got, err := st.LocalLoginEnabled(ctx); err != nil || got != on {
				t.Errorf("after SetLocalLogin(%v): %v, %v", on, got, err)
			}
		}
	})
}

func TestDirectorySyncRecord(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		_, err := st.LastDirectorySync(ctx, directory.LDAP)
		storetest.AssertCode(t, err, errs.NotFound, "directory.no_sync")
		for _, r := range []store.DirectorySyncResult{
			{Provider: directory.LDAP, Checked: 5, Changed: 2, Disabled: 1},
			{Provider: directory.OIDC, Err: "not used"},
			{Provider: directory.LDAP, Checked: 4, Failed: 1},
		} {
			if err := st.RecordDirectorySync(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		e, err := st.LastDirectorySync(ctx, directory.LDAP)
		if err != nil {
			t.Fatal(err)
		}
		r, err := store.DirectorySyncOf(e)
		if err != nil || r.Checked != 4 || r.Failed != 1 || e.Action != "directory_sync" || e.SummaryKey != "audit.sum.directory_sync" {
			t.Errorf("last LDAP sync = %+v %+v, %v", e, r, err)
		}
		e, _ = st.LastDirectorySync(ctx, directory.OIDC)
		if r, _ := store.DirectorySyncOf(e); r.Err != "not used" || e.SummaryKey != "audit.sum.directory_sync_failed" {
			t.Errorf("last OIDC sync = %+v", r)
		}
	})
}
