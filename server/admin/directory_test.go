package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"cardhour/directory"
	"cardhour/server/servertest"
	"cardhour/store"
)

func TestDirectoryPageRulesAndSwitch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	ctx := e.AdminCtx()
	team, err := e.St.CreateTeam(ctx, store.TeamInput{Name: "大模型组"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.LoggedIn(store.RoleAdmin)
	doc := c.Get("/admin/directory").Doc(t)
	for _, p := range []string{directory.LDAP, directory.OIDC} {
		row := doc.Find(`[data-testid=directory-provider][data-provider=` + p + `]`)
		if row.Length() != 1 || row.AttrOr("data-configured", "") != "false" {
			t.Errorf("provider %s row: %d, configured=%q", p, row.Length(), row.AttrOr("data-configured", ""))
		}
	}
	if doc.Find(`a[href="/admin/directory"][data-testid=tab-directory]`).Length() != 1 {
		t.Error("no directory tab in the admin navigation")
	}
	if c.Get("/admin").Doc(t).Find(`a[href="/admin/directory"]`).Length() < 2 {
		t.Error("the admin start page does not link the directory page")
	}

	// Every bad field at once, in the page.
	r := c.PostForm("/admin/directory/mappings", url.Values{"provider": {"ad"}, "group": {strings.Repeat("g", 256)}, "team_id": {"424242"}, "team_role": {"boss"}, "portal_role": {"root"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad rule (page)")
	doc = r.Doc(t)
	for _, f := range []string{"provider", "group", "team_id", "team_role", "portal_role"} {
		if doc.Find(`[data-testid=error-`+f+`]`).Length() != 1 {
			t.Errorf("bad rule: no message on %s", f)
		}
	}
	if v, _ := doc.Find(`input[name=group]`).Attr("maxlength"); v != "255" {
		t.Errorf("group input maxlength = %q, want the store's 255", v)
	}

	before := e.AuditTotal()
	r = c.PostForm("/admin/directory/mappings", url.Values{"provider": {"ldap"}, "group": {"llm-dev"}, "team_id": {strconv.FormatInt(team.ID, 10)}, "team_role": {"manager"}, "portal_role": {"manager"}}, true)
	admWantStatus(t, r, http.StatusSeeOther, "add rule")
	if e.AuditTotal() != before+1 {
		t.Errorf("adding a rule wrote %d audit entries, want 1", e.AuditTotal()-before)
	}
	r = c.PostForm("/admin/directory/mappings", url.Values{"provider": {"ldap"}, "group": {"LLM-dev"}, "team_id": {strconv.FormatInt(team.ID, 10)}, "team_role": {"member"}}, true)
	admWantStatus(t, r, http.StatusConflict, "duplicate rule (page)")
	if r.Doc(t).Find(`[data-testid=error-group]`).Length() != 1 {
		t.Error("duplicate rule: no message on group")
	}
	rules := c.Get("/admin/directory").Doc(t).Find(`[data-testid=directory-rule]`)
	if rules.Length() != 1 || !strings.Contains(rules.Text(), "大模型组") || !strings.Contains(rules.Text(), "llm-dev") {
		t.Fatalf("rules table: %d rows: %q", rules.Length(), rules.Text())
	}
	id := rules.AttrOr("data-id", "")
	admWantStatus(t, c.PostForm("/admin/directory/mappings/"+id+"/delete", nil, true), http.StatusSeeOther, "delete rule")
	if n := c.Get("/admin/directory").Doc(t).Find(`[data-testid=directory-rule]`).Length(); n != 0 {
		t.Errorf("after delete: %d rules", n)
	}
	admWantStatus(t, c.PostForm("/admin/directory/mappings/"+id+"/delete", nil, true), http.StatusNotFound, "delete rule twice")

	// The local sign-in switch: off, only the bootstrap admin signs in
	// with a password (enforced by the login route; here the page and store).
	admWantStatus(t, c.PostForm("/admin/directory/local-login", url.Values{"local_login": {"off"}}, true), http.StatusSeeOther, "switch off")
	st := c.Get("/admin/directory").Doc(t).Find(`[data-testid=local-login-state]`)
	if st.AttrOr("data-on", "") != "false" || !strings.Contains(st.Text(), store.BootstrapUsername) {
		t.Errorf("after switching off: %q %q", st.AttrOr("data-on", ""), st.Text())
	}
	if on, _ := e.St.LocalLoginEnabled(context.Background()); on {
		t.Error("local sign-in still on in the store")
	}
	admWantStatus(t, c.PostForm("/admin/directory/local-login", url.Values{"local_login": {"maybe"}}, true), http.StatusUnprocessableEntity, "switch to nonsense")
	admWantStatus(t, c.PostForm("/admin/directory/local-login", url.Values{"local_login": {"on"}}, true), http.StatusSeeOther, "switch on")
	if on, _ := e.St.LocalLoginEnabled(context.Background()); !on {
		t.Error("local sign-in still off")
	}
}

func TestDirectoryPagePendingLinkAndSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	ctx := e.AdminCtx()
	member := e.Users[store.RoleMember]
	// A directory sign-in with a local account's name is held back.
	_, err := e.St.SignInExternal(ctx, directory.Identity{Provider: directory.OIDC, Subject: "https://sso.example.cn sub-1",
		Username: member.Username, DisplayName: "目录里的人"}, store.RoleMember)
	if err == nil {
		t.Fatal("a directory sign-in took over a local account")
	}
	dirUser, err := e.St.SignInExternal(ctx, directory.Identity{Provider: directory.LDAP, Subject: "uid=zhang,dc=example,dc=cn", Username: "zhang"}, store.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.St.RecordDirectorySync(ctx, store.DirectorySyncResult{Provider: directory.LDAP, Checked: 7, Changed: 2, Disabled: 1}); err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"zh-CN", "en"} {
		c := e.LoggedIn(store.RoleAdmin)
		doc := c.Get("/admin/directory?lang=" + lang).Doc(t)
		sync := doc.Find(`[data-testid=directory-provider][data-provider=ldap] [data-testid=directory-last-sync]`).Text()
		want := map[string]string{"zh-CN": "检查 7，变更 2，停用 1，失败 0", "en": "7 checked, 2 changed, 1 disabled, 0 failed"}[lang]
		if !strings.Contains(sync, want) {
			t.Errorf("%s: last LDAP sync %q, want %q", lang, sync, want)
		}
		users := c.Get("/admin/users?lang=" + lang).Doc(t)
		src := users.Find(`[data-testid=user-row][data-username=zhang] [data-testid=user-source] [data-source]`)
		if src.Length() != 1 || src.AttrOr("data-source", "") != "ldap" || strings.TrimSpace(src.Text()) != "LDAP" {
			t.Errorf("%s: zhang's source: %d %q", lang, src.Length(), src.Text())
		}
		local := users.Find(`[data-testid=user-row][data-username=` + member.Username + `] [data-testid=user-source] [data-source=local]`)
		if want := map[string]string{"zh-CN": "本地", "en": "Local"}[lang]; strings.TrimSpace(local.Text()) != want {
			t.Errorf("%s: member's source %q, want %q", lang, local.Text(), want)
		}
	}
	var listed struct {
		Users []struct {
			Username string   `json:"username"`
			Sources  []string `json:"sources"`
		} `json:"users"`
	}
	e.admAPI(store.RoleAdmin, http.MethodGet, "/api/v1/users", "", &listed)
	for _, u := range listed.Users {
		if u.Username == "zhang" && (len(u.Sources) != 1 || u.Sources[0] != "ldap") {
			t.Errorf("API sources of zhang = %v", u.Sources)
		}
	}
	var one struct {
		Sources []string `json:"sources"`
	}
	e.admAPI(store.RoleAdmin, http.MethodGet, "/api/v1/users/"+strconv.FormatInt(dirUser.ID, 10), "", &one)
	if len(one.Sources) != 1 || one.Sources[0] != "ldap" {
		t.Errorf("API sources of one user = %v", one.Sources)
	}

	c := e.LoggedIn(store.RoleAdmin)
	pending := c.Get("/admin/directory").Doc(t).Find(`[data-testid=pending-identity]`)
	if pending.Length() != 1 || pending.AttrOr("data-username", "") != member.Username {
		t.Fatalf("pending identities: %d", pending.Length())
	}
	id := pending.AttrOr("data-id", "")
	before := e.AuditTotal()
	admWantStatus(t, c.PostForm("/admin/directory/identities/"+id+"/link", nil, true), http.StatusSeeOther, "link")
	if e.AuditTotal() != before+1 {
		t.Errorf("linking wrote %d audit entries", e.AuditTotal()-before)
	}
	r := c.PostForm("/admin/directory/identities/"+id+"/link", nil, true)
	admWantStatus(t, r, http.StatusConflict, "link twice")
	if r.Doc(t).Find(`.alert`).Length() == 0 {
		t.Error("link twice: the refusal is not shown")
	}
	u, err := e.St.SignInExternal(ctx, directory.Identity{Provider: directory.OIDC, Subject: "https://sso.example.cn sub-1", Username: member.Username}, store.RoleMember)
	if err != nil || u.ID != member.ID {
		t.Errorf("after the link: %+v, %v", u, err)
	}
}

func TestDirectoryMappingsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	team, err := e.St.CreateTeam(e.AdminCtx(), store.TeamInput{Name: "Vision"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Client()
	admin := e.Users[store.RoleAdmin].Token
	got := servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/directory/mappings?lang=en", admin,
		`{"provider":"ad","group":"","team_role":"boss","portal_role":"root"}`), http.StatusUnprocessableEntity, "invalid")
	for f, want := range map[string]string{"provider": "The source must be any, LDAP or OIDC.", "group": "This field is required.",
		"team_id": "Choose a team for the team role.", "portal_role": "The role must be admin, manager, member or viewer."} {
		if got.Error.Fields[f] != want {
			t.Errorf("field %s = %q, want %q", f, got.Error.Fields[f], want)
		}
	}
	got = servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/directory/mappings", admin, `{"group":"x"}`), http.StatusUnprocessableEntity, "invalid")
	if !strings.Contains(got.Error.Message, "团队或门户角色") {
		t.Errorf("zh-CN message %q", got.Error.Message)
	}

	type ruleOut struct {
		ID       int64  `json:"id"`
		Group    string `json:"group"`
		TeamID   *int64 `json:"team_id"`
		TeamName string `json:"team_name"`
	}
	body := `{"provider":"oidc","group":"vision","team_id":` + strconv.FormatInt(team.ID, 10) + `,"team_role":"viewer"}`
	m := servertest.Decode[ruleOut](t, c.APICall(http.MethodPost, "/api/v1/directory/mappings", admin, body), http.StatusCreated)
	if m.Group != "vision" || m.TeamID == nil || *m.TeamID != team.ID || m.TeamName != "Vision" {
		t.Errorf("created %+v", m)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/directory/mappings", admin, body), http.StatusConflict, "conflict")
	role := servertest.Decode[ruleOut](t, c.APICall(http.MethodPost, "/api/v1/directory/mappings", admin, `{"group":"platform","portal_role":"admin"}`), http.StatusCreated)
	if role.TeamID != nil {
		t.Errorf("a role-only rule has team %v", *role.TeamID)
	}
	list := servertest.Decode[struct {
		Mappings []struct {
			ID    int64  `json:"id"`
			Group string `json:"group"`
		} `json:"mappings"`
	}](t, c.APICall(http.MethodGet, "/api/v1/directory/mappings", admin, ""), http.StatusOK)
	if len(list.Mappings) != 2 {
		t.Errorf("listed %+v", list.Mappings)
	}
	for _, role := range []string{store.RoleManager, store.RoleMember, store.RoleViewer} {
		r := c.APICall(http.MethodGet, "/api/v1/directory/mappings", e.Users[role].Token, "")
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("GET mappings as %s: %d", role, r.StatusCode)
		}
	}
	path := "/api/v1/directory/mappings/" + strconv.FormatInt(m.ID, 10)
	if r := c.APICall(http.MethodDelete, path, admin, ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.StatusCode, r)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodDelete, path, admin, ""), http.StatusNotFound, "not_found")
}
