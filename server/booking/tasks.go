package booking

import (
	"net/http"
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

var taskFormFields = []string{"team_id", "name", "priority", "estimate_card_hours", "data_readiness", "data_ready_at",
	"vram_gib", "precision", "image_id", "notes"}

// taskItem puts a task's baseline beside its usage.
func taskItem(t store.Task, u store.TaskUsage, teamName string) web.TaskItem {
	return web.TaskItem{
		ID: t.ID, Name: t.Name, TeamName: teamName, Priority: t.Priority, EstimateHours: t.EstimateCardHours(),
		Readiness: t.DataReadiness, ReadyAt: t.DataReadyAt, VRAMGiB: t.VRAMGiB, Precision: t.Precision,
		BookedHours: schedule.CardHours(u.BookedCardSeconds), ElapsedHours: schedule.CardHours(u.ElapsedCardSeconds),
		WaitingHours: schedule.CardHours(u.WaitingCardSeconds), CostFen: u.CostFen, Bookings: u.Bookings,
		Deviation: u.Deviation(t.EstimateCardSeconds),
	}
}

// tasksPage lists the tasks of the viewer's teams (every team for admins),
// a page at a time, as the query filters them: ?q= (task, team or author
// name), ?priority=, ?readiness=, ?team=, ?limit=, ?offset=. Values that do
// not parse filter nothing: they come from links and the form's choices.
func (a *Area) tasksPage(c echo.Context) error {
	ctx := c.Request().Context()
	u := request.User(c)
	lang := request.Lang(c)
	q := c.QueryParams()
	scoped, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	props := web.TasksProps{CanCreate: store.RoleRank(u.Role) >= store.RoleRank(store.RoleMember), Filter: web.NewForm()}
	f := store.TaskFilter{TeamIDs: scoped, Query: strings.TrimSpace(q.Get("q"))}
	props.Filter.Values["q"] = f.Query
	for _, p := range store.Priorities {
		props.Priorities = append(props.Priorities, web.Option{Value: p, Label: web.T(lang, "taskprio."+p)})
		if q.Get("priority") == p {
			f.Priority, props.Filter.Values["priority"] = p, p
		}
	}
	for _, r := range store.Readinesses {
		props.Readinesses = append(props.Readinesses, web.Option{Value: r, Label: web.T(lang, "taskready."+r)})
		if q.Get("readiness") == r {
			f.Readiness, props.Filter.Values["readiness"] = r, r
		}
	}
	if props.Teams, err = a.teamOptions(c, scoped); err != nil {
		return err
	}
	if id := request.ID(q.Get("team")); id > 0 && scope.Sees(scoped, id) {
		f.TeamID = id
		props.Filter.Values["team"] = strconv.FormatInt(id, 10)
	}
	pg, err := a.Store.FindTaskPage(ctx, f, request.ListPage(c))
	if err != nil {
		return err
	}
	ids := make([]int64, len(pg.Items))
	for i, t := range pg.Items {
		ids[i] = t.ID
	}
	usage, err := a.Store.FindTaskUsage(ctx, ids)
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	for _, t := range pg.Items {
		props.Rows = append(props.Rows, taskItem(t, usage[t.ID], teams[t.TeamID]))
	}
	props.Nav = web.NewPageNav("/tasks", q, pg.Total, pg.Offset, pg.Limit)
	return response.Render(c, http.StatusOK, web.TasksPage(a.Pages.Page(c, "tasks.title", "booking"), props))
}

// taskFormProps fills the choices of the task form: teams the user may book
// for, the classes, readiness values, precisions, images and card types.
func (a *Area) taskFormProps(c echo.Context, id int64, teamName string) (web.TaskFormProps, error) {
	ctx := c.Request().Context()
	lang := request.Lang(c)
	props := web.TaskFormProps{ID: id, TeamName: teamName}
	if id == 0 {
		bookable, err := a.Store.BookableTeamIDs(ctx, request.User(c))
		if err != nil {
			return props, err
		}
		teams, err := a.Store.FindTeams(ctx)
		if err != nil {
			return props, err
		}
		for _, t := range teams {
			if slices.Contains(bookable, t.ID) {
				props.Teams = append(props.Teams, web.Option{Value: web.I64(t.ID), Label: t.Name})
			}
		}
	}
	for _, p := range store.Priorities {
		props.Priorities = append(props.Priorities, web.Option{Value: p, Label: web.T(lang, "taskprio."+p)})
	}
	for _, r := range store.Readinesses {
		props.Readinesses = append(props.Readinesses, web.Option{Value: r, Label: web.T(lang, "taskready."+r)})
	}
	for _, p := range store.TaskPrecisions {
		props.Precisions = append(props.Precisions, web.Option{Value: p, Label: p})
	}
	images, err := a.Store.FindImages(ctx)
	if err != nil {
		return props, err
	}
	for _, im := range images {
		props.Images = append(props.Images, web.Option{Value: web.I64(im.ID), Label: im.Name})
	}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return props, err
	}
	for _, t := range types {
		props.CardTypes = append(props.CardTypes, web.Option{Value: web.I64(t.ID), Label: t.Name})
	}
	return props, nil
}

