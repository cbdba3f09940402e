package store_test

import (
	"context"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestMembershipLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		llm, vision := MustTeam(t, st, "LLM"), MustTeam(t, st, "Vision")
		alice, bob := MustUser(t, st, "alice", store.RoleMember), MustUser(t, st, "bob", store.RoleMember)

		n := auditCount(t, st)
		m, err := st.SetMembership(ctx, llm.ID, alice.ID, store.TeamRoleManager)
		if err != nil {
			t.Fatal(err)
		}
		if m.ID == 0 || m.TeamID != llm.ID || m.UserID != alice.ID || m.Role != store.TeamRoleManager {
			t.Errorf("created %+v", m)
		}
		wantAudit(t, st, n, "create", "membership", m.ID, false, true)

		// Setting again changes the role of the same membership.
		n = auditCount(t, st)
		m2, err := st.SetMembership(ctx, llm.ID, alice.ID, store.TeamRoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		if m2.ID != m.ID || m2.Role != store.TeamRoleViewer {
			t.Errorf("updated %+v, want membership %d with role viewer", m2, m.ID)
		}
		before, after := wantAudit(t, st, n, "update", "membership", m.ID, true, true)
		if before["role"] != store.TeamRoleManager || after["role"] != store.TeamRoleViewer {
			t.Errorf("audit role %v -> %v", before["role"], after["role"])
		}
		if c := storetest.MustCount(t, st, "memberships"); c != 1 {
			t.Errorf("memberships = %d, want 1", c)
		}

		for _, x := range []struct {
			team, user int64
			role       string
		}{{llm.ID, bob.ID, store.TeamRoleMember}, {vision.ID, alice.ID, store.TeamRoleMember}} {
			if _, err := st.SetMembership(ctx, x.team, x.user, x.role); err != nil {
				t.Fatal(err)
			}
		}
		ofLLM, err := st.FindMemberships(ctx, store.MembershipFilter{TeamID: llm.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ofLLM) != 2 || ofLLM[0].Username != "alice" || ofLLM[1].Username != "bob" || ofLLM[0].TeamName != "LLM" ||
			ofLLM[0].DisplayName != "ALICE" || ofLLM[0].Role != store.TeamRoleViewer || ofLLM[0].CreatedAt.IsZero() {
			t.Errorf("FindMemberships(LLM) = %+v", ofLLM)
		}
		ofAlice, err := st.FindMemberships(ctx, store.MembershipFilter{UserID: alice.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ofAlice) != 2 || ofAlice[0].TeamName != "LLM" || ofAlice[1].TeamName != "Vision" {
			t.Errorf("FindMemberships(alice) = %+v", ofAlice)
		}

		n = auditCount(t, st)
		if err := st.DeleteMembership(ctx, llm.ID, bob.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "membership", ofLLM[1].ID, true, false)
		err = st.DeleteMembership(ctx, llm.ID, bob.ID)
		storetest.AssertCode(t, err, errs.NotFound, "membership.not_found")

		// Deleting a team takes its memberships with it.
		if err := st.DeleteTeam(ctx, vision.ID); err != nil {
			t.Fatal(err)
		}
		ofAlice, err = st.FindMemberships(ctx, store.MembershipFilter{UserID: alice.ID})
		if err != nil || len(ofAlice) != 1 {
			t.Errorf("after deleting Vision alice has %+v, %v; want LLM only", ofAlice, err)
		}
	})
}

func TestSetMembershipRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		team := MustTeam(t, st, "LLM")
		u := MustUser(t, st, "alice", store.RoleMember)
		before := storetest.MustCounts(t, st)

		_, err := st.SetMembership(ctx, team.ID, u.ID, "owner")
		e := storetest.AssertCode(t, err, errs.Invalid, "membership.role_invalid")
		assertFields(t, e.Fields, map[string]string{"role": "membership.role_invalid"})
		_, err = st.SetMembership(ctx, 0, 0, store.TeamRoleMember)
		e = storetest.AssertCode(t, err, errs.Invalid, "")
		assertFields(t, e.Fields, map[string]string{"team_id": "team.not_found", "user_id": "user.not_found"})
		_, err = st.SetMembership(ctx, 999, u.ID, store.TeamRoleMember)
		storetest.AssertCode(t, err, errs.NotFound, "team.not_found")
		_, err = st.SetMembership(ctx, team.ID, 999, store.TeamRoleMember)
		storetest.AssertCode(t, err, errs.NotFound, "user.not_found")
		storetest.AssertUnchanged(t, st, before)

		none, err := st.FindMemberships(context.Background(), store.MembershipFilter{TeamID: team.ID})
		if err != nil || len(none) != 0 {
			t.Errorf("FindMemberships = %+v, %v; want none", none, err)
		}
	})
}
