package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/store"
)

// The OpenAPI document is written here by hand, operation by operation, so
// a route added to the table without documentation shows up as a failing
// test (TestOpenAPIDescribesEveryRoute) instead of silently. Schemas are
// read from the Go types the handlers encode and decode, so they cannot
// drift from what the API really sends.

// apiParam is a query parameter of an operation.
type apiParam struct {
	name, kind, desc string // kind: string, integer, boolean, date-time
}

// apiOp documents one route of the table.
type apiOp struct {
	method, path string
	access       Access
	tag, summary string
	desc         string
	query        []apiParam
	body         string // component schema of the request body
	status       int    // success status
	result       any    // schema of the success body; nil for none
	conflict     bool   // may answer 409
}

func schemaRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// listOf is the {"key": [Schema]} envelope list endpoints answer with.
func listOf(key, name string) map[string]any {
	return map[string]any{"type": "object", "required": []string{key},
		"properties": map[string]any{key: map[string]any{"type": "array", "items": schemaRef(name)}}}
}

// Query parameters shared by several operations.
var (
	pFrom = apiParam{"from", "date-time", "start of the window (RFC 3339)"}
	pTo   = apiParam{"to", "date-time", "end of the window (RFC 3339)"}
)

// apiOps is every /api/v1 operation.
func apiOps() []apiOp {
	const GET, POST, PUT, PATCH, DELETE = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	const ok, created, none = http.StatusOK, http.StatusCreated, http.StatusNoContent
	return []apiOp{
		{method: GET, path: "/api/v1/openapi.json", access: Public, tag: "meta", summary: "This document", status: ok, result: map[string]any{"type": "object"}},
		{method: GET, path: "/api/v1/me", access: Viewer, tag: "meta", summary: "The caller and their team memberships", status: ok, result: schemaRef("Me")},

		{method: GET, path: "/api/v1/card-types", access: Viewer, tag: "inventory", summary: "List card types, cheapest first", status: ok, result: listOf("card_types", "CardType")},
		{method: POST, path: "/api/v1/card-types", access: Admin, tag: "inventory", summary: "Add a card type", body: "CardTypeInput", status: created, result: schemaRef("CardType"), conflict: true},
		{method: GET, path: "/api/v1/card-types/:id", access: Viewer, tag: "inventory", summary: "One card type", status: ok, result: schemaRef("CardType")},
		{method: PUT, path: "/api/v1/card-types/:id", access: Admin, tag: "inventory", summary: "Replace a card type", body: "CardTypeInput", status: ok, result: schemaRef("CardType"), conflict: true},
		{method: DELETE, path: "/api/v1/card-types/:id", access: Admin, tag: "inventory", summary: "Delete a card type no card or booking uses", status: none, conflict: true},

		{method: GET, path: "/api/v1/hosts", access: Viewer, tag: "inventory", summary: "List hosts with their card counts", status: ok, result: listOf("hosts", "Host")},
		{method: POST, path: "/api/v1/hosts", access: Admin, tag: "inventory", summary: "Add a host", body: "HostInput", status: created, result: schemaRef("Host"), conflict: true},
		{method: GET, path: "/api/v1/hosts/:id", access: Viewer, tag: "inventory", summary: "One host", status: ok, result: schemaRef("Host")},
		{method: PUT, path: "/api/v1/hosts/:id", access: Admin, tag: "inventory", summary: "Replace a host", body: "HostInput", status: ok, result: schemaRef("Host"), conflict: true},
		{method: DELETE, path: "/api/v1/hosts/:id", access: Admin, tag: "inventory", summary: "Delete a host without cards", status: none, conflict: true},

		{method: GET, path: "/api/v1/cards", access: Viewer, tag: "inventory", summary: "List cards", status: ok, result: listOf("cards", "Card"),
			query: []apiParam{{"host_id", "integer", "only this host"}, {"card_type_id", "integer", "only this card type"}, {"status", "string", "active, maintenance or retired"}}},
		{method: POST, path: "/api/v1/cards", access: Admin, tag: "inventory", summary: "Register a card (host and card type by id or name)", body: "CardInput", status: created, result: schemaRef("Card"), conflict: true},
		{method: GET, path: "/api/v1/cards/:id", access: Viewer, tag: "inventory", summary: "One card", status: ok, result: schemaRef("Card")},
		{method: PUT, path: "/api/v1/cards/:id", access: Admin, tag: "inventory", summary: "Replace a card", body: "CardInput", status: ok, result: schemaRef("Card"), conflict: true},
		{method: DELETE, path: "/api/v1/cards/:id", access: Admin, tag: "inventory", summary: "Delete a card no booking used", status: none, conflict: true},

		{method: GET, path: "/api/v1/images", access: Viewer, tag: "inventory", summary: "List environment images", status: ok, result: listOf("images", "Image")},
		{method: POST, path: "/api/v1/images", access: Admin, tag: "inventory", summary: "Add an image", body: "ImageInput", status: created, result: schemaRef("Image"), conflict: true},
		{method: GET, path: "/api/v1/images/:id", access: Viewer, tag: "inventory", summary: "One image", status: ok, result: schemaRef("Image")},
		{method: PUT, path: "/api/v1/images/:id", access: Admin, tag: "inventory", summary: "Replace an image", body: "ImageInput", status: ok, result: schemaRef("Image"), conflict: true},
		{method: DELETE, path: "/api/v1/images/:id", access: Admin, tag: "inventory", summary: "Delete an image no task uses", status: none, conflict: true},

		{method: GET, path: "/api/v1/teams", access: Admin, tag: "people", summary: "List teams with member counts", status: ok, result: listOf("teams", "Team")},
		{method: POST, path: "/api/v1/teams", access: Admin, tag: "people", summary: "Add a team", body: "TeamInput", status: created, result: schemaRef("Team"), conflict: true},
		{method: GET, path: "/api/v1/teams/:id", access: Admin, tag: "people", summary: "One team", status: ok, result: schemaRef("Team")},
		{method: PUT, path: "/api/v1/teams/:id", access: Admin, tag: "people", summary: "Replace a team", body: "TeamInput", status: ok, result: schemaRef("Team"), conflict: true},
		{method: DELETE, path: "/api/v1/teams/:id", access: Admin, tag: "people", summary: "Delete a team without tasks", status: none, conflict: true},
		{method: GET, path: "/api/v1/teams/:id/members", access: Admin, tag: "people", summary: "List a team's members", status: ok, result: listOf("members", "Membership")},
		{method: PUT, path: "/api/v1/teams/:id/members/:user_id", access: Admin, tag: "people", summary: "Add a member or change their team role", body: "MembershipInput", status: ok, result: schemaRef("Membership"), conflict: true},
		{method: DELETE, path: "/api/v1/teams/:id/members/:user_id", access: Admin, tag: "people", summary: "Remove a member", status: none, conflict: true},

		{method: GET, path: "/api/v1/users", access: Admin, tag: "people", summary: "List users with their teams", status: ok, result: listOf("users", "User"),
			query: []apiParam{{"q", "string", "part of a username, name or email"}}},
		{method: POST, path: "/api/v1/users", access: Admin, tag: "people", summary: "Add a user", body: "UserCreate", status: created, result: schemaRef("User"), conflict: true},
		{method: GET, path: "/api/v1/users/:id", access: Admin, tag: "people", summary: "One user", status: ok, result: schemaRef("User")},
		{method: PATCH, path: "/api/v1/users/:id", access: Admin, tag: "people", summary: "Change some of a user's fields", body: "UserUpdate", status: ok, result: schemaRef("User"), conflict: true},

		{method: GET, path: "/api/v1/audit", access: Admin, tag: "people", summary: "The audit log, newest first", status: ok, result: schemaRef("AuditPage"),
			query: []apiParam{{"entity", "string", "only this kind of record (booking, quota, …)"}, {"entity_id", "integer", "only this record"},
				{"limit", "integer", "1–1000, default 50"}, {"offset", "integer", "entries to skip"}}},

		{method: GET, path: "/api/v1/tasks", access: Viewer, tag: "tasks", summary: "Tasks of the caller's teams (admins: all), core first", status: ok, result: listOf("tasks", "Task"),
			query: []apiParam{{"team", "string", "team name or id"}}},
		{method: POST, path: "/api/v1/tasks", access: Member, tag: "tasks", summary: "Write a task baseline", body: "TaskInput", status: created, result: schemaRef("Task"), conflict: true,
			desc: "A task belongs to a team the caller books for (member or manager; admins any). Team, image and card types by name or id."},
		{method: GET, path: "/api/v1/tasks/:id", access: Viewer, tag: "tasks", summary: "A task's baseline beside what was booked and used", status: ok, result: schemaRef("TaskDetail")},
		{method: PUT, path: "/api/v1/tasks/:id", access: Member, tag: "tasks", summary: "Replace a task's baseline (the team cannot change)", body: "TaskInput", status: ok, result: schemaRef("Task"), conflict: true},

		{method: GET, path: "/api/v1/bookings", access: Viewer, tag: "bookings", summary: "Bookings of the caller's teams (admins: all), soonest first", status: ok, result: listOf("bookings", "Booking"),
			query: []apiParam{{"mine", "boolean", "only the caller's own"}, {"team", "string", "team name or id"}, {"card_type", "string", "card type name or id"},
				{"task_id", "integer", "only this task"}, {"state", "string", "comma-separated states"}, pFrom, pTo, {"limit", "integer", "1–1000, default 500"}}},
		{method: POST, path: "/api/v1/bookings", access: Member, tag: "bookings", summary: "Book cards of one type for a task", body: "BookingInput", status: created, result: schemaRef("Booking"), conflict: true,
			desc: "Cards are assigned at once (state confirmed, or active when the window has begun) inside one database transaction: no card is ever held by two overlapping bookings. " +
				"409 conflict when the pool has too few free cards (the message says how many are free) or a quota refuses (the message says which limit and by how much); " +
				"with queue=true the booking waits (state pending, wait_reason capacity) instead. 422 invalid with per-field messages for bad input; nothing is written then."},
		{method: GET, path: "/api/v1/bookings/:id", access: Viewer, tag: "bookings", summary: "One booking with its cards", status: ok, result: schemaRef("Booking")},
		{method: POST, path: "/api/v1/bookings/:id/release", access: Member, tag: "bookings", summary: "Release early: the unused card-hours return", status: ok, result: schemaRef("Release"), conflict: true},
		{method: POST, path: "/api/v1/bookings/:id/cancel", access: Member, tag: "bookings", summary: "Cancel a booking that has not started", status: ok, result: schemaRef("Booking"), conflict: true},
		{method: POST, path: "/api/v1/bookings/:id/extend", access: Member, tag: "bookings", summary: "Move the end later when the cards and the quota allow", body: "ExtendInput", status: ok, result: schemaRef("Booking"), conflict: true},
		{method: POST, path: "/api/v1/bookings/:id/approve", access: Manager, tag: "bookings", summary: "Approve a booking waiting for its team manager", status: ok, result: schemaRef("Booking"), conflict: true},

		{method: GET, path: "/api/v1/availability", access: Viewer, tag: "bookings", summary: "Free cards per card type and hour", status: ok, result: schemaRef("Availability"),
			query: []apiParam{{"from", "date-time", "first hour (RFC 3339, default now)"}, {"hours", "integer", "1–744, default 336 (14 days)"}, {"card_type", "string", "card type name or id"}}},

		{method: GET, path: "/api/v1/quotas", access: Manager, tag: "quotas", summary: "Quotas of the teams the caller manages (admins: all) with their use", status: ok, result: listOf("quotas", "Quota"),
			query: []apiParam{{"team", "string", "team name or id"}, {"card_type", "string", "card type name or id"}}},
		{method: POST, path: "/api/v1/quotas", access: Manager, tag: "quotas", summary: "Grant a quota", body: "QuotaInput", status: created, result: schemaRef("Quota"), conflict: true},
		{method: PUT, path: "/api/v1/quotas/:id", access: Manager, tag: "quotas", summary: "Renew or adjust a quota", body: "QuotaInput", status: ok, result: schemaRef("Quota"), conflict: true},
	}
}

