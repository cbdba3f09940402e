package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"cardhour/server/request"
	"cardhour/server/route"
	"cardhour/store"
)

// The OpenAPI document is generated from the route table only: each API
// route carries its description, and the schemas are read from the Go
// types its handler decodes and encodes, so neither can drift from what
// the API really does. The tests hold the real answers to the document
// (servertest checks every answer of the API against it).

// buildOpenAPI writes the document of the table's API routes.
func buildOpenAPI(routes []route.Route) ([]byte, error) {
	g := &schemas{defs: map[string]schemaDef{}}
	paths := map[string]map[string]any{}
	var tags []any
	tagSeen := map[string]bool{}
	for _, r := range routes {
		if r.API == nil {
			continue
		}
		op, err := g.operation(r)
		if err != nil {
			return nil, err
		}
		p := openAPIPath(r.Path, r.API.Wildcard)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(r.Method)] = op
		if !tagSeen[r.API.Tag] {
			tagSeen[r.API.Tag] = true
			tags = append(tags, map[string]any{"name": r.API.Tag})
		}
	}
	components := map[string]any{"Error": errorSchema()}
	for name, d := range g.defs {
		components[name] = d.schema
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
		"tags":     tags,
		"security": []any{map[string]any{"bearerAuth": []string{}}, map[string]any{"sessionCookie": []string{}}},
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "an API token"},
				"sessionCookie": map[string]any{"type": "apiKey", "in": "cookie", "name": request.SessionCookie,
					"description": "the browser session; POST, PUT, PATCH and DELETE also need the X-CSRF-Token header"},
			},
			"schemas": components,
			"responses": map[string]any{
				"Unauthorized": errorResponse("no or bad credentials (code unauthorized)"),
				"Forbidden":    errorResponse("the caller's role or team may not do this, or the CSRF token is missing (code forbidden)"),
				"NotFound":     errorResponse("no such record, or not one the caller may see (code not_found)"),
				"Conflict":     errorResponse("refused by the current state: no capacity, a quota limit, a name taken (code conflict)"),
				"Invalid":      errorResponse("bad input; fields has a message per field, and nothing was written (code invalid)"),
				"TooLarge":     errorResponse("the request body is over the limit (code too_large)"),
				"Unavailable":  errorResponse("the database cannot be reached; retry after Retry-After seconds (code unavailable)"),
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// operation describes one route.
func (g *schemas) operation(r route.Route) (map[string]any, error) {
	a := r.API
	key := r.Method + " " + r.Path
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
			"schema": map[string]any{"type": "integer", "format": "int64"}})
	}
	if strings.HasSuffix(r.Path, "*") {
		params = append(params, map[string]any{"name": wildcardName(a.Wildcard), "in": "path", "required": true,
			"x-rest-of-path": true, "description": "the rest of the path; it may contain slashes",
			"schema": map[string]any{"type": "string"}})
	}
	for _, q := range a.Query {
		s := map[string]any{"type": q.Kind}
		if q.Kind == "date-time" {
			s = map[string]any{"type": "string", "format": "date-time"}
		}
		params = append(params, map[string]any{"name": q.Name, "in": "query", "description": q.Desc, "schema": s})
	}
	if a.Status == 0 {
		return nil, fmt.Errorf("server: API route %s documents no success status", key)
	}
	success := map[string]any{"description": http.StatusText(a.Status)}
	if a.Result != nil {
		content, err := g.content(a.Result, false)
		if err != nil {
			return nil, fmt.Errorf("server: API route %s: %w", key, err)
		}
		success["content"] = content
	}
	responses := map[string]any{strconv.Itoa(a.Status): success}
	errRef := func(name string) map[string]any { return map[string]any{"$ref": "#/components/responses/" + name} }
	if r.Access != route.Public || r.Gate.Set() {
		responses["401"] = errRef("Unauthorized")
		responses["403"] = errRef("Forbidden")
		responses["503"] = errRef("Unavailable")
	}
	if len(params) > 0 || a.Body != nil {
		responses["422"] = errRef("Invalid")
	}
	if strings.Contains(r.Path, ":") || strings.HasSuffix(r.Path, "*") {
		responses["404"] = errRef("NotFound")
	}
	if a.Conflict {
		responses["409"] = errRef("Conflict")
	}
	if a.Body != nil {
		// Every body passes the body limit; files have a limit of their own.
		responses["413"] = errRef("TooLarge")
	}
	for _, st := range a.AlsoStatus {
		responses[strconv.Itoa(st)] = success
	}
	access := r.Access
	if r.Gate.Set() {
		access = r.Gate
	}
	o := map[string]any{
		"operationId": operationID(r.Method, openAPIPath(r.Path, a.Wildcard)),
		"tags":        []string{a.Tag},
		"summary":     a.Summary,
		"responses":   responses,
		"x-access":    access.String(),
	}
	if a.Desc != "" {
		o["description"] = a.Desc
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if a.Body != nil {
		content, err := g.content(a.Body, true)
		if err != nil {
			return nil, fmt.Errorf("server: API route %s: %w", key, err)
		}
		o["requestBody"] = map[string]any{"required": true, "content": content}
	}
	if r.Access == route.Public && !r.Gate.Set() {
		o["security"] = []any{}
	}
	return o, nil
}

