package server

import (
	"cardhour/server/route"
	"cardhour/telemetry"
	"net/http"
)

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
	host := route.Param{Name: "host", Kind: "string", Desc: "the host's name in the inventory (required)"}
	s.routes = append(s.routes, route.Gated(GET, "/board", route.Viewer, s.boardPage))
	s.routes = append(s.routes, route.Gated(GET, "/ws/board", route.Viewer, s.boardSocket))
	s.add(GET, "/board/heatmap", route.Viewer, s.heatmapPage)

	s.op(POST, "/api/v1/telemetry/nvidia-smi", route.Public, s.apiPushNvidiaSMI, route.API{Tag: "telemetry", Summary: "Push raw nvidia-smi CSV", Query: []route.Param{host}, Body: route.Raw("nvidia-smi CSV output, sent with curl --data-binary", "text/csv", "text/plain"), Status: http.StatusOK, Result: route.JSON("PushResult", pushResult{}), Desc: "Body (text/csv): the output of nvidia-smi --query-gpu=" + telemetry.GPUQuery + " --format=csv,noheader[,nounits], " +
		"optionally followed by a blank line and the output of --query-compute-apps=" + telemetry.AppsQuery + ". " +
		"Authorization: Bearer with an agent token, or an admin's API token; anything else is 401/403. " +
		"Cards are keyed by uuid; unknown uuids wait on the telemetry admin page for registration."})
	s.routes[len(s.routes)-1].Gate = route.Admin
	s.op(POST, "/api/v1/telemetry/samples", route.Public, s.apiPushSamples, route.API{Tag: "telemetry", Summary: "Push a batch of samples (the agent)", Body: route.JSON("TelemetryBatch", telemetry.Batch{}), Status: http.StatusOK, Result: route.JSON("PushResult", pushResult{}), Desc: "What `cardhour agent` posts: samples parsed on the host, each with the time it was taken. Agent token or an admin's API token."})
	s.routes[len(s.routes)-1].Gate = route.Admin
	s.op(GET, "/api/v1/fleet", route.Viewer, s.apiFleet, route.API{Tag: "telemetry", Summary: "The live state of every card", Status: http.StatusOK, Result: route.JSON("Fleet", fleetJSON{})})
	s.op(GET, "/api/v1/bookings/:id/usage", route.Viewer, s.apiBookingUsage, route.API{Tag: "bookings", Summary: "A booking's used and idle card-hours, and its alerts", Status: http.StatusOK, Result: route.JSON("BookingUsage", bookingUsageJSON{})})
	s.op(POST, "/api/v1/board-tokens", route.Admin, s.apiCreateTelemetryToken("board"), route.API{Tag: "telemetry", Summary: "Issue a read-only board token (shown once)", Body: route.JSON("TelemetryTokenInput", tokenRequest{}), Status: http.StatusCreated, Result: route.JSON("TelemetryToken", telemetryTokenJSON{}), Desc: "Open the board on a wall with /board?token=…; the token opens nothing else."})
	s.op(POST, "/api/v1/agent-tokens", route.Admin, s.apiCreateTelemetryToken("agent"), route.API{Tag: "telemetry", Summary: "Issue an agent token (shown once)", Body: route.JSON("TelemetryTokenInput", tokenRequest{}), Status: http.StatusCreated, Result: route.JSON("TelemetryToken", telemetryTokenJSON{}), Desc: "For `cardhour agent --token …` or a cron push; it may only push telemetry."})

	s.add(GET, "/admin/telemetry", route.Admin, s.telemetryAdminPage)
	s.add(POST, "/admin/telemetry/tokens", route.Admin, s.createTelemetryTokenForm)
	s.add(POST, "/admin/telemetry/tokens/:id/revoke", route.Admin, s.revokeTelemetryTokenForm)
	s.add(POST, "/admin/telemetry/pending/:id/register", route.Admin, s.registerPendingCardForm)
	s.add(POST, "/admin/telemetry/pending/:id/delete", route.Admin, s.deletePendingCardForm)
}