// apiSchemas are the component schemas, read from the handlers' types.
func apiSchemas() map[string]reflect.Type {
	t := func(v any) reflect.Type { return reflect.TypeOf(v) }
	return map[string]reflect.Type{
		"Me": t(struct {
			User        store.User             `json:"user"`
			Memberships []store.MembershipView `json:"memberships"`
		}{}),
		"CardType":        t(cardTypeJSON{}),
		"CardTypeInput":   t(cardTypeRequest{}),
		"Host":            t(hostJSON{}),
		"HostInput":       t(store.HostInput{}),
		"Card":            t(store.CardView{}),
		"CardInput":       t(cardRequest{}),
		"Image":           t(store.Image{}),
		"ImageInput":      t(store.ImageInput{}),
		"Team":            t(teamJSON{}),
		"TeamInput":       t(store.TeamInput{}),
		"Membership":      t(store.MembershipView{}),
		"MembershipInput": t(memberRequest{}),
		"User":            t(userJSON{}),
		"UserCreate":      t(store.UserCreate{}),
		"UserUpdate":      t(store.UserUpdate{}),
		"AuditPage": t(struct {
			Entries []auditJSON `json:"entries"`
			Total   int64       `json:"total"`
			Limit   int         `json:"limit"`
			Offset  int         `json:"offset"`
		}{}),
		"Task":         t(taskJSON{}),
		"TaskInput":    t(taskRequest{}),
		"TaskDetail":   t(taskDetailJSON{}),
		"Booking":      t(bookingJSON{}),
		"BookingInput": t(bookingRequest{}),
		"ExtendInput":  t(extendRequest{}),
		"Release":      t(releaseJSON{}),
		"Availability": t(availabilityJSON{}),
		"Quota":        t(store.QuotaView{}),
		"QuotaInput":   t(quotaRequest{}),
	}
}

