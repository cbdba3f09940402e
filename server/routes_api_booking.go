package server

import (
	"net/http"

	"cardhour/server/route"
)

// registerBookingAPI adds /api/v1 for tasks, bookings, quotas, availability
// and the OpenAPI document.
func (s *Server) registerBookingAPI() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
		PUT  = http.MethodPut
	)
	pFrom := route.Param{Name: "from", Kind: "date-time", Desc: "start of the window (RFC 3339)"}
	pTo := route.Param{Name: "to", Kind: "date-time", Desc: "end of the window (RFC 3339)"}

	s.op(GET, "/api/v1/tasks", route.Viewer, s.apiListTasks, route.API{Tag: "tasks", Summary: "Tasks of the caller's teams (admins: all), core first", Status: http.StatusOK, Result: route.List("tasks", "Task", taskJSON{}), Query: []route.Param{{Name: "team", Kind: "string", Desc: "team name or id"}}})
	s.op(POST, "/api/v1/tasks", route.Member, s.apiCreateTask, route.API{Tag: "tasks", Summary: "Write a task baseline", Body: route.JSON("TaskInput", taskRequest{}, "name", "priority", "estimate_card_hours", "data_readiness"), Status: http.StatusCreated, Result: route.JSON("Task", taskJSON{}), Conflict: true, Desc: "A task belongs to a team the caller books for (member or manager; admins any). Team, image and card types by name or id."})
	s.op(GET, "/api/v1/tasks/:id", route.Viewer, s.apiGetTask, route.API{Tag: "tasks", Summary: "A task's baseline beside what was booked and used", Status: http.StatusOK, Result: route.JSON("TaskDetail", taskDetailJSON{})})
	s.op(PUT, "/api/v1/tasks/:id", route.Member, s.apiUpdateTask, route.API{Tag: "tasks", Summary: "Replace a task's baseline (the team cannot change)", Body: route.JSON("TaskInput", taskRequest{}, "name", "priority", "estimate_card_hours", "data_readiness"), Status: http.StatusOK, Result: route.JSON("Task", taskJSON{}), Conflict: true})

	s.op(GET, "/api/v1/bookings", route.Viewer, s.apiListBookings, route.API{Tag: "bookings", Summary: "Bookings of the caller's teams (admins: all), soonest first", Status: http.StatusOK, Result: route.List("bookings", "Booking", bookingJSON{}), Query: []route.Param{{Name: "mine", Kind: "boolean", Desc: "only the caller's own"}, {Name: "team", Kind: "string", Desc: "team name or id"}, {Name: "card_type", Kind: "string", Desc: "card type name or id"},
		{Name: "task_id", Kind: "integer", Desc: "only this task"}, {Name: "state", Kind: "string", Desc: "comma-separated states"}, pFrom, pTo, {Name: "limit", Kind: "integer", Desc: "1–1000, default 500"}}})
	s.op(POST, "/api/v1/bookings", route.Member, s.apiCreateBooking, route.API{Tag: "bookings", Summary: "Book cards of one type for a task", Body: route.JSON("BookingInput", bookingRequest{}, "task_id", "card_type", "count", "start", "end"), Status: http.StatusCreated, Result: route.JSON("Booking", bookingJSON{}), Conflict: true, Desc: "Cards are assigned at once (state confirmed, or active when the window has begun) inside one database transaction: no card is ever held by two overlapping bookings. " +
		"409 conflict when the pool has too few free cards (the message says how many are free) or a quota refuses (the message says which limit and by how much); " +
		"with queue=true the booking waits (state pending, wait_reason capacity) instead. 422 invalid with per-field messages for bad input; nothing is written then."})
	s.op(GET, "/api/v1/bookings/:id", route.Viewer, s.apiGetBooking, route.API{Tag: "bookings", Summary: "One booking with its cards", Status: http.StatusOK, Result: route.JSON("Booking", bookingJSON{})})
	s.op(POST, "/api/v1/bookings/:id/release", route.Member, s.apiReleaseBooking, route.API{Tag: "bookings", Summary: "Release early: the unused card-hours return", Status: http.StatusOK, Result: route.JSON("Release", releaseJSON{}), Conflict: true})
	s.op(POST, "/api/v1/bookings/:id/cancel", route.Member, s.apiCancelBooking, route.API{Tag: "bookings", Summary: "Cancel a booking that has not started", Status: http.StatusOK, Result: route.JSON("Booking", bookingJSON{}), Conflict: true})
	s.op(POST, "/api/v1/bookings/:id/extend", route.Member, s.apiExtendBooking, route.API{Tag: "bookings", Summary: "Move the end later when the cards and the quota allow", Body: route.JSON("ExtendInput", extendRequest{}, "end"), Status: http.StatusOK, Result: route.JSON("Booking", bookingJSON{}), Conflict: true})
	s.op(POST, "/api/v1/bookings/:id/approve", route.Manager, s.apiApproveBooking, route.API{Tag: "bookings", Summary: "Approve a booking waiting for its team manager", Status: http.StatusOK, Result: route.JSON("Booking", bookingJSON{}), Conflict: true})

}
