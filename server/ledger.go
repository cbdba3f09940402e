package server

import (
	"net/http"

	"cardhour/server/route"
	"cardhour/store"
)

// registerLedger adds the ledger, the monthly and yearly reports and their API.
func (s *Server) registerLedger() {
	const GET, POST, PUT = http.MethodGet, http.MethodPost, http.MethodPut
	format := route.Param{Name: "format", Kind: "string", Desc: "json (default), csv (every section, or one with section=) or xlsx (a sheet per section, numbers as numbers)"}
	section := route.Param{Name: "section", Kind: "string", Desc: "csv only: one section's table instead of all of them"}
	team := route.Param{Name: "team", Kind: "string", Desc: "team name or id (one of the caller's teams)"}
	lang := route.Param{Name: "lang", Kind: "string", Desc: "zh-CN (default) or en: titles and headers of csv and xlsx"}

	// The ledger: rounds, a round with its outputs, a task's ledger. Anyone
	// signed in may read them, as they may read bookings and tasks; the
	// store lets only a round's owner and its team's managers record.
	s.add(GET, "/ledger", route.Viewer, s.ledgerPage)
	s.add(GET, "/ledger/rounds/:id", route.Viewer, s.ledgerRoundPage)
	s.add(POST, "/ledger/rounds/:id/outputs", route.Member, s.recordOutputForm)
	s.add(GET, "/ledger/tasks/:id", route.Viewer, s.taskLedgerPage)
	s.add(POST, "/ledger/tasks/:id/kind", route.Member, s.setTaskKindForm)

	// Reports: for managers (their teams) and admins (all). /reports tells
	// everyone else where their own figures are.
	s.add(GET, "/reports", route.Viewer, s.reportsIndex)
	s.add(GET, "/reports/monthly", route.Manager, s.monthlyReportPage)
	s.add(GET, "/reports/yearly", route.Manager, s.yearlyReportPage)

	// API.
	s.op(POST, "/api/v1/bookings/:id/outputs", route.Member, s.apiRecordOutput, route.API{Tag: "ledger", Summary: "Record what a finished round produced", Body: route.JSON("OutputInput", outputRequest{}), Status: http.StatusCreated, Result: route.JSON("Output", store.OutputView{}), Conflict: true, Desc: "Required: quantity (a number ≥ 0) and unit (e.g. epochs, M tokens, images, eval acc) and an optional note. Entries are append-only: " +
		"to correct one, post a new entry with corrects_id naming it (each entry is corrected at most once; 409 otherwise). " +
		"Only the booking's owner, the managers of its team and admins may record (403); the booking must have finished (409)."})
	s.op(GET, "/api/v1/bookings/:id/outputs", route.Viewer, s.apiListOutputs, route.API{Tag: "ledger", Summary: "A round's output history, corrections included", Status: http.StatusOK, Result: route.List("outputs", "Output", store.OutputView{})})
	s.op(GET, "/api/v1/ledger/rounds", route.Viewer, s.apiLedgerRounds, route.API{Tag: "ledger", Summary: "Finished rounds of the caller's teams (admins: all) that ended in a month", Status: http.StatusOK, Result: route.JSON("LedgerRounds", roundsJSON{}), Query: []route.Param{{Name: "month", Kind: "string", Desc: "YYYY-MM in the portal's zone (default this month)"}, team,
		{Name: "task_id", Kind: "integer", Desc: "only this task"}, {Name: "mine", Kind: "boolean", Desc: "only the caller's rounds"}}})
	s.op(GET, "/api/v1/ledger/rounds/:id", route.Viewer, s.apiLedgerRound, route.API{Tag: "ledger", Summary: "One round (by booking id): cost at the booking's price, use, months, outputs", Status: http.StatusOK, Result: route.JSON("LedgerRound", store.LedgerRoundDetail{}), Conflict: true, Desc: "409 while the booking is still waiting or running, or when it was cancelled before it began."})
	s.op(GET, "/api/v1/ledger/tasks/:id", route.Viewer, s.apiTaskLedger, route.API{Tag: "ledger", Summary: "A task's ledger: baseline against booked and used, cost, outputs, deviation", Status: http.StatusOK, Result: route.JSON("TaskLedger", store.TaskLedger{})})
	s.op(PUT, "/api/v1/ledger/tasks/:id/kind", route.Member, s.apiSetTaskKind, route.API{Tag: "ledger", Summary: "Classify a task for the yearly baseline", Body: route.JSON("TaskKindInput", kindRequest{}), Status: http.StatusOK, Result: route.JSON("TaskKind", kindJSON{}), Desc: "kind (required): pretrain, finetune, eval, inference, data, other, or \"\" for unclassified. The task's team members and managers, and admins."})
	s.op(GET, "/api/v1/reports/monthly", route.Manager, s.apiMonthlyReport, route.API{Tag: "ledger", Summary: "The monthly report of the caller's managed teams (admins: all)", Status: http.StatusOK, Result: route.JSON("MonthlyReport", store.MonthlyReport{}).Or("text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"), Query: []route.Param{{Name: "month", Kind: "string", Desc: "YYYY-MM in the portal's zone (default this month)"}, team, format, section, lang}, Desc: "Months are cut at midnight in the portal's zone (CARDHOUR_TZ, default Asia/Shanghai); the zone is in the answer. " +
		"Card-hours and cost count in each month by the round's share; outputs count in the month their round ended. " +
		"Money in fen; card-hours as card-seconds in JSON. A month without rounds answers empty: true."})
	s.op(GET, "/api/v1/reports/yearly", route.Manager, s.apiYearlyReport, route.API{Tag: "ledger", Summary: "The yearly baseline: card-hours per unit of output per task kind", Status: http.StatusOK, Result: route.JSON("YearlyBaseline", store.YearlyBaseline{}).Or("text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"), Query: []route.Param{{Name: "year", Kind: "integer", Desc: "the year (default this year)"}, team, format, section, lang}})
}

// outputRequest is the body of POST /api/v1/bookings/{id}/outputs.
type outputRequest struct {
	Quantity   *float64 `json:"quantity"`
	Unit       string   `json:"unit"`
	Note       string   `json:"note"`
	CorrectsID int64    `json:"corrects_id"`
}

// kindRequest is the body of PUT /api/v1/ledger/tasks/{id}/kind.
type kindRequest struct {
	Kind *string `json:"kind"`
}

// kindJSON answers a kind change.
type kindJSON struct {
	TaskID int64  `json:"task_id"`
	Kind   string `json:"kind"`
}

// roundsJSON answers the round list.
type roundsJSON struct {
	Month  string                  `json:"month"`
	Zone   string                  `json:"zone"`
	Rounds []store.LedgerRoundView `json:"rounds"`
}
