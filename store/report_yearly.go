package store

import (
	"cardhour/schedule"
	"context"
	"fmt"
	"sort"
	"time"
)

// YearlyBaseline is a year of the ledger for the teams in scope, read to
// size next year's quotas ("明年的配额有基线可依"): for each kind of task
// and card type, the card-hours booked and used, and per unit of output
// the card-hours and cost it took.
//
// Card-hours and cost are the months' shares inside the year (cut in
// Zone); outputs are those of rounds that ended in the year, set against
// the whole of those rounds.
type YearlyBaseline struct {
	Year     int            `json:"year"`
	Zone     string         `json:"zone"`
	From     time.Time      `json:"from"`
	To       time.Time      `json:"to"`
	Empty    bool           `json:"empty"`
	Totals   LedgerTotals   `json:"totals"`
	Months   []MonthTotals  `json:"months"`
	Teams    []TeamMonth    `json:"teams"`
	Kinds    []KindYear     `json:"kinds"`
	Baseline []BaselineLine `json:"baseline"`
}

// KindYear is what one kind of task booked of one card type in the year.
type KindYear struct {
	Kind       string `json:"kind"`
	CardTypeID int64  `json:"card_type_id"`
	CardType   string `json:"card_type"`
	Tasks      int    `json:"tasks"`
	LedgerTotals
}

// BaselineLine is the card-hours per unit of output of one kind of task on
// one card type.
type BaselineLine struct {
	Kind                 string   `json:"kind"`
	CardTypeID           int64    `json:"card_type_id"`
	CardType             string   `json:"card_type"`
	Unit                 string   `json:"unit"`
	Tasks                int      `json:"tasks"`
	Rounds               int      `json:"rounds"`
	Quantity             float64  `json:"quantity"`
	BookedCardSeconds    int64    `json:"booked_card_seconds"`
	BusyCardSeconds      int64    `json:"used_card_seconds"`
	CostFen              int64    `json:"cost_fen"`
	CardHoursPerUnit     *float64 `json:"card_hours_per_unit"`
	UsedCardHoursPerUnit *float64 `json:"used_card_hours_per_unit"`
	CostFenPerUnit       *float64 `json:"cost_fen_per_unit"`
	PerThousandYuan      *float64 `json:"per_1000_yuan"`
}

// per is a/b, nil when b is zero.
func per(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	v := a / b
	return &v
}

// YearlyBaseline builds the baseline of year (months cut in loc) for scope.
func (s *Store) YearlyBaseline(ctx context.Context, loc *time.Location, year int, scope ReportScope) (*YearlyBaseline, error) {
	const op = "store.YearlyBaseline"
	if year < 2000 || year > 9999 {
		return nil, fieldErr(op, "year", "report.year_invalid")
	}
	first, last := fmt.Sprintf("%04d-01", year), fmt.Sprintf("%04d-12", year)
	from, _, err := MonthBounds(first, loc)
	if err != nil {
		return nil, fieldErr(op, "year", "report.year_invalid")
	}
	_, to, _ := MonthBounds(last, loc)
	rep := &YearlyBaseline{Year: year, Zone: loc.String(), From: from, To: to, Teams: []TeamMonth{}, Kinds: []KindYear{}, Baseline: []BaselineLine{}}
	teams := scope.teams()
	months := make([]string, 12)
	for i := range months {
		months[i] = AddMonths(first, i)
	}
	if teams != nil && len(teams) == 0 {
		rep.Empty = true
		for _, m := range months {
			rep.Months = append(rep.Months, MonthTotals{Month: m})
		}
		return rep, nil
	}
	aggs, err := s.monthAggs(ctx, rep.Zone, months, teams)
	if err != nil {
		return nil, translate(op, err)
	}
	outs, err := s.yearOutputs(ctx, rep.Zone, first, last, teams)
	if err != nil {
		return nil, translate(op, err)
	}
	var taskIDs []int64
	for _, a := range aggs {
		taskIDs = append(taskIDs, a.TaskID)
	}
	names, err := s.loadReportNames(ctx, taskIDs, nil)
	if err != nil {
		return nil, translate(op, err)
	}
	teamAt := rep.addRounds(aggs, months, names)
	rep.addOutputs(outs, names, teamAt)
	rep.sortLists()
	return rep, nil
}

