package board

import (
	"cardhour/server/route"
	"cardhour/telemetry"
	"net/http"
)

// Routes are the board, its websocket, the heatmap, telemetry in, the
// fleet API and the telemetry admin page.
//
// Four routes are Public in the table and gate themselves: the board and
// its websocket admit a board token (?token=) besides any logged-in user,
// and the two push routes admit an agent token besides an admin. A board or
// agent token is no user, so the table's role check cannot judge them;
// boardAuth and telemetryWriter refuse everyone else with 401/403.
func (a *Area) Routes() []route.Route {
	host := route.Param{Name: "host", Kind: "string", Desc: "the host's name in the inventory (required)"}
	return []route.Route{
		route.Gated(route.GET, "/board", route.Viewer, a.boardPage),
		route.Gated(route.GET, "/ws/board", route.Viewer, a.boardSocket),
		route.New(route.GET, "/board/heatmap", route.Viewer, a.heatmapPage),
		route.New(route.GET, "/board/long", route.Viewer, a.longStatesPage),

		route.GatedOp(route.POST, "/api/v1/telemetry/nvidia-smi", route.Admin, a.apiPushNvidiaSMI, route.API{
			Tag:     "telemetry",
			Summary: "Push raw nvidia-smi CSV",
			Query:   []route.Param{host},
			Body:    route.Raw("nvidia-smi CSV output, sent with curl --data-binary", "text/csv", "text/plain"),
			Status:  http.StatusOK,
			Result:  route.JSON("PushResult", pushResult{}),
			Desc: "Body (text/csv): the output of nvidia-smi --query-gpu=" + telemetry.GPUQuery + " --format=csv[,noheader][,nounits], " +
				"optionally followed by a blank line and the output of --query-compute-apps=" + telemetry.AppsQuery + ". " +
				"With a header line the columns are read by name in any order (units in the header or not; unknown columns ignored; " +
				"a missing uuid column refuses the line by name); without one, in the order above. " +
				"A body whose newlines were stripped (curl -d) is refused: send it with curl --data-binary. " +
				"Lines that cannot be used are listed in skipped_lines (line number, reason); when none is usable the 422 names them. " +
				"nvidia-smi's \"Unable to determine the device handle for GPU <bus id>\" lines mark the card last seen on that bus faulty. " +
				"Authorization: Bearer with an agent token, or an admin's API token; anything else is 401/403. " +
				"Cards are keyed by uuid; unknown uuids wait on the telemetry admin page for registration. " +
				"An agent token reports only the hosts it is bound to (403 otherwise; one issued without hosts is bound to the first it reports), " +
				"and a card only from the host the inventory puts it on (409 otherwise): such a push is refused whole and the admins are told.",
			Conflict: true,
		}),
		route.GatedOp(route.POST, "/api/v1/telemetry/samples", route.Admin, a.apiPushSamples, route.API{
			Tag:     "telemetry",
			Summary: "Push a batch of samples (the agent)",
			Body:    route.JSON("TelemetryBatch", telemetry.Batch{}),
			Status:  http.StatusOK,
			Result:  route.JSON("PushResult", pushResult{}),
			Desc: "What `cardhour agent` posts: samples parsed on the host, each with the time it was taken. Agent token or an admin's API token. " +
				"The same host rules as the CSV push apply (403 for a host the token is not bound to, 409 for a card known under another host); " +
				"with an agent token every sample names a host, its own or the batch's (422 otherwise).",
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/fleet", route.Viewer, a.apiFleet, route.API{
			Tag:     "telemetry",
			Summary: "The live state of every card",
			Status:  http.StatusOK,
			Result:  route.JSON("Fleet", fleetJSON{}),
		}),
		route.Op(route.GET, "/api/v1/bookings/:id/usage", route.Viewer, a.apiBookingUsage, route.API{
			Tag:     "bookings",
			Summary: "A booking's used and idle card-hours, and its alerts",
			Status:  http.StatusOK,
			Result:  route.JSON("BookingUsage", bookingUsageJSON{}),
		}),
		route.Op(route.POST, "/api/v1/board-tokens", route.Admin, a.apiCreateTelemetryToken("board"), route.API{
			Tag:     "telemetry",
			Summary: "Issue a read-only board token (shown once)",
			Body:    route.JSON("TelemetryTokenInput", tokenRequest{}),
			Status:  http.StatusCreated,
			Result:  route.JSON("TelemetryToken", telemetryTokenJSON{}),
			Desc: "Open the board on a wall with /board?token=…; the token opens nothing else. board_url is the full URL under CARDHOUR_BASE_URL, " +
				"or only the path (/board?token=…) when that is not set: the portal does not build addresses from the request's Host header.",
		}),
		route.Op(route.POST, "/api/v1/agent-tokens", route.Admin, a.apiCreateTelemetryToken("agent"), route.API{
			Tag:     "telemetry",
			Summary: "Issue an agent token (shown once)",
			Body:    route.JSON("TelemetryTokenInput", tokenRequest{}),
			Status:  http.StatusCreated,
			Result:  route.JSON("TelemetryToken", telemetryTokenJSON{}),
			Desc:    "For `cardhour agent --token …` or a cron push; it may only push telemetry.",
		}),

		route.New(route.GET, "/admin/telemetry", route.Admin, a.telemetryAdminPage),
		route.New(route.POST, "/admin/telemetry/tokens", route.Admin, a.createTelemetryTokenForm),
		route.New(route.POST, "/admin/telemetry/tokens/:id/revoke", route.Admin, a.revokeTelemetryTokenForm),
		route.New(route.POST, "/admin/telemetry/pending/:id/register", route.Admin, a.registerPendingCardForm),
		route.New(route.POST, "/admin/telemetry/pending/:id/delete", route.Admin, a.deletePendingCardForm),
	}
}
