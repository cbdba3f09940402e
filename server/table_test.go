package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"cardhour/server/route"
)

func okHandler(c echo.Context) error { return c.NoContent(http.StatusOK) }

// TestTableRulesRefuseMistakes: the table refuses a route without an
// access level, an API route without its description, a description on a
// page, a gate on a route that is not Public, a route twice, and the
// document refuses one schema name for two shapes.
func TestTableRulesRefuseMistakes(t *testing.T) {
	t.Parallel()
	api := route.API{Tag: "t", Summary: "s", Status: http.StatusOK, Result: route.JSON("Thing", struct {
		A int `json:"a"`
	}{})}
	for _, c := range []struct {
		name   string
		routes []route.Route
		want   string
	}{
		{"no access", []route.Route{{Method: route.GET, Path: "/x", Handler: okHandler}}, "declares no access"},
		{"API without description", []route.Route{route.New(route.GET, "/api/v1/x", route.Viewer, okHandler)}, "has no description"},
		{"page with a description", []route.Route{route.Op(route.GET, "/x", route.Viewer, okHandler, api)}, "is not under /api/v1"},
		{"gate on a non-public route", []route.Route{{Method: route.GET, Path: "/x", Access: route.Viewer, Gate: route.Admin, Handler: okHandler}}, "not Public"},
		{"twice", []route.Route{route.New(route.GET, "/x", route.Viewer, okHandler), route.New(route.GET, "/x", route.Admin, okHandler)}, "registered twice"},
		{"no handler", []route.Route{route.New(route.GET, "/x", route.Viewer, nil)}, "no handler"},
	} {
		s := &Server{echo: echo.New()}
		err := s.register(c.routes)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: register said %v, want an error with %q", c.name, err, c.want)
		}
	}

	other := api
	other.Result = route.JSON("Thing", struct {
		B string `json:"b"`
	}{})
	_, err := buildOpenAPI([]route.Route{
		route.Op(route.GET, "/api/v1/a", route.Viewer, okHandler, api),
		route.Op(route.GET, "/api/v1/b", route.Viewer, okHandler, other),
	})
	if err == nil || !strings.Contains(err.Error(), "schema Thing is declared twice") {
		t.Errorf("one schema name for two types: %v", err)
	}
	noStatus := api
	noStatus.Status = 0
	if _, err := buildOpenAPI([]route.Route{route.Op(route.GET, "/api/v1/a", route.Viewer, okHandler, noStatus)}); err == nil {
		t.Error("an operation without a success status was documented")
	}
	missing := route.API{Tag: "t", Summary: "s", Status: http.StatusCreated, Body: route.JSON("In", struct {
		A int `json:"a"`
	}{}, "b")}
	if _, err := buildOpenAPI([]route.Route{route.Op(route.POST, "/api/v1/a", route.Member, okHandler, missing)}); err == nil || !strings.Contains(err.Error(), `requires "b"`) {
		t.Errorf("a required field the type lacks: %v", err)
	}
}