// addRounds sums the year's rounds by month, by kind of task and card
// type, and by team; it returns each team's index in rep.Teams.
func (rep *YearlyBaseline) addRounds(aggs []monthAgg, months []string, names *reportNames) map[int64]int {
	byMonth := map[string]*LedgerTotals{}
	for _, m := range months {
		byMonth[m] = &LedgerTotals{}
	}
	type kindKey struct {
		kind     string
		cardType int64
	}
	kinds := map[kindKey]*KindYear{}
	kindTasks := map[kindKey]map[int64]bool{}
	teamAt := map[int64]int{}
	for _, a := range aggs {
		// A round spans months: over a year it counts once, in the month
		// it ended.
		t := a.totals()
		t.Rounds = a.Ended
		byMonth[a.Month].Add(t)
		rep.Totals.Add(t)
		k := kindKey{names.kinds[a.TaskID], a.CardTypeID}
		if kinds[k] == nil {
			kinds[k] = &KindYear{Kind: k.kind, CardTypeID: k.cardType, CardType: names.cardTypes[k.cardType]}
			kindTasks[k] = map[int64]bool{}
		}
		kinds[k].Add(t)
		kindTasks[k][a.TaskID] = true
		i, ok := teamAt[a.TeamID]
		if !ok {
			i = len(rep.Teams)
			teamAt[a.TeamID] = i
			rep.Teams = append(rep.Teams, TeamMonth{TeamID: a.TeamID, Team: names.teams[a.TeamID], Outputs: []UnitTotal{}})
		}
		rep.Teams[i].Add(t)
	}
	for _, m := range months {
		rep.Months = append(rep.Months, MonthTotals{Month: m, LedgerTotals: *byMonth[m]})
	}
	rep.Empty = rep.Totals.BookedCardSeconds == 0
	for k, ky := range kinds {
		ky.Tasks = len(kindTasks[k])
		rep.Kinds = append(rep.Kinds, *ky)
	}
	return teamAt
}

// addOutputs sums the year's outputs into the baseline lines (kind of
// task, card type, unit) and into the units of each team at teamAt.
func (rep *YearlyBaseline) addOutputs(outs []yearOutput, names *reportNames, teamAt map[int64]int) {
	type lineKey struct {
		kind     string
		cardType int64
		unit     string
	}
	lines := map[lineKey]*BaselineLine{}
	teamUnits := map[int64]map[string]*UnitTotal{}
	for _, o := range outs {
		k := lineKey{o.Kind, o.CardTypeID, o.Unit}
		l := lines[k]
		if l == nil {
			l = &BaselineLine{Kind: k.kind, CardTypeID: k.cardType, CardType: names.cardTypes[k.cardType], Unit: k.unit}
			lines[k] = l
		}
		// A task belongs to one team, so its distinct count adds up across teams.
		l.Tasks += o.Tasks
		l.Rounds += o.Rounds
		l.Quantity += o.Quantity
		l.BookedCardSeconds += o.BookedCardSeconds
		l.BusyCardSeconds += o.BusyCardSeconds
		l.CostFen += o.CostFen
		if teamUnits[o.TeamID] == nil {
			teamUnits[o.TeamID] = map[string]*UnitTotal{}
		}
		u := teamUnits[o.TeamID][o.Unit]
		if u == nil {
			u = &UnitTotal{Unit: o.Unit}
			teamUnits[o.TeamID][o.Unit] = u
		}
		u.Quantity += o.Quantity
		u.Entries += o.Entries
		u.Rounds += o.Rounds
		u.BookedCardSeconds += o.BookedCardSeconds
		u.BusyCardSeconds += o.BusyCardSeconds
		u.CostFen += o.CostFen
	}
	for _, l := range lines {
		l.Quantity = roundQuantity(l.Quantity)
		l.CardHoursPerUnit = per(schedule.CardHours(l.BookedCardSeconds), l.Quantity)
		l.UsedCardHoursPerUnit = per(schedule.CardHours(l.BusyCardSeconds), l.Quantity)
		l.CostFenPerUnit = per(float64(l.CostFen), l.Quantity)
		l.PerThousandYuan = PerThousandYuan(l.Quantity, l.CostFen)
		rep.Baseline = append(rep.Baseline, *l)
	}
	for id, units := range teamUnits {
		if i, ok := teamAt[id]; ok {
			rep.Teams[i].Outputs = unitList(units)
		}
	}
}

