package ledger

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

// ledgerMonth reads ?month= (YYYY-MM); when absent, the latest month in
// which a round of the viewer's teams ended (this month when none has), so
// that the page opens on figures rather than on an empty month. A month
// that does not parse is reported and this month shown instead. It first
// brings the ledger up to date, once for the page: rounds that ended since
// the last pass count (the one just released makes this month the latest,
// and is on the page).
func (a *Area) ledgerMonth(c echo.Context) (month, problem string, err error) {
	if err := a.Store.CatchUpLedger(c.Request().Context(), a.Config.TZ); err != nil {
		return "", "", err
	}
	month = strings.TrimSpace(c.QueryParam("month"))
	if month == "" {
		teams, err := scope.Teams(c, a.Store)
		if err != nil {
			return "", "", err
		}
		latest, err := a.Store.LatestLedgerMonth(c.Request().Context(), a.Config.TZ, teams)
		if err != nil || latest == "" {
			return a.thisMonth(), "", err
		}
		return latest, "", nil
	}
	if _, _, err := store.MonthBounds(month, a.Config.TZ); err != nil {
		return a.thisMonth(), web.T(request.Lang(c), "report.month_invalid"), nil
	}
	return month, "", nil
}

// teamOptions are the teams a viewer may filter by: every team for admins,
// else theirs (ids nil means every team).
func (a *Area) teamOptions(c echo.Context, ids []int64) ([]web.Option, error) {
	teams, err := a.Store.FindTeams(c.Request().Context())
	if err != nil {
		return nil, err
	}
	var out []web.Option
	for _, t := range teams {
		if ids == nil || slices.Contains(ids, t.ID) {
			out = append(out, web.Option{Value: web.I64(t.ID), Label: t.Name})
		}
	}
	return out, nil
}

// ledgerPage lists the rounds of the viewer's teams (every team for
// admins) that ended in a month.
func (a *Area) ledgerPage(c echo.Context) error {
	ctx := c.Request().Context()
	month, problem, err := a.ledgerMonth(c)
	if err != nil {
		return err
	}
	teams, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	opts, err := a.teamOptions(c, teams)
	if err != nil {
		return err
	}
	d := web.LedgerListProps{Month: month, Prev: store.AddMonths(month, -1), Next: store.AddMonths(month, 1), Zone: a.Config.TZ.String(),
		Teams: opts, Mine: c.QueryParam("mine") != ""}
	f := store.LedgerFilter{Zone: a.Config.TZ, Month: month, TeamIDs: teams, Limit: 500}
	if raw := strings.TrimSpace(c.QueryParam("team")); raw != "" {
		if id := request.ID(raw); id != 0 && scope.Sees(teams, id) {
			f.TeamIDs, d.Team = []int64{id}, raw
		} else {
			problem = web.T(request.Lang(c), "team.not_found")
		}
	}
	if d.Mine {
		f.UserID = request.User(c).ID
	}
	rounds, err := a.Store.FindLedgerRounds(ctx, f)
	if err != nil {
		return err
	}
	rec, err := a.recorderFor(c)
	if err != nil {
		return err
	}
	var total store.LedgerTotals
	for _, r := range rounds {
		d.Rows = append(d.Rows, roundRow(r, rec.may(r.UserID, r.TeamID)))
		total.Add(r.Totals())
	}
	d.Totals = totalsRow(total)
	d.Truncated = len(rounds) == f.Limit
	p := a.Pages.Page(c, "ledger.title", "ledger")
	if problem != "" && p.Flash == "" {
		p.Flash = problem
	}
	return response.Render(c, http.StatusOK, web.LedgerPage(p, d))
}

// ledgerRoundPage shows a round with its outputs and, to those who may, the
// form to record one (?correct=ID opens it on a correction).
func (a *Area) ledgerRoundPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := web.NewForm()
	correcting := int64(0)
	if raw := c.QueryParam("correct"); raw != "" {
		correcting = request.ID(raw)
	}
	return a.renderRound(c, http.StatusOK, id, f, correcting)
}