// taskFormOf reads the posted task form, the preferred card types included.
func taskFormOf(c echo.Context) web.Form {
	f := request.Form(c, taskFormFields...)
	var ids []string
	if params, err := c.FormParams(); err == nil {
		ids = params["card_type_ids"]
	}
	f.Values["card_type_ids"] = strings.Join(ids, ",")
	return f
}

// taskFromForm parses the form; numbers and times that do not parse are
// reported next to their inputs together with the store's own checks.
func (a *Area) taskFromForm(f web.Form) (store.TaskInput, error) {
	v := errs.NewValidation("server.taskFromForm")
	in := store.TaskInput{Name: f.Value("name"), Priority: f.Value("priority"), DataReadiness: f.Value("data_readiness"),
		Precision: strings.TrimSpace(f.Value("precision")), Notes: f.Value("notes")}
	in.TeamID = request.ID(f.Value("team_id"))
	if x, ok := request.Float(f.Value("estimate_card_hours"), v, "estimate_card_hours"); ok {
		in.EstimateCardHours = x
	}
	if x, ok := request.Float(f.Value("vram_gib"), v, "vram_gib"); ok {
		in.VRAMGiB = x
	}
	if raw := strings.TrimSpace(f.Value("data_ready_at")); raw != "" {
		if t, ok := request.ParseLocal(raw, a.Config.TZ); ok {
			in.DataReadyAt = &t
		} else {
			v.Add("data_ready_at", "bkform.time_invalid")
		}
	}
	if raw := strings.TrimSpace(f.Value("image_id")); raw != "" {
		id := request.ID(raw)
		if id == 0 {
			v.Add("image_id", "image.not_found")
		}
		in.ImageID = &id
	}
	for _, raw := range strings.Split(f.Value("card_type_ids"), ",") {
		if raw = strings.TrimSpace(raw); raw == "" {
			continue
		}
		id := request.ID(raw)
		if id == 0 {
			v.Add("card_type_ids", "cardtype.not_found")
			continue
		}
		in.CardTypeIDs = append(in.CardTypeIDs, id)
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

// taskForm fills the form from a stored task.
func (a *Area) taskForm(t *store.Task) web.Form {
	f := web.NewForm()
	f.Values["team_id"] = web.I64(t.TeamID)
	f.Values["name"] = t.Name
	f.Values["priority"] = t.Priority
	f.Values["estimate_card_hours"] = strconv.FormatFloat(t.EstimateCardHours(), 'f', -1, 64)
	f.Values["data_readiness"] = t.DataReadiness
	if t.DataReadyAt != nil {
		f.Values["data_ready_at"] = request.LocalValue(*t.DataReadyAt, a.Config.TZ)
	}
	if t.VRAMGiB > 0 {
		f.Values["vram_gib"] = strconv.FormatFloat(t.VRAMGiB, 'f', -1, 64)
	}
	f.Values["precision"] = t.Precision
	if t.ImageID != nil {
		f.Values["image_id"] = web.I64(*t.ImageID)
	}
	f.Values["notes"] = t.Notes
	ids := make([]string, len(t.CardTypeIDs))
	for i, id := range t.CardTypeIDs {
		ids[i] = web.I64(id)
	}
	f.Values["card_type_ids"] = strings.Join(ids, ",")
	return f
}

// newTaskPage shows the empty task form; ?vram_gib= and ?precision= come
// from the estimator's "use for a new task".
func (a *Area) newTaskPage(c echo.Context) error {
	f := web.NewForm()
	f.Values["priority"] = schedule.Normal
	f.Values["data_readiness"] = schedule.DataReady
	if v := strings.TrimSpace(c.QueryParam("vram_gib")); v != "" {
		if x, err := strconv.ParseFloat(v, 64); err == nil && x > 0 {
			f.Values["vram_gib"] = strconv.FormatFloat(x, 'f', -1, 64)
		}
	}
	if p := c.QueryParam("precision"); slices.Contains(store.TaskPrecisions, p) {
		f.Values["precision"] = p
	}
	return a.renderTaskForm(c, http.StatusOK, 0, "", f)
}

func (a *Area) renderTaskForm(c echo.Context, status int, id int64, teamName string, f web.Form) error {
	props, err := a.taskFormProps(c, id, teamName)
	if err != nil {
		return err
	}
	if id == 0 && f.Value("team_id") == "" && len(props.Teams) == 1 {
		f.Values["team_id"] = props.Teams[0].Value
	}
	title := "tasks.new"
	if id != 0 {
		title = "tasks.title"
	}
	return response.Render(c, status, web.TaskFormPage(a.Pages.Page(c, title, "booking"), props, response.Limited(f, store.TaskLimits)))
}

func (a *Area) createTaskForm(c echo.Context) error {
	f := taskFormOf(c)
	in, err := a.taskFromForm(f)
	if err == nil {
		var t *store.Task
		if t, err = a.Store.CreateTask(c.Request().Context(), in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/tasks/"+web.I64(t.ID), web.T(request.Lang(c), "admin.created", t.Name))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderTaskForm(c, response.StatusOf(err), 0, "", f)
}

// taskDetail shows a task's baseline beside what was booked and used, and
// its bookings. Any signed-in user may read it: the portal is transparent
// about who uses the cards for what.
func (a *Area) taskDetail(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// The same rule as the API: a task is its team's (and admins') to see.
	t, err := scope.Task(c, a.Store, id)
	if err != nil {
		return err
	}
	usage, err := a.Store.FindTaskUsage(ctx, []int64{id})
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	d := web.TaskDetailProps{T: taskItem(*t, usage[id], teams[t.TeamID]), Notes: t.Notes, UpdatedAt: t.UpdatedAt}
	if t.EstimateCardSeconds > 0 {
		d.BookedPct = int(float64(usage[id].BookedCardSeconds)*100/float64(t.EstimateCardSeconds) + 0.5)
	}
	if t.ImageID != nil {
		if im, err := a.Store.FindImageByID(ctx, *t.ImageID); err == nil {
			d.ImageName = im.Name
		} else if !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	for _, ct := range types {
		if slices.Contains(t.CardTypeIDs, ct.ID) {
			d.CardTypes = append(d.CardTypes, ct.Name)
		}
	}
	bookings, err := a.Store.FindBookings(ctx, store.BookingFilter{TaskID: id})
	if err != nil {
		return err
	}
	for _, b := range bookings {
		d.Bookings = append(d.Bookings, bookingItem(b))
	}
	if d.CanEdit, err = scope.MayPlan(c, a.Store, t.TeamID); err != nil {
		return err
	}
	d.CanBook = d.CanEdit
	return response.Render(c, http.StatusOK, web.TaskDetailPage(a.Pages.Page(c, "tasks.title", "booking"), d))
}

// editableTask loads a task the user may change; others' tasks send them
// back to the task page with the reason.
func (a *Area) editableTask(c echo.Context) (*store.Task, bool, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return nil, false, err
	}
	t, err := scope.Task(c, a.Store, id)
	if err != nil {
		return nil, false, err
	}
	ok, err := scope.MayPlan(c, a.Store, t.TeamID)
	return t, ok, err
}

func (a *Area) editTaskPage(c echo.Context) error {
	t, ok, err := a.editableTask(c)
	if err != nil {
		return err
	}
	if !ok {
		return a.Pages.RedirectWithFlash(c, "/tasks/"+web.I64(t.ID), web.T(request.Lang(c), "tasks.edit_not_yours"))
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	return a.renderTaskForm(c, http.StatusOK, t.ID, teams[t.TeamID], a.taskForm(t))
}

func (a *Area) updateTaskForm(c echo.Context) error {
	t, ok, err := a.editableTask(c)
	if err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.Forbidden, "server.updateTaskForm", "tasks.edit_not_yours")
	}
	f := taskFormOf(c)
	in, err := a.taskFromForm(f)
	if err == nil {
		var saved *store.Task
		if saved, err = a.Store.UpdateTask(c.Request().Context(), t.ID, in); err == nil {
			msg := web.T(request.Lang(c), "admin.updated", saved.Name)
			if t.DataReadiness != schedule.DataReady && saved.DataReadiness == schedule.DataReady {
				msg += " " + web.T(request.Lang(c), "tasks.now_ready")
			}
			return a.Pages.RedirectWithFlash(c, "/tasks/"+web.I64(t.ID), msg)
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	teams, terr := a.Store.TeamNames(c.Request().Context())
	if terr != nil {
		return terr
	}
	return a.renderTaskForm(c, response.StatusOf(err), t.ID, teams[t.TeamID], f)
}
