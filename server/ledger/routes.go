package ledger

import (
	"cardhour/server/route"
	"cardhour/store"
	"net/http"
)

// Routes are the ledger's pages, the monthly and yearly reports, and their API.
func (a *Area) Routes() []route.Route {
	format := route.Param{Name: "format", Kind: "string", Desc: "json (default), csv (every section, or one with section=) or xlsx (a sheet per section, numbers as numbers)"}
	section := route.Param{Name: "section", Kind: "string", Desc: "csv only: one section's table instead of all of them"}
	team := route.Param{Name: "team", Kind: "string", Desc: "team name or id (one of the caller's teams)"}
	lang := route.Param{Name: "lang", Kind: "string", Desc: "zh-CN (default) or en: titles and headers of csv and xlsx"}
	return []route.Route{
		// The ledger: rounds, a round with its outputs, a task's ledger. Its
		// team's people (and admins) may read them, as they may read its
		// bookings and tasks (server/scope); the store lets only a round's
		// owner and its team's managers record.
		route.New(route.GET, "/ledger", route.Viewer, a.ledgerPage),
		route.New(route.GET, "/ledger/rounds/:id", route.Viewer, a.ledgerRoundPage),
		route.New(route.POST, "/ledger/rounds/:id/outputs", route.Member, a.recordOutputForm),
		route.New(route.GET, "/ledger/tasks/:id", route.Viewer, a.taskLedgerPage),
		route.New(route.POST, "/ledger/tasks/:id/kind", route.Member, a.setTaskKindForm),

		// Reports: for managers (their teams) and admins (all). /reports tells
		// everyone else where their own figures are.
		route.New(route.GET, "/reports", route.Viewer, a.reportsIndex),
		route.New(route.GET, "/reports/monthly", route.Manager, a.monthlyReportPage),
		route.New(route.GET, "/reports/yearly", route.Manager, a.yearlyReportPage),

		// API.
		route.Op(route.POST, "/api/v1/bookings/:id/outputs", route.Member, a.apiRecordOutput, route.API{
			Tag:      "ledger",
			Summary:  "Record what a finished round produced",
			Body:     route.JSON("OutputInput", outputRequest{}),
			Status:   http.StatusCreated,
			Result:   route.JSON("Output", store.OutputView{}),
			Conflict: true,
			Desc: "Required: quantity (a number ≥ 0) and unit (e.g. epochs, M tokens, images, eval acc) and an optional note. Entries are append-only: " +
				"to correct one, post a new entry with corrects_id naming it (each entry is corrected at most once; 409 otherwise). " +
				"Only the booking's owner, the managers of its team and admins may record (403); the booking must have finished (409).",
		}),
		route.Op(route.GET, "/api/v1/bookings/:id/outputs", route.Viewer, a.apiListOutputs, route.API{
			Tag:     "ledger",
			Summary: "A round's output history, corrections included",
			Status:  http.StatusOK,
			Result:  route.List("outputs", "Output", store.OutputView{}),
		}),
		route.Op(route.GET, "/api/v1/ledger/rounds", route.Viewer, a.apiLedgerRounds, route.API{
			Tag:     "ledger",
			Summary: "Finished rounds of the caller's teams (admins: all) that ended in a month",
			Status:  http.StatusOK,
			Result:  route.JSON("LedgerRounds", roundsJSON{}),
			Query: []route.Param{{Name: "month", Kind: "string", Desc: "YYYY-MM in the portal's zone (default this month)"}, team,
				{Name: "task_id", Kind: "integer", Desc: "only this task"}, {Name: "mine", Kind: "boolean", Desc: "only the caller's rounds"}},
		}),
		route.Op(route.GET, "/api/v1/ledger/rounds/:id", route.Viewer, a.apiLedgerRound, route.API{
			Tag:      "ledger",
			Summary:  "One round (by booking id): cost at the booking's price, use, months, outputs",
			Status:   http.StatusOK,
			Result:   route.JSON("LedgerRound", store.LedgerRoundDetail{}),
			Conflict: true,
			Desc:     "409 while the booking is still waiting or running, or when it was cancelled before it began.",
		}),
		route.Op(route.GET, "/api/v1/ledger/tasks/:id", route.Viewer, a.apiTaskLedger, route.API{
			Tag:     "ledger",
			Summary: "A task's ledger: baseline against booked and used, cost, outputs, deviation",
			Status:  http.StatusOK,
			Result:  route.JSON("TaskLedger", store.TaskLedger{}),
		}),
		route.Op(route.PUT, "/api/v1/ledger/tasks/:id/kind", route.Member, a.apiSetTaskKind, route.API{
			Tag:     "ledger",
			Summary: "Classify a task for the yearly baseline",
			Body:    route.JSON("TaskKindInput", kindRequest{}),
			Status:  http.StatusOK,
			Result:  route.JSON("TaskKind", kindJSON{}),
			Desc:    "kind (required): pretrain, finetune, eval, inference, data, other, or \"\" for unclassified. The task's team members and managers, and admins.",
		}),
		route.Op(route.GET, "/api/v1/reports/monthly", route.Manager, a.apiMonthlyReport, route.API{
			Tag:     "ledger",
			Summary: "The monthly report of the caller's managed teams (admins: all)",
			Status:  http.StatusOK,
			Result:  route.JSON("MonthlyReport", store.MonthlyReport{}).Or("text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
			Query:   []route.Param{{Name: "month", Kind: "string", Desc: "YYYY-MM in the portal's zone (default this month)"}, team, format, section, lang},
			Desc: "Months are cut at midnight in the portal's zone (CARDHOUR_TZ, default Asia/Shanghai); the zone is in the answer. " +
				"Card-hours and cost count in each month by the round's share; outputs count in the month their round ended. " +
				"Money in fen; card-hours as card-seconds in JSON. A month without rounds answers empty: true.",
		}),
		route.Op(route.GET, "/api/v1/reports/yearly", route.Manager, a.apiYearlyReport, route.API{
			Tag:     "ledger",
			Summary: "The yearly baseline: card-hours per unit of output per task kind",
			Status:  http.StatusOK,
			Result:  route.JSON("YearlyBaseline", store.YearlyBaseline{}).Or("text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
			Query:   []route.Param{{Name: "year", Kind: "integer", Desc: "the year (default this year)"}, team, format, section, lang},
		}),
	}
}
