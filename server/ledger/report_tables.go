package ledger

import (
	"strings"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/web"
)

// share is t's utilisation, nil when telemetry saw none of it.
func share(t store.LedgerTotals) *float64 {
	v, ok := t.Utilisation()
	if !ok {
		return nil
	}
	return &v
}

// change is cur against prev as a fraction, nil when there was nothing before.
func change(cur, prev int64) *float64 {
	if prev == 0 {
		return nil
	}
	v := float64(cur-prev) / float64(prev)
	return &v
}

// unitsText writes unit totals as "3 epochs; 1200 images", and their
// output per ¥1,000 the same way.
func unitsText(us []store.UnitTotal) (quantities, perThousand string) {
	var q, p []string
	for _, u := range us {
		q = append(q, store.FormatQuantity(u.Quantity)+" "+u.Unit)
		p = append(p, web.LgRatio(u.PerThousandYuan)+" "+u.Unit)
	}
	return strings.Join(q, "; "), strings.Join(p, "; ")
}

// totalsCols are the columns of a ledger sum, and totalsCells its values.
func totalsCols(T func(string, ...any) string) []exportCol {
	return []exportCol{{T("ledger.rounds"), colInt}, {T("ledger.booked_h"), colHours}, {T("ledger.used_h"), colHours},
		{T("ledger.held_idle_h"), colHours}, {T("report.observed_h"), colHours}, {T("ledger.util"), colShare}, {T("report.cost_yuan"), colYuan}}
}

func totalsCells(t store.LedgerTotals) []any {
	return []any{t.Rounds, schedule.CardHours(t.BookedCardSeconds), schedule.CardHours(t.BusyCardSeconds), schedule.CardHours(t.HeldIdleCardSeconds),
		schedule.CardHours(t.SampledCardSeconds), share(t), t.CostFen}
}

func translator(lang string) func(string, ...any) string {
	return func(key string, args ...any) string { return web.T(lang, key, args...) }
}

