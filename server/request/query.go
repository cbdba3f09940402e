package request

import (
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
)

// Time reads an RFC 3339 time; a malformed one is a message on field, not
// a bad request, so a script learns which value to fix, and so is one
// outside the portal's range (InRange). Absent is zero.
func Time(raw *string, field string, v *errs.Validation) time.Time {
	if raw == nil || strings.TrimSpace(*raw) == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(*raw))
	if err != nil {
		v.Add(field, "api.time_invalid")
		return time.Time{}
	}
	if !InRange(t) {
		v.Add(field, "api.time_range")
		return time.Time{}
	}
	return t.UTC()
}

// InRange tells whether the portal takes a time: from 2000-01-01 to before
// 2200-01-01 (UTC; the messages api.time_range, plan.bad_time and
// bkform.time_invalid name the range). Wider than any booking, quota or
// report needs, and far inside what both databases store: 9999-12-31 plus
// the window a query adds is a year MariaDB refuses (a 500), not an empty
// answer. Every time a request carries — query, JSON body, form — is read
// by Time or ParseLocal, and both ask here.
func InRange(t time.Time) bool {
	return !t.Before(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) && t.Before(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC))
}

// QueryTime reads an optional RFC 3339 query parameter.
func QueryTime(c echo.Context, name string, v *errs.Validation) time.Time {
	raw := c.QueryParam(name)
	return Time(&raw, name, v)
}

// QueryInt reads an optional integer query parameter within [lo, hi];
// outside it, key is the message on the parameter.
func QueryInt(c echo.Context, name string, def, lo, hi int, key string, v *errs.Validation) int {
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

// RenameFields moves store field names to the names the request used, so a
// message lands on the key the caller sent ("team" rather than "team_id").
func RenameFields(err error, names map[string]string) error {
	e, ok := errs.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	fields := make(map[string]string, len(e.Fields))
	args := make(map[string][]any, len(e.FieldArgs))
	changed := false
	for f, k := range e.Fields {
		a, hasArgs := e.FieldArgs[f]
		if to, ok := names[f]; ok {
			f, changed = to, true
		}
		fields[f] = k
		if hasArgs {
			args[f] = a
		}
	}
	if !changed {
		return err
	}
	out := *e
	out.Fields, out.FieldArgs = fields, args
	return &out
}
