package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"cardhour/store"
	"cardhour/store/storetest"
)

// The plan generator reads plans and finds changed tasks through the audit
// log's cursor.
func TestPlanQueries(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newFileWorld(t, dialect)
		ctx := context.Background()
		cursor, err := w.st.LastAuditID(ctx)
		if err != nil || cursor == 0 {
			t.Fatalf("LastAuditID = %d, %v", cursor, err)
		}
		changed, next, err := w.st.FindTasksChangedSince(ctx, cursor)
		if err != nil || len(changed) != 0 || next != cursor {
			t.Fatalf("nothing changed: %v, %d, %v", changed, next, err)
		}
		b := w.mustBook(t, w.member, w.core, 2, 1, 3)
		in := store.TaskInput{TeamID: w.team.ID, Name: "eval", Priority: "normal", EstimateCardHours: 50, DataReadiness: "ready"}
		if _, err := w.st.UpdateTask(as(w.member), w.normal.ID, in); err != nil {
			t.Fatal(err)
		}
		changed, next, err = w.st.FindTasksChangedSince(ctx, cursor)
		slices.Sort(changed)
		if err != nil || fmt.Sprint(changed) != fmt.Sprint([]int64{w.core.ID, w.normal.ID}) || next <= cursor {
			t.Errorf("changed = %v (cursor %d → %d), %v; want core and eval", changed, cursor, next, err)
		}
		if again, n2, _ := w.st.FindTasksChangedSince(ctx, next); len(again) != 0 || n2 != next {
			t.Errorf("after the cursor: %v %d", again, n2)
		}

		plans, err := w.st.FindTaskPlans(ctx, []int64{w.core.ID})
		if err != nil || len(plans) != 1 {
			t.Fatalf("FindTaskPlans = %v, %v", plans, err)
		}
		p := plans[0]
		if p.Task.Name != "pretrain" || p.TeamName != "llm" || len(p.Bookings) != 1 || p.Bookings[0].ID != b.Booking.ID ||
			p.Bookings[0].CardTypeName != "H800" || p.Bookings[0].CardCount != 2 || p.Bookings[0].Username != "dev" {
			t.Errorf("plan = %+v", p)
		}
		if _, err := w.st.CancelBooking(as(w.member), b.Booking.ID); err != nil {
			t.Fatal(err)
		}
		plans, _ = w.st.FindTaskPlans(ctx, []int64{w.core.ID})
		if len(plans[0].Bookings) != 0 {
			t.Errorf("a cancelled booking is in the plan: %+v", plans[0].Bookings)
		}

		shas, err := w.st.LatestPlanSHA256(ctx, []int64{w.core.ID, w.normal.ID})
		if err != nil || len(shas) != 0 {
			t.Errorf("LatestPlanSHA256 before any plan = %v, %v", shas, err)
		}
		plan := version(w.core, store.PlanPath, "plan", "")
		plan.Source = store.FileSourcePlan
		pv := mustVersion(t, w.st, ctx, plan)
		shas, _ = w.st.LatestPlanSHA256(ctx, []int64{w.core.ID, w.normal.ID})
		if len(shas) != 1 || shas[w.core.ID] != pv.SHA256 {
			t.Errorf("LatestPlanSHA256 = %v, want core's plan", shas)
		}
		refs, err := w.st.FindFileVersionRefs(ctx)
		if err != nil || len(refs) != 1 || refs[0].ObjectKey != plan.ObjectKey || refs[0].VersionID != plan.VersionID || refs[0].Path != store.PlanPath || refs[0].No != 1 {
			t.Errorf("FindFileVersionRefs = %+v, %v", refs, err)
		}
		ids, err := w.st.FindTaskIDs(ctx)
		if err != nil || len(ids) != 4 {
			t.Errorf("FindTaskIDs = %v, %v", ids, err)
		}
	})
}
