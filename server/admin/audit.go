package admin

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

const auditPageSize = 50

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

func auditURL(entity string, page int) string {
	q := url.Values{}
	if entity != "" {
		q.Set("entity", entity)
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return "/admin/audit"
	}
	return "/admin/audit?" + q.Encode()
}

func (a *Area) auditPage(c echo.Context) error {
	ctx := c.Request().Context()
	entities, err := a.Store.FindAuditEntities(ctx)
	if err != nil {
		return err
	}
	p := a.Pages.Page(c, "admin.audit", "admin")
	v := web.AuditProps{PageNum: 1}
	for _, e := range entities {
		v.Entities = append(v.Entities, web.Option{Value: e, Label: web.EntityLabel(p, e)})
		if e == c.QueryParam("entity") {
			v.Entity = e
		}
	}
	// A page number that does not parse is the first page: it comes from a
	// link, not from someone who can fix it.
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 {
		v.PageNum = n
	}
	entries, total, err := a.Store.FindAuditEntries(ctx, store.AuditFilter{Entity: v.Entity, Limit: auditPageSize, Offset: (v.PageNum - 1) * auditPageSize})
	if err != nil {
		return err
	}
	v.Total = total
	v.Pages = int((total + auditPageSize - 1) / auditPageSize)
	if v.Pages < 1 {
		v.Pages = 1
	}
	if v.PageNum > 1 {
		v.PrevURL = auditURL(v.Entity, min(v.PageNum-1, v.Pages))
	}
	if v.PageNum < v.Pages {
		v.NextURL = auditURL(v.Entity, v.PageNum+1)
	}
	for _, e := range entries {
		v.Rows = append(v.Rows, web.AuditRow{ID: e.ID, At: e.At, Actor: e.ActorName, Action: e.Action, Entity: e.Entity,
			EntityID: e.EntityID, Summary: e.Summary, IP: e.RemoteIP, Before: prettyJSON(e.BeforeJSON), After: prettyJSON(e.AfterJSON)})
	}
	return response.Render(c, http.StatusOK, web.AuditPage(p, v))
}

// auditJSON is an audit entry in the API; before and after are the stored
// snapshots as JSON values, null when the change has no such side.
type auditJSON struct {
	ID        int64           `json:"id"`
	At        time.Time       `json:"at"`
	ActorID   *int64          `json:"actor_id"`
	ActorName string          `json:"actor"`
	Action    string          `json:"action"`
	Entity    string          `json:"entity"`
	EntityID  int64           `json:"entity_id"`
	Summary   string          `json:"summary"`
	RemoteIP  string          `json:"remote_ip"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
}

func rawJSON(s *string) json.RawMessage {
	if s == nil || !json.Valid([]byte(*s)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(*s)
}

func (a *Area) apiListAudit(c echo.Context) error {
	v := errs.NewValidation("server.apiListAudit")
	f := store.AuditFilter{Entity: c.QueryParam("entity"), Limit: auditPageSize}
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
	if err := v.Err(); err != nil {
		return err
	}
	entries, total, err := a.Store.FindAuditEntries(c.Request().Context(), f)
	if err != nil {
		return err
	}
	out := make([]auditJSON, 0, len(entries))
	for _, e := range entries {
		out = append(out, auditJSON{ID: e.ID, At: e.At, ActorID: e.ActorID, ActorName: e.ActorName, Action: e.Action,
			Entity: e.Entity, EntityID: e.EntityID, Summary: e.Summary, RemoteIP: e.RemoteIP,
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
