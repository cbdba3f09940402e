package booking

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/scope"
	"cardhour/store"
)

// taskRequest is the body of POST and PUT /api/v1/tasks: the team, image and
// card types by name or id, times as RFC 3339 text.
type taskRequest struct {
	Team              request.Ref   `json:"team"`
	TeamID            int64         `json:"team_id"`
	Name              string        `json:"name"`
	Priority          string        `json:"priority"`
	EstimateCardHours float64       `json:"estimate_card_hours"`
	DataReadiness     string        `json:"data_readiness"`
	DataReadyAt       *string       `json:"data_ready_at" format:"date-time"`
	VRAMGiB           float64       `json:"vram_gib"`
	Precision         string        `json:"precision"`
	CardTypes         []request.Ref `json:"card_types"`
	CardTypeIDs       []int64       `json:"card_type_ids"`
	Image             request.Ref   `json:"image"`
	ImageID           *int64        `json:"image_id"`
	Notes             string        `json:"notes"`
}

// taskFieldNames maps the store's field names to this API's.
var taskFieldNames = map[string]string{"team_id": "team", "card_type_ids": "card_types", "image_id": "image"}

// taskInput resolves names and parses times. fixedTeam, when not 0, is the team
// of the task being replaced, used when the body names none.
func (a *Area) taskInput(c echo.Context, r taskRequest, fixedTeam int64) (store.TaskInput, error) {
	v := errs.NewValidation("server.taskInput")
	in := store.TaskInput{
		TeamID: r.TeamID, Name: r.Name, Priority: r.Priority, EstimateCardHours: r.EstimateCardHours,
		DataReadiness: r.DataReadiness, VRAMGiB: r.VRAMGiB, Precision: r.Precision,
		CardTypeIDs: r.CardTypeIDs, ImageID: r.ImageID, Notes: r.Notes,
	}
	team, err := request.TeamID(c.Request().Context(), a.Store, r.Team, "team", v)
	if err != nil {
		return in, err
	}
	switch {
	case team != 0 && in.TeamID != 0 && team != in.TeamID:
		v.Add("team", "api.ref_conflict")
	case team != 0:
		in.TeamID = team
	}
	if in.TeamID == 0 {
		in.TeamID = fixedTeam
	}
	if in.TeamID == 0 {
		v.Add("team", "task.team_required")
	}
	for _, ct := range r.CardTypes {
		id, err := request.CardTypeID(c.Request().Context(), a.Store, ct, "card_types", v)
		if err != nil {
			return in, err
		}
		if id != 0 {
			in.CardTypeIDs = append(in.CardTypeIDs, id)
		}
	}
	img, err := request.ImageID(c.Request().Context(), a.Store, r.Image, "image", v)
	if err != nil {
		return in, err
	}
	switch {
	case img != nil && in.ImageID != nil && *img != *in.ImageID:
		v.Add("image", "api.ref_conflict")
	case img != nil:
		in.ImageID = img
	}
	if at := request.Time(r.DataReadyAt, "data_ready_at", v); !at.IsZero() {
		in.DataReadyAt = &at
	}
	if err := v.Err(); err != nil {
		return in, err
	}
	// Only teams the user may book for: a task is the start of a booking.
	teams, err := a.Store.BookableTeamIDs(c.Request().Context(), request.User(c))
	if err != nil {
		return in, err
	}
	if !scope.Sees(teams, in.TeamID) {
		return in, &errs.Error{Code: errs.Invalid, Op: "server.taskInput", Key: "api.task_not_your_team",
			Fields: map[string]string{"team": "api.task_not_your_team"}}
	}
	return in, nil
}

// taskJSON is a task in the API, with its estimate in card-hours.
type taskJSON struct {
	store.Task
	EstimateCardHours float64 `json:"estimate_card_hours"`
}

// taskUsageJSON sets what a task booked against its baseline.
type taskUsageJSON struct {
	BookedCardHours    float64 `json:"booked_card_hours"`
	ElapsedCardHours   float64 `json:"elapsed_card_hours"`
	WaitingCardHours   float64 `json:"waiting_card_hours"`
	RemainingCardHours float64 `json:"remaining_card_hours"`
	CostFen            int64   `json:"cost_fen"`
	CostYuan           string  `json:"cost_yuan"`
	Bookings           int     `json:"bookings"`
	Deviation          string  `json:"deviation"`
}

