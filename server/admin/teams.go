package admin

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var teamFields = []string{"name", "description", "requires_approval"}

// memberCounts counts the members of every team.
func (a *Area) memberCounts(c echo.Context) (map[int64]int, error) {
	ms, err := a.Store.FindMemberships(c.Request().Context(), store.MembershipFilter{})
	if err != nil {
		return nil, err
	}
	n := map[int64]int{}
	for _, m := range ms {
		n[m.TeamID]++
	}
	return n, nil
}

func teamFromForm(f web.Form) store.TeamInput {
	return store.TeamInput{Name: f.Value("name"), Description: f.Value("description"), RequiresApproval: f.Value("requires_approval") != ""}
}

func teamForm(t *store.Team) web.Form {
	f := web.NewForm()
	f.Values["name"] = t.Name
	f.Values["description"] = t.Description
	if t.RequiresApproval {
		f.Values["requires_approval"] = "on"
	}
	return f
}

func teamRoleOptions(lang string) []web.Option {
	out := make([]web.Option, 0, len(store.TeamRoles))
	for _, r := range store.TeamRoles {
		out = append(out, web.Option{Value: r, Label: web.T(lang, "role."+r)})
	}
	return out
}

func (a *Area) teamsPage(c echo.Context) error {
	return a.renderTeams(c, http.StatusOK, web.NewForm(), "")
}

func (a *Area) renderTeams(c echo.Context, status int, f web.Form, listErr string) error {
	teams, err := a.Store.FindTeams(c.Request().Context())
	if err != nil {
		return err
	}
	counts, err := a.memberCounts(c)
	if err != nil {
		return err
	}
	rows := make([]web.TeamRow, 0, len(teams))
	for _, t := range teams {
		rows = append(rows, web.TeamRow{ID: t.ID, Name: t.Name, Description: t.Description, Members: counts[t.ID]})
	}
	return response.Render(c, status, web.TeamsPage(a.Pages.Page(c, "admin.teams", "admin"), rows, response.Limited(f, store.TeamLimits), listErr))
}

func (a *Area) createTeamForm(c echo.Context) error {
	f := request.Form(c, teamFields...)
	t, err := a.Store.CreateTeam(c.Request().Context(), teamFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/teams/"+strconv.FormatInt(t.ID, 10), web.T(request.Lang(c), "admin.created", t.Name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderTeams(c, response.StatusOf(err), f, "")
}

// renderTeamEdit shows the team page; f is the team form, mf the add-member
// form and memberErr a refused change to a member row. A nil f shows the
// stored fields.
func (a *Area) renderTeamEdit(c echo.Context, status int, id int64, f *web.Form, mf web.Form, memberErr string) error {
	ctx := c.Request().Context()
	t, err := a.Store.FindTeamByID(ctx, id)
	if err != nil {
		return err
	}
	if f == nil {
		tf := teamForm(t)
		f = &tf
	}
	ms, err := a.Store.FindMemberships(ctx, store.MembershipFilter{TeamID: id})
	if err != nil {
		return err
	}
	users, err := a.Store.FindUsers(ctx, store.UserFilter{Limit: 1000})
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	props := web.TeamEditProps{ID: id, Name: t.Name, Roles: teamRoleOptions(lang)}
	in := map[int64]bool{}
	for _, m := range ms {
		in[m.UserID] = true
		props.Members = append(props.Members, web.MemberRow{UserID: m.UserID, Username: m.Username, DisplayName: m.DisplayName, Role: m.Role})
	}
	for _, u := range users {
		if in[u.ID] || u.Disabled {
			continue
		}
		label := u.Username
		if u.DisplayName != "" {
			label += " · " + u.DisplayName
		}
		props.Users = append(props.Users, web.Option{Value: strconv.FormatInt(u.ID, 10), Label: label})
	}
	if mf.Value("role") == "" {
		mf.Values["role"] = store.TeamRoleMember
	}
	return response.Render(c, status, web.TeamEditPage(a.Pages.Page(c, "admin.teams", "admin"), props, response.Limited(*f, store.TeamLimits), mf, memberErr))
}

func (a *Area) editTeamPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	return a.renderTeamEdit(c, http.StatusOK, id, nil, web.NewForm(), "")
}

func (a *Area) updateTeamForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, teamFields...)
	t, err := a.Store.UpdateTeam(c.Request().Context(), id, teamFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/teams", web.T(request.Lang(c), "admin.updated", t.Name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderTeamEdit(c, response.StatusOf(err), id, &f, web.NewForm(), "")
}

