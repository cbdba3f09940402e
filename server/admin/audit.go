package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

const auditPageSize = 50

// auditSizes are the page sizes the log offers.
var auditSizes = []int{20, 50, 100, 200}

// The log's two views: the changes, and the sign-ins, which would
// otherwise bury the changes (every page load of a script that logs in is
// one).
const (
	auditChanges = "changes"
	auditAuth    = "auth"
)

// prettyJSON indents a stored snapshot for reading; text that is not JSON
// is shown as it is.
func prettyJSON(raw *string) string {
	if raw == nil || *raw == "" || *raw == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(*raw), "", "  "); err != nil {
		return *raw
	}
	return buf.String()
}

// auditQuery is the log page's query string: the view, the filters as
// typed, the page size and the page. Its URL keeps every one of them, so
// paging never drops a filter.
type auditQuery struct {
	view, actor, action, entity, entityID, from, to string
	size, page                                      int
}

func (q auditQuery) url(page int) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	if q.view == auditAuth {
		v.Set("view", auditAuth)
	}
	set("actor", q.actor)
	set("action", q.action)
	set("entity", q.entity)
	set("entity_id", q.entityID)
	set("from", q.from)
	set("to", q.to)
	if q.size != auditPageSize {
		v.Set("size", strconv.Itoa(q.size))
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/admin/audit"
	}
	return "/admin/audit?" + v.Encode()
}

// inView keeps f to the entries of view.
func inView(f *store.AuditFilter, view string) {
	if view == auditAuth {
		f.Actions = store.AuthActions
	} else {
		f.ExceptActions = store.AuthActions
	}
}

// dayRange turns the dates typed in the viewer's zone into [from, before):
// the end date is included, whole.
func dayRange(from, to string, tz *time.Location) (time.Time, time.Time, string) {
	var start, before time.Time
	if from != "" {
		d, err := time.ParseInLocation(time.DateOnly, from, tz)
		if err != nil {
			return start, before, "audit.date_invalid"
		}
		start = d
	}
	if to != "" {
		d, err := time.ParseInLocation(time.DateOnly, to, tz)
		if err != nil {
			return start, before, "audit.date_invalid"
		}
		before = d.AddDate(0, 0, 1)
	}
	if !start.IsZero() && !before.IsZero() && !before.After(start) {
		return start, before, "audit.range_invalid"
	}
	return start, before, ""
}

// auditLink is the page of an audited record, "" for kinds without one
// and for records the entry deleted.
func auditLink(e store.AuditEntry) string {
	if e.EntityID <= 0 || e.Action == "delete" {
		return ""
	}
	pages := map[string]string{
		"booking": "/bookings/%d", "task": "/tasks/%d", "quota": "/quotas/%d", "template": "/templates/%d",
		"notify_channel": "/channels/%d", "team": "/admin/teams/%d", "user": "/admin/users/%d",
		"card": "/admin/cards/%d", "card_type": "/admin/card-types/%d", "host": "/admin/hosts/%d", "image": "/admin/images/%d",
	}
	if f, ok := pages[e.Entity]; ok {
		return fmt.Sprintf(f, e.EntityID)
	}
	return ""
}

func webArgs(e store.AuditEntry) []web.AuditArg {
	var out []web.AuditArg
	for _, a := range e.Args() {
		out = append(out, web.AuditArg{Text: a.Text, Key: a.Key, Time: a.Time})
	}
	return out
}

