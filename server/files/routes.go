package files

import (
	"cardhour/server/route"
	"cardhour/store"
	"net/http"
)

// Routes are the task files' pages and API: versions, diffs, rollback, and the versions a booking ran with.
func (a *Area) Routes() []route.Route {
	pathNote := " The {path} at the end is the file's path, which may contain slashes (scripts/train.sh); escape each segment as usual."
	version := route.Param{Name: "version", Kind: "integer", Desc: "version number (1 = the first); default the latest"}
	return []route.Route{
		route.New(route.GET, "/tasks/:id/files", route.Viewer, a.filesPage),
		route.New(route.POST, "/tasks/:id/files/upload", route.Member, a.uploadFileForm),
		route.New(route.POST, "/tasks/:id/files/new", route.Member, a.newFileForm),
		route.New(route.GET, "/tasks/:id/files/show/*", route.Viewer, a.filePage),
		route.New(route.GET, "/tasks/:id/files/raw/*", route.Viewer, a.fileRaw),
		route.New(route.GET, "/tasks/:id/files/diff/*", route.Viewer, a.fileDiffPage),
		route.New(route.GET, "/tasks/:id/files/edit/*", route.Member, a.editFilePage),
		route.New(route.POST, "/tasks/:id/files/edit/*", route.Member, a.editFileForm),
		route.New(route.POST, "/tasks/:id/files/rollback/*", route.Member, a.rollbackFileForm),
		route.New(route.GET, "/bookings/:id/files", route.Viewer, a.bookingFilesPage),

		route.Op(route.GET, "/api/v1/tasks/:id/files", route.Viewer, a.apiListFiles, route.API{
			Tag:     "files",
			Summary: "A task's files, each with its latest version",
			Status:  http.StatusOK,
			Result:  route.List("files", "TaskFile", store.TaskFile{}),
			Desc:    "Readable by the task's team (any role) and admins; others get 404. The card-hour plan, plan/card-hours.yaml, is written by the portal whenever the task or its bookings change.",
		}),
		route.Op(route.GET, "/api/v1/tasks/:id/files/*", route.Viewer, a.apiGetFile, route.API{
			Tag:     "files",
			Summary: "A file's content (the latest, or ?version=)",
			Query:   []route.Param{version},
			Status:  http.StatusOK,
			Result:  route.Raw("the file's bytes", "text/plain", "application/octet-stream"),
			Desc:    "The body is the file's bytes (text/plain; charset=utf-8 for text, else application/octet-stream). Headers: X-Version (number), X-Version-Id (the object store's version id), ETag (the SHA-256)." + pathNote,
		}),
		route.Op(route.PUT, "/api/v1/tasks/:id/files/*", route.Member, a.apiPutFile, route.API{
			Tag:        "files",
			Summary:    "Save a new version (body = the content)",
			Status:     http.StatusCreated,
			AlsoStatus: []int{http.StatusOK},
			Body:       route.Raw("the file's content", "application/octet-stream"),
			Result:     route.JSON("FileVersion", fileVersionJSON{}),
			Conflict:   true,
			Desc: "Optional headers: X-Message (why, UTF-8, up to 500 characters), X-Base-Version (the version you edited: 409 if the file has moved on). " +
				"Content equal to the latest version's adds no version: 200 with the latest and unchanged=true. " +
				"413 over the size limit (CARDHOUR_MAX_FILE_MIB, default 10 MiB); 422 for an empty path, .. or . segments, control characters; " +
				"503 when object storage is unreachable, and then nothing is recorded. Writable by those who may plan for the task's team." + pathNote,
		}),
		route.Op(route.GET, "/api/v1/tasks/:id/versions/*", route.Viewer, a.apiFileVersions, route.API{
			Tag:     "files",
			Summary: "A file's versions, newest first",
			Query:   []route.Param{{Name: "limit", Kind: "integer", Desc: "1–1000, default 1000"}, {Name: "offset", Kind: "integer", Desc: "versions to skip"}},
			Status:  http.StatusOK,
			Result:  route.JSON("FileVersions", fileVersionsJSON{}),
			Desc:    "Author, time, message, size, SHA-256, object key and version id of each version." + pathNote,
		}),
		route.Op(route.POST, "/api/v1/tasks/:id/rollback/*", route.Member, a.apiRollbackFile, route.API{
			Tag:      "files",
			Summary:  "Roll back: an older version's content becomes a new latest version",
			Query:    []route.Param{{Name: "version", Kind: "integer", Desc: "the version to restore (required)"}},
			Status:   http.StatusCreated,
			Result:   route.JSON("FileVersion", fileVersionJSON{}),
			Conflict: true,
			Desc:     "Nothing is deleted: the history gains a version restored_from the given one. X-Message optionally says why. 409 when the version is already the latest." + pathNote,
		}),
		route.Op(route.GET, "/api/v1/bookings/:id/file-versions", route.Viewer, a.apiBookingFileVersions, route.API{
			Tag:     "files",
			Summary: "The file versions a booking ran with",
			Status:  http.StatusOK,
			Result:  route.List("versions", "FileVersion", fileVersionJSON{}),
			Desc:    "For each of the task's files, the newest version created at or before the booking's start.",
		}),
	}
}