func (a *Area) renderRound(c echo.Context, status int, id int64, f web.Form, correcting int64) error {
	ctx := c.Request().Context()
	// A round is its booking: another team's is not found here as on
	// /bookings/{id} and the API, before even the wait page says it exists.
	if _, err := scope.Booking(c, a.Store, id); err != nil {
		return err
	}
	d, err := a.Store.FindLedgerRound(ctx, a.Config.TZ, id)
	if errs.Is(err, errs.Conflict) {
		_, _, msg, _ := response.Describe(err, request.Lang(c))
		return response.Render(c, http.StatusOK, web.LedgerWaitPage(a.Pages.Page(c, "ledger.title", "ledger"), web.LedgerWaitProps{BookingID: id, Message: msg}))
	}
	if err != nil {
		return err
	}
	rec, err := a.recorderFor(c)
	if err != nil {
		return err
	}
	props := web.LedgerRoundProps{Row: roundRow(d.LedgerRoundView, rec.may(d.UserID, d.TeamID)), Zone: d.Zone, Form: f}
	props.CanRecord = props.Row.CanRecord && d.EndAt.After(d.StartAt)
	for _, m := range d.Months {
		props.Months = append(props.Months, web.LedgerMonthRow{Month: m.Month, T: totalsRow(m.LedgerTotals)})
	}
	for _, h := range d.History {
		row := web.LedgerHistoryRow{ID: h.ID, Quantity: h.Quantity, Unit: h.Unit, Note: h.Note, By: h.CreatedByName, At: h.CreatedAt}
		if h.CorrectsID != nil {
			row.CorrectsID = *h.CorrectsID
		}
		if h.CorrectedBy != nil {
			row.CorrectedBy = *h.CorrectedBy
		}
		props.History = append(props.History, row)
		// Correcting an entry starts from what it said.
		if correcting == h.ID && h.CorrectedBy == nil {
			props.Correcting = h.ID
			if f.Value("unit") == "" && f.Value("quantity") == "" {
				props.Form.Values["quantity"] = store.FormatQuantity(h.Quantity)
				props.Form.Values["unit"] = h.Unit
				props.Form.Values["note"] = h.Note
			}
		}
	}
	if props.CanRecord {
		if props.Units, err = a.Store.FindOutputUnits(ctx, d.TaskID, d.TeamID, 20); err != nil {
			return err
		}
	}
	if props.Files, err = a.roundFiles(ctx, id); err != nil {
		return err
	}
	return response.Render(c, status, web.LedgerRoundPage(a.Pages.Page(c, "ledger.title", "ledger"), props))
}

// roundFiles lists the script, config and plan versions a round used:
// for each of its task's files, the version current when the booking
// began (store.FindBookingFileVersions, issue 6). A viewer who may not read
// the task's files sees none.
func (a *Area) roundFiles(ctx context.Context, bookingID int64) ([]web.LedgerFileLink, error) {
	vs, err := a.Store.FindBookingFileVersions(ctx, bookingID)
	if errs.Is(err, errs.Forbidden) || errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]web.LedgerFileLink, 0, len(vs))
	for _, v := range vs {
		segs := strings.Split(v.Path, "/")
		for i, sg := range segs {
			segs[i] = url.PathEscape(sg)
		}
		out = append(out, web.LedgerFileLink{Name: v.Path, Version: "v" + strconv.Itoa(v.No),
			Href: "/tasks/" + web.I64(v.TaskID) + "/files/show/" + strings.Join(segs, "/") + "?version=" + strconv.Itoa(v.No)})
	}
	return out, nil
}

// outputFormFields are the fields of the record-output form.
var outputFormFields = []string{"quantity", "unit", "note", "corrects_id"}

// outputInputFromForm reads the form; a quantity that does not parse is a
// field message beside the store's own checks.
func outputInputFromForm(f web.Form) (store.OutputInput, error) {
	v := errs.NewValidation("server.outputInputFromForm")
	in := store.OutputInput{Unit: f.Value("unit"), Note: f.Value("note"), CorrectsID: request.ID(f.Value("corrects_id"))}
	if raw := strings.TrimSpace(f.Value("quantity")); raw != "" {
		// People type "1,200"; the separators are not part of the number.
		q, err := strconv.ParseFloat(strings.ReplaceAll(raw, ",", ""), 64)
		if err != nil {
			v.Add("quantity", "field.number")
		} else {
			in.Quantity = &q
		}
	}
	// What did not parse stops the store, so ask its checks here: the form
	// shows every problem at once, not the rest only on the next try.
	if v.Err() != nil {
		if err := v.Merge(in.Check()); err != nil {
			return in, err
		}
	}
	return in, v.Err()
}

