package account

import (
	"cardhour/server/route"
	"net/http"
)

// Routes are sign-in, the language switch, the home page and the account.
func (a *Area) Routes() []route.Route {
	return []route.Route{
		// Sign-in, language, account.
		route.New(route.GET, "/login", route.Public, a.loginPage),
		route.New(route.POST, "/login", route.Public, a.login),
		route.New(route.GET, "/login/oidc", route.Public, a.ssoStart),
		route.New(route.GET, "/login/oidc/callback", route.Public, a.ssoCallback),
		route.New(route.POST, "/logout", route.Viewer, a.logout),
		route.New(route.POST, "/admin/directory/sync", route.Admin, a.syncNow),
		route.New(route.GET, "/lang", route.Public, a.switchLang),
		route.New(route.GET, "/account", route.Viewer, a.accountPage),
		route.New(route.POST, "/account/password", route.Viewer, a.changePassword),
		route.New(route.POST, "/account/tokens", route.Viewer, a.createOwnToken),
		route.New(route.POST, "/account/tokens/:id/revoke", route.Viewer, a.revokeOwnToken),
		route.New(route.POST, "/account/tokens/revoke-all", route.Viewer, a.revokeAllOwnTokens),
		route.New(route.GET, "/", route.Viewer, a.home),
		route.Op(route.GET, "/api/v1/me", route.Viewer, a.apiMe, route.API{
			Tag:     "meta",
			Summary: "The caller and their team memberships",
			Status:  http.StatusOK,
			Result:  route.JSON("Me", meJSON{}),
		}),
	}
}
