package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/web"
)

// statusOf maps an error code to its HTTP status.
func statusOf(code errs.Code) int {
	switch code {
	case errs.Invalid:
		return http.StatusUnprocessableEntity
	case errs.NotFound:
		return http.StatusNotFound
	case errs.Conflict:
		return http.StatusConflict
	case errs.Forbidden:
		return http.StatusForbidden
	case errs.Unauthorized:
		return http.StatusUnauthorized
	case errs.Unavailable:
		return http.StatusServiceUnavailable
	case errs.TooLarge:
		return http.StatusRequestEntityTooLarge
	case errs.RateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// apiError is the JSON body of every /api/v1 error.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// describe turns any error into status, code, message and field messages in
// lang. Internal errors get a generic message; their detail goes to the log.
func describe(err error, lang string) (int, errs.Code, string, map[string]string) {
	// A coded error decides even when it wraps an echo error: the CSRF
	// check wraps echo's 400 "missing csrf token" as Forbidden auth.csrf.
	var he *echo.HTTPError
	if _, coded := errs.As(err); !coded && errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return he.Code, errs.NotFound, web.T(lang, "error.not_found"), nil
		case http.StatusMethodNotAllowed:
			return he.Code, errs.Invalid, web.T(lang, "error.method"), nil
		case http.StatusRequestEntityTooLarge:
			return he.Code, errs.TooLarge, web.T(lang, "error.too_large"), nil
		case http.StatusBadRequest:
			return he.Code, errs.Invalid, web.T(lang, "error.bad_request"), nil
		case http.StatusUnauthorized:
			return he.Code, errs.Unauthorized, web.T(lang, "auth.required"), nil
		case http.StatusForbidden:
			return he.Code, errs.Forbidden, web.T(lang, "auth.forbidden"), nil
		}
		return http.StatusInternalServerError, errs.Internal, web.T(lang, "error.internal"), nil
	}
	e, ok := errs.As(err)
	if !ok || e.Code == errs.Internal {
		return http.StatusInternalServerError, errs.Internal, web.T(lang, "error.internal"), nil
	}
	status := statusOf(e.Code)
	key := e.Key
	if key == "" {
		key = "status." + itoa(status)
	}
	var fields map[string]string
	if len(e.Fields) > 0 {
		fields = make(map[string]string, len(e.Fields))
		for f, k := range e.Fields {
			fields[f] = web.T(lang, k)
		}
	}
	return status, e.Code, web.T(lang, key, e.Args...), fields
}

// handleError is echo's one error handler: a JSON body for the API, a
// fragment for htmx, an error page for browsers.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	lang := langOf(c)
	status, code, msg, fields := describe(err, lang)
	if code == errs.Internal {
		s.log.Error("internal error", "err", err, "method", c.Request().Method, "path", c.Request().URL.Path,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	} else if code == errs.Unavailable {
		s.log.Warn("unavailable", "err", err, "path", c.Request().URL.Path)
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(status)
	case wantsJSON(c):
		werr = c.JSON(status, apiError{Error: apiErrorBody{Code: string(code), Message: msg, Fields: fields}})
	case c.Request().Header.Get("HX-Request") == "true":
		werr = s.render(c, status, web.ErrorFragment(status, msg))
	default:
		p := s.errorPage(c, code)
		werr = s.render(c, status, web.ErrorPage(p, status, msg))
	}
	if werr != nil {
		s.log.Warn("writing error response", "err", werr)
	}
}

// errorPage builds page props for an error. A page that was never routed
// (404) has not looked up its user yet; it does so now, so a logged-in user
// keeps their navigation. When the database is the problem nothing more is
// asked of it: the user shown is the one already resolved, if any.
func (s *Server) errorPage(c echo.Context, code errs.Code) web.Page {
	p := s.basePage(c)
	u := mustUser(c)
	if u == nil && code == errs.NotFound {
		u = s.optionalUser(c)
	}
	p.User = viewerOf(u)
	p.Title = p.T("app.name")
	return p
}

func wantsJSON(c echo.Context) bool {
	r := c.Request()
	if strings.HasPrefix(r.URL.Path, "/api/") {
		return true
	}
	accept := r.Header.Get(echo.HeaderAccept)
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}
