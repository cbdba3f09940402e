package ledger

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/scope"
	"cardhour/store"
)

// apiRecordOutput appends an output to a finished round. Bookings of teams
// the caller cannot see are not found; among those they see, the store
// lets only the owner, the team's managers and admins record.
func (a *Area) apiRecordOutput(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := scope.Booking(c, a.Store, id); err != nil {
		return err
	}
	var req outputRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	out, err := a.Store.RecordOutput(c.Request().Context(), a.Config.TZ, id,
		store.OutputInput{Quantity: req.Quantity, Unit: req.Unit, Note: req.Note, CorrectsID: req.CorrectsID})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, out)
}

// apiListOutputs is a round's output history.
func (a *Area) apiListOutputs(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := scope.Booking(c, a.Store, id); err != nil {
		return err
	}
	outs, err := a.Store.FindOutputs(c.Request().Context(), []int64{id})
	if err != nil {
		return err
	}
	if outs == nil {
		outs = []store.OutputView{}
	}
	return c.JSON(http.StatusOK, map[string]any{"outputs": outs})
}

// apiLedgerRounds lists the rounds of the caller's teams that ended in a month.
func (a *Area) apiLedgerRounds(c echo.Context) error {
	v := errs.NewValidation("server.apiLedgerRounds")
	teams, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	month := strings.TrimSpace(c.QueryParam("month"))
	if month == "" {
		month = a.thisMonth()
	} else if _, _, err := store.MonthBounds(month, a.Config.TZ); err != nil {
		v.Add("month", "report.month_invalid")
	}
	f := store.LedgerFilter{Zone: a.Config.TZ, Month: month, TeamIDs: teams, Limit: 1000}
	team, err := request.TeamID(c.Request().Context(), a.Store, request.QueryRef(c, "team"), "team", v)
	if err != nil {
		return err
	}
	f.TaskID = int64(request.QueryInt(c, "task_id", 0, 1, 1<<31-1, "error.id", v))
	switch strings.ToLower(strings.TrimSpace(c.QueryParam("mine"))) {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		f.UserID = request.User(c).ID
	default:
		v.Add("mine", "api.bool_invalid")
	}
	if err := v.Err(); err != nil {
		return err
	}
	out := roundsJSON{Month: month, Zone: a.Config.TZ.String(), Rounds: []store.LedgerRoundView{}}
	if team != 0 {
		if !scope.Sees(teams, team) {
			return c.JSON(http.StatusOK, out)
		}
		f.TeamIDs = []int64{team}
	}
	if err := a.Store.CatchUpLedger(c.Request().Context(), a.Config.TZ); err != nil {
		return err
	}
	rounds, err := a.Store.FindLedgerRounds(c.Request().Context(), f)
	if err != nil {
		return err
	}
	for i := range rounds {
		if rounds[i].Outputs == nil {
			rounds[i].Outputs = []store.OutputView{}
		}
	}
	out.Rounds = append(out.Rounds, rounds...)
	return c.JSON(http.StatusOK, out)
}

// apiLedgerRound is one round by booking id.
func (a *Area) apiLedgerRound(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := scope.Booking(c, a.Store, id); err != nil {
		return err
	}
	d, err := a.Store.FindLedgerRound(c.Request().Context(), a.Config.TZ, id)
	if err != nil {
		return err
	}
	if d.Outputs == nil {
		d.Outputs = []store.OutputView{}
	}
	if d.History == nil {
		d.History = []store.OutputView{}
	}
	return c.JSON(http.StatusOK, d)
}

// apiTaskLedger is a task's ledger.
func (a *Area) apiTaskLedger(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := scope.Task(c, a.Store, id); err != nil {
		return err
	}
	l, err := a.Store.FindTaskLedger(c.Request().Context(), a.Config.TZ, id)
	if err != nil {
		return err
	}
	if l.Rounds == nil {
		l.Rounds = []store.LedgerRoundView{}
	}
	for i := range l.Rounds {
		if l.Rounds[i].Outputs == nil {
			l.Rounds[i].Outputs = []store.OutputView{}
		}
	}
	if l.Task.CardTypeIDs == nil {
		l.Task.CardTypeIDs = []int64{}
	}
	return c.JSON(http.StatusOK, l)
}

// apiSetTaskKind classifies a task.
func (a *Area) apiSetTaskKind(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := scope.Task(c, a.Store, id); err != nil {
		return err
	}
	var req kindRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	if req.Kind == nil {
		v := errs.NewValidation("server.apiSetTaskKind")
		v.Add("kind", "field.required")
		return v.Err()
	}
	if err := a.Store.SetTaskKind(c.Request().Context(), id, *req.Kind); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, kindJSON{TaskID: id, Kind: *req.Kind})
}
