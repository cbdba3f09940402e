package server

import (
	"net/http"
	"net/url"
	"reflect"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
)

// registerFiles adds task files: versions, diffs, rollback, and their API.
// A file's path may contain slashes, so it is the wildcard at the end of
// each route, after the action.
func (s *Server) registerFiles() {
	const (
		GET  = http.MethodGet
		POST = http.MethodPost
		PUT  = http.MethodPut
	)
	s.add(GET, "/tasks/:id/files", Viewer, s.filesPage)
	s.add(POST, "/tasks/:id/files/upload", Member, s.uploadFileForm)
	s.add(POST, "/tasks/:id/files/new", Member, s.newFileForm)
	s.add(GET, "/tasks/:id/files/show/*", Viewer, s.filePage)
	s.add(GET, "/tasks/:id/files/raw/*", Viewer, s.fileRaw)
	s.add(GET, "/tasks/:id/files/diff/*", Viewer, s.fileDiffPage)
	s.add(GET, "/tasks/:id/files/edit/*", Member, s.editFilePage)
	s.add(POST, "/tasks/:id/files/edit/*", Member, s.editFileForm)
	s.add(POST, "/tasks/:id/files/rollback/*", Member, s.rollbackFileForm)
	s.add(GET, "/bookings/:id/files", Viewer, s.bookingFilesPage)

	s.add(GET, "/api/v1/tasks/:id/files", Viewer, s.apiListFiles)
	s.add(GET, "/api/v1/tasks/:id/files/*", Viewer, s.apiGetFile)
	s.add(PUT, "/api/v1/tasks/:id/files/*", Member, s.apiPutFile)
	s.add(GET, "/api/v1/tasks/:id/versions/*", Viewer, s.apiFileVersions)
	s.add(POST, "/api/v1/tasks/:id/rollback/*", Member, s.apiRollbackFile)
	s.add(GET, "/api/v1/bookings/:id/file-versions", Viewer, s.apiBookingFileVersions)
}

// bodyLimit is the largest request body the portal reads: 12 MiB, or more
// when task files may be larger, so an upload at the file limit still
// reaches the handler, which answers over-size files with their own 413.
func (s *Server) bodyLimit() string {
	limit := int64(12 << 20)
	if need := s.cfg.MaxFileBytes + 2<<20; need > limit {
		limit = need
	}
	return strconv.FormatInt(limit>>20, 10) + "M"
}

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

// filesAPIOps documents the files' /api/v1 operations.
func filesAPIOps() []apiOp {
	const GET, PUT, POST = http.MethodGet, http.MethodPut, http.MethodPost
	pathNote := " The * at the end is the file's path, which may contain slashes (scripts/train.sh); escape each segment as usual."
	version := apiParam{"version", "integer", "version number (1 = the first); default the latest"}
	return []apiOp{
		{method: GET, path: "/api/v1/tasks/:id/files", access: Viewer, tag: "files", summary: "A task's files, each with its latest version",
			status: http.StatusOK, result: listOf("files", "TaskFile"),
			desc: "Readable by the task's team (any role) and admins; others get 404. The card-hour plan, plan/card-hours.yaml, is written by the portal whenever the task or its bookings change."},
		{method: GET, path: "/api/v1/tasks/:id/files/*", access: Viewer, tag: "files", summary: "A file's content (the latest, or ?version=)",
			query: []apiParam{version}, status: http.StatusOK, result: map[string]any{"type": "string", "format": "binary"},
			desc: "The body is the file's bytes (text/plain; charset=utf-8 for text, else application/octet-stream). Headers: X-Version (number), X-Version-Id (the object store's version id), ETag (the SHA-256)." + pathNote},
		{method: PUT, path: "/api/v1/tasks/:id/files/*", access: Member, tag: "files", summary: "Save a new version (body = the content)",
			status: http.StatusCreated, result: schemaRef("FileVersion"), conflict: true,
			desc: "Optional headers: X-Message (why, UTF-8, up to 500 characters), X-Base-Version (the version you edited: 409 if the file has moved on). " +
				"Content equal to the latest version's adds no version: 200 with the latest and unchanged=true. " +
				"413 over the size limit (CARDHOUR_MAX_FILE_MIB, default 10 MiB); 422 for an empty path, .. or . segments, control characters; " +
				"503 when object storage is unreachable, and then nothing is recorded. Writable by those who may plan for the task's team." + pathNote},
		{method: GET, path: "/api/v1/tasks/:id/versions/*", access: Viewer, tag: "files", summary: "A file's versions, newest first",
			query:  []apiParam{{"limit", "integer", "1–1000, default 1000"}, {"offset", "integer", "versions to skip"}},
			status: http.StatusOK, result: schemaRef("FileVersions"), desc: "Author, time, message, size, SHA-256, object key and version id of each version." + pathNote},
		{method: POST, path: "/api/v1/tasks/:id/rollback/*", access: Member, tag: "files", summary: "Roll back: an older version's content becomes a new latest version",
			query: []apiParam{{"version", "integer", "the version to restore (required)"}}, status: http.StatusCreated, result: schemaRef("FileVersion"), conflict: true,
			desc: "Nothing is deleted: the history gains a version restored_from the given one. X-Message optionally says why. 409 when the version is already the latest." + pathNote},
		{method: GET, path: "/api/v1/bookings/:id/file-versions", access: Viewer, tag: "files", summary: "The file versions a booking ran with",
			status: http.StatusOK, result: listOf("versions", "FileVersion"),
			desc: "For each of the task's files, the newest version created at or before the booking's start."},
	}
}

// filesAPISchemas are the component schemas of filesAPIOps.
func filesAPISchemas() map[string]reflect.Type {
	t := func(v any) reflect.Type { return reflect.TypeOf(v) }
	return map[string]reflect.Type{
		"TaskFile":     t(store.TaskFile{}),
		"FileVersion":  t(fileVersionJSON{}),
		"FileVersions": t(fileVersionsJSON{}),
	}
}
