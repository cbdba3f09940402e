package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/web"
)

const flashCookie = "cardhour_flash"

// render writes a templ component as the response. It renders into a
// buffer first so a failing component gives an error page, not half a page.
func (s *Server) render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return errs.Internalf("server.render", "render: %w", err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// basePage fills what every page needs without touching the database.
func (s *Server) basePage(c echo.Context) web.Page {
	csrf, _ := c.Get(ctxCSRF).(string)
	return web.Page{
		Lang:    langOf(c),
		CSRF:    csrf,
		Path:    c.Request().URL.RequestURI(),
		TZ:      s.cfg.TZ,
		Version: s.version,
	}
}

// page builds the props of a page titled by titleKey in the nav section nav,
// taking any flash message left by the previous redirect.
func (s *Server) page(c echo.Context, titleKey, nav string) web.Page {
	p := s.basePage(c)
	p.Title = p.T(titleKey)
	p.Nav = nav
	p.User = viewerOf(mustUser(c))
	if ck, err := c.Cookie(flashCookie); err == nil && ck.Value != "" {
		if msg, err := url.QueryUnescape(ck.Value); err == nil {
			p.Flash = msg
		}
		c.SetCookie(&http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	return p
}

func viewerOf(u *store.User) *web.Viewer {
	if u == nil {
		return nil
	}
	return &web.Viewer{ID: u.ID, Username: u.Username, Name: u.Name(), Role: u.Role}
}

// redirectWithFlash sends the browser on after a POST with a message for
// the next page (post/redirect/get, so a reload does not resubmit).
func (s *Server) redirectWithFlash(c echo.Context, to, msg string) error {
	c.SetCookie(&http.Cookie{Name: flashCookie, Value: url.QueryEscape(msg), Path: "/", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(c)})
	return c.Redirect(http.StatusSeeOther, to)
}

// formOf copies the posted values of fields into a Form.
func formOf(c echo.Context, fields ...string) web.Form {
	f := web.NewForm()
	for _, k := range fields {
		f.Values[k] = c.FormValue(k)
	}
	return f
}

// formFailed puts a rejected input's messages onto f. It reports false for
// errors that are not about the input, which go to the error handler.
func formFailed(lang string, err error, f *web.Form) bool {
	e, ok := errs.As(err)
	if !ok || (e.Code != errs.Invalid && e.Code != errs.Conflict) {
		return false
	}
	_, _, msg, fields := describe(err, lang)
	for k, v := range fields {
		f.Errors[k] = v
	}
	f.Error = msg
	if len(fields) > 0 && e.Code == errs.Invalid {
		f.Error = web.T(lang, "form.has_errors")
	}
	return true
}

// decodeJSON reads a JSON body strictly: unknown fields and trailing data
// are errors, so a typo in a field name is reported instead of ignored.
func decodeJSON(c echo.Context, v any) error {
	const op = "server.decodeJSON"
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errs.E(errs.TooLarge, op, "error.too_large")
		}
		return errs.Wrap(errs.Invalid, op, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "error.bad_json", Args: []any{err.Error()}, Err: err}
	}
	if dec.More() {
		return errs.E(errs.Invalid, op, "error.bad_json", "trailing data")
	}
	return nil
}

// pathID reads a numeric :id.
func pathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, errs.E(errs.NotFound, "server.pathID", "error.id")
	}
	return id, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
