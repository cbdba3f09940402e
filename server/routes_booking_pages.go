package server

import (
	"cardhour/server/route"
	"net/http"
)

// registerBookingPages adds the pages of tasks, the estimator and bookings.
func (s *Server) registerBookingPages() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
	)
	s.add(GET, "/booking", route.Viewer, s.bookingHome)
	s.add(GET, "/booking/new", route.Member, s.bookingFormPage)
	s.add(POST, "/booking/preview", route.Member, s.previewBookingForm)
	s.add(POST, "/booking", route.Member, s.createBookingForm)
	s.add(GET, "/bookings/:id", route.Viewer, s.bookingDetail)
	s.add(POST, "/bookings/:id/release", route.Member, s.releaseBookingForm)
	s.add(POST, "/bookings/:id/cancel", route.Member, s.cancelBookingForm)
	s.add(POST, "/bookings/:id/extend", route.Member, s.extendBookingForm)
	s.add(POST, "/bookings/:id/approve", route.Manager, s.approveBookingForm)
	s.add(POST, "/notifications/read", route.Viewer, s.markNotificationsRead)

	s.add(GET, "/tasks", route.Viewer, s.tasksPage)
	s.add(GET, "/tasks/new", route.Member, s.newTaskPage)
	s.add(POST, "/tasks/new", route.Member, s.createTaskForm)
	s.add(GET, "/tasks/:id", route.Viewer, s.taskDetail)
	s.add(GET, "/tasks/:id/edit", route.Member, s.editTaskPage)
	s.add(POST, "/tasks/:id/edit", route.Member, s.updateTaskForm)

	s.add(GET, "/estimator", route.Viewer, s.estimatorPage)
}
