// Package route is the shape of the portal's one route table: for every
// route its method, path, who may use it, its handler and — for the JSON
// API — its description, from which the OpenAPI document is generated.
// Areas list their routes in these terms; the kernel (package server)
// registers them and builds the document, so a route cannot be served
// without an access level or documented apart from what it is.
package route

import (
	"net/http"
	"reflect"

	"github.com/labstack/echo/v4"

	"cardhour/store"
)

// Access is who may use a route. The zero value is refused when the table
// is built, so a route cannot be left unprotected by accident.
type Access int

const (
	accessUnset Access = iota
	// Public routes answer anyone: login, health, static assets.
	Public
	// Viewer routes need any logged-in user.
	Viewer
	// Member routes need a member or above (booking, recording output).
	Member
	// Manager routes need a manager or above (approvals, quotas, reports).
	Manager
	// Admin routes need an admin (inventory, people, tokens of others).
	Admin
)

func (a Access) String() string {
	switch a {
	case Public:
		return "public"
	case Viewer:
		return "viewer"
	case Member:
		return "member"
	case Manager:
		return "manager"
	case Admin:
		return "admin"
	}
	return "unset"
}

// Rank is the site-role rank (store.RoleRank) an access level needs; 0 for
// public routes and for the unset level.
func (a Access) Rank() int {
	switch a {
	case Viewer:
		return store.RoleRank(store.RoleViewer)
	case Member:
		return store.RoleRank(store.RoleMember)
	case Manager:
		return store.RoleRank(store.RoleManager)
	case Admin:
		return store.RoleRank(store.RoleAdmin)
	}
	return 0
}

// Set reports whether a level was chosen.
func (a Access) Set() bool { return a != accessUnset }

// Route is one entry of the route table.
type Route struct {
	Method  string
	Path    string // echo's syntax: /tasks/:id, a trailing * for a rest of path
	Access  Access
	Handler echo.HandlerFunc
	// API describes a /api/v1 operation; nil for pages and operations
	// endpoints. Every /api/v1 route must have one.
	API *API
	// Gate is set on a Public route that checks a credential of its own
	// kind (a board or agent token) and otherwise admits users of this
	// level; the route × role test holds the handler to it, and the API
	// description lists the refusals it answers.
	Gate Access
}

// Methods, so that a table reads as a column of them.
const (
	GET    = http.MethodGet
	POST   = http.MethodPost
	PUT    = http.MethodPut
	PATCH  = http.MethodPatch
	DELETE = http.MethodDelete
)

// New is a route without an API description: a page, a form post, an
// operations endpoint.
func New(method, path string, access Access, h echo.HandlerFunc) Route {
	return Route{Method: method, Path: path, Access: access, Handler: h}
}

// Gated is a Public route that admits its own kind of token, and users
// from the level gate up.
func Gated(method, path string, gate Access, h echo.HandlerFunc) Route {
	return Route{Method: method, Path: path, Access: Public, Handler: h, Gate: gate}
}

// GatedOp is a Public API operation that admits its own kind of token, and
// users from the level gate up.
func GatedOp(method, path string, gate Access, h echo.HandlerFunc, api API) Route {
	return Route{Method: method, Path: path, Access: Public, Handler: h, API: &api, Gate: gate}
}

// Op is an API operation with its description.
func Op(method, path string, access Access, h echo.HandlerFunc, api API) Route {
	return Route{Method: method, Path: path, Access: access, Handler: h, API: &api}
}

// API is the description of one API operation.
type API struct {
	Tag     string
	Summary string
	Desc    string
	// Wildcard names the parameter that a trailing * in the path stands
	// for (a file's path, which may contain slashes).
	Wildcard string
	Query    []Param
	Body     *Body // the request body; nil for none
	Status   int   // the success status
	Result   *Body // the success body; nil for none
	// Errors beyond those the kernel derives (401/403/503 for non-public or
	// gated routes, 404 for paths with parameters, 422 for operations with
	// input, 413 for those with a body).
	Conflict bool // may answer 409
	// AlsoStatus are further success statuses answered with the same body
	// (200 for a save that changed nothing, beside 201 for a new version).
	AlsoStatus []int
}

// Param is a query parameter.
type Param struct {
	Name string
	Kind string // string, integer, boolean, number, date-time
	Desc string
}

// Body is a request or response body: JSON of a Go type (the schema is
// read from the type, so it cannot drift from what the handler encodes), a
// list envelope {"key": [type]}, or raw bytes of some media types.
type Body struct {
	Name     string       // the component schema's name; "" for raw bodies
	Type     reflect.Type // the Go type encoded or decoded
	ListKey  string       // when set: the body is {"<ListKey>": [Type]}
	Required []string     // request bodies: the fields that must be present
	// Media are the media types of a raw body, or the further media types a
	// JSON answer may also take (report exports: text/csv, XLSX).
	Media []string
	// Desc says what a raw body holds.
	Desc string
}

// JSON is a body of v's type under the component name.
func JSON(name string, v any, required ...string) *Body {
	return &Body{Name: name, Type: reflect.TypeOf(v), Required: required}
}

// List is the envelope list answers use: {"key": [name]}.
func List(key, name string, v any) *Body {
	return &Body{Name: name, Type: reflect.TypeOf(v), ListKey: key}
}

// Raw is a body of bytes in one of media.
func Raw(desc string, media ...string) *Body { return &Body{Desc: desc, Media: media} }

// Or adds media types a JSON answer may take instead (chosen by a query
// parameter such as format=csv).
func (b *Body) Or(media ...string) *Body {
	out := *b
	out.Media = append(append([]string(nil), b.Media...), media...)
	return &out
}

// IsRaw reports whether the body is bytes rather than JSON.
func (b *Body) IsRaw() bool { return b.Type == nil }