func (a *Area) auditPage(c echo.Context) error {
	ctx := c.Request().Context()
	p := a.Pages.Page(c, "admin.audit", "admin")
	tz := p.TZ
	if tz == nil {
		tz = time.UTC
	}
	q := auditQuery{view: auditChanges, actor: c.QueryParam("actor"), action: c.QueryParam("action"), entity: c.QueryParam("entity"),
		entityID: strings.TrimSpace(c.QueryParam("entity_id")), from: strings.TrimSpace(c.QueryParam("from")),
		to: strings.TrimSpace(c.QueryParam("to")), size: auditPageSize, page: 1}
	if c.QueryParam("view") == auditAuth {
		q.view = auditAuth
	}
	// A size or page that does not parse is the default: it comes from a
	// link, not from someone who can fix it.
	if n, err := strconv.Atoi(c.QueryParam("size")); err == nil && slices.Contains(auditSizes, n) {
		q.size = n
	}
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 {
		q.page = n
	}

	var view store.AuditFilter
	inView(&view, q.view)
	actors, err := a.Store.FindAuditActors(ctx, view)
	if err != nil {
		return err
	}
	actions, err := a.Store.FindAuditActions(ctx, view)
	if err != nil {
		return err
	}
	entities, err := a.Store.FindAuditEntities(ctx)
	if err != nil {
		return err
	}
	// A filter for a value the view does not hold (an action of the other
	// view, a kind no entry has) is dropped, not turned into an empty page.
	if !slices.Contains(actions, q.action) {
		q.action = ""
	}
	if !slices.Contains(entities, q.entity) || q.view == auditAuth {
		q.entity = ""
	}

	v := web.AuditProps{View: q.view, Filter: web.NewForm(), PageNum: 1}
	f := view
	f.ActorName, f.Entity = q.actor, q.entity
	if q.action != "" {
		f.Actions, f.ExceptActions = []string{q.action}, nil
	}
	if q.entityID != "" {
		if id, err := strconv.ParseInt(q.entityID, 10, 64); err == nil && id > 0 {
			f.EntityID = id
		} else {
			v.FilterErr, q.entityID = p.T("error.id"), ""
		}
	}
	from, before, problem := dayRange(q.from, q.to, tz)
	if problem != "" {
		v.FilterErr, q.from, q.to = p.T(problem), "", ""
	} else {
		f.From, f.Before = from, before
	}

	f.Limit, f.Offset = q.size, (q.page-1)*q.size
	entries, total, err := a.Store.FindAuditEntries(ctx, f)
	if err != nil {
		return err
	}
	pages := max(1, int((total+int64(q.size)-1)/int64(q.size)))
	if q.page > pages {
		// A page past the end (the log was filtered down since the link
		// was made) shows the last one.
		q.page = pages
		f.Offset = (q.page - 1) * q.size
		if entries, total, err = a.Store.FindAuditEntries(ctx, f); err != nil {
			return err
		}
	}

	for _, name := range actors {
		v.Actors = append(v.Actors, web.Option{Value: name, Label: web.AuditActor(p.Lang, name, false)})
	}
	for _, act := range actions {
		v.Actions = append(v.Actions, web.Option{Value: act, Label: web.AuditAction(p.Lang, act)})
	}
	for _, e := range entities {
		v.Entities = append(v.Entities, web.Option{Value: e, Label: web.EntityLabel(p, e)})
	}
	for _, n := range auditSizes {
		v.Sizes = append(v.Sizes, web.Option{Value: strconv.Itoa(n), Label: strconv.Itoa(n)})
	}
	for k, val := range map[string]string{"actor": q.actor, "action": q.action, "entity": q.entity, "entity_id": q.entityID,
		"from": q.from, "to": q.to, "size": strconv.Itoa(q.size)} {
		v.Filter.Values[k] = val
	}
	// Switching views keeps who and when; what was done and to what belong
	// to the view left.
	keep := auditQuery{actor: q.actor, from: q.from, to: q.to, size: q.size}
	keep.view = auditChanges
	v.ChangesURL = keep.url(1)
	keep.view = auditAuth
	v.AuthURL = keep.url(1)
	v.ResetURL = auditQuery{view: q.view, size: auditPageSize}.url(1)

	v.Total, v.Pages, v.PageNum = total, pages, q.page
	if len(entries) > 0 {
		v.First = int64(f.Offset) + 1
		v.Last = int64(f.Offset + len(entries))
	}
	if q.page > 1 {
		v.PrevURL = q.url(q.page - 1)
	}
	if q.page < pages {
		v.NextURL = q.url(q.page + 1)
	}
	for _, e := range entries {
		v.Rows = append(v.Rows, web.AuditRow{ID: e.ID, At: e.At, Actor: e.ActorName, ActorIsUser: e.ActorID != nil, Action: e.Action,
			Entity: e.Entity, EntityID: e.EntityID, Link: auditLink(e), Summary: e.Summary, SummaryKey: e.SummaryKey, Args: webArgs(e),
			IP: e.RemoteIP, Before: prettyJSON(e.BeforeJSON), After: prettyJSON(e.AfterJSON)})
	}
	return response.Render(c, http.StatusOK, web.AuditPage(p, v))
}

// auditJSON is an audit entry in the API; before and after are the stored
// snapshots as JSON values, null when the change has no such side. summary
// is in the caller's language (entries from before summaries had keys keep
// their text); summary_key and summary_args are what it was made from.
type auditJSON struct {
	ID          int64           `json:"id"`
	At          time.Time       `json:"at"`
	ActorID     *int64          `json:"actor_id"`
	ActorName   string          `json:"actor"`
	Action      string          `json:"action"`
	Entity      string          `json:"entity"`
	EntityID    int64           `json:"entity_id"`
	Summary     string          `json:"summary"`
	SummaryKey  string          `json:"summary_key"`
	SummaryArgs []string        `json:"summary_args"`
	RemoteIP    string          `json:"remote_ip"`
	Before      json.RawMessage `json:"before"`
	After       json.RawMessage `json:"after"`
}

