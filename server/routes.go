package server

import (
	"net/http"
)

// registerRoutes is the one route table: every path, who may use it, and
// its handler. The route × role test walks this list.
func (s *Server) registerRoutes() {
	const (
		GET    = http.MethodGet
		POST   = http.MethodPost
		PUT    = http.MethodPut
		PATCH  = http.MethodPatch
		DELETE = http.MethodDelete
	)

	// Operations and static files.
	s.add(GET, "/healthz", Public, s.healthz)
	s.add(GET, "/readyz", Public, s.readyz)
	s.add(GET, "/metrics", Public, s.metricsHandler())
	s.add(GET, "/assets/*", Public, s.assets())
	s.add(GET, "/favicon.ico", Public, s.favicon)

	// Sign-in, language, account.
	s.add(GET, "/login", Public, s.loginPage)
	s.add(POST, "/login", Public, s.login)
	s.add(POST, "/logout", Viewer, s.logout)
	s.add(GET, "/lang", Public, s.switchLang)
	s.add(GET, "/account", Viewer, s.accountPage)
	s.add(POST, "/account/password", Viewer, s.changePassword)
	s.add(POST, "/account/tokens", Viewer, s.createOwnToken)
	s.add(POST, "/account/tokens/:id/revoke", Viewer, s.revokeOwnToken)

	// Main sections.
	s.add(GET, "/", Viewer, s.home)

	// Admin pages.
	s.add(GET, "/admin", Admin, s.adminIndex)
	s.add(GET, "/admin/card-types", Admin, s.cardTypesPage)
	s.add(POST, "/admin/card-types", Admin, s.createCardTypeForm)
	s.add(GET, "/admin/card-types/:id", Admin, s.editCardTypePage)
	s.add(POST, "/admin/card-types/:id", Admin, s.updateCardTypeForm)
	s.add(POST, "/admin/card-types/:id/delete", Admin, s.deleteCardTypeForm)
	s.registerAdminPages()

	// Booking: tasks, the estimator, bookings; planning: quotas, templates,
	// availability, calendar feeds.
	s.registerBookingPages()
	s.registerPlanningPages()

	// The ledger and reports: card-hours spent against output.
	s.registerLedger()

	// Versioned task files (plans, scripts, configs) in object storage.
	s.registerFiles()

	// Live occupancy: telemetry in, the wall board and its websocket out.
	s.registerBoard()

	// JSON API.
	s.add(GET, "/api/v1/me", Viewer, s.apiMe)
	s.add(GET, "/api/v1/card-types", Viewer, s.apiListCardTypes)
	s.add(POST, "/api/v1/card-types", Admin, s.apiCreateCardType)
	s.add(GET, "/api/v1/card-types/:id", Viewer, s.apiGetCardType)
	s.add(PUT, "/api/v1/card-types/:id", Admin, s.apiUpdateCardType)
	s.add(DELETE, "/api/v1/card-types/:id", Admin, s.apiDeleteCardType)
	s.registerAdminAPI()
	s.registerBookingAPI()
}
