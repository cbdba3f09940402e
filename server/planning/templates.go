package planning

import (
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/bookingview"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

var (
	templateFields    = []string{"task_id", "name", "card_type", "count", "duration_hours"}
	templateUseFields = []string{"name", "start", "queue"}
)

// templateFromForm parses the template form; numbers that do not parse are
// reported next to their inputs, together with what check (the store's own
// rules) finds in the other fields: every invalid field at once.
func templateFromForm(f web.Form, check func(store.TemplateInput) error) (store.TemplateInput, error) {
	v := errs.NewValidation("server.templateFromForm")
	in := store.TemplateInput{Name: f.Value("name"), TaskID: request.ID(f.Value("task_id")), CardTypeID: request.ID(f.Value("card_type"))}
	v.Check(in.TaskID > 0, "task_id", "task.not_found")
	v.Check(in.CardTypeID > 0, "card_type", "cardtype.not_found")
	if raw := strings.TrimSpace(f.Value("count")); raw == "" {
		v.Add("count", "field.required")
	} else if n, err := strconv.Atoi(raw); err != nil {
		v.Add("count", "field.integer")
	} else {
		in.Count = n
	}
	if raw := strings.TrimSpace(f.Value("duration_hours")); raw == "" {
		v.Add("duration_hours", "field.required")
	} else if h, err := strconv.ParseFloat(raw, 64); err != nil || math.IsNaN(h) || math.IsInf(h, 0) || math.Abs(h) > 1e6 {
		v.Add("duration_hours", "field.number")
	} else {
		in.Duration = time.Duration(h * float64(time.Hour))
	}
	if in.Name == "" {
		v.Add("name", "field.required")
	}
	if v.Err() != nil {
		if err := v.Merge(check(in)); err != nil {
			return in, err
		}
	}
	return in, v.Err()
}

// templateRow names a template's team, card type and image.
func templateRow(t store.BookingTemplate, teams, types, images map[int64]string, canUse bool) web.TemplateListRow {
	r := web.TemplateListRow{ID: t.ID, Name: t.Name, Team: teams[t.TeamID], CardType: types[t.CardTypeID], Count: t.CardCount,
		DurationHours: schedule.CardHours(t.DurationSeconds), Priority: t.Priority, EstimateHours: t.EstimateCardHours(),
		Readiness: t.DataReadiness, VRAMGiB: t.VRAMGiB, Precision: t.Precision, Notes: t.Notes, CanUse: canUse}
	if t.ImageID != nil {
		r.Image = images[*t.ImageID]
	}
	return r
}

// templateTaskOptions lists the tasks of the teams the user may book for,
// as "team · task".
func (a *Area) templateTaskOptions(c echo.Context, bookable []int64, teams map[int64]string) ([]web.Option, error) {
	tasks, err := a.Store.FindTasks(c.Request().Context(), store.TaskFilter{TeamIDs: bookable})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(tasks, func(i, j int) bool { return teams[tasks[i].TeamID] < teams[tasks[j].TeamID] })
	opts := make([]web.Option, 0, len(tasks))
	for _, t := range tasks {
		opts = append(opts, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: teams[t.TeamID] + " · " + t.Name})
	}
	return opts, nil
}

func (a *Area) templatesPage(c echo.Context) error {
	return a.renderTemplates(c, http.StatusOK, web.NewForm(), "")
}

func (a *Area) renderTemplates(c echo.Context, status int, f web.Form, listErr string) error {
	ctx := c.Request().Context()
	u := request.User(c)
	visible, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	tpls, err := a.Store.FindTemplates(ctx, visible)
	if err != nil {
		return err
	}
	bookable, err := a.Store.BookableTeamIDs(ctx, u)
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	typeOpts, types, err := a.typeOptions(c)
	if err != nil {
		return err
	}
	canBook := idSet(bookable)
	props := web.TemplatesProps{CanCreate: len(bookable) > 0, Types: typeOpts, ListErr: listErr}
	for _, t := range tpls {
		props.Rows = append(props.Rows, templateRow(t, teams, types, nil, canBook[t.TeamID]))
	}
	if props.CanCreate {
		if props.Tasks, err = a.templateTaskOptions(c, bookable, teams); err != nil {
			return err
		}
		if f.Value("count") == "" {
			f.Values["count"] = "1"
		}
	}
	return response.Render(c, status, web.TemplatesPage(a.Pages.Page(c, "plan.tpl.title", "booking"), props, f))
}