// taskDetailJSON is GET /api/v1/tasks/{id}: the baseline beside the usage.
type taskDetailJSON struct {
	taskJSON
	Usage taskUsageJSON `json:"usage"`
}

func toTaskJSON(t store.Task) taskJSON {
	if t.CardTypeIDs == nil {
		t.CardTypeIDs = []int64{}
	}
	return taskJSON{Task: t, EstimateCardHours: t.EstimateCardHours()}
}

func toTaskUsageJSON(t store.Task, u store.TaskUsage) taskUsageJSON {
	return taskUsageJSON{
		BookedCardHours:    schedule.CardHours(u.BookedCardSeconds),
		ElapsedCardHours:   schedule.CardHours(u.ElapsedCardSeconds),
		WaitingCardHours:   schedule.CardHours(u.WaitingCardSeconds),
		RemainingCardHours: schedule.CardHours(max(t.EstimateCardSeconds-u.BookedCardSeconds-u.WaitingCardSeconds, 0)),
		CostFen:            u.CostFen,
		CostYuan:           money.Fen(u.CostFen).Plain(),
		Bookings:           u.Bookings,
		Deviation:          u.Deviation(t.EstimateCardSeconds),
	}
}

// taskPageJSON answers GET /api/v1/tasks: one page of the tasks, with how
// many the filter selects in all and the page it is.
type taskPageJSON struct {
	Tasks  []taskJSON `json:"tasks"`
	Total  int64      `json:"total"`
	Limit  int        `json:"limit"`
	Offset int        `json:"offset"`
}

func (a *Area) apiListTasks(c echo.Context) error {
	v := errs.NewValidation("server.apiListTasks")
	teams, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	f := store.TaskFilter{TeamIDs: teams, Query: c.QueryParam("q"), Priority: c.QueryParam("priority"), Readiness: c.QueryParam("readiness")}
	team, err := request.TeamID(c.Request().Context(), a.Store, request.QueryRef(c, "team"), "team", v)
	if err != nil {
		return err
	}
	v.Check(f.Priority == "" || slices.Contains(store.Priorities, f.Priority), "priority", "task.priority_invalid")
	v.Check(f.Readiness == "" || slices.Contains(store.Readinesses, f.Readiness), "readiness", "task.readiness_invalid")
	page := request.APIPage(c, 500, v)
	if err := v.Err(); err != nil {
		return err
	}
	f.TeamID = team
	pg, err := a.Store.FindTaskPage(c.Request().Context(), f, page)
	if err != nil {
		return err
	}
	out := taskPageJSON{Tasks: make([]taskJSON, 0, len(pg.Items)), Total: pg.Total, Limit: pg.Limit, Offset: pg.Offset}
	for _, t := range pg.Items {
		out.Tasks = append(out.Tasks, toTaskJSON(t))
	}
	return c.JSON(http.StatusOK, out)
}

func (a *Area) apiGetTask(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := scope.Task(c, a.Store, id)
	if err != nil {
		return err
	}
	usage, err := a.Store.FindTaskUsage(c.Request().Context(), []int64{t.ID})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, taskDetailJSON{taskJSON: toTaskJSON(*t), Usage: toTaskUsageJSON(*t, usage[t.ID])})
}

func (a *Area) apiCreateTask(c echo.Context) error {
	var req taskRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := a.taskInput(c, req, 0)
	if err != nil {
		return err
	}
	t, err := a.Store.CreateTask(c.Request().Context(), in)
	if err != nil {
		return request.RenameFields(err, taskFieldNames)
	}
	return c.JSON(http.StatusCreated, toTaskJSON(*t))
}

func (a *Area) apiUpdateTask(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	current, err := scope.Task(c, a.Store, id)
	if err != nil {
		return err
	}
	var req taskRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := a.taskInput(c, req, current.TeamID)
	if err != nil {
		return err
	}
	t, err := a.Store.UpdateTask(c.Request().Context(), id, in)
	if err != nil {
		return request.RenameFields(err, taskFieldNames)
	}
	return c.JSON(http.StatusOK, toTaskJSON(*t))
}