// recordOutputForm appends an output (or a correction) to a round.
func (a *Area) recordOutputForm(c echo.Context) error {
	// Scoped before the form is read, so a refusal of the form's fields
	// cannot tell that another team's round exists.
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	f := request.Form(c, outputFormFields...)
	in, err := outputInputFromForm(f)
	var out *store.OutputView
	if err == nil {
		out, err = a.Store.RecordOutput(c.Request().Context(), a.Config.TZ, id, in)
	}
	if err == nil {
		key := "ledger.flash_recorded"
		if out.CorrectsID != nil {
			key = "ledger.flash_corrected"
		}
		return a.Pages.RedirectWithFlash(c, "/ledger/rounds/"+web.I64(id)+"#outputs", web.T(request.Lang(c), key, store.FormatQuantity(out.Quantity), out.Unit))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderRound(c, response.StatusOf(err), id, f, in.CorrectsID)
}

// taskLedgerPage shows a task's ledger to those who may see the task (its
// teams' people, admins), as its task page does; the kind is set by those
// who may change the task.
func (a *Area) taskLedgerPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	return a.renderTaskLedger(c, http.StatusOK, id, web.NewForm())
}

func (a *Area) renderTaskLedger(c echo.Context, status int, id int64, kind web.Form) error {
	ctx := c.Request().Context()
	if _, err := scope.Task(c, a.Store, id); err != nil {
		return err
	}
	l, err := a.Store.FindTaskLedger(ctx, a.Config.TZ, id)
	if err != nil {
		return err
	}
	rec, err := a.recorderFor(c)
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	d := web.TaskLedgerProps{TaskID: l.Task.ID, TaskName: l.Task.Name, TeamName: l.TeamName, Kind: l.Kind,
		EstimateHours: schedule.CardHours(l.EstimateCardSeconds), Finished: totalsRow(l.Finished), LiveHours: schedule.CardHours(l.LiveCardSeconds),
		LiveCostFen: l.LiveCostFen, WaitingHours: schedule.CardHours(l.WaitingCardSeconds), Deviation: l.Deviation, Outputs: unitRows(l.Outputs)}
	if l.EstimateCardSeconds > 0 {
		d.BookedPct = int(float64(l.Finished.BookedCardSeconds+l.LiveCardSeconds+l.WaitingCardSeconds)*100/float64(l.EstimateCardSeconds) + 0.5)
	}
	d.Kinds = append(d.Kinds, web.Option{Value: "", Label: web.T(lang, "lgkind.none")})
	for _, k := range store.TaskKinds {
		d.Kinds = append(d.Kinds, web.Option{Value: k, Label: web.T(lang, "lgkind."+k)})
	}
	if d.CanSetKind, err = scope.MayPlan(c, a.Store, l.Task.TeamID); err != nil {
		return err
	}
	if _, ok := kind.Values["kind"]; !ok {
		kind.Values["kind"] = l.Kind
	}
	for _, r := range l.Rounds {
		d.Rounds = append(d.Rounds, roundRow(r, rec.may(r.UserID, r.TeamID)))
	}
	return response.Render(c, status, web.TaskLedgerPage(a.Pages.Page(c, "ledger.title", "ledger"), d, kind))
}

// setTaskKindForm classifies a task for the yearly baseline.
func (a *Area) setTaskKindForm(c echo.Context) error {
	// Another team's task is not found, as on the page; the store's own
	// check (403) is for those who see the task but may not plan for it.
	id, err := scope.TaskID(c, a.Store)
	if err != nil {
		return err
	}
	f := request.Form(c, "kind")
	err = a.Store.SetTaskKind(c.Request().Context(), id, f.Value("kind"))
	if err == nil {
		label := web.T(request.Lang(c), "lgkind.none")
		if k := f.Value("kind"); k != "" {
			label = web.T(request.Lang(c), "lgkind."+k)
		}
		return a.Pages.RedirectWithFlash(c, "/ledger/tasks/"+web.I64(id), web.T(request.Lang(c), "ledger.flash_kind", label))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderTaskLedger(c, response.StatusOf(err), id, f)
}