// newTemplatePage is the "存为模板" form. With ?task= it starts from that
// task and the shape of its latest booking: this round's way of taking
// cards, frozen for the next.
func (a *Area) newTemplatePage(c echo.Context) error {
	ctx := c.Request().Context()
	f := web.NewForm()
	f.Values["count"] = "1"
	f.Values["duration_hours"] = "8"
	if id := request.ID(c.QueryParam("task")); id > 0 {
		task, err := scope.Task(c, a.Store, id)
		if err != nil {
			return err
		}
		bookable, err := a.Store.BookableTeamIDs(ctx, request.User(c))
		if err != nil {
			return err
		}
		if !idSet(bookable)[task.TeamID] {
			return errs.E(errs.NotFound, "server.newTemplatePage", "task.not_found")
		}
		f.Values["task_id"] = strconv.FormatInt(task.ID, 10)
		f.Values["name"] = web.T(request.Lang(c), "plan.tpl.default_name", task.Name)
		if len(task.CardTypeIDs) > 0 {
			f.Values["card_type"] = strconv.FormatInt(task.CardTypeIDs[0], 10)
		}
		bs, err := a.Store.FindBookings(ctx, store.BookingFilter{TaskID: task.ID, Limit: 1000})
		if err != nil {
			return err
		}
		for i := len(bs) - 1; i >= 0; i-- {
			if b := bs[i]; b.State != store.BookingCancelled {
				f.Values["card_type"] = strconv.FormatInt(b.CardTypeID, 10)
				f.Values["count"] = strconv.Itoa(b.CardCount)
				f.Values["duration_hours"] = strconv.FormatFloat(b.EndAt.Sub(b.StartAt).Hours(), 'f', -1, 64)
				break
			}
		}
	}
	return a.renderNewTemplate(c, http.StatusOK, f)
}

func (a *Area) renderNewTemplate(c echo.Context, status int, f web.Form) error {
	u := request.User(c)
	bookable, err := a.Store.BookableTeamIDs(c.Request().Context(), u)
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	tasks, err := a.templateTaskOptions(c, bookable, teams)
	if err != nil {
		return err
	}
	types, _, err := a.typeOptions(c)
	if err != nil {
		return err
	}
	return response.Render(c, status, web.TemplateNewPage(a.Pages.Page(c, "plan.tpl.new", "booking"), tasks, types, response.Limited(f, a.Store.TemplateLimits())))
}