func rawJSON(s *string) json.RawMessage {
	if s == nil || !json.Valid([]byte(*s)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(*s)
}

// apiTime reads a time filter: RFC 3339, or a date in the portal's zone
// (a date as the end of a range includes that day).
func apiTime(raw string, tz *time.Location, end bool) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return t, true
	}
	d, err := time.ParseInLocation(time.DateOnly, raw, tz)
	if err != nil {
		return time.Time{}, false
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d, true
}

func (a *Area) apiListAudit(c echo.Context) error {
	v := errs.NewValidation("server.apiListAudit")
	f := store.AuditFilter{Entity: c.QueryParam("entity"), ActorName: c.QueryParam("actor"), Limit: auditPageSize}
	intParam := func(name string, lo, hi int64, key string) (int64, bool) {
		raw := c.QueryParam(name)
		if raw == "" {
			return 0, false
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			v.Add(name, "field.integer")
			return 0, false
		}
		if n < lo || n > hi {
			v.Add(name, key)
			return 0, false
		}
		return n, true
	}
	if n, ok := intParam("entity_id", 1, 1<<62, "error.id"); ok {
		f.EntityID = n
	}
	if n, ok := intParam("limit", 1, 1000, "audit.limit_range"); ok {
		f.Limit = int(n)
	}
	if n, ok := intParam("offset", 0, 1<<31-1, "audit.offset_range"); ok {
		f.Offset = int(n)
	}
	for _, act := range strings.Split(c.QueryParam("action"), ",") {
		if act = strings.TrimSpace(act); act != "" {
			f.Actions = append(f.Actions, act)
		}
	}
	none := false // the view and the actions asked for have nothing in common
	switch view := c.QueryParam("view"); view {
	case "", "all":
	case auditChanges:
		f.ExceptActions = store.AuthActions
	case auditAuth:
		if f.Actions == nil {
			f.Actions = store.AuthActions
		} else {
			f.Actions = slices.DeleteFunc(f.Actions, func(s string) bool { return !slices.Contains(store.AuthActions, s) })
			none = len(f.Actions) == 0
		}
	default:
		v.Add("view", "audit.view_invalid")
	}
	tz := a.Config.TZ
	if tz == nil {
		tz = time.UTC
	}
	if raw := strings.TrimSpace(c.QueryParam("from")); raw != "" {
		if t, ok := apiTime(raw, tz, false); ok {
			f.From = t
		} else {
			v.Add("from", "audit.time_invalid")
		}
	}
	if raw := strings.TrimSpace(c.QueryParam("to")); raw != "" {
		if t, ok := apiTime(raw, tz, true); ok {
			f.Before = t
		} else {
			v.Add("to", "audit.time_invalid")
		}
	}
	if !f.From.IsZero() && !f.Before.IsZero() && !f.Before.After(f.From) {
		v.Add("to", "audit.range_invalid")
	}
	if err := v.Err(); err != nil {
		return err
	}
	var entries []store.AuditEntry
	var total int64
	if !none {
		var err error
		entries, total, err = a.Store.FindAuditEntries(c.Request().Context(), f)
		if err != nil {
			return err
		}
	}
	lang := request.Lang(c)
	out := make([]auditJSON, 0, len(entries))
	for _, e := range entries {
		args := []string{}
		for _, a := range e.Args() {
			switch {
			case a.Key != "":
				args = append(args, a.Key)
			case a.Time != nil:
				args = append(args, a.Time.UTC().Format(time.RFC3339))
			default:
				args = append(args, a.Text)
			}
		}
		out = append(out, auditJSON{ID: e.ID, At: e.At, ActorID: e.ActorID, ActorName: e.ActorName, Action: e.Action,
			Entity: e.Entity, EntityID: e.EntityID, Summary: web.AuditSummary(lang, tz, e.Summary, e.SummaryKey, webArgs(e)),
			SummaryKey: e.SummaryKey, SummaryArgs: args, RemoteIP: e.RemoteIP,
			Before: rawJSON(e.BeforeJSON), After: rawJSON(e.AfterJSON)})
	}
	return c.JSON(http.StatusOK, auditPageJSON{Entries: out, Total: total, Limit: f.Limit, Offset: f.Offset})
}

// auditPageJSON answers GET /api/v1/audit.
type auditPageJSON struct {
	Entries []auditJSON `json:"entries"`
	Total   int64       `json:"total"`
	Limit   int         `json:"limit"`
	Offset  int         `json:"offset"`
}
