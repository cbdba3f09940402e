package store

import (
	"context"
	"sort"
	"time"

	"gorm.io/gorm"
)

// MonthlyReport is a calendar month of the ledger for the teams in scope:
// card-hours booked, used and held idle, cost, outputs and output per cost,
// per team and per task; quotas granted against used; the rounds that idled
// most ("空转") and those that produced most per yuan; the month before
// and the six months to this one.
//
// Months are cut in Zone. A round counts in each month by its share of
// card-hours and cost; its outputs count in the month it ended in, and
// output per ¥1,000 divides them by the whole cost of the rounds that
// recorded them.
type MonthlyReport struct {
	Month    string        `json:"month"`
	Zone     string        `json:"zone"`
	From     time.Time     `json:"from"`
	To       time.Time     `json:"to"`
	Empty    bool          `json:"empty"`
	Totals   LedgerTotals  `json:"totals"`
	Previous LedgerTotals  `json:"previous"` // the month before, same scope
	Outputs  []UnitTotal   `json:"output_totals"`
	Teams    []TeamMonth   `json:"teams"`
	Tasks    []TaskMonth   `json:"tasks"`
	Quotas   []QuotaMonth  `json:"quotas"`
	Idle     []RoundLine   `json:"idle_rounds"`
	Best     []OutputLine  `json:"best_output_per_cost"`
	Entries  []OutputLine  `json:"outputs"`
	Trend    []MonthTotals `json:"trend"` // the six months to this one, oldest first
}

// TeamMonth is one team's month.
type TeamMonth struct {
	TeamID int64  `json:"team_id"`
	Team   string `json:"team"`
	LedgerTotals
	Previous LedgerTotals `json:"previous"`
	Outputs  []UnitTotal  `json:"outputs"`
}

// TaskMonth is one task's month.
type TaskMonth struct {
	TaskID int64  `json:"task_id"`
	Task   string `json:"task"`
	Kind   string `json:"kind"`
	TeamID int64  `json:"team_id"`
	Team   string `json:"team"`
	LedgerTotals
	Outputs []UnitTotal `json:"outputs"`
}

// MonthTotals is one month of the trend.
type MonthTotals struct {
	Month string `json:"month"`
	LedgerTotals
}

// RoundLine is a round in a report, with its figures in the month.
type RoundLine struct {
	BookingID int64     `json:"booking_id"`
	TaskID    int64     `json:"task_id"`
	Task      string    `json:"task"`
	TeamID    int64     `json:"team_id"`
	Team      string    `json:"team"`
	User      string    `json:"user"`
	CardType  string    `json:"card_type"`
	Cards     int       `json:"count"`
	State     string    `json:"state"`
	StartAt   time.Time `json:"start"`
	EndAt     time.Time `json:"end"`
	LedgerTotals
}

// OutputLine is a current output entry with its round.
type OutputLine struct {
	OutputID          int64     `json:"output_id"`
	BookingID         int64     `json:"booking_id"`
	TaskID            int64     `json:"task_id"`
	Task              string    `json:"task"`
	TeamID            int64     `json:"team_id"`
	Team              string    `json:"team"`
	CardType          string    `json:"card_type"`
	Quantity          float64   `json:"quantity"`
	Unit              string    `json:"unit"`
	Note              string    `json:"note"`
	CorrectsID        *int64    `json:"corrects_id"`
	RecordedBy        string    `json:"recorded_by"`
	RecordedAt        time.Time `json:"recorded_at"`
	RoundEnd          time.Time `json:"round_end"`
	BookedCardSeconds int64     `json:"round_booked_card_seconds"`
	BusyCardSeconds   int64     `json:"round_used_card_seconds"`
	CostFen           int64     `json:"round_cost_fen"`
	PerThousandYuan   *float64  `json:"per_1000_yuan"`
}

// QuotaMonth is a quota in force during the month: granted against used.
type QuotaMonth struct {
	QuotaID            int64     `json:"quota_id"`
	TeamID             int64     `json:"team_id"`
	Team               string    `json:"team"`
	CardTypeID         int64     `json:"card_type_id"`
	CardType           string    `json:"card_type"`
	GrantedCardSeconds int64     `json:"granted_card_seconds"`
	ValidFrom          time.Time `json:"valid_from"`
	ExpiresAt          time.Time `json:"expires_at"`
	// UsedInMonth is what the team's bookings of the type committed inside
	// both the quota's window and the month; UsedToMonthEnd from the
	// quota's start to the month's end (or its expiry).
	UsedInMonthCardSeconds    int64 `json:"used_in_month_card_seconds"`
	UsedToMonthEndCardSeconds int64 `json:"used_to_month_end_card_seconds"`
}

