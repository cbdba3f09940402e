package admin

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var (
	userCreateFields = []string{"username", "display_name", "email", "password", "role", "os_accounts"}
	userEditFields   = []string{"display_name", "email", "role", "disabled", "password", "os_accounts"}
)

func roleOptions(lang string) []web.Option {
	out := make([]web.Option, 0, len(store.Roles))
	for _, r := range store.Roles {
		out = append(out, web.Option{Value: r, Label: web.T(lang, "role."+r)})
	}
	return out
}

// teamsByUser lists every user's teams as "team (role)" in lang.
func (a *Area) teamsByUser(c echo.Context, f store.MembershipFilter) (map[int64][]string, error) {
	ms, err := a.Store.FindMemberships(c.Request().Context(), f)
	if err != nil {
		return nil, err
	}
	lang := request.Lang(c)
	out := map[int64][]string{}
	for _, m := range ms {
		out[m.UserID] = append(out[m.UserID], m.TeamName+" ("+web.T(lang, "role."+m.Role)+")")
	}
	return out, nil
}

func (a *Area) usersPage(c echo.Context) error {
	f := web.NewForm()
	f.Values["role"] = store.RoleMember
	return a.renderUsers(c, http.StatusOK, f)
}

func (a *Area) renderUsers(c echo.Context, status int, f web.Form) error {
	users, err := a.Store.FindUsers(c.Request().Context(), store.UserFilter{Limit: 1000})
	if err != nil {
		return err
	}
	teams, err := a.teamsByUser(c, store.MembershipFilter{})
	if err != nil {
		return err
	}
	providers, err := a.Store.AccountProviders(c.Request().Context())
	if err != nil {
		return err
	}
	rows := make([]web.UserRow, 0, len(users))
	for _, u := range users {
		rows = append(rows, web.UserRow{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Email: u.Email,
			Role: u.Role, Disabled: u.Disabled, Teams: teams[u.ID], Sources: accountSources(&u, providers[u.ID])})
	}
	// A rejected password is never sent back into the page.
	delete(f.Values, "password")
	return response.Render(c, status, web.UsersPage(a.Pages.Page(c, "admin.users", "admin"), rows, roleOptions(request.Lang(c)), response.Limited(f, store.UserLimits)))
}

func (a *Area) createUserForm(c echo.Context) error {
	f := request.Form(c, userCreateFields...)
	in := store.UserCreate{Username: f.Value("username"), DisplayName: f.Value("display_name"), Email: f.Value("email"),
		Password: f.Value("password"), Role: f.Value("role"), OSAccounts: request.List(f.Value("os_accounts"))}
	u, err := a.Store.CreateUser(c.Request().Context(), in)
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/users", web.T(request.Lang(c), "admin.created", u.Username))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderUsers(c, response.StatusOf(err), f)
}

func userForm(u *store.User) web.Form {
	f := web.NewForm()
	f.Values["display_name"] = u.DisplayName
	f.Values["email"] = u.Email
	f.Values["role"] = u.Role
	f.Values["disabled"] = strconv.FormatBool(u.Disabled)
	f.Values["os_accounts"] = strings.Join(u.OSAccounts, ", ")
	return f
}

func (a *Area) renderUserEdit(c echo.Context, status int, u *store.User, f web.Form) error {
	teams, err := a.teamsByUser(c, store.MembershipFilter{UserID: u.ID})
	if err != nil {
		return err
	}
	delete(f.Values, "password")
	return response.Render(c, status, web.UserEditPage(a.Pages.Page(c, "admin.users", "admin"), u.ID, u.Username, teams[u.ID], roleOptions(request.Lang(c)), response.Limited(f, store.UserLimits)))
}

func (a *Area) editUserPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	u, err := a.Store.FindUserByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return a.renderUserEdit(c, http.StatusOK, u, userForm(u))
}

// userUpdateFromForm sets every field the form shows; the password only
// when one was typed.
func userUpdateFromForm(f web.Form) store.UserUpdate {
	display, email, role := f.Value("display_name"), f.Value("email"), f.Value("role")
	disabled := f.Value("disabled") == "true"
	accounts := request.List(f.Value("os_accounts"))
	up := store.UserUpdate{DisplayName: &display, Email: &email, Role: &role, Disabled: &disabled, OSAccounts: &accounts}
	if pw := f.Value("password"); pw != "" {
		up.Password = &pw
	}
	return up
}

