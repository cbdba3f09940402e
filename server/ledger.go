package server

import (
	"net/http"
	"reflect"

	"cardhour/store"
)

// registerLedger adds the ledger, the monthly and yearly reports and their API.
func (s *Server) registerLedger() {
	const GET, POST, PUT = http.MethodGet, http.MethodPost, http.MethodPut

	// The ledger: rounds, a round with its outputs, a task's ledger. Anyone
	// signed in may read them, as they may read bookings and tasks; the
	// store lets only a round's owner and its team's managers record.
	s.add(GET, "/ledger", Viewer, s.ledgerPage)
	s.add(GET, "/ledger/rounds/:id", Viewer, s.ledgerRoundPage)
	s.add(POST, "/ledger/rounds/:id/outputs", Member, s.recordOutputForm)
	s.add(GET, "/ledger/tasks/:id", Viewer, s.taskLedgerPage)
	s.add(POST, "/ledger/tasks/:id/kind", Member, s.setTaskKindForm)

	// Reports: for managers (their teams) and admins (all). /reports tells
	// everyone else where their own figures are.
	s.add(GET, "/reports", Viewer, s.reportsIndex)
	s.add(GET, "/reports/monthly", Manager, s.monthlyReportPage)
	s.add(GET, "/reports/yearly", Manager, s.yearlyReportPage)

	// API.
	s.add(POST, "/api/v1/bookings/:id/outputs", Member, s.apiRecordOutput)
	s.add(GET, "/api/v1/bookings/:id/outputs", Viewer, s.apiListOutputs)
	s.add(GET, "/api/v1/ledger/rounds", Viewer, s.apiLedgerRounds)
	s.add(GET, "/api/v1/ledger/rounds/:id", Viewer, s.apiLedgerRound)
	s.add(GET, "/api/v1/ledger/tasks/:id", Viewer, s.apiTaskLedger)
	s.add(PUT, "/api/v1/ledger/tasks/:id/kind", Member, s.apiSetTaskKind)
	s.add(GET, "/api/v1/reports/monthly", Manager, s.apiMonthlyReport)
	s.add(GET, "/api/v1/reports/yearly", Manager, s.apiYearlyReport)
}

// ledgerAPIOps documents the ledger's /api/v1 operations.
func ledgerAPIOps() []apiOp {
	const GET, POST, PUT = http.MethodGet, http.MethodPost, http.MethodPut
	const ok, created = http.StatusOK, http.StatusCreated
	format := apiParam{"format", "string", "json (default), csv (every section, or one with section=) or xlsx (a sheet per section, numbers as numbers)"}
	section := apiParam{"section", "string", "csv only: one section's table instead of all of them"}
	team := apiParam{"team", "string", "team name or id (one of the caller's teams)"}
	lang := apiParam{"lang", "string", "zh-CN (default) or en: titles and headers of csv and xlsx"}
	return []apiOp{
		{method: POST, path: "/api/v1/bookings/:id/outputs", access: Member, tag: "ledger", summary: "Record what a finished round produced",
			body: "OutputInput", status: created, result: schemaRef("Output"), conflict: true,
			desc: "Required: quantity (a number ≥ 0) and unit (e.g. epochs, M tokens, images, eval acc) and an optional note. Entries are append-only: " +
				"to correct one, post a new entry with corrects_id naming it (each entry is corrected at most once; 409 otherwise). " +
				"Only the booking's owner, the managers of its team and admins may record (403); the booking must have finished (409)."},
		{method: GET, path: "/api/v1/bookings/:id/outputs", access: Viewer, tag: "ledger", summary: "A round's output history, corrections included",
			status: ok, result: listOf("outputs", "Output")},
		{method: GET, path: "/api/v1/ledger/rounds", access: Viewer, tag: "ledger", summary: "Finished rounds of the caller's teams (admins: all) that ended in a month",
			status: ok, result: schemaRef("LedgerRounds"),
			query: []apiParam{{"month", "string", "YYYY-MM in the portal's zone (default this month)"}, team,
				{"task_id", "integer", "only this task"}, {"mine", "boolean", "only the caller's rounds"}}},
		{method: GET, path: "/api/v1/ledger/rounds/:id", access: Viewer, tag: "ledger", summary: "One round (by booking id): cost at the booking's price, use, months, outputs",
			status: ok, result: schemaRef("LedgerRound"), conflict: true,
			desc: "409 while the booking is still waiting or running, or when it was cancelled before it began."},
		{method: GET, path: "/api/v1/ledger/tasks/:id", access: Viewer, tag: "ledger", summary: "A task's ledger: baseline against booked and used, cost, outputs, deviation",
			status: ok, result: schemaRef("TaskLedger")},
		{method: PUT, path: "/api/v1/ledger/tasks/:id/kind", access: Member, tag: "ledger", summary: "Classify a task for the yearly baseline",
			body: "TaskKindInput", status: ok, result: schemaRef("TaskKind"),
			desc: "kind (required): pretrain, finetune, eval, inference, data, other, or \"\" for unclassified. The task's team members and managers, and admins."},
		{method: GET, path: "/api/v1/reports/monthly", access: Manager, tag: "ledger", summary: "The monthly report of the caller's managed teams (admins: all)",
			status: ok, result: schemaRef("MonthlyReport"),
			query: []apiParam{{"month", "string", "YYYY-MM in the portal's zone (default this month)"}, team, format, section, lang},
			desc: "Months are cut at midnight in the portal's zone (CARDHOUR_TZ, default Asia/Shanghai); the zone is in the answer. " +
				"Card-hours and cost count in each month by the round's share; outputs count in the month their round ended. " +
				"Money in fen; card-hours as card-seconds in JSON. A month without rounds answers empty: true."},
		{method: GET, path: "/api/v1/reports/yearly", access: Manager, tag: "ledger", summary: "The yearly baseline: card-hours per unit of output per task kind",
			status: ok, result: schemaRef("YearlyBaseline"),
			query: []apiParam{{"year", "integer", "the year (default this year)"}, team, format, section, lang}},
	}
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

// ledgerAPISchemas are the component schemas of ledgerAPIOps.
func ledgerAPISchemas() map[string]reflect.Type {
	t := func(v any) reflect.Type { return reflect.TypeOf(v) }
	return map[string]reflect.Type{
		"Output":         t(store.OutputView{}),
		"OutputInput":    t(outputRequest{}),
		"LedgerRounds":   t(roundsJSON{}),
		"LedgerRound":    t(store.LedgerRoundDetail{}),
		"TaskLedger":     t(store.TaskLedger{}),
		"TaskKindInput":  t(kindRequest{}),
		"TaskKind":       t(kindJSON{}),
		"MonthlyReport":  t(store.MonthlyReport{}),
		"YearlyBaseline": t(store.YearlyBaseline{}),
	}
}