// Report list lengths.
const (
	ReportIdleRounds  = 10
	ReportBestPerUnit = 3
	ReportBestUnits   = 5
	ReportTrendMonths = 6
)

// monthAgg is the ledger of one month, team and task.
type monthAgg struct {
	Month               string
	TeamID              int64
	TaskID              int64
	CardTypeID          int64
	Rounds              int // rounds with a share in the month
	Ended               int // of them, rounds that ended in the month
	BookedCardSeconds   int64
	CostFen             int64
	SampledCardSeconds  int64
	BusyCardSeconds     int64
	HeldIdleCardSeconds int64
}

func (a monthAgg) totals() LedgerTotals {
	return LedgerTotals{Rounds: a.Rounds, BookedCardSeconds: a.BookedCardSeconds, CostFen: a.CostFen,
		SampledCardSeconds: a.SampledCardSeconds, BusyCardSeconds: a.BusyCardSeconds, HeldIdleCardSeconds: a.HeldIdleCardSeconds}
}

// inTeams narrows q on column col to teams (nil: every team).
func inTeams(q *gorm.DB, col string, teams []int64) *gorm.DB {
	if teams == nil {
		return q
	}
	return q.Where(col+" IN ?", teams)
}

// monthAggs sums the month shares of the given months by month, team, task
// and card type.
func (s *Store) monthAggs(ctx context.Context, zone string, months []string, teams []int64) ([]monthAgg, error) {
	var rows []monthAgg
	q := s.read(ctx).Table("ledger_round_months").
		Select("month, team_id, task_id, card_type_id, COUNT(*) AS rounds, SUM(is_end_month) AS ended, SUM(booked_card_seconds) AS booked_card_seconds, SUM(cost_fen) AS cost_fen, "+
			"SUM(sampled_card_seconds) AS sampled_card_seconds, SUM(busy_card_seconds) AS busy_card_seconds, "+
			"SUM(held_idle_card_seconds) AS held_idle_card_seconds").
		Where("zone = ? AND month IN ?", zone, months)
	err := inTeams(q, "team_id", teams).Group("month, team_id, task_id, card_type_id").Order("month, team_id, task_id, card_type_id").Scan(&rows).Error
	return rows, err
}

// MonthlyReport builds the report of month ("YYYY-MM", cut in loc) for scope.
func (s *Store) MonthlyReport(ctx context.Context, loc *time.Location, month string, scope ReportScope) (*MonthlyReport, error) {
	const op = "store.MonthlyReport"
	from, to, err := MonthBounds(month, loc)
	if err != nil {
		return nil, fieldErr(op, "month", "report.month_invalid")
	}
	teams := scope.teams()
	rep := &MonthlyReport{Month: month, Zone: loc.String(), From: from, To: to, Teams: []TeamMonth{}, Tasks: []TaskMonth{},
		Quotas: []QuotaMonth{}, Idle: []RoundLine{}, Best: []OutputLine{}, Entries: []OutputLine{}, Outputs: []UnitTotal{}}
	if teams != nil && len(teams) == 0 {
		rep.Empty = true
		return rep, nil
	}
	months := make([]string, ReportTrendMonths)
	for i := range months {
		months[i] = AddMonths(month, i-ReportTrendMonths+1)
	}
	aggs, err := s.monthAggs(ctx, rep.Zone, months, teams)
	if err != nil {
		return nil, translate(op, err)
	}
	entries, err := s.endedOutputs(ctx, rep.Zone, month, month, teams)
	if err != nil {
		return nil, translate(op, err)
	}
	idle, err := s.idleRounds(ctx, rep.Zone, month, teams)
	if err != nil {
		return nil, translate(op, err)
	}
	taskIDs, userIDs := monthReportIDs(aggs, entries, idle)
	names, err := s.loadReportNames(ctx, taskIDs, userIDs)
	if err != nil {
		return nil, translate(op, err)
	}
	at := rep.addRounds(aggs, months, names)
	rep.addOutputs(entries, names, at)
	rep.addIdle(idle, names)
	rep.sortLists()
	if rep.Quotas, err = s.quotaMonths(ctx, from, to, teams, names); err != nil {
		return nil, translate(op, err)
	}
	return rep, nil
}

