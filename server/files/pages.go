package files

import (
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

// versionsPerPage is how many versions a file page lists at once.
const versionsPerPage = 50

// fileFormFailed is formFailed for file forms, which also show an
// over-size upload next to its input.
func fileFormFailed(lang string, err error, f *web.Form) bool {
	if e, ok := errs.As(err); ok && e.Code == errs.TooLarge {
		_, _, msg, fields := response.Describe(err, lang)
		for k, v := range fields {
			f.Errors[k] = v
		}
		f.Error = msg
		return true
	}
	return response.FormFailed(lang, err, f)
}

// filesTask loads the task of a files page.
func (a *Area) filesTask(c echo.Context) (*store.Task, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	return a.Store.FindTaskByID(c.Request().Context(), id)
}

func (a *Area) filesPage(c echo.Context) error {
	t, err := a.filesTask(c)
	if err != nil {
		return err
	}
	return a.renderFiles(c, http.StatusOK, t, web.NewForm(), web.NewForm())
}

func (a *Area) renderFiles(c echo.Context, status int, t *store.Task, upload, newFile web.Form) error {
	ctx := c.Request().Context()
	fs, err := a.Store.FindTaskFiles(ctx, t.ID)
	if err != nil {
		return err
	}
	canWrite, err := a.Store.MayWriteFiles(ctx, t.ID)
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	d := web.FilesProps{TaskID: t.ID, TaskName: t.Name, TeamName: teams[t.TeamID], CanWrite: canWrite,
		MaxMiB: mib(a.files.maxBytes), Upload: upload, NewFile: newFile, PlanPath: store.PlanPath}
	for _, f := range fs {
		row := web.FileRow{Path: f.Path, Versions: f.LatestNo, Size: f.LatestSize, UpdatedAt: f.UpdatedAt, Generated: f.Generated()}
		if f.Latest != nil {
			row.Author, row.Message, row.Source = f.Latest.AuthorName, f.Latest.Message, f.Latest.Source
		}
		d.Files = append(d.Files, row)
	}
	return response.Render(c, status, web.TaskFilesPage(a.Pages.Page(c, "files.title", "booking"), d))
}

// savedFlash says what a save did.
func savedFlash(lang string, res saveResult) string {
	if !res.Created {
		return web.T(lang, "files.unchanged_flash", res.Version.Path, res.Version.No)
	}
	if res.Version.RestoredFrom != nil {
		return web.T(lang, "files.rolled_back_flash", *res.Version.RestoredFrom, res.Version.No)
	}
	return web.T(lang, "files.saved_flash", res.Version.Path, res.Version.No)
}

func (a *Area) uploadFileForm(c echo.Context) error {
	const op = "server.uploadFileForm"
	t, err := a.filesTask(c)
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	form := request.Form(c, "path", "message")
	p := strings.TrimSpace(form.Value("path"))
	var data []byte
	fh, ferr := c.FormFile("file")
	switch {
	case ferr != nil:
		err = &errs.Error{Code: errs.Invalid, Op: op, Key: "files.file_required", Fields: map[string]string{"file": "files.file_required"}}
	case fh.Size > a.files.maxBytes:
		err = tooLarge(op, a.files.maxBytes)
	default:
		if p == "" {
			// Browsers send the bare name; older ones sent a Windows path.
			p = path.Base(strings.ReplaceAll(fh.Filename, `\`, "/"))
			form.Values["path"] = p
		}
		f, oerr := fh.Open()
		if oerr != nil {
			return errs.Wrap(errs.Invalid, op, oerr)
		}
		data, err = readLimited(op, f, a.files.maxBytes)
		_ = f.Close()
	}
	if err == nil {
		var res saveResult
		res, err = a.files.save(c.Request().Context(), saveRequest{TaskID: t.ID, Path: p, Data: data, Message: form.Value("message"), Source: store.FileSourceUpload})
		if err == nil {
			return a.Pages.RedirectWithFlash(c, web.FileVersionURL(t.ID, res.Version.Path, res.Version.No), savedFlash(lang, res))
		}
	}
	if !fileFormFailed(lang, err, &form) {
		return err
	}
	return a.renderFiles(c, response.StatusOf(err), t, form, web.NewForm())
}

func (a *Area) newFileForm(c echo.Context) error {
	t, err := a.filesTask(c)
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	form := request.Form(c, "path", "content", "message")
	p := strings.TrimSpace(form.Value("path"))
	form.Values["path"] = p
	// Browsers send a textarea's lines with CRLF; a new file gets LF.
	content := strings.ReplaceAll(form.Value("content"), "\r\n", "\n")
	res, err := a.files.save(c.Request().Context(), saveRequest{TaskID: t.ID, Path: p, Data: []byte(content), Message: form.Value("message"),
		Source: store.FileSourceEdit, MustBeNew: true})
	if err == nil {
		return a.Pages.RedirectWithFlash(c, web.FileVersionURL(t.ID, res.Version.Path, res.Version.No), savedFlash(lang, res))
	}
	if !fileFormFailed(lang, err, &form) {
		return err
	}
	return a.renderFiles(c, response.StatusOf(err), t, web.NewForm(), form)
}

// versionRow is a version as the pages show it.
func versionRow(v store.FileVersion, latest int) web.FileVersionRow {
	r := web.FileVersionRow{No: v.No, VersionID: v.VersionID, Author: v.AuthorName, At: v.CreatedAt, Message: v.Message,
		Source: v.Source, Size: v.Size, SHA256: v.SHA256, Latest: v.No == latest}
	if v.RestoredFrom != nil {
		r.RestoredFrom = *v.RestoredFrom
	}
	return r
}

// fileOfPage loads the task and the file a file page is about.
func (a *Area) fileOfPage(c echo.Context) (*store.Task, *store.TaskFile, error) {
	t, err := a.filesTask(c)
	if err != nil {
		return nil, nil, err
	}
	p, err := filePathParam(c)
	if err != nil {
		return nil, nil, err
	}
	f, err := a.Store.FindTaskFile(c.Request().Context(), t.ID, p)
	if err != nil {
		return nil, nil, err
	}
	return t, f, nil
}

func (a *Area) filePage(c echo.Context) error {
	t, f, err := a.fileOfPage(c)
	if err != nil {
		return err
	}
	return a.renderFilePage(c, http.StatusOK, t, f, web.NewForm())
}

func (a *Area) renderFilePage(c echo.Context, status int, t *store.Task, f *store.TaskFile, rollback web.Form) error {
	ctx := c.Request().Context()
	no, err := versionParam(c, "version")
	if err != nil {
		return err
	}
	shown, err := a.Store.FindFileVersion(ctx, t.ID, f.Path, no)
	if err != nil {
		return err
	}
	d := web.FileProps{TaskID: t.ID, TaskName: t.Name, Path: f.Path, Generated: f.Generated(), Total: f.LatestNo,
		Shown: versionRow(*shown, f.LatestNo), PageNum: 1, Rollback: rollback}
	d.Pages = max((f.LatestNo+versionsPerPage-1)/versionsPerPage, 1)
	if n, err := versionParam(c, "page"); err == nil && n > 1 {
		d.PageNum = min(n, d.Pages)
	}
	vs, _, err := a.Store.FindFileVersions(ctx, t.ID, f.Path, store.FileVersionFilter{Limit: versionsPerPage, Offset: (d.PageNum - 1) * versionsPerPage})
	if err != nil {
		return err
	}
	for _, v := range vs {
		d.Versions = append(d.Versions, versionRow(v, f.LatestNo))
	}
	if d.CanWrite, err = a.Store.MayWriteFiles(ctx, t.ID); err != nil {
		return err
	}
	data, err := a.files.read(ctx, shown)
	if err != nil {
		return err
	}
	if d.Text = isText(data); d.Text {
		d.Lines = textLines(data)
		if len(d.Lines) > maxShownLines {
			d.Lines, d.Truncated = d.Lines[:maxShownLines], true
		}
	}
	d.DiffTo, d.DiffFrom = f.LatestNo, max(f.LatestNo-1, 1)
	if shown.No < f.LatestNo {
		d.DiffFrom = shown.No
	}
	title := web.T(request.Lang(c), "files.title")
	pg := a.Pages.Page(c, "files.title", "booking")
	pg.Title = f.Path + " · " + title
	return response.Render(c, status, web.TaskFilePage(pg, d))
}

func (a *Area) fileRaw(c echo.Context) error {
	t, f, err := a.fileOfPage(c)
	if err != nil {
		return err
	}
	v, data, err := a.fileVersionData(c, t.ID, f.Path)
	if err != nil {
		return err
	}
	return sendFile(c, v, data, true)
}

func (a *Area) fileDiffPage(c echo.Context) error {
	t, f, err := a.fileOfPage(c)
	if err != nil {
		return err
	}
	from, err := versionParam(c, "from")
	if err != nil {
		return err
	}
	to, err := versionParam(c, "to")
	if err != nil {
		return err
	}
	if to == 0 {
		to = f.LatestNo
	}
	if from == 0 {
		from = max(to-1, 1)
	}
	ctx := c.Request().Context()
	va, err := a.Store.FindFileVersion(ctx, t.ID, f.Path, from)
	if err != nil {
		return err
	}
	vb, err := a.Store.FindFileVersion(ctx, t.ID, f.Path, to)
	if err != nil {
		return err
	}
	da, err := a.files.read(ctx, va)
	if err != nil {
		return err
	}
	db, err := a.files.read(ctx, vb)
	if err != nil {
		return err
	}
	d := web.FileDiffProps{TaskID: t.ID, TaskName: t.Name, Path: f.Path, From: versionRow(*va, f.LatestNo), To: versionRow(*vb, f.LatestNo), Total: f.LatestNo}
	if !isText(da) || !isText(db) {
		d.Binary = true
	} else {
		var ok bool
		d.Hunks, d.Added, d.Removed, ok = diffLines(da, db)
		d.TooLarge = !ok
	}
	pg := a.Pages.Page(c, "files.title", "booking")
	pg.Title = f.Path + " · " + web.T(request.Lang(c), "files.diff_title", from, to)
	return response.Render(c, http.StatusOK, web.FileDiffPage(pg, d))
}

// editableFile loads a file for the editor, or says why it cannot be
// edited in the browser.
func (a *Area) editableFile(c echo.Context) (*store.Task, *store.TaskFile, []byte, string, error) {
	t, f, err := a.fileOfPage(c)
	if err != nil {
		return nil, nil, nil, "", err
	}
	ctx := c.Request().Context()
	ok, err := a.Store.MayWriteFiles(ctx, t.ID)
	switch {
	case err != nil:
		return nil, nil, nil, "", err
	case !ok:
		return t, f, nil, "files.write_not_your_team", nil
	case f.Generated():
		return t, f, nil, "files.plan_reserved", nil
	case f.Latest == nil:
		return nil, nil, nil, "", errs.E(errs.NotFound, "server.editableFile", "files.not_found", f.Path)
	}
	data, err := a.files.read(ctx, f.Latest)
	if err != nil {
		return nil, nil, nil, "", err
	}
	if !isText(data) {
		return t, f, nil, "files.binary_no_edit", nil
	}
	return t, f, data, "", nil
}

func (a *Area) editFilePage(c echo.Context) error {
	t, f, data, why, err := a.editableFile(c)
	if err != nil {
		return err
	}
	if why != "" {
		return a.Pages.RedirectWithFlash(c, web.FileURL(t.ID, "show", f.Path), web.T(request.Lang(c), why))
	}
	form := web.NewForm()
	form.Values["content"] = string(data)
	return a.renderEdit(c, http.StatusOK, t, f.Path, f.LatestNo, form)
}

func (a *Area) renderEdit(c echo.Context, status int, t *store.Task, p string, base int, form web.Form) error {
	d := web.FileEditProps{TaskID: t.ID, TaskName: t.Name, Path: p, BaseNo: base, Form: form, MaxMiB: mib(a.files.maxBytes)}
	pg := a.Pages.Page(c, "files.title", "booking")
	pg.Title = web.T(request.Lang(c), "files.edit_title", p)
	return response.Render(c, status, web.FileEditPage(pg, d))
}

func (a *Area) editFileForm(c echo.Context) error {
	t, f, data, why, err := a.editableFile(c)
	if err != nil {
		return err
	}
	if why != "" {
		return errs.E(errs.Forbidden, "server.editFileForm", why)
	}
	lang := request.Lang(c)
	form := request.Form(c, "content", "message", "base")
	base, berr := versionParam(c, "base")
	if berr != nil || base == 0 {
		base = f.LatestNo
	}
	// Browsers send a textarea's lines with CRLF: keep the file's own line
	// ends, so an edit of one line is a diff of one line.
	content := strings.ReplaceAll(form.Value("content"), "\r\n", "\n")
	if strings.Contains(string(data), "\r\n") {
		content = strings.ReplaceAll(content, "\n", "\r\n")
	}
	res, err := a.files.save(c.Request().Context(), saveRequest{TaskID: t.ID, Path: f.Path, Data: []byte(content), Message: form.Value("message"),
		Source: store.FileSourceEdit, BaseNo: base})
	if err == nil {
		return a.Pages.RedirectWithFlash(c, web.FileVersionURL(t.ID, res.Version.Path, res.Version.No), savedFlash(lang, res))
	}
	if !fileFormFailed(lang, err, &form) {
		return err
	}
	return a.renderEdit(c, response.StatusOf(err), t, f.Path, base, form)
}

func (a *Area) rollbackFileForm(c echo.Context) error {
	t, f, err := a.fileOfPage(c)
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	no, err := versionParam(c, "version")
	if err == nil && no == 0 {
		err = &errs.Error{Code: errs.Invalid, Op: "server.rollbackFileForm", Key: "files.version_required", Fields: map[string]string{"version": "files.version_required"}}
	}
	if err == nil {
		var res saveResult
		res, err = a.files.rollback(c.Request().Context(), t.ID, f.Path, no, c.FormValue("message"))
		if err == nil {
			return a.Pages.RedirectWithFlash(c, web.FileVersionURL(t.ID, f.Path, res.Version.No), savedFlash(lang, res))
		}
	}
	form := web.NewForm()
	if !response.FormFailed(lang, err, &form) {
		return err
	}
	return a.renderFilePage(c, response.StatusOf(err), t, f, form)
}

func (a *Area) bookingFilesPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	b, err := a.Store.FindBookingByID(ctx, id)
	if err != nil {
		return err
	}
	vs, err := a.Store.FindBookingFileVersions(ctx, id)
	if err != nil {
		return err
	}
	d := web.BookingFilesProps{BookingID: b.ID, TaskID: b.TaskID, TaskName: b.TaskName, Start: b.StartAt}
	for _, v := range vs {
		d.Rows = append(d.Rows, web.BookingFileRow{TaskID: v.TaskID, Path: v.Path, No: v.No, At: v.CreatedAt, Author: v.AuthorName, Message: v.Message, SHA256: v.SHA256})
	}
	pg := a.Pages.Page(c, "files.title", "booking")
	pg.Title = web.T(request.Lang(c), "files.booking_title", b.ID)
	return response.Render(c, http.StatusOK, web.BookingFilesPage(pg, d))
}