func (a *Area) updateUserForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	current, err := a.Store.FindUserByID(ctx, id)
	if err != nil {
		return err
	}
	f := request.Form(c, userEditFields...)
	up := userUpdateFromForm(f)
	u, err := a.Store.UpdateUser(ctx, id, up)
	if err != nil {
		if !response.FormFailed(request.Lang(c), err, &f) {
			return err
		}
		return a.renderUserEdit(c, response.StatusOf(err), current, f)
	}
	if err := a.keepOwnSession(c, id, up); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/users", web.T(request.Lang(c), "admin.updated", u.Username))
}

// keepOwnSession logs an admin who just set their own password straight back
// in here: the new password ended every session of the account.
func (a *Area) keepOwnSession(c echo.Context, id int64, up store.UserUpdate) error {
	me := request.User(c)
	if up.Password == nil || me == nil || me.ID != id || request.AuthKind(c) != request.BySession {
		return nil
	}
	token, err := a.Store.CreateSession(c.Request().Context(), id)
	if err != nil {
		return err
	}
	a.Pages.SetSession(c, token)
	return nil
}

// accountSources are where an account signs in from: "local" when it has
// a password (an account a directory made has none), then its directories.
func accountSources(u *store.User, providers []string) []string {
	out := make([]string, 0, 1+len(providers))
	if u.PasswordHash != "" {
		out = append(out, "local")
	}
	return append(out, providers...)
}

// userTeam is one of a user's teams in the API.
type userTeam struct {
	TeamID   int64  `json:"team_id"`
	TeamName string `json:"team_name"`
	Role     string `json:"role"`
}

// userJSON is a user in the API with their teams; store.User never carries
// its password hash into JSON.
type userJSON struct {
	store.User
	Teams []userTeam `json:"teams"`
	// Sources: local (has a password), ldap, oidc.
	Sources []string `json:"sources"`
}

func (a *Area) userTeams(c echo.Context, f store.MembershipFilter) (map[int64][]userTeam, error) {
	ms, err := a.Store.FindMemberships(c.Request().Context(), f)
	if err != nil {
		return nil, err
	}
	out := map[int64][]userTeam{}
	for _, m := range ms {
		out[m.UserID] = append(out[m.UserID], userTeam{TeamID: m.TeamID, TeamName: m.TeamName, Role: m.Role})
	}
	return out, nil
}

func (a *Area) toUserJSON(c echo.Context, u *store.User) (userJSON, error) {
	teams, err := a.userTeams(c, store.MembershipFilter{UserID: u.ID})
	if err != nil {
		return userJSON{}, err
	}
	ids, err := a.Store.FindUserIdentities(c.Request().Context(), u.ID)
	if err != nil {
		return userJSON{}, err
	}
	var providers []string
	for _, id := range ids {
		if !slices.Contains(providers, id.Provider) {
			providers = append(providers, id.Provider)
		}
	}
	out := userJSON{User: *u, Teams: teams[u.ID], Sources: accountSources(u, providers)}
	if out.Teams == nil {
		out.Teams = []userTeam{}
	}
	return out, nil
}

func (a *Area) apiListUsers(c echo.Context) error {
	users, err := a.Store.FindUsers(c.Request().Context(), store.UserFilter{Query: c.QueryParam("q"), Limit: 1000})
	if err != nil {
		return err
	}
	teams, err := a.userTeams(c, store.MembershipFilter{})
	if err != nil {
		return err
	}
	providers, err := a.Store.AccountProviders(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]userJSON, 0, len(users))
	for _, u := range users {
		ts := teams[u.ID]
		if ts == nil {
			ts = []userTeam{}
		}
		out = append(out, userJSON{User: u, Teams: ts, Sources: accountSources(&u, providers[u.ID])})
	}
	return c.JSON(http.StatusOK, map[string]any{"users": out})
}

func (a *Area) apiGetUser(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	u, err := a.Store.FindUserByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := a.toUserJSON(c, u)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

func (a *Area) apiCreateUser(c echo.Context) error {
	var in store.UserCreate
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	u, err := a.Store.CreateUser(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, userJSON{User: *u, Teams: []userTeam{}, Sources: accountSources(u, nil)})
}

func (a *Area) apiUpdateUser(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var up store.UserUpdate
	if err := request.DecodeJSON(c, &up); err != nil {
		return err
	}
	u, err := a.Store.UpdateUser(c.Request().Context(), id, up)
	if err != nil {
		return err
	}
	out, err := a.toUserJSON(c, u)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}