// unitList is a team's units of output, most rounds first.
func unitList(units map[string]*UnitTotal) []UnitTotal {
	list := make([]UnitTotal, 0, len(units))
	for _, u := range units {
		u.Quantity = roundQuantity(u.Quantity)
		u.PerThousandYuan = PerThousandYuan(u.Quantity, u.CostFen)
		list = append(list, *u)
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].Rounds != list[b].Rounds {
			return list[a].Rounds > list[b].Rounds
		}
		return list[a].Unit < list[b].Unit
	})
	return list
}

// sortLists orders kinds and baseline lines as TaskKinds lists the kinds
// (unclassified last), then by card type and unit; teams by cost.
func (rep *YearlyBaseline) sortLists() {
	sort.Slice(rep.Kinds, func(i, j int) bool {
		a, b := rep.Kinds[i], rep.Kinds[j]
		if taskKindRank(a.Kind) != taskKindRank(b.Kind) {
			return taskKindRank(a.Kind) < taskKindRank(b.Kind)
		}
		return a.CardType < b.CardType
	})
	sort.Slice(rep.Baseline, func(i, j int) bool {
		a, b := rep.Baseline[i], rep.Baseline[j]
		if taskKindRank(a.Kind) != taskKindRank(b.Kind) {
			return taskKindRank(a.Kind) < taskKindRank(b.Kind)
		}
		if a.CardType != b.CardType {
			return a.CardType < b.CardType
		}
		return a.Unit < b.Unit
	})
	sortTeamsByCost(rep.Teams)
}

// taskKindRank is a kind's place in TaskKinds, unclassified last.
func taskKindRank(k string) int {
	for i, x := range TaskKinds {
		if x == k {
			return i
		}
	}
	return len(TaskKinds) // unclassified last
}

// yearOutput sums the current outputs of one unit recorded for the rounds
// of one task kind, card type and team that ended in the year, with what
// those rounds booked, used and cost (each round once per unit).
type yearOutput struct {
	Kind              string
	CardTypeID        int64
	TeamID            int64
	Unit              string
	Entries           int
	Rounds            int
	Tasks             int
	Quantity          float64
	BookedCardSeconds int64
	BusyCardSeconds   int64
	CostFen           int64
}

// yearOutputs aggregates in the database: a year holds tens of thousands
// of outputs, and reading each one out cost most of the baseline's time.
func (s *Store) yearOutputs(ctx context.Context, zone, first, last string, teams []int64) ([]yearOutput, error) {
	args := []any{zone, true, first, last}
	team := ""
	if teams != nil {
		team = " AND m.team_id IN ?"
		args = append(args, teams)
	}
	q := "SELECT t.kind AS kind, r.card_type_id, r.team_id, x.unit, SUM(x.entries) AS entries, COUNT(*) AS rounds, " +
		"COUNT(DISTINCT r.task_id) AS tasks, SUM(x.qty) AS quantity, SUM(r.booked_card_seconds) AS booked_card_seconds, " +
		"SUM(r.busy_card_seconds) AS busy_card_seconds, SUM(r.cost_fen) AS cost_fen " +
		"FROM (SELECT o.booking_id, o.unit, COUNT(*) AS entries, SUM(o.quantity) AS qty FROM ledger_round_months m " +
		"JOIN ledger_outputs o ON o.booking_id = m.booking_id " +
		"WHERE m.zone = ? AND m.is_end_month = ? AND m.month >= ? AND m.month <= ?" + team +
		" AND NOT EXISTS (SELECT 1 FROM ledger_outputs c WHERE c.corrects_id = o.id) GROUP BY o.booking_id, o.unit) x " +
		"JOIN ledger_rounds r ON r.booking_id = x.booking_id JOIN tasks t ON t.id = r.task_id " +
		"GROUP BY t.kind, r.card_type_id, r.team_id, x.unit ORDER BY t.kind, r.card_type_id, r.team_id, x.unit"
	var out []yearOutput
	err := s.read(ctx).Raw(q, args...).Scan(&out).Error
	return out, err
}
