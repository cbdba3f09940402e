package store_test

import (
	"context"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestTaskLedgerTellsOverAndIdleHeavy(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d) // the tasks' estimate is 10 card-hours
		a := w.book(t, w.member, w.normal, 2, 0, 2)
		w.feed(t, a, 0, 2, 0.9, 0)
		w.until(t, 2)
		led, err := w.st.FindTaskLedger(context.Background(), w.loc, w.normal.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(led.Deviation) != 1 || led.Deviation[0] != store.DeviationOnPlan || led.Finished.BookedCardSeconds != 4*lgCardHour {
			t.Errorf("after 4 of 10 card-hours, busy: %v %+v", led.Deviation, led.Finished)
		}
		b := w.book(t, w.member, w.normal, 4, 2, 4)
		w.feed(t, b, 2, 4, 0.1, 0.8)
		w.until(t, 3)
		led, err = w.st.FindTaskLedger(context.Background(), w.loc, w.normal.ID)
		if err != nil {
			t.Fatal(err)
		}
		if led.LiveCardSeconds != 8*lgCardHour || len(led.Deviation) != 1 || led.Deviation[0] != store.DeviationOver {
			t.Errorf("with 8 more card-hours running: live %d, %v", led.LiveCardSeconds, led.Deviation)
		}
		w.until(t, 4)
		led, err = w.st.FindTaskLedger(context.Background(), w.loc, w.normal.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(led.Deviation) != 2 || led.Deviation[1] != store.DeviationIdleHeavy || len(led.Rounds) != 2 {
			t.Errorf("12 card-hours, mostly idle: %v rounds %d", led.Deviation, len(led.Rounds))
		}
	})
}

func TestTaskKindIsSetByTheTeamAndAudited(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		storetest.AssertCode(t, w.st.SetTaskKind(asLedgerUser(w.outsider), w.normal.ID, store.TaskKindEval), errs.Forbidden, "ledger.kind_not_yours")
		storetest.AssertCode(t, w.st.SetTaskKind(asLedgerUser(w.member), w.normal.ID, "magic"), errs.Invalid, "ledger.kind_invalid")
		n := storetest.MustCount(t, w.st, "audit_log")
		if err := w.st.SetTaskKind(asLedgerUser(w.member), w.normal.ID, store.TaskKindEval); err != nil {
			t.Fatal(err)
		}
		kinds, err := w.st.FindTaskKinds(context.Background(), []int64{w.normal.ID, w.core.ID})
		if err != nil || kinds[w.normal.ID] != "eval" || kinds[w.core.ID] != "" {
			t.Errorf("kinds %v (%v)", kinds, err)
		}
		if got := storetest.MustCount(t, w.st, "audit_log"); got != n+1 {
			t.Errorf("audit entries %d, want %d", got, n+1)
		}
		// The task's own update keeps the kind.
		task, err := w.st.FindTaskByID(context.Background(), w.normal.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.UpdateTask(asLedgerUser(w.member), task.ID, store.TaskInput{TeamID: task.TeamID, Name: "eval v2", Priority: task.Priority,
			EstimateCardHours: 12, DataReadiness: task.DataReadiness}); err != nil {
			t.Fatal(err)
		}
		if kinds, _ := w.st.FindTaskKinds(context.Background(), []int64{w.normal.ID}); kinds[w.normal.ID] != "eval" {
			t.Errorf("kind after a task update: %q", kinds[w.normal.ID])
		}
	})
}
