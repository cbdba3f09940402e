package ledger

import (
	"math"
	"net/url"
	"strconv"
	"time"

	"cardhour/money"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/web"
)

// Chart series: used, held idle, the rest of the booked time; and booked
// against used in the trend.
func usageLegend(lang string) []web.LegendItem {
	return []web.LegendItem{
		{Class: "chart-used", Label: web.T(lang, "report.series_used")},
		{Class: "chart-idle", Label: web.T(lang, "report.series_held_idle")},
		{Class: "chart-rest", Label: web.T(lang, "report.series_rest")},
	}
}

// usageStack splits booked card-hours into used, held idle and the rest
// (quiet spells shorter than the held-idle threshold, and time telemetry
// did not see), for a stacked bar.
func usageStack(lang, label string, t store.LedgerTotals) web.StackRow {
	used, idle := schedule.CardHours(t.BusyCardSeconds), schedule.CardHours(t.HeldIdleCardSeconds)
	rest := max(0, schedule.CardHours(t.BookedCardSeconds)-used-idle)
	return web.StackRow{Label: label, Values: []float64{used, idle, rest},
		Total:    web.T(lang, "report.chart_total", web.LgHours(schedule.CardHours(t.BookedCardSeconds))),
		Segments: []string{label + " · " + web.T(lang, "report.series_used") + " " + web.LgHours(used), label + " · " + web.T(lang, "report.series_held_idle") + " " + web.LgHours(idle), label + " · " + web.T(lang, "report.series_rest") + " " + web.LgHours(rest)}}
}

// hoursTick writes a scale's card-hours without decimals unless small.
func hoursTick(v float64) string {
	if v >= 10 || v == 0 {
		return web.LgQty(math.Round(v))
	}
	return web.LgRatio(&v)
}

// exportLinks are a report's export URLs with its filters.
func exportLinks(path string, q url.Values) web.ReportExport {
	link := func(format string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("format", format)
		return path + "?" + v.Encode()
	}
	return web.ReportExport{CSV: link("csv"), XLSX: link("xlsx"), JSON: link("json")}
}

// pageEntries is how many output entries the report page lists; the
// exports hold them all.
const pageEntries = 300

// monthlyProps turns the report into the page's props.
func monthlyProps(lang string, rep *store.MonthlyReport, team string, teams []web.Option) web.MonthlyReportProps {
	d := web.MonthlyReportProps{Month: rep.Month, Prev: store.AddMonths(rep.Month, -1), Next: store.AddMonths(rep.Month, 1), Zone: rep.Zone,
		Team: team, TeamOptions: teams, Empty: rep.Empty, Totals: totalsRow(rep.Totals), Previous: totalsRow(rep.Previous),
		PrevMonth: store.AddMonths(rep.Month, -1), OutputTotals: unitRows(rep.Outputs), Generated: time.Now()}
	q := url.Values{"month": {rep.Month}}
	if team != "" {
		q.Set("team", team)
	}
	d.Export = exportLinks("/api/v1/reports/monthly", q)
	var stack []web.StackRow
	for _, t := range rep.Teams {
		d.Teams = append(d.Teams, web.ReportTeamRow{Name: t.Team, T: totalsRow(t.LedgerTotals), Prev: totalsRow(t.Previous), Outputs: unitRows(t.Outputs)})
		if t.BookedCardSeconds > 0 {
			stack = append(stack, usageStack(lang, t.Team, t.LedgerTotals))
		}
	}
	d.TeamChart = web.HStackChart(web.T(lang, "report.chart_teams"), stack, usageLegend(lang), hoursTick)
	var trend []web.TrendPoint
	for _, m := range rep.Trend {
		b, u, i := schedule.CardHours(m.BookedCardSeconds), schedule.CardHours(m.BusyCardSeconds), schedule.CardHours(m.HeldIdleCardSeconds)
		trend = append(trend, web.TrendPoint{Label: m.Month, Values: []float64{b, u, i}, Titles: []string{
			m.Month + " · " + web.T(lang, "report.series_booked") + " " + web.LgHours(b),
			m.Month + " · " + web.T(lang, "report.series_used") + " " + web.LgHours(u),
			m.Month + " · " + web.T(lang, "report.series_held_idle") + " " + web.LgHours(i)}})
	}
	d.TrendChart = web.TrendChart(web.T(lang, "report.chart_trend"), trend, []web.LegendItem{
		{Class: "chart-booked", Label: web.T(lang, "report.series_booked")},
		{Class: "chart-used", Label: web.T(lang, "report.series_used")},
		{Class: "chart-idle", Label: web.T(lang, "report.series_held_idle")},
	}, hoursTick)
	for _, t := range rep.Tasks {
		d.Tasks = append(d.Tasks, web.ReportTaskRow{TaskID: t.TaskID, Task: t.Task, Team: t.Team, Kind: t.Kind, T: totalsRow(t.LedgerTotals), Outputs: unitRows(t.Outputs)})
	}
	for _, q := range rep.Quotas {
		row := web.ReportQuotaRow{Team: q.Team, CardType: q.CardType, GrantedHours: schedule.CardHours(q.GrantedCardSeconds),
			UsedMonthHours: schedule.CardHours(q.UsedInMonthCardSeconds), UsedToEndHours: schedule.CardHours(q.UsedToMonthEndCardSeconds),
			ValidFrom: q.ValidFrom, Expires: q.ExpiresAt}
		if q.GrantedCardSeconds > 0 {
			row.UsedPct = int(float64(q.UsedToMonthEndCardSeconds)*100/float64(q.GrantedCardSeconds) + 0.5)
		}
		d.Quotas = append(d.Quotas, row)
	}
	for _, r := range rep.Idle {
		d.Idle = append(d.Idle, web.ReportRoundRow{BookingID: r.BookingID, Task: r.Task, Team: r.Team, User: r.User, CardType: r.CardType,
			Cards: r.Cards, Start: r.StartAt, End: r.EndAt, T: totalsRow(r.LedgerTotals)})
	}
	outRow := func(o store.OutputLine) web.ReportOutputRow {
		return web.ReportOutputRow{OutputID: o.OutputID, BookingID: o.BookingID, Task: o.Task, Team: o.Team, Quantity: o.Quantity, Unit: o.Unit,
			Note: o.Note, RecordedBy: o.RecordedBy, CostFen: o.CostFen, BookedHours: schedule.CardHours(o.BookedCardSeconds), PerThousand: o.PerThousandYuan}
	}
	for _, o := range rep.Best {
		d.Best = append(d.Best, outRow(o))
	}
	d.EntriesTotal = len(rep.Entries)
	for _, o := range rep.Entries[:min(len(rep.Entries), pageEntries)] {
		d.Entries = append(d.Entries, outRow(o))
	}
	return d
}