func (a *Area) createTemplateForm(c echo.Context) error {
	f := request.Form(c, templateFields...)
	in, err := templateFromForm(f, a.Store.CheckTemplateInput)
	if err == nil {
		var t *store.BookingTemplate
		if t, err = a.Store.CreateTemplateFromTask(c.Request().Context(), in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/templates/"+strconv.FormatInt(t.ID, 10), web.T(request.Lang(c), "plan.tpl.created", t.Name))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderNewTemplate(c, response.StatusOf(err), f)
}

// visibleTemplate loads the :id template when the user may see its team.
func (a *Area) visibleTemplate(c echo.Context) (*store.BookingTemplate, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	t, err := a.Store.FindTemplateByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	visible, err := scope.Teams(c, a.Store)
	if err != nil {
		return nil, err
	}
	if !scope.Sees(visible, t.TeamID) {
		return nil, errs.E(errs.NotFound, "server.visibleTemplate", "template.not_found")
	}
	return t, nil
}

// templatePage shows a template with its use form; coming back from the
// preview ("change"), the query fills the form as it was.
func (a *Area) templatePage(c echo.Context) error {
	t, err := a.visibleTemplate(c)
	if err != nil {
		return err
	}
	f := web.NewForm()
	now := a.Store.Now().In(a.Config.TZ)
	f.Values["name"] = t.Name + " " + now.Format("0102")
	f.Values["start"] = request.LocalValue(now.Truncate(time.Hour).Add(time.Hour), a.Config.TZ)
	for _, k := range templateUseFields {
		if v := c.QueryParam(k); v != "" {
			f.Values[k] = v
		}
	}
	return a.renderTemplate(c, http.StatusOK, t, f)
}

func (a *Area) renderTemplate(c echo.Context, status int, t *store.BookingTemplate, f web.Form) error {
	ctx := c.Request().Context()
	bookable, err := a.Store.BookableTeamIDs(ctx, request.User(c))
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	_, types, err := a.typeOptions(c)
	if err != nil {
		return err
	}
	images := map[int64]string{}
	if t.ImageID != nil {
		if img, err := a.Store.FindImageByID(ctx, *t.ImageID); err == nil {
			images[img.ID] = img.Name
		}
	}
	props := web.TemplateUseProps{Template: templateRow(*t, teams, types, images, idSet(bookable)[t.TeamID])}
	return response.Render(c, status, web.TemplatePage(a.Pages.Page(c, "plan.tpl.title", "booking"), props, f))
}

// templateUse reads the use form of a visible template: the task's name,
// the start and whether to queue. It refuses a team the user cannot book
// for, and a start that is not a time, before the store is asked.
func (a *Area) templateUse(c echo.Context) (*store.BookingTemplate, web.Form, time.Time, error) {
	f := request.Form(c, templateUseFields...)
	t, err := a.visibleTemplate(c)
	if err != nil {
		return nil, f, time.Time{}, err
	}
	bookable, err := a.Store.BookableTeamIDs(c.Request().Context(), request.User(c))
	if err != nil {
		return nil, f, time.Time{}, err
	}
	if !idSet(bookable)[t.TeamID] {
		return nil, f, time.Time{}, errs.E(errs.Forbidden, "server.useTemplate", "booking.not_your_team")
	}
	start, ok := request.ParseLocal(f.Value("start"), a.Config.TZ)
	switch {
	case !ok:
		return t, f, start, fieldError("start", "plan.bad_time")
	case start.IsZero():
		return t, f, start, fieldError("start", "booking.start_required")
	}
	return t, f, start, nil
}

// templateUseFailed shows the template again with why its use was refused;
// errors that are not about the input go to the error handler.
func (a *Area) templateUseFailed(c echo.Context, t *store.BookingTemplate, f web.Form, err error) error {
	if t == nil || !partialFormFailed(request.Lang(c), err, &f, templateUseFields) {
		return err
	}
	return a.renderTemplate(c, response.StatusOf(err), t, f)
}

// previewTemplateForm shows what using the template costs and does — the
// task it creates, the booking's card-hours × price, the quota left, the
// free cards — before anything is written; its confirm button uses it.
func (a *Area) previewTemplateForm(c echo.Context) error {
	t, f, start, err := a.templateUse(c)
	if err != nil {
		return a.templateUseFailed(c, t, f, err)
	}
	ctx := c.Request().Context()
	pv, err := a.Store.PreviewTemplate(ctx, t.ID, f.Value("name"), start, f.Value("queue") != "")
	if err != nil {
		return a.templateUseFailed(c, t, f, err)
	}
	teams, err := a.Store.TeamNames(ctx)
	if err != nil {
		return err
	}
	task := pv.Task
	brief := web.TaskBrief{Name: task.Name, TeamName: teams[task.TeamID], Priority: task.Priority, Readiness: task.DataReadiness,
		VRAMGiB: task.VRAMGiB, Precision: task.Precision, EstimateHours: task.EstimateCardHours(), RemainingHours: task.EstimateCardHours()}
	v, err := bookingview.Preview(ctx, a.Store, pv, brief, t.CardCount, a.Config.Headroom, "/templates/"+strconv.FormatInt(t.ID, 10)+"/use")
	if err != nil {
		return err
	}
	back := bookingview.KeepForm(&v, f, templateUseFields)
	v.EditURL = "/templates/" + strconv.FormatInt(t.ID, 10) + "?" + back.Encode() + "#use"
	return response.Render(c, http.StatusOK, web.BookingPreviewPage(a.Pages.Page(c, "bkpreview.title", "booking"), v))
}

// useTemplateForm creates the task and books the template's shape, as the
// preview showed: both or, when the booking is refused (no capacity, over
// quota), neither — the page says why and nothing is left to clean up.
func (a *Area) useTemplateForm(c echo.Context) error {
	t, f, start, err := a.templateUse(c)
	if err != nil {
		return a.templateUseFailed(c, t, f, err)
	}
	lang := request.Lang(c)
	task, res, err := a.Store.UseTemplate(c.Request().Context(), t.ID, f.Value("name"), start, f.Value("queue") != "")
	if err != nil {
		return a.templateUseFailed(c, t, f, err)
	}
	b := res.Booking
	msg := web.T(lang, "plan.tpl.used", task.Name, b.ID, web.T(lang, web.PlanStateKey(b.State)))
	return a.Pages.RedirectWithFlash(c, "/bookings/"+strconv.FormatInt(b.ID, 10), msg)
}

// fieldError is an invalid input with its message on one field.
func fieldError(field, key string) error {
	v := errs.NewValidation("server.form")
	v.Add(field, key)
	return v.Err()
}

// partialFormFailed is response.FormRefused for a form that shows only some of the
// fields the store may complain about (the template form has no end or
// count): messages about the others go to the headline so none is lost.
// A refusal (forbidden) is shown as the headline too.
func partialFormFailed(lang string, err error, f *web.Form, shown []string) bool {
	if !response.FormRefused(lang, err, f) {
		return false
	}
	isShown := map[string]bool{}
	for _, k := range shown {
		isShown[k] = true
	}
	var hidden []string
	keys := make([]string, 0, len(f.Errors))
	for k := range f.Errors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !isShown[k] {
			hidden = append(hidden, f.Errors[k])
			delete(f.Errors, k)
		}
	}
	if len(hidden) > 0 {
		if len(f.Errors) == 0 {
			f.Error = strings.Join(hidden, " ")
		} else {
			f.Error += " " + strings.Join(hidden, " ")
		}
	}
	return true
}

func (a *Area) deleteTemplateForm(c echo.Context) error {
	t, err := a.visibleTemplate(c)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteTemplate(c.Request().Context(), t.ID); err != nil {
		if errs.Is(err, errs.Forbidden) || errs.Is(err, errs.Conflict) {
			_, _, msg, _ := response.Describe(err, request.Lang(c))
			return a.renderTemplates(c, response.StatusOf(err), web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/templates", web.T(request.Lang(c), "admin.deleted", t.Name))
}
