package server

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/route"
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
	pathNote := " The {path} at the end is the file's path, which may contain slashes (scripts/train.sh); escape each segment as usual."
	version := route.Param{Name: "version", Kind: "integer", Desc: "version number (1 = the first); default the latest"}
	s.add(GET, "/tasks/:id/files", route.Viewer, s.filesPage)
	s.add(POST, "/tasks/:id/files/upload", route.Member, s.uploadFileForm)
	s.add(POST, "/tasks/:id/files/new", route.Member, s.newFileForm)
	s.add(GET, "/tasks/:id/files/show/*", route.Viewer, s.filePage)
	s.add(GET, "/tasks/:id/files/raw/*", route.Viewer, s.fileRaw)
	s.add(GET, "/tasks/:id/files/diff/*", route.Viewer, s.fileDiffPage)
	s.add(GET, "/tasks/:id/files/edit/*", route.Member, s.editFilePage)
	s.add(POST, "/tasks/:id/files/edit/*", route.Member, s.editFileForm)
	s.add(POST, "/tasks/:id/files/rollback/*", route.Member, s.rollbackFileForm)
	s.add(GET, "/bookings/:id/files", route.Viewer, s.bookingFilesPage)

	s.op(GET, "/api/v1/tasks/:id/files", route.Viewer, s.apiListFiles, route.API{Tag: "files", Summary: "A task's files, each with its latest version", Status: http.StatusOK, Result: route.List("files", "TaskFile", store.TaskFile{}), Desc: "Readable by the task's team (any role) and admins; others get 404. The card-hour plan, plan/card-hours.yaml, is written by the portal whenever the task or its bookings change."})
	s.op(GET, "/api/v1/tasks/:id/files/*", route.Viewer, s.apiGetFile, route.API{Tag: "files", Summary: "A file's content (the latest, or ?version=)", Query: []route.Param{version}, Status: http.StatusOK, Result: route.Raw("the file's bytes", "text/plain", "application/octet-stream"), Desc: "The body is the file's bytes (text/plain; charset=utf-8 for text, else application/octet-stream). Headers: X-Version (number), X-Version-Id (the object store's version id), ETag (the SHA-256)." + pathNote})
	s.op(PUT, "/api/v1/tasks/:id/files/*", route.Member, s.apiPutFile, route.API{Tag: "files", Summary: "Save a new version (body = the content)", Status: http.StatusCreated, AlsoStatus: []int{http.StatusOK}, Body: route.Raw("the file's content", "application/octet-stream"), Result: route.JSON("FileVersion", fileVersionJSON{}), Conflict: true, Desc: "Optional headers: X-Message (why, UTF-8, up to 500 characters), X-Base-Version (the version you edited: 409 if the file has moved on). " +
		"Content equal to the latest version's adds no version: 200 with the latest and unchanged=true. " +
		"413 over the size limit (CARDHOUR_MAX_FILE_MIB, default 10 MiB); 422 for an empty path, .. or . segments, control characters; " +
		"503 when object storage is unreachable, and then nothing is recorded. Writable by those who may plan for the task's team." + pathNote})
	s.op(GET, "/api/v1/tasks/:id/versions/*", route.Viewer, s.apiFileVersions, route.API{Tag: "files", Summary: "A file's versions, newest first", Query: []route.Param{{Name: "limit", Kind: "integer", Desc: "1–1000, default 1000"}, {Name: "offset", Kind: "integer", Desc: "versions to skip"}}, Status: http.StatusOK, Result: route.JSON("FileVersions", fileVersionsJSON{}), Desc: "Author, time, message, size, SHA-256, object key and version id of each version." + pathNote})
	s.op(POST, "/api/v1/tasks/:id/rollback/*", route.Member, s.apiRollbackFile, route.API{Tag: "files", Summary: "Roll back: an older version's content becomes a new latest version", Query: []route.Param{{Name: "version", Kind: "integer", Desc: "the version to restore (required)"}}, Status: http.StatusCreated, Result: route.JSON("FileVersion", fileVersionJSON{}), Conflict: true, Desc: "Nothing is deleted: the history gains a version restored_from the given one. X-Message optionally says why. 409 when the version is already the latest." + pathNote})
	s.op(GET, "/api/v1/bookings/:id/file-versions", route.Viewer, s.apiBookingFileVersions, route.API{Tag: "files", Summary: "The file versions a booking ran with", Status: http.StatusOK, Result: route.List("versions", "FileVersion", fileVersionJSON{}), Desc: "For each of the task's files, the newest version created at or before the booking's start."})
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
