package booking

import (
	"cardhour/server/route"
	"net/http"
)

// Routes are tasks, the estimator and bookings, pages and API.
func (a *Area) Routes() []route.Route {
	pFrom := route.Param{Name: "from", Kind: "date-time", Desc: "start of the window (RFC 3339)"}
	pTo := route.Param{Name: "to", Kind: "date-time", Desc: "end of the window (RFC 3339)"}
	pLimit := route.Param{Name: "limit", Kind: "integer", Desc: "rows in the page, 1–1000, default 500"}
	pOffset := route.Param{Name: "offset", Kind: "integer", Desc: "rows skipped before the page, default 0; total says how many there are"}
	return []route.Route{
		route.New(route.GET, "/booking", route.Viewer, a.bookingHome),
		route.New(route.GET, "/booking/new", route.Member, a.bookingFormPage),
		route.New(route.POST, "/booking/preview", route.Member, a.previewBookingForm),
		route.New(route.POST, "/booking", route.Member, a.createBookingForm),
		route.New(route.GET, "/bookings/:id", route.Viewer, a.bookingDetail),
		route.New(route.POST, "/bookings/:id/release", route.Member, a.releaseBookingForm),
		route.New(route.POST, "/bookings/:id/cancel", route.Member, a.cancelBookingForm),
		route.New(route.POST, "/bookings/:id/extend", route.Member, a.extendBookingForm),
		route.New(route.POST, "/bookings/:id/approve", route.Manager, a.approveBookingForm),
		route.New(route.GET, "/approvals", route.Manager, a.approvalsPage),
		route.New(route.POST, "/approvals", route.Manager, a.decideApprovalsForm),

		route.New(route.GET, "/tasks", route.Viewer, a.tasksPage),
		route.New(route.GET, "/tasks/new", route.Member, a.newTaskPage),
		route.New(route.POST, "/tasks/new", route.Member, a.createTaskForm),
		route.New(route.GET, "/tasks/:id", route.Viewer, a.taskDetail),
		route.New(route.GET, "/tasks/:id/edit", route.Member, a.editTaskPage),
		route.New(route.POST, "/tasks/:id/edit", route.Member, a.updateTaskForm),

		route.New(route.GET, "/estimator", route.Viewer, a.estimatorPage),

		// API.
		route.Op(route.GET, "/api/v1/tasks", route.Viewer, a.apiListTasks, route.API{
			Tag:     "tasks",
			Summary: "Tasks of the caller's teams (admins: all), core first, a page at a time",
			Status:  http.StatusOK,
			Result:  route.JSON("TaskPage", taskPageJSON{}),
			Query: []route.Param{{Name: "team", Kind: "string", Desc: "team name or id"}, {Name: "priority", Kind: "string", Desc: "core, normal or backfill"},
				{Name: "readiness", Kind: "string", Desc: "ready, partial or not_ready"}, {Name: "q", Kind: "string", Desc: "search: task, team or author name"}, pLimit, pOffset},
		}),
		route.Op(route.POST, "/api/v1/tasks", route.Member, a.apiCreateTask, route.API{
			Tag:      "tasks",
			Summary:  "Write a task baseline",
			Body:     route.JSON("TaskInput", taskRequest{}, "name", "priority", "estimate_card_hours", "data_readiness"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Task", taskJSON{}),
			Conflict: true,
			Desc:     "A task belongs to a team the caller books for (member or manager; admins any). Team, image and card types by name or id.",
		}),
		route.Op(route.GET, "/api/v1/tasks/:id", route.Viewer, a.apiGetTask, route.API{
			Tag:     "tasks",
			Summary: "A task's baseline beside what was booked and used",
			Status:  http.StatusOK,
			Result:  route.JSON("TaskDetail", taskDetailJSON{}),
		}),
		route.Op(route.PUT, "/api/v1/tasks/:id", route.Member, a.apiUpdateTask, route.API{
			Tag:      "tasks",
			Summary:  "Replace a task's baseline (the team cannot change)",
			Body:     route.JSON("TaskInput", taskRequest{}, "name", "priority", "estimate_card_hours", "data_readiness"),
			Status:   http.StatusOK,
			Result:   route.JSON("Task", taskJSON{}),
			Conflict: true,
		}),

		route.Op(route.GET, "/api/v1/bookings", route.Viewer, a.apiListBookings, route.API{
			Tag:     "bookings",
			Summary: "Bookings of the caller's teams (admins: all), soonest first, a page at a time",
			Status:  http.StatusOK,
			Result:  route.JSON("BookingPage", bookingPageJSON{}),
			Query: []route.Param{{Name: "mine", Kind: "boolean", Desc: "only the caller's own"}, {Name: "team", Kind: "string", Desc: "team name or id"}, {Name: "card_type", Kind: "string", Desc: "card type name or id"},
				{Name: "task_id", Kind: "integer", Desc: "only this task"}, {Name: "state", Kind: "string", Desc: "comma-separated states"}, pFrom, pTo,
				{Name: "q", Kind: "string", Desc: "search: task, team or user name, a card's uuid or host, or #number"}, pLimit, pOffset},
			Desc: "total is how many bookings the filters select; page through them with offset.",
		}),
		route.Op(route.POST, "/api/v1/bookings", route.Member, a.apiCreateBooking, route.API{
			Tag:      "bookings",
			Summary:  "Book cards of one type for a task",
			Body:     route.JSON("BookingInput", bookingRequest{}, "task_id", "card_type", "count", "start", "end"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Booking", bookingJSON{}),
			Conflict: true,
			Desc: "Cards are assigned at once (state confirmed, or active when the window has begun) inside one database transaction: no card is ever held by two overlapping bookings. " +
				"409 conflict when the pool has too few free cards (the message says how many are free) or a quota refuses (the message says which limit and by how much); " +
				"with queue=true the booking waits (state pending, wait_reason capacity) instead. 422 invalid with per-field messages for bad input; nothing is written then.",
		}),
		route.Op(route.GET, "/api/v1/bookings/:id", route.Viewer, a.apiGetBooking, route.API{
			Tag:     "bookings",
			Summary: "One booking with its cards",
			Status:  http.StatusOK,
			Result:  route.JSON("Booking", bookingJSON{}),
		}),
		route.Op(route.POST, "/api/v1/bookings/:id/release", route.Member, a.apiReleaseBooking, route.API{
			Tag:      "bookings",
			Summary:  "Release early: the unused card-hours return",
			Status:   http.StatusOK,
			Result:   route.JSON("Release", releaseJSON{}),
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/bookings/:id/cancel", route.Member, a.apiCancelBooking, route.API{
			Tag:      "bookings",
			Summary:  "Cancel a booking that has not started",
			Status:   http.StatusOK,
			Result:   route.JSON("Booking", bookingJSON{}),
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/bookings/:id/extend", route.Member, a.apiExtendBooking, route.API{
			Tag:      "bookings",
			Summary:  "Move the end later when the cards and the quota allow",
			Body:     route.JSON("ExtendInput", extendRequest{}, "end"),
			Status:   http.StatusOK,
			Result:   route.JSON("Booking", bookingJSON{}),
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/bookings/:id/approve", route.Manager, a.apiApproveBooking, route.API{
			Tag:      "bookings",
			Summary:  "Approve a booking waiting for its team manager",
			Status:   http.StatusOK,
			Result:   route.JSON("Booking", bookingJSON{}),
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/bookings/:id/reject", route.Manager, a.apiRejectBooking, route.API{
			Tag:      "bookings",
			Summary:  "Reject a booking waiting for its team manager, with the reason",
			Body:     route.JSON("RejectInput", rejectRequest{}, "reason"),
			Status:   http.StatusOK,
			Result:   route.JSON("Booking", bookingJSON{}),
			Conflict: true,
			Desc:     "The booking ends rejected (it draws nothing from the quota) and the requester is told the reason. 422 when the reason is empty or longer than 500 characters; nothing changes then.",
		}),
		route.Op(route.GET, "/api/v1/approvals", route.Manager, a.apiListApprovals, route.API{
			Tag:     "approvals",
			Summary: "Bookings waiting for the caller's approval, oldest first, with baseline, cost and quota effect",
			Status:  http.StatusOK,
			Result:  route.List("approvals", "Approval", approvalJSON{}),
			Desc:    "The bookings of the teams the caller manages (admins: every team) that wait for approval: the same ones the header counts.",
		}),
		route.Op(route.POST, "/api/v1/approvals", route.Manager, a.apiDecideApprovals, route.API{
			Tag:     "approvals",
			Summary: "Approve or reject several bookings; each is decided on its own",
			Body:    route.JSON("DecideInput", decideRequest{}, "ids", "decision"),
			Status:  http.StatusOK,
			Result:  route.JSON("Decisions", decisionsJSON{}),
			Desc: "decision is approve or reject; reject needs a reason (422 without one, and nothing is decided). " +
				"Each booking is decided in its own transaction: one refused (not waiting for approval, another team's, not found) leaves the others decided, and its result carries the error.",
		}),
	}
}