// yearlyProps turns the baseline into the page's props.
func yearlyProps(lang string, rep *store.YearlyBaseline, team string, teams []web.Option) web.YearlyReportProps {
	y := strconv.Itoa(rep.Year)
	d := web.YearlyReportProps{Year: y, Prev: strconv.Itoa(rep.Year - 1), Next: strconv.Itoa(rep.Year + 1), Zone: rep.Zone, Team: team,
		TeamOptions: teams, Empty: rep.Empty, Totals: totalsRow(rep.Totals), Generated: time.Now()}
	q := url.Values{"year": {y}}
	if team != "" {
		q.Set("team", team)
	}
	d.Export = exportLinks("/api/v1/reports/yearly", q)
	for _, t := range rep.Teams {
		d.Teams = append(d.Teams, web.ReportTeamRow{Name: t.Team, T: totalsRow(t.LedgerTotals), Outputs: unitRows(t.Outputs)})
	}
	byKind := map[string]store.LedgerTotals{}
	var kindOrder []string
	for _, k := range rep.Kinds {
		d.Kinds = append(d.Kinds, web.ReportKindRow{Kind: k.Kind, CardType: k.CardType, Tasks: k.Tasks, T: totalsRow(k.LedgerTotals)})
		if _, ok := byKind[k.Kind]; !ok {
			kindOrder = append(kindOrder, k.Kind)
		}
		t := byKind[k.Kind]
		t.Add(k.LedgerTotals)
		byKind[k.Kind] = t
	}
	var stack []web.StackRow
	for _, k := range kindOrder {
		label := web.T(lang, "lgkind.none")
		if k != "" {
			label = web.T(lang, "lgkind."+k)
		}
		stack = append(stack, usageStack(lang, label, byKind[k]))
	}
	d.KindChart = web.HStackChart(web.T(lang, "report.chart_kinds"), stack, usageLegend(lang), hoursTick)
	var months []web.TrendPoint
	for _, m := range rep.Months {
		c := float64(m.CostFen) / 100
		months = append(months, web.TrendPoint{Label: m.Month[5:], Values: []float64{c},
			Titles: []string{m.Month + " · ¥" + money.Fen(m.CostFen).Yuan()}})
	}
	d.MonthChart = web.TrendChart(web.T(lang, "report.chart_months"), months,
		[]web.LegendItem{{Class: "chart-cost", Label: web.T(lang, "report.series_cost")}},
		func(v float64) string { return "¥" + web.LgQty(v) })
	for _, b := range rep.Baseline {
		d.Baseline = append(d.Baseline, web.ReportBaselineRow{Kind: b.Kind, CardType: b.CardType, Unit: b.Unit, Tasks: b.Tasks, Rounds: b.Rounds,
			Quantity: b.Quantity, BookedHours: schedule.CardHours(b.BookedCardSeconds), UsedHours: schedule.CardHours(b.BusyCardSeconds), CostFen: b.CostFen,
			HoursPerUnit: b.CardHoursPerUnit, UsedHoursPerUnit: b.UsedCardHoursPerUnit, YuanPerUnit: b.CostFenPerUnit})
	}
	return d
}