// monthReportIDs are the tasks and users the month's report names.
func monthReportIDs(aggs []monthAgg, entries []monthEntry, idle []idleRound) (taskIDs, userIDs []int64) {
	for _, a := range aggs {
		taskIDs = append(taskIDs, a.TaskID)
	}
	for _, e := range entries {
		taskIDs = append(taskIDs, e.TaskID)
		userIDs = append(userIDs, e.userID, e.createdBy)
	}
	for _, r := range idle {
		taskIDs = append(taskIDs, r.TaskID)
		userIDs = append(userIDs, r.UserID)
	}
	return taskIDs, userIDs
}

// reportIndex finds a team's and a task's place in the report's lists.
type reportIndex struct {
	team, task map[int64]int
}

// addRounds sums the months' rounds into the trend, the month's and the
// previous month's totals, and the teams and tasks of the month (teams
// with rounds only the month before stay listed, for the comparison).
func (rep *MonthlyReport) addRounds(aggs []monthAgg, months []string, names *reportNames) reportIndex {
	month, prev := rep.Month, months[len(months)-2]
	trend := map[string]*LedgerTotals{}
	for _, m := range months {
		trend[m] = &LedgerTotals{}
	}
	at := reportIndex{team: map[int64]int{}, task: map[int64]int{}}
	for _, a := range aggs {
		trend[a.Month].Add(a.totals())
		if a.Month != month && a.Month != prev {
			continue
		}
		i, ok := at.team[a.TeamID]
		if !ok {
			i = len(rep.Teams)
			at.team[a.TeamID] = i
			rep.Teams = append(rep.Teams, TeamMonth{TeamID: a.TeamID, Team: names.teams[a.TeamID], Outputs: []UnitTotal{}})
		}
		if a.Month == prev {
			rep.Teams[i].Previous.Add(a.totals())
			continue
		}
		rep.Teams[i].LedgerTotals.Add(a.totals())
		j, ok := at.task[a.TaskID]
		if !ok {
			j = len(rep.Tasks)
			at.task[a.TaskID] = j
			rep.Tasks = append(rep.Tasks, TaskMonth{TaskID: a.TaskID, Task: names.tasks[a.TaskID], Kind: names.kinds[a.TaskID],
				TeamID: a.TeamID, Team: names.teams[a.TeamID], Outputs: []UnitTotal{}})
		}
		rep.Tasks[j].LedgerTotals.Add(a.totals())
	}
	for _, m := range months {
		rep.Trend = append(rep.Trend, MonthTotals{Month: m, LedgerTotals: *trend[m]})
	}
	rep.Totals, rep.Previous = *trend[month], *trend[prev]
	rep.Empty = rep.Totals.Rounds == 0
	return at
}

// addOutputs lists the month's output entries, sums them by team, task and
// overall, and picks the best per cost.
func (rep *MonthlyReport) addOutputs(entries []monthEntry, names *reportNames, at reportIndex) {
	var all []outputFact
	byTeam, byTask := map[int64][]outputFact{}, map[int64][]outputFact{}
	for _, e := range entries {
		line := e.OutputLine
		line.Task, line.Team = names.tasks[line.TaskID], names.teams[line.TeamID]
		line.CardType, line.RecordedBy = names.cardTypes[e.cardTypeID], names.users[e.createdBy]
		line.PerThousandYuan = PerThousandYuan(line.Quantity, line.CostFen)
		rep.Entries = append(rep.Entries, line)
		f := outputFact{OutputID: line.OutputID, BookingID: line.BookingID, Unit: line.Unit, Quantity: line.Quantity,
			RoundBooked: line.BookedCardSeconds, RoundBusy: line.BusyCardSeconds, RoundCostFen: line.CostFen}
		all = append(all, f)
		byTeam[line.TeamID] = append(byTeam[line.TeamID], f)
		byTask[line.TaskID] = append(byTask[line.TaskID], f)
		// Every round has a row in the month it ended in, so its team and
		// task are listed already; this keeps the index safe regardless.
		if _, ok := at.team[line.TeamID]; !ok {
			at.team[line.TeamID] = len(rep.Teams)
			rep.Teams = append(rep.Teams, TeamMonth{TeamID: line.TeamID, Team: line.Team, Outputs: []UnitTotal{}})
		}
		if _, ok := at.task[line.TaskID]; !ok {
			at.task[line.TaskID] = len(rep.Tasks)
			rep.Tasks = append(rep.Tasks, TaskMonth{TaskID: line.TaskID, Task: line.Task, Kind: names.kinds[line.TaskID],
				TeamID: line.TeamID, Team: line.Team, Outputs: []UnitTotal{}})
		}
	}
	if len(all) > 0 {
		rep.Outputs = unitTotals(all)
	}
	for id, fs := range byTeam {
		rep.Teams[at.team[id]].Outputs = unitTotals(fs)
	}
	for id, fs := range byTask {
		rep.Tasks[at.task[id]].Outputs = unitTotals(fs)
	}
	rep.Best = bestPerCost(rep.Entries)
}

