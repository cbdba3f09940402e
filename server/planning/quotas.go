package planning

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

var quotaFields = []string{"team", "card_type", "card_hours", "max_cards", "valid_from", "expires_at", "note"}

// Quota states as the list shows them.
const (
	quotaUpcoming = "upcoming"
	quotaActive   = "active"
	quotaExpired  = "expired"
)

// quotaFromForm parses the quota form; numbers and times that do not parse
// are reported next to their inputs together with the store's own checks.
func (a *Area) quotaFromForm(f web.Form) (store.QuotaInput, error) {
	v := errs.NewValidation("server.quotaFromForm")
	in := store.QuotaInput{TeamID: request.ID(f.Value("team")), CardTypeID: request.ID(f.Value("card_type")), Note: f.Value("note")}
	if raw := strings.TrimSpace(f.Value("card_hours")); raw == "" {
		v.Add("card_hours", "field.required")
	} else if h, err := strconv.ParseFloat(raw, 64); err != nil || math.IsNaN(h) || math.IsInf(h, 0) {
		v.Add("card_hours", "field.number")
	} else {
		in.CardHours = h
	}
	if raw := strings.TrimSpace(f.Value("max_cards")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			v.Add("max_cards", "field.integer")
		}
		in.MaxCards = n
	}
	for field, dst := range map[string]*time.Time{"valid_from": &in.ValidFrom, "expires_at": &in.ExpiresAt} {
		t, ok := request.ParseLocal(f.Value(field), a.Config.TZ)
		if !ok {
			v.Add(field, "plan.bad_time")
		}
		*dst = t
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

func (a *Area) quotaForm(q store.QuotaView) web.Form {
	f := web.NewForm()
	f.Values["team"] = strconv.FormatInt(q.TeamID, 10)
	f.Values["card_type"] = strconv.FormatInt(q.CardTypeID, 10)
	f.Values["card_hours"] = strconv.FormatFloat(q.GrantedHours, 'f', -1, 64)
	f.Values["max_cards"] = strconv.Itoa(q.MaxCards)
	f.Values["valid_from"] = request.LocalValue(q.ValidFrom, a.Config.TZ)
	f.Values["expires_at"] = request.LocalValue(q.ExpiresAt, a.Config.TZ)
	f.Values["note"] = q.Note
	return f
}

// defaultQuotaForm starts a grant at the next whole hour for 30 days.
func (a *Area) defaultQuotaForm() web.Form {
	f := web.NewForm()
	start := a.Store.Now().In(a.Config.TZ).Truncate(time.Hour).Add(time.Hour)
	f.Values["valid_from"] = request.LocalValue(start, a.Config.TZ)
	f.Values["expires_at"] = request.LocalValue(start.AddDate(0, 0, 30), a.Config.TZ)
	f.Values["max_cards"] = "0"
	return f
}

// managedTeamOptions lists the teams the user manages as choices.
func (a *Area) managedTeamOptions(c echo.Context, u *store.User) ([]web.Option, map[int64]bool, error) {
	ids, err := a.Store.ManagedTeamIDs(c.Request().Context(), u)
	if err != nil {
		return nil, nil, err
	}
	names, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	opts := make([]web.Option, 0, len(ids))
	for _, id := range ids {
		opts = append(opts, web.Option{Value: strconv.FormatInt(id, 10), Label: names[id]})
	}
	return opts, idSet(ids), nil
}

// quotaRows turns the store's quotas into list rows, deciding for each its
// state and whether it is due for a reminder: quotas of teams with core
// tasks half a month ahead, others a week (schedule.DueForReminder). A
// quota already continued by a following one reminds no one.
func (a *Area) quotaRows(c echo.Context, views []store.QuotaView, managed map[int64]bool, now time.Time) ([]web.QuotaListRow, error) {
	teamIDs := []int64{}
	seen := map[int64]bool{}
	for _, v := range views {
		if !seen[v.TeamID] {
			seen[v.TeamID] = true
			teamIDs = append(teamIDs, v.TeamID)
		}
	}
	tasks, err := a.Store.FindTasks(c.Request().Context(), store.TaskFilter{TeamIDs: teamIDs})
	if err != nil {
		return nil, err
	}
	core := map[int64]bool{}
	for _, t := range tasks {
		if t.Priority == schedule.Core {
			core[t.TeamID] = true
		}
	}
	rows := make([]web.QuotaListRow, 0, len(views))
	for _, v := range views {
		r := web.QuotaListRow{ID: v.ID, Team: v.TeamName, CardType: v.CardTypeName, GrantedHours: v.GrantedHours,
			UsedHours: v.UsedHours, RemainingHours: v.RemainingHour, MaxCards: v.MaxCards, ValidFrom: v.ValidFrom,
			ExpiresAt: v.ExpiresAt, Note: v.Note, CanEdit: managed[v.TeamID],
			LeadDays: int(schedule.ReminderLead(core[v.TeamID]) / (24 * time.Hour))}
		switch {
		case now.Before(v.ValidFrom):
			r.State = quotaUpcoming
		case !now.Before(v.ExpiresAt):
			r.State = quotaExpired
		default:
			r.State = quotaActive
			r.DaysLeft = int(math.Ceil(v.ExpiresAt.Sub(now).Hours() / 24))
		}
		for _, o := range views {
			if o.ID != v.ID && o.TeamID == v.TeamID && o.CardTypeID == v.CardTypeID &&
				!o.ValidFrom.After(v.ExpiresAt) && o.ExpiresAt.After(v.ExpiresAt) {
				r.Renewed = true
			}
		}
		r.Remind = r.State == quotaActive && !r.Renewed && schedule.DueForReminder(v.ExpiresAt, now, core[v.TeamID])
		r.UsedPct = schedule.UsedPercent(v.UsedCardSeconds, v.CardSeconds)
		r.HighUse = r.State != quotaExpired && schedule.HighUse(v.UsedCardSeconds, v.CardSeconds)
		if r.State == quotaActive && !r.Renewed {
			r.Urgency = schedule.QuotaUrgency(v.ExpiresAt, now)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (a *Area) quotasPage(c echo.Context) error {
	return a.renderQuotas(c, http.StatusOK, a.defaultQuotaForm())
}

func (a *Area) renderQuotas(c echo.Context, status int, f web.Form) error {
	return a.renderQuotasDeciding(c, status, f, 0, web.NewForm())
}

// renderQuotasDeciding is the quota page with a refused decision's
// messages (decideForm) shown at request decideID.
func (a *Area) renderQuotasDeciding(c echo.Context, status int, f web.Form, decideID int64, decideForm web.Form) error {
	ctx := c.Request().Context()
	u := request.User(c)
	visible, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	views, err := a.Store.FindQuotas(ctx, store.QuotaFilter{TeamIDs: visible})
	if err != nil {
		return err
	}
	teams, managed, err := a.managedTeamOptions(c, u)
	if err != nil {
		return err
	}
	types, _, err := a.typeOptions(c)
	if err != nil {
		return err
	}
	rows, err := a.quotaRows(c, views, managed, a.Store.Now())
	if err != nil {
		return err
	}
	if len(teams) == 1 && f.Value("team") == "" {
		f.Values["team"] = teams[0].Value
	}
	props := web.QuotasProps{ShowExpired: c.QueryParam("show") == "expired", CanCreate: len(teams) > 0, Teams: teams, Types: types,
		CanDecide: u.Role == store.RoleAdmin, DecideID: decideID, DecideForm: decideForm}
	if props.Pending, err = a.annotateRequests(c, rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Remind {
			props.Reminders = append(props.Reminders, r)
		}
		if r.State == quotaExpired && !props.ShowExpired {
			props.Hidden++
			continue
		}
		props.Rows = append(props.Rows, r)
	}
	return response.Render(c, status, web.QuotasPage(a.Pages.Page(c, "plan.quota.title", "booking"), props, f))
}

func (a *Area) newQuotaPage(c echo.Context) error {
	u := request.User(c)
	f := a.defaultQuotaForm()
	renewOf := ""
	if id := request.ID(c.QueryParam("renew")); id > 0 {
		_, managed, err := a.managedTeamOptions(c, u)
		if err != nil {
			return err
		}
		// A renewal starts where the old grant ends and runs as long.
		// One already expired starts now instead.
		if old, err := a.Store.FindQuotaByID(c.Request().Context(), id); err == nil && managed[old.TeamID] {
			f = a.quotaForm(*old)
			start := old.ExpiresAt
			if now := a.Store.Now().Truncate(time.Minute); start.Before(now) {
				start = now
			}
			f.Values["valid_from"] = request.LocalValue(start, a.Config.TZ)
			f.Values["expires_at"] = request.LocalValue(start.Add(old.ExpiresAt.Sub(old.ValidFrom)), a.Config.TZ)
			renewOf = old.TeamName + " · " + old.CardTypeName + " · " + web.T(request.Lang(c), "plan.quota.expires_on", a.localDisplay(old.ExpiresAt))
		}
	}
	return a.renderNewQuota(c, http.StatusOK, f, renewOf)
}

// localDisplay is t as the portal shows a time, in its zone.
func (a *Area) localDisplay(t time.Time) string {
	return t.In(a.Config.TZ).Format("2006-01-02 15:04")
}

func (a *Area) renderNewQuota(c echo.Context, status int, f web.Form, renewOf string) error {
	teams, _, err := a.managedTeamOptions(c, request.User(c))
	if err != nil {
		return err
	}
	types, _, err := a.typeOptions(c)
	if err != nil {
		return err
	}
	if len(teams) == 1 && f.Value("team") == "" {
		f.Values["team"] = teams[0].Value
	}
	return response.Render(c, status, web.QuotaNewPage(a.Pages.Page(c, "plan.quota.new", "booking"), teams, types, response.Limited(f, store.QuotaLimits), renewOf))
}

func (a *Area) createQuotaForm(c echo.Context) error {
	f := request.Form(c, quotaFields...)
	in, err := a.quotaFromForm(f)
	if err == nil {
		var q *store.Quota
		if q, err = a.Store.CreateQuota(c.Request().Context(), in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/quotas", a.quotaFlash(c, "plan.quota.created", q))
		}
	}
	if !response.FormRefused(request.Lang(c), err, &f) {
		return err
	}
	return a.renderNewQuota(c, quotaStatus(err), f, "")
}

// quotaStatus is the status of a refused quota form.
func quotaStatus(err error) int { return response.StatusOf(err) }

// quotaFlash names the quota a change concerns.
func (a *Area) quotaFlash(c echo.Context, key string, q *store.Quota) string {
	name := "#" + strconv.FormatInt(q.ID, 10)
	if v, err := a.Store.FindQuotaByID(c.Request().Context(), q.ID); err == nil {
		name = v.TeamName + " · " + v.CardTypeName
	}
	return web.T(request.Lang(c), key, name)
}

func (a *Area) editQuotaPage(c echo.Context) error {
	q, err := a.managedQuota(c)
	if err != nil {
		return err
	}
	return a.renderEditQuota(c, http.StatusOK, q, a.quotaForm(*q))
}

// managedQuota loads the :id quota for its edit page. A quota of a team
// the manager does not manage is not found, as on the list.
func (a *Area) managedQuota(c echo.Context) (*store.QuotaView, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	q, err := a.Store.FindQuotaByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	_, managed, err := a.managedTeamOptions(c, request.User(c))
	if err != nil {
		return nil, err
	}
	if !managed[q.TeamID] {
		return nil, errs.E(errs.NotFound, "server.managedQuota", "quota.not_found")
	}
	return q, nil
}

func (a *Area) renderEditQuota(c echo.Context, status int, q *store.QuotaView, f web.Form) error {
	props := web.QuotaEditProps{ID: q.ID, Team: q.TeamName, CardType: q.CardTypeName, Used: q.UsedHours}
	return response.Render(c, status, web.QuotaEditPage(a.Pages.Page(c, "plan.quota.title", "booking"), props, response.Limited(f, store.QuotaLimits)))
}

func (a *Area) updateQuotaForm(c echo.Context) error {
	q, err := a.managedQuota(c)
	if err != nil {
		return err
	}
	f := request.Form(c, quotaFields...)
	// Team and card type are the quota's own; the form does not carry them.
	f.Values["team"] = strconv.FormatInt(q.TeamID, 10)
	f.Values["card_type"] = strconv.FormatInt(q.CardTypeID, 10)
	in, err := a.quotaFromForm(f)
	if err == nil {
		var saved *store.Quota
		if saved, err = a.Store.UpdateQuota(c.Request().Context(), q.ID, in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/quotas", a.quotaFlash(c, "plan.quota.updated", saved))
		}
	}
	if !response.FormRefused(request.Lang(c), err, &f) {
		return err
	}
	return a.renderEditQuota(c, quotaStatus(err), q, f)
}
