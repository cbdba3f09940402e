package request

import (
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/web"
)

// Form copies the posted values of fields into a Form.
func Form(c echo.Context, fields ...string) web.Form {
	f := web.NewForm()
	for _, k := range fields {
		f.Values[k] = c.FormValue(k)
	}
	return f
}

// ID reads a form value naming a record: its positive id, 0 when it
// names none.
func ID(v string) int64 {
	id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}

// Float reads an optional number; one that does not parse is a message on
// field. ok is false when there is no number to use.
func Float(raw string, v *errs.Validation, field string) (x float64, ok bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, false
	}
	x, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		v.Add(field, "field.number")
		return 0, false
	}
	return x, true
}

// List reads a list a form sends in one field: names separated by commas
// (Chinese or Latin), spaces or newlines.
func List(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '，' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
}

// localLayouts are the forms' time formats: what <input type=
// "datetime-local"> sends, with or without seconds, and the same typed by
// hand.
var localLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"}

// ParseLocal reads a form time in the portal's zone loc. An empty value
// is the zero time; ok is false for text that is not a time, or a time
// outside the portal's range (InRange: the forms' messages name it).
func ParseLocal(v string, loc *time.Location) (t time.Time, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, true
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			if !InRange(t) {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// LocalValue is t as a datetime-local input's value in loc; "" for the
// zero time.
func LocalValue(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(localLayouts[0])
}
