package response

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/web"
)

// Status maps an error code to its HTTP status.
func Status(code errs.Code) int {
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

// StatusOf is the HTTP status of any error.
func StatusOf(err error) int { return Status(errs.CodeOf(err)) }

// APIError is the JSON body of every /api/v1 error.
type APIError struct {
	Error APIErrorBody `json:"error"`
}

// APIErrorBody is the inside of an APIError.
type APIErrorBody struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// Describe turns any error into status, code, message and field messages
// in lang. Internal errors get a generic message; their detail goes to the
// log.
func Describe(err error, lang string) (int, errs.Code, string, map[string]string) {
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
	status := Status(e.Code)
	key := e.Key
	if key == "" {
		key = "status." + strconv.Itoa(status)
	}
	var fields map[string]string
	if len(e.Fields) > 0 {
		fields = make(map[string]string, len(e.Fields))
		for f, k := range e.Fields {
			// A field that carries the headline's own message carries its
			// arguments too ("at most 64 hosts", the name refused).
			switch args, ok := e.FieldArgs[f]; {
			case ok && len(args) > 0:
				fields[f] = web.T(lang, k, args...)
			case k == e.Key:
				fields[f] = web.T(lang, k, e.Args...)
			default:
				fields[f] = web.T(lang, k)
			}
		}
	}
	return status, e.Code, web.T(lang, key, e.Args...), fields
}

// Refusal is the message of an error that refuses the input or the state
// (invalid, conflict), for a flash or a form; ok is false for any other
// error, which goes to the error handler.
func Refusal(lang string, err error) (msg string, ok bool) {
	e, coded := errs.As(err)
	if !coded || (e.Code != errs.Conflict && e.Code != errs.Invalid) {
		return "", false
	}
	_, _, msg, _ = Describe(err, lang)
	return msg, true
}

// FormRefused is FormFailed for forms whose action may also be refused
// outright (forbidden: not the user's team to manage): that refusal is
// the form's headline instead of an error page.
func FormRefused(lang string, err error, f *web.Form) bool {
	if FormFailed(lang, err, f) {
		return true
	}
	if !errs.Is(err, errs.Forbidden) {
		return false
	}
	_, _, f.Error, _ = Describe(err, lang)
	return true
}

// FormFailed puts a rejected input's messages onto f. It reports false for
// errors that are not about the input, which go to the error handler.
func FormFailed(lang string, err error, f *web.Form) bool {
	e, ok := errs.As(err)
	if !ok || (e.Code != errs.Invalid && e.Code != errs.Conflict) {
		return false
	}
	_, _, msg, fields := Describe(err, lang)
	for k, v := range fields {
		f.Errors[k] = v
	}
	f.Error = msg
	if len(fields) > 0 && e.Code == errs.Invalid {
		f.Error = web.T(lang, "form.has_errors")
	}
	return true
}
