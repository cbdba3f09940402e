package store_test

import (
	"context"
	"math"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func outQty(v float64) *float64 { return &v }

func TestOutputsAreRecordedByTheOwnerOrTheTeamsManagersOnly(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 1, 0, 2)
		in := store.OutputInput{Quantity: outQty(3), Unit: " epochs ", Note: "loss 1.92"}
		if _, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, in); !errs.Is(err, errs.Conflict) {
			t.Fatalf("output on a running booking: %v, want a conflict", err)
		}
		w.until(t, 2)
		before := storetest.MustCounts(t, w.st)
		for _, u := range []*store.User{w.colleague, w.outsider} {
			_, err := w.st.RecordOutput(asLedgerUser(u), w.loc, r.Booking.ID, in)
			storetest.AssertCode(t, err, errs.Forbidden, "ledger.output_not_yours")
		}
		storetest.AssertUnchanged(t, w.st, before)
		got, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Unit != "epochs" || got.Quantity != 3 || got.Note != "loss 1.92" || got.CreatedBy != w.member.ID || got.CorrectsID != nil {
			t.Errorf("recorded %+v", got.Output)
		}
		if _, err := w.st.RecordOutput(asLedgerUser(w.manager), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(0.83), Unit: "eval acc"}); err != nil {
			t.Errorf("the team's manager may record: %v", err)
		}
		if _, err := w.st.RecordOutput(asLedgerUser(w.admin), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(1200), Unit: "images"}); err != nil {
			t.Errorf("an admin may record: %v", err)
		}
		es, _, err := w.st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "ledger_output"})
		if err != nil || len(es) != 3 || es[len(es)-1].Action != "record" {
			t.Errorf("audit entries %+v (%v), want three records", es, err)
		}
	})
}

func TestBadOutputsAreRefusedPerFieldAndWriteNothing(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 1, 0, 1)
		w.until(t, 1)
		if _, err := w.st.FindLedgerRound(asLedgerUser(w.member), w.loc, r.Booking.ID); err != nil {
			t.Fatal(err)
		}
		before := storetest.MustCounts(t, w.st)
		for name, c := range map[string]struct {
			in     store.OutputInput
			fields map[string]string
		}{
			"nothing":      {store.OutputInput{}, map[string]string{"quantity": "field.required", "unit": "field.required"}},
			"negative":     {store.OutputInput{Quantity: outQty(-1), Unit: "epochs"}, map[string]string{"quantity": "ledger.quantity_range"}},
			"not a number": {store.OutputInput{Quantity: outQty(math.NaN()), Unit: "epochs"}, map[string]string{"quantity": "ledger.quantity_range"}},
			"huge":         {store.OutputInput{Quantity: outQty(1e16), Unit: "epochs"}, map[string]string{"quantity": "ledger.quantity_range"}},
			"long unit":    {store.OutputInput{Quantity: outQty(1), Unit: "a very long unit name that goes on and on"}, map[string]string{"unit": "field.too_long"}},
			"control":      {store.OutputInput{Quantity: outQty(1), Unit: "ep\x07ochs"}, map[string]string{"unit": "ledger.unit_invalid"}},
			"unknown":      {store.OutputInput{Quantity: outQty(1), Unit: "epochs", CorrectsID: 999}, map[string]string{"corrects_id": "ledger.correct_unknown"}},
		} {
			_, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, c.in)
			e, ok := errs.As(err)
			if !ok || e.Code != errs.Invalid {
				t.Errorf("%s: %v, want invalid", name, err)
				continue
			}
			assertFields(t, e.Fields, c.fields)
		}
		storetest.AssertUnchanged(t, w.st, before)
	})
}

func TestCorrectionsAppendAndReplaceOnce(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		r := w.book(t, w.member, w.normal, 1, 0, 1)
		other := w.book(t, w.member, w.normal, 1, 1, 2)
		w.until(t, 2)
		first, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(3), Unit: "epochs"})
		if err != nil {
			t.Fatal(err)
		}
		otherOut, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, other.Booking.ID, store.OutputInput{Quantity: outQty(1), Unit: "epochs"})
		if err != nil {
			t.Fatal(err)
		}
		// An entry of another round cannot be corrected from this one.
		_, err = w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(2), Unit: "epochs", CorrectsID: otherOut.ID})
		storetest.AssertCode(t, err, errs.Invalid, "ledger.correct_unknown")
		fix, err := w.st.RecordOutput(asLedgerUser(w.manager), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(2.5), Unit: "epochs",
			Note: "counted a warm-up epoch", CorrectsID: first.ID})
		if err != nil {
			t.Fatal(err)
		}
		if fix.CorrectsID == nil || *fix.CorrectsID != first.ID {
			t.Fatalf("correction %+v does not name entry %d", fix.Output, first.ID)
		}
		_, err = w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(4), Unit: "epochs", CorrectsID: first.ID})
		storetest.AssertCode(t, err, errs.Conflict, "ledger.already_corrected")
		// A correction can itself be corrected.
		if _, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, r.Booking.ID, store.OutputInput{Quantity: outQty(0), Unit: "epochs",
			Note: "run was invalid", CorrectsID: fix.ID}); err != nil {
			t.Fatal(err)
		}
		got := w.round(t, r.Booking.ID)
		if len(got.History) != 3 || got.History[0].Current() || got.History[1].Current() || !got.History[2].Current() {
			t.Fatalf("history %+v, want three entries, the last current", got.History)
		}
		if *got.History[0].CorrectedBy != fix.ID || got.History[1].CreatedByName != "boss" {
			t.Errorf("history %+v", got.History)
		}
		if len(got.Outputs) != 1 || got.Outputs[0].Quantity != 0 {
			t.Errorf("current outputs %+v, want the withdrawal only", got.Outputs)
		}
		rep, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-01", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Entries) != 2 || len(rep.Outputs) != 1 || rep.Outputs[0].Quantity != 1 || rep.Outputs[0].Rounds != 2 {
			t.Errorf("report outputs %+v entries %d, want the current ones only: 0 + 1 epochs over two rounds", rep.Outputs, len(rep.Entries))
		}
	})
}
