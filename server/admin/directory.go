package admin

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"cardhour/directory"
	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var ruleFields = []string{"provider", "group", "team_id", "team_role", "portal_role"}

// providerStatus says whether a directory is configured, for the page.
type providerStatus struct {
	Provider   string // directory.LDAP or directory.OIDC
	Configured bool
	// Detail names the server or issuer, never a secret; "" is none.
	Detail string
}

// directoryProviders lists LDAP and OIDC as the configuration has them.
func (a *Area) directoryProviders() []providerStatus {
	return []providerStatus{
		{Provider: directory.LDAP, Configured: a.Config.LDAP.On(), Detail: withoutUserinfo(a.Config.LDAP.URL)},
		{Provider: directory.OIDC, Configured: a.Config.OIDC.Issuer != "", Detail: withoutUserinfo(a.Config.OIDC.Issuer)},
	}
}

// withoutUserinfo is a URL to show: a password someone put in it stays out.
func withoutUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User = nil
	return u.String()
}

func (a *Area) directoryPage(c echo.Context) error {
	return a.renderDirectory(c, http.StatusOK, web.NewForm(), "")
}

// renderDirectory shows the page with f as the rule form and listErr as a
// refused delete, link or switch.
func (a *Area) renderDirectory(c echo.Context, status int, f web.Form, listErr string) error {
	ctx := c.Request().Context()
	lang := request.Lang(c)
	d := web.DirectoryProps{Bootstrap: store.BootstrapUsername, ListErr: listErr}
	for _, ps := range a.directoryProviders() {
		row := web.DirectoryProvider{Name: ps.Provider, Configured: ps.Configured, Detail: ps.Detail}
		e, err := a.Store.LastDirectorySync(ctx, ps.Provider)
		switch {
		case errs.Is(err, errs.NotFound):
		case err != nil:
			return err
		default:
			r, err := store.DirectorySyncOf(e)
			if err != nil {
				return err
			}
			at := e.At
			row.LastSyncAt = &at
			name := web.ProviderName(lang, ps.Provider)
			if r.Err != "" {
				row.LastSync, row.SyncFailed = web.T(lang, "directory.sync_failed", name, r.Err), true
			} else {
				row.LastSync = web.T(lang, "directory.sync_result", name, r.Checked, r.Changed, r.Disabled, r.Failed)
			}
		}
		d.Providers = append(d.Providers, row)
	}
	rules, err := a.Store.FindGroupMappings(ctx)
	if err != nil {
		return err
	}
	for _, r := range rules {
		d.Rules = append(d.Rules, web.DirectoryRuleRow{ID: r.ID, Provider: r.Provider, Group: r.GroupName, TeamName: r.TeamName,
			TeamRole: r.TeamRole, PortalRole: r.PortalRole})
	}
	pending, err := a.Store.FindPendingIdentities(ctx)
	if err != nil {
		return err
	}
	for _, p := range pending {
		d.Pending = append(d.Pending, web.PendingIdentityRow{ID: p.ID, Provider: p.Provider, Username: p.Username,
			DisplayName: p.DisplayName, Email: p.Email, SeenAt: p.SeenAt})
	}
	if d.LocalLogin, err = a.Store.LocalLoginEnabled(ctx); err != nil {
		return err
	}
	teams, err := a.Store.FindTeams(ctx)
	if err != nil {
		return err
	}
	d.TeamOptions = []web.Option{{Value: "", Label: web.T(lang, "directory.no_team")}}
	for _, t := range teams {
		d.TeamOptions = append(d.TeamOptions, web.Option{Value: web.I64(t.ID), Label: t.Name})
	}
	for _, p := range store.DirectoryProviders {
		d.ProviderOptions = append(d.ProviderOptions, web.Option{Value: p, Label: web.ProviderName(lang, p)})
	}
	d.TeamRoleOptions = append([]web.Option{{Value: "", Label: web.T(lang, "directory.no_team_role")}}, teamRoleOptions(lang)...)
	d.PortalRoleOptions = append([]web.Option{{Value: "", Label: web.T(lang, "directory.no_role")}}, roleOptions(lang)...)
	return response.Render(c, status, web.DirectoryPage(a.Pages.Page(c, "admin.directory", "admin"), d, response.Limited(f, store.GroupMappingLimits)))
}

func ruleFromForm(f web.Form) store.GroupMappingCreate {
	return store.GroupMappingCreate{Provider: f.Value("provider"), Group: f.Value("group"), TeamID: request.ID(f.Value("team_id")),
		TeamRole: f.Value("team_role"), PortalRole: f.Value("portal_role")}
}

func (a *Area) createRuleForm(c echo.Context) error {
	f := request.Form(c, ruleFields...)
	m, err := a.Store.CreateGroupMapping(c.Request().Context(), ruleFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/directory", web.T(request.Lang(c), "directory.rule_added", m.GroupName))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderDirectory(c, response.StatusOf(err), f, "")
}

func (a *Area) deleteRuleForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteGroupMapping(c.Request().Context(), id); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/directory", web.T(request.Lang(c), "admin.deleted", "#"+web.I64(id)))
}

func (a *Area) linkIdentityForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := a.Store.LinkIdentity(ctx, id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.renderDirectory(c, response.StatusOf(err), web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/directory", web.T(request.Lang(c), "directory.linked", "#"+web.I64(id)))
}

func (a *Area) localLoginForm(c echo.Context) error {
	var on bool
	switch c.FormValue("local_login") {
	case "on":
		on = true
	case "off":
	default:
		return errs.E(errs.Invalid, "admin.localLoginForm", "field.required")
	}
	if err := a.Store.SetLocalLogin(c.Request().Context(), on); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/directory", web.T(request.Lang(c), "directory.local_changed"))
}

// ruleJSON is a group rule in the API.
type ruleJSON = store.GroupMappingView

func (a *Area) apiListRules(c echo.Context) error {
	rules, err := a.Store.FindGroupMappings(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"mappings": rules})
}

func (a *Area) apiCreateRule(c echo.Context) error {
	var in store.GroupMappingCreate
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	m, err := a.Store.CreateGroupMapping(ctx, in)
	if err != nil {
		return err
	}
	out := ruleJSON{GroupMapping: *m}
	if m.TeamID != nil {
		t, err := a.Store.FindTeamByID(ctx, *m.TeamID)
		if err != nil {
			return err
		}
		out.TeamName = t.Name
	}
	return c.JSON(http.StatusCreated, out)
}

func (a *Area) apiDeleteRule(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteGroupMapping(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
