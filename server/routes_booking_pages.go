package server

import "net/http"

// registerBookingPages adds the pages of tasks, the estimator and bookings.
func (s *Server) registerBookingPages() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
	)
	s.add(GET, "/booking", Viewer, s.bookingHome)
	s.add(GET, "/booking/new", Member, s.bookingFormPage)
	s.add(POST, "/booking/preview", Member, s.previewBookingForm)
	s.add(POST, "/booking", Member, s.createBookingForm)
	s.add(GET, "/bookings/:id", Viewer, s.bookingDetail)
	s.add(POST, "/bookings/:id/release", Member, s.releaseBookingForm)
	s.add(POST, "/bookings/:id/cancel", Member, s.cancelBookingForm)
	s.add(POST, "/bookings/:id/extend", Member, s.extendBookingForm)
	s.add(POST, "/bookings/:id/approve", Manager, s.approveBookingForm)
	s.add(POST, "/notifications/read", Viewer, s.markNotificationsRead)

	s.add(GET, "/tasks", Viewer, s.tasksPage)
	s.add(GET, "/tasks/new", Member, s.newTaskPage)
	s.add(POST, "/tasks/new", Member, s.createTaskForm)
	s.add(GET, "/tasks/:id", Viewer, s.taskDetail)
	s.add(GET, "/tasks/:id/edit", Member, s.editTaskPage)
	s.add(POST, "/tasks/:id/edit", Member, s.updateTaskForm)

	s.add(GET, "/estimator", Viewer, s.estimatorPage)
}