// apiRequired lists the fields a request body must carry.
var apiRequired = map[string][]string{
	"BookingInput":  {"task_id", "card_type", "count", "start", "end"},
	"ExtendInput":   {"end"},
	"QuotaInput":    {"team", "card_type", "card_hours", "valid_from", "expires_at"},
	"TaskInput":     {"name", "priority", "estimate_card_hours", "data_readiness"},
	"CardInput":     {"uuid"},
	"HostInput":     {"name"},
	"ImageInput":    {"name", "reference"},
	"TeamInput":     {"name"},
	"UserCreate":    {"username", "password", "role"},
	"CardTypeInput": {"name", "vram_gib"},
}

// apiEnums lists the values some fields take.
var apiEnums = map[string][]string{
	"priority":       {"core", "normal", "backfill"},
	"data_readiness": {"not_ready", "partial", "ready"},
	"precision":      {"", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"},
}

var (
	typeTime = reflect.TypeOf(time.Time{})
	typeRaw  = reflect.TypeOf(json.RawMessage(nil))
	typeRef  = reflect.TypeOf(ref{})
)

// schemaFor describes a Go type as JSON encoding/json writes or reads it.
func schemaFor(t reflect.Type) map[string]any {
	switch t {
	case typeTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case typeRaw:
		return map[string]any{"description": "any JSON value, or null"}
	case typeRef:
		return map[string]any{"description": "a name or an id", "oneOf": []any{
			map[string]any{"type": "string"}, map[string]any{"type": "integer", "format": "int64"}}}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := schemaFor(t.Elem())
		s["nullable"] = true
		return s
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem())}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Int, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Struct:
		props := map[string]any{}
		structProps(t, props)
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}

