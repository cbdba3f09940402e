package files

import (
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
)

// filePathParam is the file path at the end of the URL. Echo matches on
// the escaped path when the request needed escaping, and then hands out the
// escaped form.
func filePathParam(c echo.Context) (string, error) {
	p := c.Param("*")
	if c.Request().URL.RawPath != "" {
		u, err := url.PathUnescape(p)
		if err != nil {
			return "", &errs.Error{Code: errs.Invalid, Op: "server.filePathParam", Key: "files.path_control", Fields: map[string]string{"path": "files.path_control"}}
		}
		p = u
	}
	if err := store.ValidateFilePath(p); err != nil {
		return "", err
	}
	return p, nil
}

// versionParam reads ?version= (or another name): a version number, 0 when
// absent.
func versionParam(c echo.Context, name string) (int, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		raw = c.FormValue(name)
	}
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, &errs.Error{Code: errs.Invalid, Op: "server.versionParam", Key: "files.version_invalid", Fields: map[string]string{name: "files.version_invalid"}}
	}
	return n, nil
}