func (a *Area) deleteTeamForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.FindTeamByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteTeam(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.renderTeams(c, response.StatusOf(err), web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/teams", web.T(request.Lang(c), "admin.deleted", t.Name))
}

func teamPath(id int64) string { return "/admin/teams/" + strconv.FormatInt(id, 10) }

// addMemberForm puts a user in the team, or changes their role when they
// are in it already.
func (a *Area) addMemberForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	mf := request.Form(c, "user_id", "role")
	var m *store.Membership
	userID, perr := strconv.ParseInt(strings.TrimSpace(mf.Value("user_id")), 10, 64)
	if perr != nil || userID <= 0 {
		err = &errs.Error{Code: errs.Invalid, Op: "server.addMemberForm", Key: "field.required", Fields: map[string]string{"user_id": "field.required"}}
	} else {
		m, err = a.Store.SetMembership(c.Request().Context(), id, userID, mf.Value("role"))
	}
	if err == nil {
		return a.Pages.RedirectWithFlash(c, teamPath(id), web.T(request.Lang(c), "team.member_saved", a.username(c, m.UserID)))
	}
	if !response.FormFailed(request.Lang(c), err, &mf) {
		return err
	}
	return a.renderTeamEdit(c, response.StatusOf(err), id, nil, mf, "")
}

func (a *Area) setMemberRoleForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	userID, err := request.PathID(c, "user_id")
	if err != nil {
		return err
	}
	if _, err := a.Store.SetMembership(c.Request().Context(), id, userID, c.FormValue("role")); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.renderTeamEdit(c, response.StatusOf(err), id, nil, web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, teamPath(id), web.T(request.Lang(c), "team.member_saved", a.username(c, userID)))
}

func (a *Area) removeMemberForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	userID, err := request.PathID(c, "user_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteMembership(c.Request().Context(), id, userID); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, teamPath(id), web.T(request.Lang(c), "team.member_removed", a.username(c, userID)))
}

// username names a user in a flash message; the id stands in if the lookup
// fails, since the change itself has already succeeded.
func (a *Area) username(c echo.Context, id int64) string {
	u, err := a.Store.FindUserByID(c.Request().Context(), id)
	if err != nil {
		return "#" + strconv.FormatInt(id, 10)
	}
	return u.Username
}

// teamJSON is a team in the API with its member count.
type teamJSON struct {
	store.Team
	Members int `json:"members"`
}

func (a *Area) apiListTeams(c echo.Context) error {
	teams, err := a.Store.FindTeams(c.Request().Context())
	if err != nil {
		return err
	}
	counts, err := a.memberCounts(c)
	if err != nil {
		return err
	}
	out := make([]teamJSON, 0, len(teams))
	for _, t := range teams {
		out = append(out, teamJSON{Team: t, Members: counts[t.ID]})
	}
	return c.JSON(http.StatusOK, map[string]any{"teams": out})
}

func (a *Area) teamWithCount(c echo.Context, t *store.Team) (teamJSON, error) {
	ms, err := a.Store.FindMemberships(c.Request().Context(), store.MembershipFilter{TeamID: t.ID})
	if err != nil {
		return teamJSON{}, err
	}
	return teamJSON{Team: *t, Members: len(ms)}, nil
}

func (a *Area) apiGetTeam(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.FindTeamByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := a.teamWithCount(c, t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (a *Area) apiCreateTeam(c echo.Context) error {
	var in store.TeamInput
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	t, err := a.Store.CreateTeam(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, teamJSON{Team: *t})
}

func (a *Area) apiUpdateTeam(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var in store.TeamInput
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	t, err := a.Store.UpdateTeam(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	out, err := a.teamWithCount(c, t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (a *Area) apiDeleteTeam(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteTeam(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *Area) apiListMembers(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// An unknown team is a 404, not an empty list.
	if _, err := a.Store.FindTeamByID(ctx, id); err != nil {
		return err
	}
	ms, err := a.Store.FindMemberships(ctx, store.MembershipFilter{TeamID: id})
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []store.MembershipView{}
	}
	return c.JSON(http.StatusOK, map[string]any{"members": ms})
}

// memberRequest is the body of PUT /api/v1/teams/:id/members/:user_id.
type memberRequest struct {
	Role string `json:"role"`
}

func (a *Area) apiSetMember(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	userID, err := request.PathID(c, "user_id")
	if err != nil {
		return err
	}
	var req memberRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := a.Store.SetMembership(ctx, id, userID, req.Role); err != nil {
		return err
	}
	ms, err := a.Store.FindMemberships(ctx, store.MembershipFilter{TeamID: id, UserID: userID})
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return errs.E(errs.NotFound, "server.apiSetMember", "membership.not_found")
	}
	return c.JSON(http.StatusOK, ms[0])
}

func (a *Area) apiRemoveMember(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	userID, err := request.PathID(c, "user_id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteMembership(c.Request().Context(), id, userID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
