package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/server/route"
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
	s.add(GET, "/quotas", route.Viewer, s.quotasPage)
	s.add(GET, "/quotas/new", route.Manager, s.newQuotaPage)
	s.add(POST, "/quotas/new", route.Manager, s.createQuotaForm)
	s.add(GET, "/quotas/:id", route.Manager, s.editQuotaPage)
	s.add(POST, "/quotas/:id", route.Manager, s.updateQuotaForm)

	// Templates ("固化取用模板").
	s.add(GET, "/templates", route.Viewer, s.templatesPage)
	s.add(POST, "/templates", route.Member, s.createTemplateForm)
	s.add(GET, "/templates/new", route.Member, s.newTemplatePage)
	s.add(GET, "/templates/:id", route.Viewer, s.templatePage)
	s.add(POST, "/templates/:id/use", route.Member, s.useTemplateForm)
	s.add(POST, "/templates/:id/delete", route.Member, s.deleteTemplateForm)

	// Availability and calendar feeds.
	s.add(GET, "/availability", route.Viewer, s.availabilityPage)
	s.add(GET, "/calendar", route.Viewer, s.calendarPage)
	s.add(POST, "/calendar/feeds", route.Viewer, s.createCalendarFeedForm)
	// The secret in the URL is the credential: calendar apps cannot log in.
	s.add(GET, "/ical/:token", route.Public, s.icalFeed)
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

func planIDSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
