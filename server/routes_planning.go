package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/store"
	"cardhour/web"
)

// registerPlanningPages adds quotas, templates, availability and calendar
// feeds.
func (s *Server) registerPlanningPages() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
	)
	// Quotas: everyone sees their teams' quotas; managers grant and renew
	// for the teams they manage (the store checks which).
	s.add(GET, "/quotas", Viewer, s.quotasPage)
	s.add(GET, "/quotas/new", Manager, s.newQuotaPage)
	s.add(POST, "/quotas/new", Manager, s.createQuotaForm)
	s.add(GET, "/quotas/:id", Manager, s.editQuotaPage)
	s.add(POST, "/quotas/:id", Manager, s.updateQuotaForm)

	// Templates ("固化取用模板").
	s.add(GET, "/templates", Viewer, s.templatesPage)
	s.add(POST, "/templates", Member, s.createTemplateForm)
	s.add(GET, "/templates/new", Member, s.newTemplatePage)
	s.add(GET, "/templates/:id", Viewer, s.templatePage)
	s.add(POST, "/templates/:id/use", Member, s.useTemplateForm)
	s.add(POST, "/templates/:id/delete", Member, s.deleteTemplateForm)

	// Availability and calendar feeds.
	s.add(GET, "/availability", Viewer, s.availabilityPage)
	s.add(GET, "/calendar", Viewer, s.calendarPage)
	s.add(POST, "/calendar/feeds", Viewer, s.createCalendarFeedForm)
	// The secret in the URL is the credential: calendar apps cannot log in.
	s.add(GET, "/ical/:token", Public, s.icalFeed)
}

// planLocalLayouts are what <input type="datetime-local"> sends: minutes,
// or seconds when the browser was given a step.
var planLocalLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"}

// planParseLocal reads a datetime-local value in the portal's zone; ok is
// false for text that is not a time. An empty value is the zero time.
func (s *Server) planParseLocal(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, true
	}
	for _, layout := range planLocalLayouts {
		if t, err := time.ParseInLocation(layout, v, s.cfg.TZ); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// planLocalValue formats t for a datetime-local input in the portal's zone.
func (s *Server) planLocalValue(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(s.cfg.TZ).Format("2006-01-02T15:04")
}

// planTeamNames maps team ids to names.
func (s *Server) planTeamNames(c echo.Context) (map[int64]string, []store.Team, error) {
	teams, err := s.store.FindTeams(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	names := make(map[int64]string, len(teams))
	for _, t := range teams {
		names[t.ID] = t.Name
	}
	return names, teams, nil
}

// planTypeOptions lists the card types as choices, with their names.
func (s *Server) planTypeOptions(c echo.Context) ([]web.Option, map[int64]string, error) {
	types, err := s.store.FindCardTypes(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	opts := make([]web.Option, 0, len(types))
	names := make(map[int64]string, len(types))
	for _, t := range types {
		opts = append(opts, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
		names[t.ID] = t.Name
	}
	return opts, names, nil
}

// planVisibleTeams is the teams whose plans the user sees: nil (all) for
// admins, else the teams they belong to in any role.
func (s *Server) planVisibleTeams(c echo.Context, u *store.User) ([]int64, error) {
	if u.Role == store.RoleAdmin {
		return nil, nil
	}
	return s.store.TeamIDsOf(c.Request().Context(), u.ID)
}

func planIDSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func planFormID(v string) int64 {
	id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}
