package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/web"
)

// handleError is echo's one error handler: a JSON body for the API, a
// fragment for htmx, an error page for browsers.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	lang := request.Lang(c)
	status, code, msg, fields := response.Describe(err, lang)
	if code == errs.Internal {
		s.log.Error("internal error", "err", err, "method", c.Request().Method, "path", c.Request().URL.Path,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	} else if code == errs.Unavailable {
		s.refusals.refused(err, c.Request().URL.Path)
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(status)
	case wantsJSON(c):
		werr = c.JSON(status, response.APIError{Error: response.APIErrorBody{Code: string(code), Message: msg, Fields: fields}})
	case c.Request().Header.Get("HX-Request") == "true":
		werr = response.Render(c, status, web.ErrorFragment(status, msg))
	default:
		werr = response.Render(c, status, web.ErrorPage(s.errorPage(c, code), status, msg))
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
	p := s.pages.Base(c)
	u := request.User(c)
	if u == nil && code == errs.NotFound {
		u = request.OptionalUser(c)
	}
	p.User = response.Viewer(u)
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
