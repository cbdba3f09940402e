package store_test

import (
	"context"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestAnEmptyMonthSaysSo(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		rep, err := st.MonthlyReport(context.Background(), lgShanghai, "2025-07", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Empty || rep.Totals != (store.LedgerTotals{}) || len(rep.Trend) != store.ReportTrendMonths || rep.Trend[5].Month != "2025-07" || rep.Trend[0].Month != "2025-02" {
			t.Errorf("empty month: %+v", rep)
		}
		y, err := st.YearlyBaseline(context.Background(), lgShanghai, 2025, store.ReportScope{})
		if err != nil || !y.Empty || len(y.Months) != 12 {
			t.Errorf("empty year: %+v (%v)", y, err)
		}
		_, err = st.MonthlyReport(context.Background(), lgShanghai, "2025-13", store.ReportScope{})
		storetest.AssertCode(t, err, errs.Invalid, "report.month_invalid")
		_, err = st.YearlyBaseline(context.Background(), lgShanghai, 99, store.ReportScope{})
		storetest.AssertCode(t, err, errs.Invalid, "report.year_invalid")
	})
}

func TestMonthlyReportPerTeamTaskQuotaIdleAndBest(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		idle := w.book(t, w.member, w.normal, 2, 0, 4) // 20:00–24:00 in Shanghai on the 31st
		busy := w.book(t, w.colleague, w.core, 1, 0, 2)
		theirs := w.book(t, w.outsider, w.outsiderTask, 1, 0, 1)
		w.feed(t, idle, 0, 4, 0.1, 0.8)
		w.feed(t, busy, 0, 2, 0.95, 0)
		w.until(t, 4)
		for _, o := range []struct {
			u   *store.User
			b   *store.BookingResult
			q   float64
			uni string
		}{{w.member, idle, 1, "epochs"}, {w.colleague, busy, 2, "epochs"}, {w.outsider, theirs, 500, "images"}} {
			if _, err := w.st.RecordOutput(asLedgerUser(o.u), w.loc, o.b.Booking.ID, store.OutputInput{Quantity: outQty(o.q), Unit: o.uni}); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-01", store.ReportScope{TeamIDs: []int64{w.team.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Empty || len(rep.Teams) != 1 || rep.Teams[0].Team != "llm" || len(rep.Tasks) != 2 {
			t.Fatalf("manager's report shows teams %+v tasks %+v", rep.Teams, rep.Tasks)
		}
		if rep.Totals.BookedCardSeconds != 10*lgCardHour || rep.Totals.CostFen != 10*2200 || rep.Totals.Rounds != 2 {
			t.Errorf("totals %+v, want 10 card-hours, ¥220, two rounds", rep.Totals)
		}
		if len(rep.Idle) != 1 || rep.Idle[0].BookingID != idle.Booking.ID || rep.Idle[0].HeldIdleCardSeconds != 8*lgCardHour*8/10 {
			t.Errorf("idle rounds %+v, want the idle one with 6.4 card-hours", rep.Idle)
		}
		if len(rep.Best) != 2 || rep.Best[0].BookingID != busy.Booking.ID {
			t.Errorf("best per cost %+v, want the busy round first (2 epochs for ¥44)", rep.Best)
		}
		if len(rep.Outputs) != 1 || rep.Outputs[0].Unit != "epochs" || rep.Outputs[0].Quantity != 3 || rep.Outputs[0].CostFen != 10*2200 {
			t.Errorf("output totals %+v", rep.Outputs)
		}
		if per := *rep.Outputs[0].PerThousandYuan; per < 13.63 || per > 13.64 {
			t.Errorf("epochs per ¥1,000 = %v, want 3 / ¥220 × 1000 ≈ 13.64", per)
		}
		if len(rep.Quotas) != 1 || rep.Quotas[0].GrantedCardSeconds != 1000*lgCardHour || rep.Quotas[0].UsedInMonthCardSeconds != 10*lgCardHour {
			t.Errorf("quotas %+v, want llm's 1000 h with 10 used", rep.Quotas)
		}
		all, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-01", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Teams) != 2 || len(all.Outputs) != 2 || len(all.Quotas) != 2 {
			t.Errorf("admin's report: teams %d, units %d, quotas %d", len(all.Teams), len(all.Outputs), len(all.Quotas))
		}
		one, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-01", store.ReportScope{TeamIDs: []int64{w.team.ID}, TeamID: w.other.ID})
		if err != nil || !one.Empty {
			t.Errorf("a team outside the scope: %+v (%v), want empty", one.Totals, err)
		}
	})
}