// content is a body's media types with their schemas.
func (g *schemas) content(b *route.Body, request bool) (map[string]any, error) {
	out := map[string]any{}
	binary := map[string]any{"type": "string", "format": "binary"}
	if b.Desc != "" {
		binary["description"] = b.Desc
	}
	for _, m := range b.Media {
		if m == "application/json" {
			out[m] = map[string]any{"schema": map[string]any{"type": "object", "description": b.Desc}}
			continue
		}
		out[m] = map[string]any{"schema": binary}
	}
	if b.IsRaw() {
		return out, nil
	}
	if err := g.define(b.Name, b.Type, request, b.Required); err != nil {
		return nil, err
	}
	s := schemaRef(b.Name)
	if b.ListKey != "" {
		s = map[string]any{"type": "object", "required": []string{b.ListKey}, "additionalProperties": false,
			"properties": map[string]any{b.ListKey: map[string]any{"type": "array", "items": schemaRef(b.Name)}}}
	}
	out["application/json"] = map[string]any{"schema": s}
	return out, nil
}

// schemas are the document's component schemas, each defined once.
type schemas struct {
	defs map[string]schemaDef
}

type schemaDef struct {
	t        reflect.Type
	request  bool
	required []string
	schema   map[string]any
}

// define adds a component. One name is one shape: a name used for two
// types, or for a request and a response, is an error.
func (g *schemas) define(name string, t reflect.Type, request bool, required []string) error {
	if name == "" || t == nil {
		return fmt.Errorf("a JSON body needs a schema name and a type")
	}
	if d, ok := g.defs[name]; ok {
		if d.t != t || d.request != request || strings.Join(d.required, ",") != strings.Join(required, ",") {
			return fmt.Errorf("schema %s is declared twice with different types or uses", name)
		}
		return nil
	}
	s := schemaFor(t, request)
	if request {
		props, _ := s["properties"].(map[string]any)
		for _, f := range required {
			p, ok := props[f].(map[string]any)
			if !ok {
				return fmt.Errorf("schema %s requires %q, which %s does not have", name, f, t)
			}
			// A required field read through a pointer is still not null.
			delete(p, "nullable")
		}
		if len(required) > 0 {
			s["required"] = required
		}
	}
	g.defs[name] = schemaDef{t: t, request: request, required: required, schema: s}
	return nil
}

func schemaRef(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// apiEnums lists the values some fields take.
var apiEnums = map[string][]string{
	"priority":       store.Priorities,
	"data_readiness": store.Readinesses,
	"precision":      append([]string{""}, store.Precisions...),
}

var (
	typeTime   = reflect.TypeOf(time.Time{})
	typeRaw    = reflect.TypeOf(json.RawMessage(nil))
	typeDetail = reflect.TypeOf(store.AlertDetail(nil)) // written as a json.RawMessage
	typeRef    = reflect.TypeOf(request.Ref{})
)

// schemaFor describes a Go type as encoding/json writes it (a response:
// every field without omitempty is always there) or reads it (a request:
// the route says which fields are required). Objects admit no other
// fields: requests are decoded strictly, and an answer with a field the
// document lacks is a description out of date.
func schemaFor(t reflect.Type, request bool) map[string]any {
	switch t {
	case typeTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case typeRaw, typeDetail:
		return map[string]any{"description": "any JSON value, or null"}
	case typeRef:
		return map[string]any{"description": "a name or an id", "oneOf": []any{
			map[string]any{"type": "string"}, map[string]any{"type": "integer", "format": "int64"}}}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := schemaFor(t.Elem(), request)
		s["nullable"] = true
		return s
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem(), request)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem(), request)}
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
		var required []string
		structProps(t, request, props, &required)
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if !request && len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}

// structProps adds t's JSON fields to props, flattening embedded structs
// (and pointers to them) the way encoding/json does.
func structProps(t reflect.Type, request bool, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				structProps(ft, request, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := schemaFor(f.Type, request)
		if format := f.Tag.Get("format"); format != "" {
			s["format"] = format
		}
		if vals, ok := apiEnums[name]; ok {
			s["enum"] = vals
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}

var pathParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

func wildcardName(name string) string {
	if name == "" {
		return "path"
	}
	return name
}

// openAPIPath writes echo's /x/:id/* as OpenAPI's /x/{id}/{path}.
func openAPIPath(p, wildcard string) string {
	p = pathParam.ReplaceAllString(p, "{$1}")
	if strings.HasSuffix(p, "*") {
		p = strings.TrimSuffix(p, "*") + "{" + wildcardName(wildcard) + "}"
	}
	return p
}

func errorResponse(desc string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{
		"application/json": map[string]any{"schema": schemaRef("Error")}}}
}

func errorSchema() map[string]any {
	return map[string]any{"type": "object", "required": []string{"error"}, "additionalProperties": false, "properties": map[string]any{
		"error": map[string]any{"type": "object", "required": []string{"code", "message"}, "additionalProperties": false, "properties": map[string]any{
			"code": map[string]any{"type": "string", "enum": []string{"invalid", "not_found", "conflict", "forbidden",
				"unauthorized", "unavailable", "too_large", "rate_limited", "internal"}},
			"message": map[string]any{"type": "string", "description": "for people, in the caller's language (?lang=en or zh-CN)"},
			"fields": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
				"description": "per-field messages of an invalid request"},
		}},
	}}
}

// operationID names an operation after its method and path:
// POST /api/v1/bookings/{id}/release is postBookingsIdRelease.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.FieldsFunc(strings.TrimPrefix(path, "/api/v1/"), func(r rune) bool {
		return r == '/' || r == '-' || r == '_' || r == '{' || r == '}' || r == '.'
	}) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
