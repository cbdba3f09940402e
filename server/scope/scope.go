// Package scope is the one rule of what a reader may see: tasks, bookings
// and ledger rounds of the teams they belong to (admins: all). Pages and
// the API both ask here, so a record another team owns is "not found" on
// either, never shown on one and hidden on the other.
package scope

import (
	"slices"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
)

// Teams is nil for admins (every team) and the caller's teams otherwise
// (an empty, non-nil list when they belong to none).
func Teams(c echo.Context, st *store.Store) ([]int64, error) {
	u := request.User(c)
	if u.Role == store.RoleAdmin {
		return nil, nil
	}
	ids, err := st.TeamIDsOf(c.Request().Context(), u.ID)
	if ids == nil {
		ids = []int64{}
	}
	return ids, err
}

// Sees tells whether a team is in a Teams answer.
func Sees(teams []int64, teamID int64) bool {
	return teams == nil || slices.Contains(teams, teamID)
}

// Task is a task the caller may see; another team's is not found.
func Task(c echo.Context, st *store.Store, id int64) (*store.Task, error) {
	t, err := st.FindTaskByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	teams, err := Teams(c, st)
	if err != nil {
		return nil, err
	}
	if !Sees(teams, t.TeamID) {
		return nil, errs.E(errs.NotFound, "scope.Task", "task.not_found")
	}
	return t, nil
}

// Booking is a booking the caller may see: their own, or one of their
// teams'; any other is not found.
func Booking(c echo.Context, st *store.Store, id int64) (*store.BookingView, error) {
	b, err := st.FindBookingByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if b.UserID == request.User(c).ID {
		return b, nil
	}
	teams, err := Teams(c, st)
	if err != nil {
		return nil, err
	}
	if !Sees(teams, b.TeamID) {
		return nil, errs.E(errs.NotFound, "scope.Booking", "booking.not_found")
	}
	return b, nil
}

// BookingID is the booking the path's :id names, when the caller may see
// it. Handlers that change a booking ask this before they read their body
// or ask the store: another team's booking is then not found, as on its
// page, and neither a refused field (422) nor the store's refusal (403)
// tells that it exists.
func BookingID(c echo.Context, st *store.Store) (int64, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return 0, err
	}
	if _, err := Booking(c, st, id); err != nil {
		return 0, err
	}
	return id, nil
}

// TaskID is BookingID for the task the path's :id names.
func TaskID(c echo.Context, st *store.Store) (int64, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return 0, err
	}
	if _, err := Task(c, st, id); err != nil {
		return 0, err
	}
	return id, nil
}

// MayPlan tells whether the caller may write a team's tasks and their
// files: members and managers of the team, and admins.
func MayPlan(c echo.Context, st *store.Store, teamID int64) (bool, error) {
	ids, err := st.BookableTeamIDs(c.Request().Context(), request.User(c))
	return slices.Contains(ids, teamID), err
}

// Quota is a quota the caller may see: their teams' (all for admins);
// another team's is not found.
func Quota(c echo.Context, st *store.Store, id int64) (*store.QuotaView, error) {
	q, err := st.FindQuotaByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	teams, err := Teams(c, st)
	if err != nil {
		return nil, err
	}
	if !Sees(teams, q.TeamID) {
		return nil, errs.E(errs.NotFound, "scope.Quota", "quota.not_found")
	}
	return q, nil
}
