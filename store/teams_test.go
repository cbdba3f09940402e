package store_test

import (
	"context"
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestTeamLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()

		n := auditCount(t, st)
		team, err := st.CreateTeam(ctx, store.TeamInput{Name: " 大模型组 ", Description: " LLM 预训练 "})
		if err != nil {
			t.Fatal(err)
		}
		if team.Name != "大模型组" || team.Description != "LLM 预训练" || !team.CreatedAt.Equal(epoch.Truncate(1000)) {
			t.Errorf("created %+v", team)
		}
		_, after := wantAudit(t, st, n, "create", "team", team.ID, false, true)
		if after["name"] != "大模型组" {
			t.Errorf("audit after = %v", after)
		}
		got, err := st.FindTeamByID(ctx, team.ID)
		if err != nil || got.Name != "大模型组" || !got.CreatedAt.Equal(team.CreatedAt) {
			t.Errorf("FindTeamByID = %+v, %v", got, err)
		}

		clock.Advance(3600e9)
		n = auditCount(t, st)
		up, err := st.UpdateTeam(ctx, team.ID, store.TeamInput{Name: "LLM", Description: ""})
		if err != nil {
			t.Fatal(err)
		}
		if up.Name != "LLM" || up.Description != "" || !up.UpdatedAt.Equal(clock.Now()) || !up.CreatedAt.Equal(team.CreatedAt) {
			t.Errorf("updated %+v", up)
		}
		before, after := wantAudit(t, st, n, "update", "team", team.ID, true, true)
		if before["name"] != "大模型组" || after["name"] != "LLM" {
			t.Errorf("audit name %v -> %v", before["name"], after["name"])
		}

		MustTeam(t, st, "Vision")
		teams, err := st.FindTeams(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(teams) != 2 || teams[0].Name != "LLM" || teams[1].Name != "Vision" {
			t.Errorf("FindTeams = %+v, want LLM, Vision", teams)
		}

		n = auditCount(t, st)
		if err := st.DeleteTeam(ctx, team.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "team", team.ID, true, false)
		_, err = st.FindTeamByID(ctx, team.ID)
		storetest.AssertCode(t, err, errs.NotFound, "team.not_found")
	})
}

func TestTeamRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		team := MustTeam(t, st, "Vision")
		MustTeam(t, st, "LLM")
		before := storetest.MustCounts(t, st)

		invalid := []struct {
			name   string
			in     store.TeamInput
			fields map[string]string
		}{
			{"blank name", store.TeamInput{Name: "   "}, map[string]string{"name": "field.required"}},
			{"long name", store.TeamInput{Name: strings.Repeat("组", 101)}, map[string]string{"name": "field.too_long"}},
			{"long description", store.TeamInput{Name: "ok", Description: strings.Repeat("d", 501)}, map[string]string{"description": "field.too_long"}},
		}
		for _, c := range invalid {
			got, err := st.CreateTeam(ctx, c.in)
			if got != nil {
				t.Errorf("%s: created %+v", c.name, got)
			}
			e := storetest.AssertCode(t, err, errs.Invalid, c.fields["name"]+c.fields["description"])
			assertFields(t, e.Fields, c.fields)
			_, err = st.UpdateTeam(ctx, team.ID, c.in)
			storetest.AssertCode(t, err, errs.Invalid, e.Key)
		}

		// Names are unique regardless of case on both dialects.
		for _, name := range []string{"Vision", "VISION", " vision "} {
			_, err := st.CreateTeam(ctx, store.TeamInput{Name: name})
			e := storetest.AssertCode(t, err, errs.Conflict, "team.name_taken")
			assertFields(t, e.Fields, map[string]string{"name": "team.name_taken"})
		}
		_, err := st.UpdateTeam(ctx, team.ID, store.TeamInput{Name: "llm"})
		storetest.AssertCode(t, err, errs.Conflict, "team.name_taken")

		_, err = st.UpdateTeam(ctx, 999, store.TeamInput{Name: "x"})
		storetest.AssertCode(t, err, errs.NotFound, "team.not_found")
		err = st.DeleteTeam(ctx, 999)
		storetest.AssertCode(t, err, errs.NotFound, "team.not_found")
		_, err = st.FindTeamByID(context.Background(), 999)
		storetest.AssertCode(t, err, errs.NotFound, "team.not_found")

		storetest.AssertUnchanged(t, st, before)
		got, err := st.FindTeamByID(ctx, team.ID)
		if err != nil || got.Name != "Vision" || got.Description != team.Description {
			t.Errorf("refused updates changed the team: %+v, %v", got, err)
		}
	})
}
