package files

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/scope"
	"cardhour/store"
)

// fileVersionJSON is a version in the API; unchanged is true when a save
// found the content already latest and added nothing.
type fileVersionJSON struct {
	store.FileVersion
	Unchanged bool `json:"unchanged,omitempty"`
}

// fileVersionsJSON is GET /api/v1/tasks/{id}/versions/{path}.
type fileVersionsJSON struct {
	Path     string              `json:"path"`
	Total    int64               `json:"total"`
	Versions []store.FileVersion `json:"versions"`
}

// apiTaskFile reads the task id and file path of an API request. Another
// team's task is not found before any header or parameter is judged, so a
// refused one cannot tell that the task exists.
func (a *Area) apiTaskFile(c echo.Context) (int64, string, error) {
	id, err := scope.TaskID(c, a.Store)
	if err != nil {
		return 0, "", err
	}
	p, err := filePathParam(c)
	return id, p, err
}

// messageHeader reads X-Message: UTF-8, as curl and most clients send it.
func messageHeader(c echo.Context) (string, error) {
	m := c.Request().Header.Get("X-Message")
	if !utf8.ValidString(m) {
		return "", &errs.Error{Code: errs.Invalid, Op: "server.messageHeader", Key: "files.message_control", Fields: map[string]string{"message": "files.message_control"}}
	}
	return m, nil
}

func (a *Area) apiListFiles(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	fs, err := a.Store.FindTaskFiles(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if fs == nil {
		fs = []store.TaskFile{}
	}
	return c.JSON(http.StatusOK, map[string]any{"files": fs})
}

func (a *Area) apiGetFile(c echo.Context) error {
	id, p, err := a.apiTaskFile(c)
	if err != nil {
		return err
	}
	v, data, err := a.fileVersionData(c, id, p)
	if err != nil {
		return err
	}
	return sendFile(c, v, data, false)
}

// fileVersionData reads the version of a task's file that ?version= names
// (the latest when absent), and its bytes.
func (a *Area) fileVersionData(c echo.Context, taskID int64, path string) (*store.FileVersion, []byte, error) {
	no, err := versionParam(c, "version")
	if err != nil {
		return nil, nil, err
	}
	ctx := c.Request().Context()
	v, err := a.Store.FindFileVersion(ctx, taskID, path, no)
	if err != nil {
		return nil, nil, err
	}
	data, err := a.files.read(ctx, v)
	if err != nil {
		return nil, nil, err
	}
	return v, data, nil
}

// sendFile answers with a version's bytes and its identity in headers.
// Downloads are attachments, so a browser never renders uploaded HTML as a
// page of the portal.
func sendFile(c echo.Context, v *store.FileVersion, data []byte, attachment bool) error {
	h := c.Response().Header()
	h.Set("X-Version", strconv.Itoa(v.No))
	h.Set("X-Version-Id", v.VersionID)
	h.Set("ETag", `"`+v.SHA256+`"`)
	h.Set("Cache-Control", "private, no-cache")
	ctype := "application/octet-stream"
	if isText(data) {
		ctype = "text/plain; charset=utf-8"
	}
	if attachment {
		name := v.Path[strings.LastIndex(v.Path, "/")+1:]
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		h.Set("Content-Security-Policy", "sandbox")
	}
	return c.Blob(http.StatusOK, ctype, data)
}

func (a *Area) apiPutFile(c echo.Context) error {
	const op = "server.apiPutFile"
	id, p, err := a.apiTaskFile(c)
	if err != nil {
		return err
	}
	msg, err := messageHeader(c)
	if err != nil {
		return err
	}
	base := 0
	if raw := c.Request().Header.Get("X-Base-Version"); raw != "" {
		if base, err = strconv.Atoi(raw); err != nil || base < 1 {
			return &errs.Error{Code: errs.Invalid, Op: op, Key: "files.version_invalid", Fields: map[string]string{"X-Base-Version": "files.version_invalid"}}
		}
	}
	ctx := c.Request().Context()
	// Permission and path first: a refused write reads no body and stores
	// nothing.
	if err := a.Store.CheckFileWrite(ctx, id, p); err != nil {
		return err
	}
	if c.Request().ContentLength > a.files.maxBytes {
		return tooLarge(op, a.files.maxBytes)
	}
	data, err := readLimited(op, c.Request().Body, a.files.maxBytes)
	if err != nil {
		return err
	}
	res, err := a.files.save(ctx, saveRequest{TaskID: id, Path: p, Data: data, Message: msg, Source: store.FileSourceAPI, BaseNo: base, checkedWrite: true})
	if err != nil {
		return err
	}
	return versionResult(c, res)
}

// versionResult answers a save: 201 with the new version, or 200 with the
// latest when nothing changed.
func versionResult(c echo.Context, res saveResult) error {
	if !res.Created {
		return c.JSON(http.StatusOK, fileVersionJSON{FileVersion: *res.Version, Unchanged: true})
	}
	return c.JSON(http.StatusCreated, fileVersionJSON{FileVersion: *res.Version})
}

func (a *Area) apiFileVersions(c echo.Context) error {
	id, p, err := a.apiTaskFile(c)
	if err != nil {
		return err
	}
	v := errs.NewValidation("server.apiFileVersions")
	f := store.FileVersionFilter{}
	if raw := c.QueryParam("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		v.Check(err == nil && n >= 1 && n <= 1000, "limit", "api.limit_range")
		f.Limit = n
	}
	if raw := c.QueryParam("offset"); raw != "" {
		n, err := strconv.Atoi(raw)
		v.Check(err == nil && n >= 0, "offset", "files.offset_invalid")
		f.Offset = n
	}
	if err := v.Err(); err != nil {
		return err
	}
	vs, total, err := a.Store.FindFileVersions(c.Request().Context(), id, p, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, fileVersionsJSON{Path: p, Total: total, Versions: vs})
}

func (a *Area) apiRollbackFile(c echo.Context) error {
	id, p, err := a.apiTaskFile(c)
	if err != nil {
		return err
	}
	no, err := versionParam(c, "version")
	if err != nil {
		return err
	}
	if no == 0 {
		return &errs.Error{Code: errs.Invalid, Op: "server.apiRollbackFile", Key: "files.version_required", Fields: map[string]string{"version": "files.version_required"}}
	}
	msg, err := messageHeader(c)
	if err != nil {
		return err
	}
	res, err := a.files.rollback(c.Request().Context(), id, p, no, msg)
	if err != nil {
		return err
	}
	return versionResult(c, res)
}

func (a *Area) apiBookingFileVersions(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	vs, err := a.Store.FindBookingFileVersions(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"versions": vs})
}