// structProps adds t's JSON fields to props, flattening embedded structs
// the way encoding/json does.
func structProps(t reflect.Type, props map[string]any) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			structProps(f.Type, props)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := schemaFor(f.Type)
		if format := f.Tag.Get("format"); format != "" {
			s["format"] = format
		}
		if vals, ok := apiEnums[name]; ok {
			s["enum"] = vals
		}
		props[name] = s
	}
}

var pathParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// openAPIPath writes echo's /x/:id as OpenAPI's /x/{id}.
func openAPIPath(p string) string { return pathParam.ReplaceAllString(p, "{$1}") }

func errorResponse(desc string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{
		"application/json": map[string]any{"schema": schemaRef("Error")}}}
}

// buildOpenAPI assembles the document.
func buildOpenAPI() ([]byte, error) {
	paths := map[string]map[string]any{}
	// Areas with their own files (board, ledger, files) list their own operations.
	for _, op := range append(append(append(apiOps(), boardAPIOps()...), ledgerAPIOps()...), filesAPIOps()...) {
		p := openAPIPath(op.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(op.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"schema": map[string]any{"type": "integer", "format": "int64"}})
		}
		for _, q := range op.query {
			s := map[string]any{"type": q.kind}
			if q.kind == "date-time" {
				s = map[string]any{"type": "string", "format": "date-time"}
			}
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.desc, "schema": s})
		}
		success := map[string]any{"description": http.StatusText(op.status)}
		if op.result != nil {
			success["content"] = map[string]any{"application/json": map[string]any{"schema": op.result}}
		}
		responses := map[string]any{itoa(op.status): success}
		errRef := func(name string) map[string]any { return map[string]any{"$ref": "#/components/responses/" + name} }
		if op.access != Public {
			responses["401"] = errRef("Unauthorized")
			responses["403"] = errRef("Forbidden")
			responses["503"] = errRef("Unavailable")
		}
		if len(params) > 0 || op.body != "" {
			responses["422"] = errRef("Invalid")
		}
		if strings.Contains(op.path, ":") {
			responses["404"] = errRef("NotFound")
		}
		if op.conflict {
			responses["409"] = errRef("Conflict")
		}
		o := map[string]any{
			"operationId": operationID(op),
			"tags":        []string{op.tag},
			"summary":     op.summary,
			"responses":   responses,
			"x-access":    op.access.String(),
		}
		if op.desc != "" {
			o["description"] = op.desc
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		if op.body != "" {
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": schemaRef(op.body)}}}
		}
		if op.access == Public {
			o["security"] = []any{}
		}
		paths[p][strings.ToLower(op.method)] = o
	}

	schemas := map[string]any{
		"Error": map[string]any{"type": "object", "required": []string{"error"}, "properties": map[string]any{
			"error": map[string]any{"type": "object", "required": []string{"code", "message"}, "properties": map[string]any{
				"code": map[string]any{"type": "string", "enum": []string{"invalid", "not_found", "conflict", "forbidden",
					"unauthorized", "unavailable", "too_large", "rate_limited", "internal"}},
				"message": map[string]any{"type": "string", "description": "for people, in the caller's language (?lang=en or zh-CN)"},
				"fields": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
					"description": "per-field messages of an invalid request"},
			}},
		}},
	}
	types := apiSchemas()
	// Areas with their own files keep their schemas next to their operations.
	for _, area := range []map[string]reflect.Type{boardAPISchemas(), ledgerAPISchemas(), filesAPISchemas()} {
		for name, t := range area {
			types[name] = t
		}
	}
	for name, t := range types {
		s := schemaFor(t)
		if req, ok := apiRequired[name]; ok {
			s["required"] = req
			props, _ := s["properties"].(map[string]any)
			for _, f := range req {
				// A required field read through a pointer is still not null.
				if p, ok := props[f].(map[string]any); ok {
					delete(p, "nullable")
				}
			}
		}
		schemas[name] = s
	}

	doc := map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "cardhour (卡时) API",
			"version": "1",
			"description": "GPU cards on demand: task baselines, bookings that never double-book a card, quotas, availability. " +
				"Authenticate with an API token (Authorization: Bearer …, issued under Account or by `cardhour token --user NAME`), " +
				"or with the browser session plus the X-CSRF-Token header on state-changing requests. " +
				"Times are RFC 3339 and answered in UTC; money is in integer fen (1 yuan = 100 fen). " +
				"Every error has the body {\"error\":{\"code\",\"message\",\"fields\"}}. x-access on an operation is the least site role it needs.",
		},
		"tags": []any{
			map[string]any{"name": "meta"}, map[string]any{"name": "inventory"}, map[string]any{"name": "people"},
			map[string]any{"name": "tasks"}, map[string]any{"name": "bookings"}, map[string]any{"name": "quotas"},
		},
		"security": []any{map[string]any{"bearerAuth": []string{}}, map[string]any{"sessionCookie": []string{}}},
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "an API token"},
				"sessionCookie": map[string]any{"type": "apiKey", "in": "cookie", "name": sessionCookie,
					"description": "the browser session; POST, PUT, PATCH and DELETE also need the X-CSRF-Token header"},
			},
			"schemas": schemas,
			"responses": map[string]any{
				"Unauthorized": errorResponse("no or bad credentials (code unauthorized)"),
				"Forbidden":    errorResponse("the caller's role or team may not do this, or the CSRF token is missing (code forbidden)"),
				"NotFound":     errorResponse("no such record, or not one the caller may see (code not_found)"),
				"Conflict":     errorResponse("refused by the current state: no capacity, a quota limit, a name taken (code conflict)"),
				"Invalid":      errorResponse("bad input; fields has a message per field, and nothing was written (code invalid)"),
				"Unavailable":  errorResponse("the database cannot be reached; retry after Retry-After seconds (code unavailable)"),
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// operationID names an operation after its method and path:
// POST /api/v1/bookings/:id/release is postBookingsIdRelease.
func operationID(op apiOp) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(op.method))
	for _, part := range strings.FieldsFunc(strings.TrimPrefix(op.path, "/api/v1/"), func(r rune) bool {
		return r == '/' || r == '-' || r == '_' || r == ':' || r == '.'
	}) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// openAPIDocument is built once; it depends on nothing but this code.
var openAPIDocument = sync.OnceValues(buildOpenAPI)

func (s *Server) apiOpenAPI(c echo.Context) error {
	doc, err := openAPIDocument()
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSONBlob(http.StatusOK, doc)
}
