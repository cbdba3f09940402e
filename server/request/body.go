package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
)

// DecodeJSON reads a JSON body strictly: unknown fields and trailing data
// are errors, so a typo in a field name is reported instead of ignored.
func DecodeJSON(c echo.Context, v any) error {
	const op = "request.DecodeJSON"
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

// PathID reads a numeric path parameter; anything else is not found.
func PathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, errs.E(errs.NotFound, "request.PathID", "error.id")
	}
	return id, nil
}
