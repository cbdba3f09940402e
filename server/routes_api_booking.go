package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
)

// registerBookingAPI adds /api/v1 for tasks, bookings, quotas, availability
// and the OpenAPI document.
func (s *Server) registerBookingAPI() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
		PUT  = http.MethodPut
	)

	s.add(GET, "/api/v1/tasks", Viewer, s.apiListTasks)
	s.add(POST, "/api/v1/tasks", Member, s.apiCreateTask)
	s.add(GET, "/api/v1/tasks/:id", Viewer, s.apiGetTask)
	s.add(PUT, "/api/v1/tasks/:id", Member, s.apiUpdateTask)

	s.add(GET, "/api/v1/bookings", Viewer, s.apiListBookings)
	s.add(POST, "/api/v1/bookings", Member, s.apiCreateBooking)
	s.add(GET, "/api/v1/bookings/:id", Viewer, s.apiGetBooking)
	s.add(POST, "/api/v1/bookings/:id/release", Member, s.apiReleaseBooking)
	s.add(POST, "/api/v1/bookings/:id/cancel", Member, s.apiCancelBooking)
	s.add(POST, "/api/v1/bookings/:id/extend", Member, s.apiExtendBooking)
	s.add(POST, "/api/v1/bookings/:id/approve", Manager, s.apiApproveBooking)

	s.add(GET, "/api/v1/availability", Viewer, s.apiAvailability)

	s.add(GET, "/api/v1/quotas", Manager, s.apiListQuotas)
	s.add(POST, "/api/v1/quotas", Manager, s.apiCreateQuota)
	s.add(PUT, "/api/v1/quotas/:id", Manager, s.apiUpdateQuota)

	// Documentation of the API itself: public, like a README.
	s.add(GET, "/api/v1/openapi.json", Public, s.apiOpenAPI)
}

// ref names a record by name or by id: a JSON string or a JSON integer, so
// a script can say "card_type":"H800" without looking the id up first.
type ref struct {
	set  bool
	id   int64
	name string
}

func (r *ref) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		r.set, r.name = true, strings.TrimSpace(s)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("want a name (string) or an id (integer)")
	}
	r.set, r.id = true, n
	return nil
}

// numeric reports the id a name spells when it is all digits ("12").
func (r ref) numeric() (int64, bool) {
	if r.name == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(r.name, 10, 64)
	return n, err == nil && n > 0
}

// resolveCardType turns a card type reference into its id; an unknown one is
// a message on field. An id is passed on unchecked: the store checks it
// inside its transaction.
func (s *Server) resolveCardType(c echo.Context, r ref, field string, v *errs.Validation) (int64, error) {
	if !r.set {
		return 0, nil
	}
	if r.name == "" {
		if r.id <= 0 {
			v.Add(field, "cardtype.not_found")
		}
		return r.id, nil
	}
	t, err := s.store.FindCardTypeByName(c.Request().Context(), r.name)
	switch {
	case err == nil:
		return t.ID, nil
	case !errs.Is(err, errs.NotFound):
		return 0, err
	}
	if id, ok := r.numeric(); ok {
		return id, nil
	}
	v.Add(field, "cardtype.not_found")
	return 0, nil
}

// resolveTeam turns a team reference into its id, by exact name first and
// then ignoring case.
func (s *Server) resolveTeam(c echo.Context, r ref, field string, v *errs.Validation) (int64, error) {
	if !r.set {
		return 0, nil
	}
	if r.name == "" {
		if r.id <= 0 {
			v.Add(field, "team.not_found")
		}
		return r.id, nil
	}
	teams, err := s.store.FindTeams(c.Request().Context())
	if err != nil {
		return 0, err
	}
	var folded int64
	for _, t := range teams {
		if t.Name == r.name {
			return t.ID, nil
		}
		if folded == 0 && strings.EqualFold(t.Name, r.name) {
			folded = t.ID
		}
	}
	if folded != 0 {
		return folded, nil
	}
	if id, ok := r.numeric(); ok {
		return id, nil
	}
	v.Add(field, "team.not_found")
	return 0, nil
}

// resolveImage turns an image reference into its id.
func (s *Server) resolveImage(c echo.Context, r ref, field string, v *errs.Validation) (*int64, error) {
	if !r.set {
		return nil, nil
	}
	if r.name == "" {
		if r.id <= 0 {
			v.Add(field, "image.not_found")
			return nil, nil
		}
		id := r.id
		return &id, nil
	}
	images, err := s.store.FindImages(c.Request().Context())
	if err != nil {
		return nil, err
	}
	for _, i := range images {
		if i.Name == r.name {
			id := i.ID
			return &id, nil
		}
	}
	if id, ok := r.numeric(); ok {
		return &id, nil
	}
	v.Add(field, "image.not_found")
	return nil, nil
}

// parseAPITime reads an RFC 3339 time; a malformed one is a message on
// field, not a bad request, so a script learns which value to fix.
func parseAPITime(raw *string, field string, v *errs.Validation) time.Time {
	if raw == nil || strings.TrimSpace(*raw) == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(*raw))
	if err != nil {
		v.Add(field, "api.time_invalid")
		return time.Time{}
	}
	return t.UTC()
}

// queryTime reads an optional RFC 3339 query parameter.
func queryTime(c echo.Context, name string, v *errs.Validation) time.Time {
	raw := c.QueryParam(name)
	return parseAPITime(&raw, name, v)
}

// queryInt reads an optional integer query parameter within [lo, hi].
func queryInt(c echo.Context, name string, def, lo, hi int, key string, v *errs.Validation) int {
	raw := strings.TrimSpace(c.QueryParam(name))
	if raw == "" {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		v.Add(name, "field.integer")
		return def
	}
	if n < lo || n > hi {
		v.Add(name, key)
		return def
	}
	return n
}

// queryRef reads a query parameter naming a record by name or id.
func queryRef(c echo.Context, name string) ref {
	raw := strings.TrimSpace(c.QueryParam(name))
	if raw == "" {
		return ref{}
	}
	return ref{set: true, name: raw}
}

// renameFields moves store field names to the names the request used, so a
// message lands on the key the caller sent ("team" rather than "team_id").
func renameFields(err error, names map[string]string) error {
	e, ok := errs.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	fields := make(map[string]string, len(e.Fields))
	changed := false
	for f, k := range e.Fields {
		if to, ok := names[f]; ok {
			f, changed = to, true
		}
		fields[f] = k
	}
	if !changed {
		return err
	}
	out := *e
	out.Fields = fields
	return &out
}

// visibleTeams is nil for admins (every team) and the user's teams otherwise:
// what a viewer may read of tasks and bookings.
func (s *Server) visibleTeams(c echo.Context) ([]int64, error) {
	u := mustUser(c)
	if u.Role == store.RoleAdmin {
		return nil, nil
	}
	ids, err := s.store.TeamIDsOf(c.Request().Context(), u.ID)
	if ids == nil {
		ids = []int64{}
	}
	return ids, err
}

// sees tells whether a team is in a visibleTeams answer.
func sees(teams []int64, teamID int64) bool {
	if teams == nil {
		return true
	}
	for _, id := range teams {
		if id == teamID {
			return true
		}
	}
	return false
}

func hoursOf(cardSeconds int64) float64 { return float64(cardSeconds) / 3600 }
