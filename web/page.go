// Package web renders cardhour's pages with templ. Components take plain
// props built by the server; they never see the database or the request.
package web

import (
	"net/url"
	"strconv"
	"time"
)

// Page is what every page needs from the request: language, who is looking,
// the CSRF token for its forms, and where it sits in the navigation.
type Page struct {
	Lang    string
	Title   string
	Nav     string // nav key of the active section: booking, board, ledger, reports, admin, account
	User    *Viewer
	CSRF    string
	Flash   string
	Path    string // request path with query, for the language switch
	TZ      *time.Location
	Version string
	// Unread is the number on the bell; Approvals the bookings waiting for
	// the viewer's approval ("待审批 N").
	Unread    int
	Approvals int
	// NavOpen tells, for each path the navigation links to (NavPaths),
	// which site roles may open it: the route table's access decides.
	NavOpen map[string]map[string]bool
}

// CanOpen tells whether the navigation shows the viewer the item linking
// to path: only when its page admits them.
func (p Page) CanOpen(path string) bool { return p.User != nil && p.NavOpen[path][p.User.Role] }

// Viewer is the logged-in user as the layout shows them.
type Viewer struct {
	ID       int64
	Username string
	Name     string
	Role     string
}

// IsAdmin tells whether the admin section is shown.
func (v *Viewer) IsAdmin() bool { return v != nil && v.Role == "admin" }

// IsManager tells whether the viewer manages (a manager or an admin): the
// robots and approvals are theirs.
func (v *Viewer) IsManager() bool { return v != nil && (v.Role == "manager" || v.Role == "admin") }

// T translates key in the page's language.
func (p Page) T(key string, args ...any) string { return T(p.Lang, key, args...) }

// OtherLang is the language the switch offers.
func (p Page) OtherLang() string {
	if p.Lang == LangEN {
		return LangZH
	}
	return LangEN
}

// SwitchLangURL links to the current page in the other language.
func (p Page) SwitchLangURL() string {
	return "/lang?to=" + url.QueryEscape(p.OtherLang()) + "&next=" + url.QueryEscape(p.Path)
}

// Time formats t in the viewer's zone.
func (p Page) Time(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	loc := p.TZ
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04")
}

// TimePtr formats an optional time, "never" when nil.
func (p Page) TimePtr(t *time.Time, never string) string {
	if t == nil {
		return never
	}
	return p.Time(*t)
}

// Form carries submitted values and per-field messages back to a form.
type Form struct {
	Values map[string]string
	Errors map[string]string // field → translated message
	Error  string            // headline message
}

// NewForm starts an empty form.
func NewForm() Form { return Form{Values: map[string]string{}, Errors: map[string]string{}} }

// Value returns the submitted value of field.
func (f Form) Value(field string) string { return f.Values[field] }

// FieldError returns the message for field, "" when it is fine.
func (f Form) FieldError(field string) string { return f.Errors[field] }

// Itoa is strconv.Itoa for templates.
func Itoa(n int) string { return strconv.Itoa(n) }

// I64 formats an int64 for templates.
func I64(n int64) string { return strconv.FormatInt(n, 10) }

// Float formats TFLOPS without trailing zeros.
func Float(f float64) string {
	if f == 0 {
		return "—"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