// monthlyTables are the monthly report's sections.
func monthlyTables(lang string, rep *store.MonthlyReport) []exportTable {
	T := translator(lang)
	tc := totalsCols(T)

	summary := exportTable{Section: "summary", Title: T("report.sheet_summary"),
		Cols: append(append([]exportCol{{T("report.month"), colText}, {T("report.zone"), colText}}, tc...),
			exportCol{T("report.prev_booked_h"), colHours}, exportCol{T("report.prev_cost_yuan"), colYuan},
			exportCol{T("report.change_booked"), colShare}, exportCol{T("report.change_cost"), colShare})}
	row := append(append([]any{rep.Month, rep.Zone}, totalsCells(rep.Totals)...),
		schedule.CardHours(rep.Previous.BookedCardSeconds), rep.Previous.CostFen,
		change(rep.Totals.BookedCardSeconds, rep.Previous.BookedCardSeconds), change(rep.Totals.CostFen, rep.Previous.CostFen))
	summary.Rows = [][]any{row}

	teams := exportTable{Section: "teams", Title: T("report.by_team"),
		Cols: append(append([]exportCol{{T("tasks.team"), colText}}, tc...),
			exportCol{T("report.prev_cost_yuan"), colYuan}, exportCol{T("report.change_cost"), colShare},
			exportCol{T("ledger.outputs"), colText}, exportCol{T("ledger.per_1000"), colText})}
	for _, t := range rep.Teams {
		q, p := unitsText(t.Outputs)
		teams.Rows = append(teams.Rows, append(append([]any{t.Team}, totalsCells(t.LedgerTotals)...),
			t.Previous.CostFen, change(t.CostFen, t.Previous.CostFen), q, p))
	}

	tasks := exportTable{Section: "tasks", Title: T("report.by_task"),
		Cols: append(append([]exportCol{{T("bkhome.task"), colText}, {T("tasks.team"), colText}, {T("ledger.kind"), colText}}, tc...),
			exportCol{T("ledger.outputs"), colText}, exportCol{T("ledger.per_1000"), colText})}
	for _, t := range rep.Tasks {
		q, p := unitsText(t.Outputs)
		tasks.Rows = append(tasks.Rows, append(append([]any{t.Task, t.Team, kindLabel(lang, t.Kind)}, totalsCells(t.LedgerTotals)...), q, p))
	}

	units := exportTable{Section: "outputs", Title: T("report.outputs_month"),
		Cols: []exportCol{{T("ledger.unit"), colText}, {T("ledger.quantity"), colNum}, {T("report.entries_n"), colInt}, {T("ledger.rounds"), colInt},
			{T("ledger.booked_h"), colHours}, {T("report.cost_yuan"), colYuan}, {T("ledger.per_1000"), colNum}}}
	for _, u := range rep.Outputs {
		units.Rows = append(units.Rows, []any{u.Unit, u.Quantity, u.Entries, u.Rounds, schedule.CardHours(u.BookedCardSeconds), u.CostFen, u.PerThousandYuan})
	}

	quotas := exportTable{Section: "quotas", Title: T("report.quotas"),
		Cols: []exportCol{{T("tasks.team"), colText}, {T("report.card_type"), colText}, {T("report.granted_h"), colHours},
			{T("report.used_month_h"), colHours}, {T("report.used_to_end_h"), colHours}, {T("report.used_share"), colShare},
			{T("report.valid_from"), colTime}, {T("report.expires"), colTime}}}
	for _, q := range rep.Quotas {
		var used *float64
		if q.GrantedCardSeconds > 0 {
			v := float64(q.UsedToMonthEndCardSeconds) / float64(q.GrantedCardSeconds)
			used = &v
		}
		quotas.Rows = append(quotas.Rows, []any{q.Team, q.CardType, schedule.CardHours(q.GrantedCardSeconds), schedule.CardHours(q.UsedInMonthCardSeconds),
			schedule.CardHours(q.UsedToMonthEndCardSeconds), used, q.ValidFrom, q.ExpiresAt})
	}

	idle := exportTable{Section: "idle", Title: T("report.idle_title"),
		Cols: append([]exportCol{{T("report.booking"), colInt}, {T("bkhome.task"), colText}, {T("tasks.team"), colText}, {T("bkhome.user"), colText},
			{T("report.card_type"), colText}, {T("report.cards"), colInt}, {T("report.start"), colTime}, {T("report.end"), colTime}}, tc[1:]...)}
	for _, r := range rep.Idle {
		idle.Rows = append(idle.Rows, append([]any{r.BookingID, r.Task, r.Team, r.User, r.CardType, r.Cards, r.StartAt, r.EndAt}, totalsCells(r.LedgerTotals)[1:]...))
	}

	outCols := []exportCol{{T("report.output_id"), colInt}, {T("report.booking"), colInt}, {T("bkhome.task"), colText}, {T("tasks.team"), colText},
		{T("report.card_type"), colText}, {T("ledger.quantity"), colNum}, {T("ledger.unit"), colText}, {T("ledger.note"), colText},
		{T("ledger.recorded_by"), colText}, {T("report.recorded_at"), colTime}, {T("report.corrects"), colInt},
		{T("report.round_booked_h"), colHours}, {T("report.round_cost_yuan"), colYuan}, {T("ledger.per_1000"), colNum}}
	outRow := func(o store.OutputLine) []any {
		var corrects any
		if o.CorrectsID != nil {
			corrects = *o.CorrectsID
		}
		return []any{o.OutputID, o.BookingID, o.Task, o.Team, o.CardType, o.Quantity, o.Unit, o.Note, o.RecordedBy, o.RecordedAt, corrects,
			schedule.CardHours(o.BookedCardSeconds), o.CostFen, o.PerThousandYuan}
	}
	best := exportTable{Section: "best", Title: T("report.best_title"), Cols: outCols}
	for _, o := range rep.Best {
		best.Rows = append(best.Rows, outRow(o))
	}
	entries := exportTable{Section: "entries", Title: T("report.entries"), Cols: outCols}
	for _, o := range rep.Entries {
		entries.Rows = append(entries.Rows, outRow(o))
	}

	trend := exportTable{Section: "trend", Title: T("report.sheet_trend"), Cols: append([]exportCol{{T("report.month"), colText}}, tc...)}
	for _, m := range rep.Trend {
		trend.Rows = append(trend.Rows, append([]any{m.Month}, totalsCells(m.LedgerTotals)...))
	}
	return []exportTable{summary, teams, tasks, units, quotas, idle, best, entries, trend}
}