// addIdle lists the month's idle rounds with their names.
func (rep *MonthlyReport) addIdle(idle []idleRound, names *reportNames) {
	for _, r := range idle {
		line := r.RoundLine
		line.Task, line.Team, line.User, line.CardType = names.tasks[line.TaskID], names.teams[line.TeamID], names.users[r.UserID], names.cardTypes[r.CardTypeID]
		rep.Idle = append(rep.Idle, line)
	}
}

// sortLists orders teams by cost, tasks by team then cost.
func (rep *MonthlyReport) sortLists() {
	sortTeamsByCost(rep.Teams)
	sort.SliceStable(rep.Tasks, func(i, j int) bool {
		a, b := rep.Tasks[i], rep.Tasks[j]
		if a.Team != b.Team {
			return a.Team < b.Team
		}
		if a.CostFen != b.CostFen {
			return a.CostFen > b.CostFen
		}
		return a.Task < b.Task
	})
}

// sortTeamsByCost orders a report's teams by cost, most first, then name.
func sortTeamsByCost(teams []TeamMonth) {
	sort.SliceStable(teams, func(i, j int) bool {
		if teams[i].CostFen != teams[j].CostFen {
			return teams[i].CostFen > teams[j].CostFen
		}
		return teams[i].Team < teams[j].Team
	})
}

// bestPerCost keeps, for each of the most recorded units, the rounds with
// the most output per ¥1,000: units cannot be compared with one another.
// A round with several outputs in one unit is one line, their sum against
// the round's cost once: each priced on its own would list the round twice
// and count its cost twice.
func bestPerCost(entries []OutputLine) []OutputLine {
	type roundUnit struct {
		booking int64
		unit    string
	}
	rounds := map[roundUnit]int{}
	var lines []OutputLine
	for _, e := range entries {
		k := roundUnit{e.BookingID, e.Unit}
		if i, ok := rounds[k]; ok {
			lines[i].Quantity += e.Quantity
			lines[i].PerThousandYuan = PerThousandYuan(lines[i].Quantity, lines[i].CostFen)
			continue
		}
		rounds[k] = len(lines)
		lines = append(lines, e)
	}
	byUnit := map[string][]OutputLine{}
	for _, e := range lines {
		if e.PerThousandYuan != nil && e.Quantity > 0 {
			byUnit[e.Unit] = append(byUnit[e.Unit], e)
		}
	}
	units := make([]string, 0, len(byUnit))
	for u := range byUnit {
		units = append(units, u)
	}
	sort.Slice(units, func(i, j int) bool {
		if len(byUnit[units[i]]) != len(byUnit[units[j]]) {
			return len(byUnit[units[i]]) > len(byUnit[units[j]])
		}
		return units[i] < units[j]
	})
	out := []OutputLine{}
	for _, u := range units[:min(len(units), ReportBestUnits)] {
		list := byUnit[u]
		sort.SliceStable(list, func(i, j int) bool {
			if *list[i].PerThousandYuan != *list[j].PerThousandYuan {
				return *list[i].PerThousandYuan > *list[j].PerThousandYuan
			}
			return list[i].OutputID < list[j].OutputID
		})
		out = append(out, list[:min(len(list), ReportBestPerUnit)]...)
	}
	return out
}

// monthEntry is an output line with the ids still to resolve.
type monthEntry struct {
	OutputLine
	userID, createdBy, cardTypeID int64
}

