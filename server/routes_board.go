package server

import "net/http"

// registerBoard adds telemetry ingest, the board, its websocket, the
// heatmap, the fleet API and the telemetry admin page.
//
// Four routes are Public in the table and gate themselves: the board and
// its websocket admit a board token (?token=) besides any logged-in user,
// and the two push routes admit an agent token besides an admin. A board or
// agent token is no user, so the table's role check cannot judge them;
// boardAuth and telemetryWriter refuse everyone else with 401/403.
func (s *Server) registerBoard() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
	)
	s.add(GET, "/board", Public, s.boardPage)
	s.add(GET, "/ws/board", Public, s.boardSocket)
	s.add(GET, "/board/heatmap", Viewer, s.heatmapPage)

	s.add(POST, "/api/v1/telemetry/nvidia-smi", Public, s.apiPushNvidiaSMI)
	s.add(POST, "/api/v1/telemetry/samples", Public, s.apiPushSamples)
	s.add(GET, "/api/v1/fleet", Viewer, s.apiFleet)
	s.add(GET, "/api/v1/bookings/:id/usage", Viewer, s.apiBookingUsage)
	s.add(POST, "/api/v1/board-tokens", Admin, s.apiCreateTelemetryToken("board"))
	s.add(POST, "/api/v1/agent-tokens", Admin, s.apiCreateTelemetryToken("agent"))

	s.add(GET, "/admin/telemetry", Admin, s.telemetryAdminPage)
	s.add(POST, "/admin/telemetry/tokens", Admin, s.createTelemetryTokenForm)
	s.add(POST, "/admin/telemetry/tokens/:id/revoke", Admin, s.revokeTelemetryTokenForm)
	s.add(POST, "/admin/telemetry/pending/:id/register", Admin, s.registerPendingCardForm)
	s.add(POST, "/admin/telemetry/pending/:id/delete", Admin, s.deletePendingCardForm)
}