// kindLabel is a task kind in the viewer's language.
func kindLabel(lang, k string) string {
	if k == "" {
		return web.T(lang, "lgkind.none")
	}
	return web.T(lang, "lgkind."+k)
}

// yearlyTables are the yearly baseline's sections.
func yearlyTables(lang string, rep *store.YearlyBaseline) []exportTable {
	T := translator(lang)
	tc := totalsCols(T)
	summary := exportTable{Section: "summary", Title: T("report.sheet_summary"),
		Cols: append([]exportCol{{T("report.year"), colInt}, {T("report.zone"), colText}}, tc...)}
	summary.Rows = [][]any{append([]any{rep.Year, rep.Zone}, totalsCells(rep.Totals)...)}

	baseline := exportTable{Section: "baseline", Title: T("report.baseline"),
		Cols: []exportCol{{T("ledger.kind"), colText}, {T("report.card_type"), colText}, {T("ledger.unit"), colText}, {T("report.tasks"), colInt},
			{T("ledger.rounds"), colInt}, {T("ledger.quantity"), colNum}, {T("ledger.booked_h"), colHours}, {T("ledger.used_h"), colHours},
			{T("report.cost_yuan"), colYuan}, {T("report.hours_per_unit"), colNum}, {T("report.used_per_unit"), colNum},
			{T("report.yuan_per_unit_n"), colNum}, {T("ledger.per_1000"), colNum}}}
	for _, b := range rep.Baseline {
		var yuan *float64
		if b.CostFenPerUnit != nil {
			v := *b.CostFenPerUnit / 100
			yuan = &v
		}
		baseline.Rows = append(baseline.Rows, []any{kindLabel(lang, b.Kind), b.CardType, b.Unit, b.Tasks, b.Rounds, b.Quantity,
			schedule.CardHours(b.BookedCardSeconds), schedule.CardHours(b.BusyCardSeconds), b.CostFen, b.CardHoursPerUnit, b.UsedCardHoursPerUnit, yuan,
			b.PerThousandYuan})
	}

	kinds := exportTable{Section: "kinds", Title: T("report.by_kind"),
		Cols: append([]exportCol{{T("ledger.kind"), colText}, {T("report.card_type"), colText}, {T("report.tasks"), colInt}}, tc...)}
	for _, k := range rep.Kinds {
		kinds.Rows = append(kinds.Rows, append([]any{kindLabel(lang, k.Kind), k.CardType, k.Tasks}, totalsCells(k.LedgerTotals)...))
	}

	teams := exportTable{Section: "teams", Title: T("report.by_team"),
		Cols: append(append([]exportCol{{T("tasks.team"), colText}}, tc...), exportCol{T("ledger.outputs"), colText}, exportCol{T("ledger.per_1000"), colText})}
	for _, t := range rep.Teams {
		q, p := unitsText(t.Outputs)
		teams.Rows = append(teams.Rows, append(append([]any{t.Team}, totalsCells(t.LedgerTotals)...), q, p))
	}

	months := exportTable{Section: "months", Title: T("report.sheet_months"), Cols: append([]exportCol{{T("report.month"), colText}}, tc...)}
	for _, m := range rep.Months {
		months.Rows = append(months.Rows, append([]any{m.Month}, totalsCells(m.LedgerTotals)...))
	}
	return []exportTable{summary, baseline, kinds, teams, months}
}