// endedOutputs lists the current outputs of the rounds that ended in the
// months first to last.
func (s *Store) endedOutputs(ctx context.Context, zone, first, last string, teams []int64) ([]monthEntry, error) {
	var rows []struct {
		ID                int64
		BookingID         int64
		Quantity          float64
		Unit              string
		Note              string
		CorrectsID        *int64
		CreatedBy         int64
		CreatedAt         time.Time
		TaskID            int64
		TeamID            int64
		UserID            int64
		CardTypeID        int64
		BookedCardSeconds int64
		BusyCardSeconds   int64
		CostFen           int64
		EndAt             time.Time
	}
	q := s.read(ctx).Table("ledger_round_months m").
		Select("o.id, o.booking_id, o.quantity, o.unit, o.note, o.corrects_id, o.created_by, o.created_at, r.task_id, r.team_id, "+
			"r.user_id, r.card_type_id, r.booked_card_seconds, r.busy_card_seconds, r.cost_fen, r.end_at").
		Joins("JOIN ledger_rounds r ON r.booking_id = m.booking_id").
		Joins("JOIN ledger_outputs o ON o.booking_id = m.booking_id").
		Where("m.zone = ? AND m.month >= ? AND m.month <= ? AND m.is_end_month = ?", zone, first, last, true).
		Where("NOT EXISTS (SELECT 1 FROM ledger_outputs c WHERE c.corrects_id = o.id)")
	if err := inTeams(q, "m.team_id", teams).Order("o.booking_id, o.id").Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]monthEntry, len(rows))
	for i, r := range rows {
		out[i] = monthEntry{OutputLine: OutputLine{OutputID: r.ID, BookingID: r.BookingID, TaskID: r.TaskID, TeamID: r.TeamID,
			Quantity: r.Quantity, Unit: r.Unit, Note: r.Note, CorrectsID: r.CorrectsID, RecordedAt: r.CreatedAt.UTC(),
			RoundEnd: r.EndAt.UTC(), BookedCardSeconds: r.BookedCardSeconds, BusyCardSeconds: r.BusyCardSeconds, CostFen: r.CostFen},
			userID: r.UserID, createdBy: r.CreatedBy, cardTypeID: r.CardTypeID}
	}
	return out, nil
}

// idleRound is a round line with the ids still to resolve.
type idleRound struct {
	RoundLine
	UserID, CardTypeID int64
}

// idleRounds lists the rounds with the most held-idle card-hours in month.
func (s *Store) idleRounds(ctx context.Context, zone, month string, teams []int64) ([]idleRound, error) {
	var rows []struct {
		BookingID           int64
		TaskID              int64
		TeamID              int64
		UserID              int64
		CardTypeID          int64
		CardCount           int
		State               string
		StartAt             time.Time
		EndAt               time.Time
		BookedCardSeconds   int64
		CostFen             int64
		SampledCardSeconds  int64
		BusyCardSeconds     int64
		HeldIdleCardSeconds int64
	}
	q := s.read(ctx).Table("ledger_round_months m").
		Select("m.booking_id, r.task_id, r.team_id, r.user_id, r.card_type_id, r.card_count, r.state, r.start_at, r.end_at, "+
			"m.booked_card_seconds, m.cost_fen, m.sampled_card_seconds, m.busy_card_seconds, m.held_idle_card_seconds").
		Joins("JOIN ledger_rounds r ON r.booking_id = m.booking_id").
		Where("m.zone = ? AND m.month = ? AND m.held_idle_card_seconds > 0", zone, month)
	if err := inTeams(q, "m.team_id", teams).Order("m.held_idle_card_seconds DESC, m.booking_id").Limit(ReportIdleRounds).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]idleRound, len(rows))
	for i, r := range rows {
		out[i] = idleRound{RoundLine: RoundLine{BookingID: r.BookingID, TaskID: r.TaskID, TeamID: r.TeamID, Cards: r.CardCount,
			State: r.State, StartAt: r.StartAt.UTC(), EndAt: r.EndAt.UTC(), LedgerTotals: LedgerTotals{Rounds: 1,
				BookedCardSeconds: r.BookedCardSeconds, CostFen: r.CostFen, SampledCardSeconds: r.SampledCardSeconds,
				BusyCardSeconds: r.BusyCardSeconds, HeldIdleCardSeconds: r.HeldIdleCardSeconds}},
			UserID: r.UserID, CardTypeID: r.CardTypeID}
	}
	return out, nil
}