func TestYearlyBaselineGivesCardHoursPerUnitByKind(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		if err := w.st.SetTaskKind(asLedgerUser(w.member), w.normal.ID, store.TaskKindFinetune); err != nil {
			t.Fatal(err)
		}
		a := w.book(t, w.member, w.normal, 2, 0, 3) // 6 card-hours
		b := w.book(t, w.member, w.normal, 1, 0, 2) // 2 card-hours
		w.feed(t, a, 0, 3, 0.5, 0)
		w.until(t, 4)
		for _, x := range []*store.BookingResult{a, b} {
			if _, err := w.st.RecordOutput(asLedgerUser(w.member), w.loc, x.Booking.ID, store.OutputInput{Quantity: outQty(2), Unit: "epochs"}); err != nil {
				t.Fatal(err)
			}
		}
		y, err := w.st.YearlyBaseline(context.Background(), lgShanghai, 2026, store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if y.Empty || len(y.Baseline) != 1 || len(y.Kinds) != 1 || y.Totals.Rounds != 2 {
			t.Fatalf("baseline %+v kinds %+v totals %+v", y.Baseline, y.Kinds, y.Totals)
		}
		l := y.Baseline[0]
		if l.Kind != "finetune" || l.Unit != "epochs" || l.Quantity != 4 || *l.CardHoursPerUnit != 2 || *l.UsedCardHoursPerUnit != 0.75 || *l.CostFenPerUnit != 4400 {
			t.Errorf("line %+v: want finetune, 8 card-hours for 4 epochs = 2 per epoch, 0.75 used, ¥44", l)
		}
		if y.Months[0].BookedCardSeconds != 8*lgCardHour {
			t.Errorf("January %+v", y.Months[0])
		}
	})
}

// TestBestPerCostListsARoundOnce: a round with two outputs in one unit is
// one line of the best-per-cost table, their sum against its cost once.
func TestBestPerCostListsARoundOnce(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newLedgerWorld(t, d)
		a := w.book(t, w.member, w.normal, 1, 0, 2) // ¥44
		b := w.book(t, w.colleague, w.core, 1, 0, 2)
		w.until(t, 4)
		for _, o := range []struct {
			u *store.User
			b *store.BookingResult
			q float64
		}{{w.member, a, 1}, {w.member, a, 2}, {w.colleague, b, 2}} {
			if _, err := w.st.RecordOutput(asLedgerUser(o.u), w.loc, o.b.Booking.ID, store.OutputInput{Quantity: outQty(o.q), Unit: "epochs"}); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := w.st.MonthlyReport(context.Background(), lgShanghai, "2026-01", store.ReportScope{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Best) != 2 || rep.Best[0].BookingID != a.Booking.ID || rep.Best[0].Quantity != 3 || rep.Best[1].BookingID != b.Booking.ID {
			t.Fatalf("best per cost %+v, want round %d once with 3 epochs, then round %d", rep.Best, a.Booking.ID, b.Booking.ID)
		}
		if per := *rep.Best[0].PerThousandYuan; per < 68.18 || per > 68.19 {
			t.Errorf("round %d: %v epochs per ¥1,000, want 3 / ¥44 × 1000 ≈ 68.18", a.Booking.ID, per)
		}
	})
}
