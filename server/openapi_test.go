package server_test

import (
	"cardhour/server/route"
	"cardhour/server/servertest"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var abRefPattern = regexp.MustCompile(`"#/components/(schemas|responses)/([A-Za-z0-9]+)"`)

// TestOpenAPIDescribesEveryRoute: the document parses, is OpenAPI 3.0, and
// has every /api/v1 route of the table with its access level — and nothing
// the table lacks. Every $ref resolves.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	r := e.Client().Get("/api/v1/openapi.json")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d", r.StatusCode)
	}
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas         map[string]any `json:"schemas"`
			Responses       map[string]any `json:"responses"`
			SecuritySchemes map[string]struct {
				Type   string `json:"type"`
				Scheme string `json:"scheme"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Errorf("openapi %q, want 3.0.x", doc.OpenAPI)
	}
	if s := doc.Components.SecuritySchemes["bearerAuth"]; s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("bearerAuth security scheme: %+v", s)
	}
	if doc.Components.Schemas["Error"] == nil {
		t.Error("no Error schema")
	}
	param := strings.NewReplacer(":id", "{id}", ":user_id", "{user_id}", "*", "{path}")
	routed := map[string]bool{}
	for _, rt := range e.Srv.Routes() {
		if !strings.HasPrefix(rt.Path, "/api/v1/") {
			continue
		}
		if strings.Contains(param.Replace(rt.Path), ":") {
			t.Errorf("%s %s: a path parameter this test does not know; add it to the replacer", rt.Method, rt.Path)
		}
		p, m := param.Replace(rt.Path), strings.ToLower(rt.Method)
		routed[m+" "+p] = true
		op := doc.Paths[p][m]
		if op == nil {
			t.Errorf("%s %s is in the route table but not in /api/v1/openapi.json: give its route entry an API description", rt.Method, rt.Path)
			continue
		}
		access := rt.Access
		if rt.Gate.Set() {
			access = rt.Gate
		}
		if op["x-access"] != access.String() {
			t.Errorf("%s %s: documented access %v, the route table says %s", rt.Method, rt.Path, op["x-access"], rt.Access)
		}
		responses, _ := op["responses"].(map[string]any)
		if len(responses) < 2 && rt.Access != route.Public {
			t.Errorf("%s %s: documents %d responses, want success and errors", rt.Method, rt.Path, len(responses))
		}
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			if !routed[m+" "+p] {
				t.Errorf("the document has %s %s, which the route table lacks", strings.ToUpper(m), p)
			}
		}
	}
	for _, ref := range abRefPattern.FindAllStringSubmatch(string(r.Body), -1) {
		kind, name := ref[1], ref[2]
		var set map[string]any
		switch kind {
		case "schemas":
			set = doc.Components.Schemas
		case "responses":
			set = doc.Components.Responses
		}
		if set[name] == nil {
			t.Errorf("$ref #/components/%s/%s does not resolve", kind, name)
		}
	}
}
