package e2e

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"cardhour/directory/directorytest"
	"cardhour/web"
)

// TestCompanySignIn is the e2e acceptance: an admin maps
// directory groups to teams on /admin/directory; a person signs in with
// their LDAP password, another through the OpenID Connect provider's
// page; each lands in the team their group maps to with the role it maps
// to, and, taken out of the group, is no longer in the team at their
// next sign-in. Screenshots in e2e/artifacts/directory-*.png.
func TestCompanySignIn(t *testing.T) {
	requireBrowser(t)
	l := directorytest.NewLDAP(t)
	o := directorytest.NewOIDC(t)
	ldapUser, ldapPw := directorytest.Name("li"), "li-Pw-Lei9"
	ldapGroup, leadGroup := directorytest.Name("train"), directorytest.Name("leads")
	l.AddUser(t, ldapUser, ldapPw, "Li Lei", ldapGroup, leadGroup)
	ssoUser, ssoPw := directorytest.Name("han"), "han-Pw-Mei8"
	ssoGroup := directorytest.Name("vision")
	o.AddUser(t, ssoUser, ssoPw, "Han Meimei", ssoGroup)

	// The redirect URI must be known before the portal starts.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	vars := map[string]string{"CARDHOUR_ADDR": addr, "CARDHOUR_BASE_URL": "http://" + addr}
	for k, v := range l.Vars() {
		vars[k] = v
	}
	for k, v := range o.Vars() {
		vars[k] = v
	}
	p := startPortal(t, "directory", vars)
	removeShots(t, "directory")
	b := newBrowser(t, "directory")
	zh := web.LangZH
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

	// The admin writes the rules down: the LDAP training group books for
	// 大模型组, its leads group makes managers, the provider's vision group
	// manages 视觉组.
	b.login(p.URL, "admin", adminPassword)
	b.do("open the directory page", chromedp.Navigate(p.URL+"/admin/directory"), chromedp.WaitVisible(testid("rule-form")))
	if n := b.count(`[data-testid="directory-provider"][data-configured="true"]`); n != 2 {
		t.Errorf("the directory page shows %d configured directories, want LDAP and OIDC", n)
	}
	addRule := func(provider, group, team, teamRole, portalRole string) {
		t.Helper()
		before := b.count(`[data-testid="directory-rule"]`)
		b.fill([][2]string{{"group", group}})
		b.selectOption("provider", provider)
		b.selectText("team_id", team)
		b.selectOption("team_role", teamRole)
		b.selectOption("portal_role", portalRole)
		// The last rule's message goes first, so that the wait below is
		// for the next page's.
		b.evalString(`(() => { document.querySelector('[data-testid="flash"]')?.remove(); return ""; })()`)
		b.do("add the rule for "+group, chromedp.Click(testid("rule-submit")), chromedp.WaitVisible(testid("flash")))
		if n := b.count(`[data-testid="directory-rule"]`); n != before+1 {
			t.Fatalf("%d rules after adding one to %d:\n%s", n, before, b.text("main"))
		}
	}
	addRule("ldap", ldapGroup, "大模型组", "member", "")
	addRule("ldap", leadGroup, "", "", "manager")
	addRule("oidc", ssoGroup, "视觉组", "manager", "")
	b.screenshot("rules.zh-CN")
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))

	// The login page offers both.
	if got, want := b.text(`[data-testid="login-sso"]`), web.T(zh, "login.sso", "Test SSO"); got != want {
		t.Errorf("the company sign-in button reads %q, want %q", got, want)
	}
	b.screenshot("login.zh-CN")

	// LDAP: the directory password in the portal's form.
	b.login(p.URL, ldapUser, ldapPw)
	account := func(who string) string {
		b.do("open the account of "+who, chromedp.Navigate(p.URL+"/account"), chromedp.WaitVisible(chromedp.CSS("main")))
		return b.text("main")
	}
	page := account(ldapUser)
	if !strings.Contains(page, "大模型组 ("+web.T(zh, "role.member")+")") {
		t.Errorf("after the LDAP sign-in the account page does not show 大模型组 as member:\n%s", page)
	}
	if !strings.Contains(page, web.T(zh, "role.manager")) {
		t.Errorf("the account page does not show the portal role manager:\n%s", page)
	}
	if b.count(`[data-testid="password-directory"]`) != 1 || b.count(`[data-testid="password-form"]`) != 0 {
		t.Errorf("a directory account is offered a local password form")
	}
	b.screenshot("ldap-account.zh-CN")
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))

	l.Leave(t, ldapUser, ldapGroup)
	b.login(p.URL, ldapUser, ldapPw)
	if page := account(ldapUser); strings.Contains(page, "大模型组") {
		t.Errorf("out of %s in the directory, at the next sign-in the account still shows 大模型组:\n%s", ldapGroup, page)
	}
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))

	// OIDC: the button, the provider's own page, back in the portal.
	ssoSignIn := func() {
		t.Helper()
		b.do("sign in with the company account", chromedp.Click(testid("login-sso")), chromedp.WaitVisible(chromedp.CSS("input#username")))
		b.do("fill the provider's form", chromedp.SendKeys(chromedp.CSS("input#username"), ssoUser),
			chromedp.SendKeys(chromedp.CSS("input#password"), ssoPw))
		b.do("submit the provider's form", chromedp.Submit(chromedp.CSS("input#password")), chromedp.WaitVisible(testid("nav-bell")))
		if loc := b.location(); !strings.HasPrefix(loc, p.URL) {
			t.Fatalf("after the provider's sign-in the browser is at %s", loc)
		}
	}
	b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-sso")))
	ssoSignIn()
	page = account(ssoUser)
	if !strings.Contains(page, "视觉组 ("+web.T(zh, "role.manager")+")") {
		t.Errorf("after the OIDC sign-in the account page does not show 视觉组 as manager:\n%s", page)
	}
	b.screenshot("oidc-account.zh-CN")
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))

	o.SetGroups(t, ssoUser)
	ssoSignIn()
	if page := account(ssoUser); strings.Contains(page, "视觉组") {
		t.Errorf("out of %s at the provider, at the next sign-in the account still shows 视觉组:\n%s", ssoGroup, page)
	}

	// The login page in both languages, at a phone's width and a laptop's.
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))
	shoot := func(lang string) {
		for _, w := range []int64{390, 1366} {
			b.do("resize to "+strconv.FormatInt(w, 10), chromedp.EmulateViewport(w, 860))
			b.screenshot("login-" + strconv.FormatInt(w, 10) + "." + lang)
		}
	}
	shoot(web.LangZH)
	b.do("switch to English", chromedp.Click(testid("lang-switch")), chromedp.WaitReady(chromedp.CSS(`html[lang="en"]`)))
	if got, want := b.text(`[data-testid="login-sso"]`), web.T(web.LangEN, "login.sso", "Test SSO"); got != want {
		t.Errorf("the English button reads %q, want %q", got, want)
	}
	shoot(web.LangEN)
	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

// selectOption picks the option with value v of the select f-<name>.
func (b *browser) selectOption(name, v string) {
	b.t.Helper()
	b.do("choose "+v+" for "+name, chromedp.SetValue(chromedp.CSS("#f-"+name), v))
}

// selectText picks the option of the select f-<name> whose text is text;
// "" picks the first (none).
func (b *browser) selectText(name, text string) {
	b.t.Helper()
	js := `(() => { const s = document.getElementById('f-` + name + `'); const o = [...s.options].find(o => o.text.trim() === ` + strconv.Quote(text) + ` || (` + strconv.Quote(text) + ` === '' && o.value === '')); if (!o) return false; s.value = o.value; return true; })()`
	ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	if err != nil || !ok {
		b.fail("choose "+text+" for "+name, err)
	}
}
