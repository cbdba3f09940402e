package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"cardhour/objects"
	"cardhour/objects/objectstest"
	"cardhour/server/files"
	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
)

// fileVersion is a version as the API answers it.
type fileVersion struct {
	TaskID       int64  `json:"task_id"`
	Path         string `json:"path"`
	Version      int    `json:"version"`
	Key          string `json:"key"`
	VersionID    string `json:"version_id"`
	Size         int64  `json:"size"`
	SHA256       string `json:"sha256"`
	AuthorID     *int64 `json:"author_id"`
	Author       string `json:"author"`
	Message      string `json:"message"`
	Source       string `json:"source"`
	RestoredFrom *int   `json:"restored_from"`
	CreatedAt    string `json:"created_at"`
	Unchanged    bool   `json:"unchanged"`
}

// fileAPI sends an API request with a bearer token.
func (f *fleet) fileAPI(role, method, path string, body []byte, hdr map[string]string) servertest.Response {
	f.E.T.Helper()
	return f.fileAPIAs(f.Token(role), method, path, body, hdr)
}

func (f *fleet) fileAPIAs(token, method, path string, body []byte, hdr map[string]string) servertest.Response {
	f.E.T.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/json"}}
	for k, v := range hdr {
		h.Set(k, v)
	}
	return f.C.Do(method, path, bytes.NewReader(body), h)
}

func decode[T any](t *testing.T, r servertest.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, r)
	}
	return v
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func wantStatus(t *testing.T, r servertest.Response, status int, code string) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d:\n%.600s", r.Request.Method, r.Request.URL, r.StatusCode, status, r)
	}
	if code != "" && !strings.Contains(string(r.Body), `"code":"`+code+`"`) {
		t.Fatalf("%s %s: want error code %q:\n%.600s", r.Request.Method, r.Request.URL, code, r)
	}
}

func versionCount(t *testing.T, e *servertest.Env) int64 {
	t.Helper()
	return storetest.MustCount(t, e.St, "task_file_versions")
}

func TestFilesAPIVersionsDiffAndRollback(t *testing.T) {
	t.Parallel()
	f := newFleet(t, servertest.Options{}, 2, 1000)
	base := fmt.Sprintf("/api/v1/tasks/%d", f.Core.ID)
	put := func(role, path, body string, hdr map[string]string) servertest.Response {
		return f.fileAPI(role, http.MethodPut, base+"/files/"+path, []byte(body), hdr)
	}

	r := put(store.RoleMember, "scripts/train.sh", "#!/bin/sh\ntorchrun train.py --lr 1e-4\n", map[string]string{"X-Message": "首个版本"})
	wantStatus(t, r, http.StatusCreated, "")
	v1 := decode[fileVersion](t, r)
	if v1.Version != 1 || v1.Path != "scripts/train.sh" || v1.Author != "t-member" || v1.Message != "首个版本" || v1.Source != "api" ||
		v1.SHA256 != sum("#!/bin/sh\ntorchrun train.py --lr 1e-4\n") || v1.Size != 38 || v1.VersionID == "" ||
		v1.Key != fmt.Sprintf("tasks/%d/files/scripts/train.sh", f.Core.ID) || v1.TaskID != f.Core.ID {
		t.Errorf("v1 = %+v", v1)
	}
	r = f.fileAPI(store.RoleViewer, http.MethodGet, base+"/files/scripts/train.sh", nil, nil)
	wantStatus(t, r, http.StatusOK, "")
	if string(r.Body) != "#!/bin/sh\ntorchrun train.py --lr 1e-4\n" || r.Header.Get("X-Version") != "1" ||
		r.Header.Get("ETag") != `"`+v1.SHA256+`"` || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("GET latest: %q headers %v", r.Body, r.Header)
	}

	// The same content again adds nothing.
	r = put(store.RoleMember, "scripts/train.sh", "#!/bin/sh\ntorchrun train.py --lr 1e-4\n", nil)
	wantStatus(t, r, http.StatusOK, "")
	if u := decode[fileVersion](t, r); !u.Unchanged || u.Version != 1 {
		t.Errorf("unchanged PUT = %+v", u)
	}
	r = put(store.RoleManager, "scripts/train.sh", "#!/bin/sh\ntorchrun train.py --lr 3e-4\n", map[string]string{"X-Message": "lr 3e-4", "X-Base-Version": "1"})
	wantStatus(t, r, http.StatusCreated, "")
	r = put(store.RoleMember, "scripts/train.sh", "stale edit\n", map[string]string{"X-Base-Version": "1"})
	wantStatus(t, r, http.StatusConflict, "conflict")
	if !strings.Contains(string(r.Body), "2") {
		t.Errorf("a stale write should name the latest version: %s", r)
	}

	r = f.fileAPI(store.RoleMember, http.MethodGet, base+"/files/scripts/train.sh?version=1", nil, nil)
	wantStatus(t, r, http.StatusOK, "")
	if !strings.Contains(string(r.Body), "1e-4") {
		t.Errorf("version 1 = %q", r.Body)
	}

	r = f.fileAPI(store.RoleMember, http.MethodPost, base+"/rollback/scripts/train.sh?version=1", nil, map[string]string{"X-Message": "back"})
	wantStatus(t, r, http.StatusCreated, "")
	v3 := decode[fileVersion](t, r)
	if v3.Version != 3 || v3.RestoredFrom == nil || *v3.RestoredFrom != 1 || v3.SHA256 != v1.SHA256 || v3.Source != "rollback" || v3.Message != "back" {
		t.Errorf("rollback = %+v", v3)
	}
	r = f.fileAPI(store.RoleMember, http.MethodPost, base+"/rollback/scripts/train.sh?version=3", nil, nil)
	wantStatus(t, r, http.StatusConflict, "conflict")
	r = f.fileAPI(store.RoleMember, http.MethodPost, base+"/rollback/scripts/train.sh", nil, nil)
	wantStatus(t, r, http.StatusUnprocessableEntity, "invalid")
	r = f.fileAPI(store.RoleMember, http.MethodPost, base+"/rollback/scripts/train.sh?version=9", nil, nil)
	wantStatus(t, r, http.StatusNotFound, "not_found")

	r = f.fileAPI(store.RoleViewer, http.MethodGet, base+"/versions/scripts/train.sh", nil, nil)
	wantStatus(t, r, http.StatusOK, "")
	list := decode[struct {
		Path     string        `json:"path"`
		Total    int           `json:"total"`
		Versions []fileVersion `json:"versions"`
	}](t, r)
	if list.Total != 3 || len(list.Versions) != 3 || list.Versions[0].Version != 3 || list.Versions[2].Version != 1 ||
		list.Versions[1].Author != "t-manager" || list.Versions[1].Message != "lr 3e-4" || list.Versions[0].CreatedAt == "" {
		t.Errorf("versions = %+v", list)
	}
	r = f.fileAPI(store.RoleViewer, http.MethodGet, base+"/versions/scripts/train.sh?limit=1&offset=1", nil, nil)
	if l := decode[struct{ Versions []fileVersion }](t, r); len(l.Versions) != 1 || l.Versions[0].Version != 2 {
		t.Errorf("paged versions = %+v", l)
	}
	r = f.fileAPI(store.RoleViewer, http.MethodGet, base+"/files", nil, nil)
	wantStatus(t, r, http.StatusOK, "")
	files := decode[struct {
		Files []struct {
			Path     string      `json:"path"`
			Versions int         `json:"versions"`
			Latest   fileVersion `json:"latest"`
		} `json:"files"`
	}](t, r)
	if len(files.Files) != 1 || files.Files[0].Versions != 3 || files.Files[0].Latest.Version != 3 {
		t.Errorf("files = %+v", files)
	}

	// Every write is in the audit log.
	entries, _, err := f.E.St.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "task_file"})
	if err != nil || len(entries) != 3 || entries[0].Action != "rollback" || entries[0].ActorName != "t-member" {
		t.Errorf("audit = %+v, %v", entries, err)
	}

	// Paths with spaces and Chinese characters, escaped per segment.
	p := "配置/训练 参数.yaml"
	esc := url.PathEscape("配置") + "/" + url.PathEscape("训练 参数.yaml")
	wantStatus(t, put(store.RoleMember, esc, "lr: 1\n", nil), http.StatusCreated, "")
	r = f.fileAPI(store.RoleMember, http.MethodGet, base+"/files/"+esc, nil, nil)
	if r.StatusCode != http.StatusOK || string(r.Body) != "lr: 1\n" || decode[fileVersion](t, put(store.RoleMember, esc, "lr: 2\n", nil)).Path != p {
		t.Errorf("unicode path: %d %q", r.StatusCode, r.Body)
	}
}

func TestFilesAPIRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newFleet(t, servertest.Options{Vars: map[string]string{"CARDHOUR_MAX_FILE_MIB": "1"}}, 1, 1000)
	base := fmt.Sprintf("/api/v1/tasks/%d/files/", f.Core.ID)
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"run.sh", []byte("ok"), nil), http.StatusCreated, "")
	before, audits := versionCount(t, f.E), f.E.AuditTotal()

	r := f.fileAPI(store.RoleMember, http.MethodPut, base+"big.bin", bytes.Repeat([]byte("x"), 1<<20+1), nil)
	wantStatus(t, r, http.StatusRequestEntityTooLarge, "too_large")
	if !strings.Contains(string(r.Body), "1 MiB") {
		t.Errorf("413 does not name the limit: %s", r)
	}
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"exact.bin", bytes.Repeat([]byte("x"), 1<<20), nil), http.StatusCreated, "")
	before++
	audits++

	for _, p := range []string{"", "a/%2E%2E/b", "%2E%2E/etc/passwd", "a%00b", "bell%07.sh", "a%0Ab", "dir//x", "x/", "a%5Cb", "%20lead.sh"} {
		r := f.fileAPI(store.RoleMember, http.MethodPut, base+p, []byte("x"), nil)
		wantStatus(t, r, http.StatusUnprocessableEntity, "invalid")
		if !strings.Contains(string(r.Body), `"path"`) {
			t.Errorf("PUT %q: no path field message: %s", p, r)
		}
	}
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"plan/card-hours.yaml", []byte("x"), nil), http.StatusUnprocessableEntity, "invalid")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"run.sh/inner", []byte("x"), nil), http.StatusConflict, "conflict")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"m.txt", []byte("x"), map[string]string{"X-Message": strings.Repeat("m", 501)}), http.StatusUnprocessableEntity, "invalid")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"m.txt", []byte("x"), map[string]string{"X-Base-Version": "zero"}), http.StatusUnprocessableEntity, "invalid")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodGet, base+"run.sh?version=x", nil, nil), http.StatusUnprocessableEntity, "invalid")

	// Who may do what: the team's viewer reads, outsiders see nothing.
	wantStatus(t, f.fileAPI(store.RoleViewer, http.MethodPut, base+"run.sh", []byte("v"), nil), http.StatusForbidden, "forbidden")
	wantStatus(t, f.fileAPI(store.RoleViewer, http.MethodGet, base+"run.sh", nil, nil), http.StatusOK, "")
	wantStatus(t, f.fileAPIAs(f.Outsider.Token, http.MethodGet, base+"run.sh", nil, nil), http.StatusNotFound, "not_found")
	wantStatus(t, f.fileAPIAs(f.Outsider.Token, http.MethodPut, base+"run.sh", []byte("o"), nil), http.StatusNotFound, "not_found")
	wantStatus(t, f.fileAPIAs(f.Outsider.Token, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/files", f.Core.ID), nil, nil), http.StatusNotFound, "not_found")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, "/api/v1/tasks/99999/files/x", []byte("x"), nil), http.StatusNotFound, "not_found")

	if n := versionCount(t, f.E); n != before {
		t.Errorf("refused writes left %d version rows", n-before)
	}
	if n := f.E.AuditTotal(); n != audits {
		t.Errorf("refused writes were audited: +%d", n-audits)
	}
}

// With S3 unreachable, writes answer 503 and record nothing; reads answer
// 503 too; once the store is back, everything works again.
func TestFilesUnreachableStoreIs503(t *testing.T) {
	t.Parallel()
	b := objectstest.Fake(t, true, "portal/")
	f := newFleet(t, servertest.Options{Vars: map[string]string{
		"CARDHOUR_OBJECTS":       "s3://" + b.Location.Bucket + "/portal?endpoint=" + url.QueryEscape(b.Location.Endpoint),
		"CARDHOUR_S3_ACCESS_KEY": b.Credentials.AccessKey, "CARDHOUR_S3_SECRET_KEY": b.Credentials.SecretKey,
	}}, 1, 1000)
	base := fmt.Sprintf("/api/v1/tasks/%d/files/", f.Core.ID)
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"cfg.yaml", []byte("a: 1\n"), nil), http.StatusCreated, "")
	before := versionCount(t, f.E)
	b.Server.Close()
	r := f.fileAPI(store.RoleMember, http.MethodPut, base+"cfg.yaml", []byte("a: 2\n"), nil)
	wantStatus(t, r, http.StatusServiceUnavailable, "unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"new.yaml", []byte("n"), nil), http.StatusServiceUnavailable, "unavailable")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodGet, base+"cfg.yaml", nil, nil), http.StatusServiceUnavailable, "unavailable")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPost, fmt.Sprintf("/api/v1/tasks/%d/rollback/cfg.yaml?version=1", f.Core.ID), nil, nil), http.StatusConflict, "conflict")
	if n := versionCount(t, f.E); n != before {
		t.Errorf("an unreachable store left %d version rows", n-before)
	}
	if err := f.E.Srv.Files().SyncPlansNow(context.Background()); err == nil {
		t.Error("plan sync with the store away reported no error")
	}
	if n := versionCount(t, f.E); n != before {
		t.Errorf("plan sync with the store away left %d rows", n-before)
	}
	// The page says so too, in the viewer's language.
	c := f.E.Client()
	c.MustLogin(f.E.Users[store.RoleMember].Username, "password-member")
	page := c.Get(fmt.Sprintf("/tasks/%d/files/show/cfg.yaml?lang=en", f.Core.ID))
	if page.StatusCode != http.StatusServiceUnavailable || !strings.Contains(page.String(), "Object storage cannot be reached") {
		t.Errorf("file page with the store away: %d\n%.800s", page.StatusCode, page)
	}
}

// Reconciliation removes objects that never got their row and reports rows
// whose object is gone.
func TestFilesReconcile(t *testing.T) {
	t.Parallel()
	f := newFleet(t, servertest.Options{}, 1, 1000)
	base := fmt.Sprintf("/api/v1/tasks/%d/files/", f.Core.ID)
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, base+"keep.sh", []byte("keep"), nil), http.StatusCreated, "")
	lost := decode[fileVersion](t, f.fileAPI(store.RoleMember, http.MethodPut, base+"lost.sh", []byte("lost"), nil))

	obj := objects.NewLocal(f.E.Cfg.Objects.Dir)
	ctx := context.Background()
	orphan, err := obj.Put(ctx, fmt.Sprintf("tasks/%d/files/keep.sh", f.Core.ID), []byte("written, then the portal died"))
	if err != nil {
		t.Fatal(err)
	}
	if err := obj.RemoveVersion(ctx, lost.Key, lost.VersionID); err != nil {
		t.Fatal(err)
	}
	rep, err := f.E.Srv.Files().Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep != (files.ReconcileReport{Rows: 2, Objects: 2, Orphans: 1, Removed: 0, Missing: 1}) {
		t.Errorf("first pass (orphan too young) = %+v", rep)
	}
	f.E.Srv.Files().SetOrphanGrace(0)
	rep, err = f.E.Srv.Files().Reconcile(ctx)
	if err != nil || rep.Removed != 1 || rep.Orphans != 1 {
		t.Errorf("second pass = %+v, %v", rep, err)
	}
	vs, _ := obj.ListVersions(ctx, fmt.Sprintf("tasks/%d/files/keep.sh", f.Core.ID))
	for _, v := range vs {
		if v.VersionID == orphan.VersionID {
			t.Error("the orphan is still there")
		}
	}
	if len(vs) != 1 {
		t.Errorf("keep.sh has %d versions, want its one recorded version", len(vs))
	}
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodGet, base+"keep.sh", nil, nil), http.StatusOK, "")
	r := f.fileAPI(store.RoleMember, http.MethodGet, base+"lost.sh", nil, nil)
	wantStatus(t, r, http.StatusNotFound, "not_found")
	if !strings.Contains(f.E.Logs.String(), "missing from object storage") {
		t.Error("a missing object was not logged")
	}
}

// The card-hour plan follows the task and its bookings, one version per
// real change.
func TestPlanFollowsTaskAndBookings(t *testing.T) {
	t.Parallel()
	f := newFleet(t, servertest.Options{}, 2, 1000)
	ctx := context.Background()
	if err := f.E.Srv.Files().SyncPlansNow(ctx); err != nil {
		t.Fatal(err)
	}
	plan := fmt.Sprintf("/api/v1/tasks/%d/files/plan/card-hours.yaml", f.Core.ID)
	r := f.fileAPI(store.RoleViewer, http.MethodGet, plan, nil, nil)
	wantStatus(t, r, http.StatusOK, "")
	if !strings.Contains(r.String(), `name: "pretrain"`) || !strings.Contains(r.String(), "bookings: []") {
		t.Errorf("first plan:\n%s", r)
	}
	if err := f.E.Srv.Files().SyncPlansNow(ctx); err != nil {
		t.Fatal(err)
	}
	versions := func() int {
		r := f.fileAPI(store.RoleViewer, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/versions/plan/card-hours.yaml", f.Core.ID), nil, nil)
		return decode[struct{ Total int }](t, r).Total
	}
	if n := versions(); n != 1 {
		t.Fatalf("versions after an idle sync = %d, want 1", n)
	}

	body := fmt.Sprintf(`{"task_id":%d,"card_type":"H800","count":2,"start":%q,"end":%q}`, f.Core.ID, f.At(1), f.At(4))
	br := f.fileAPI(store.RoleMember, http.MethodPost, "/api/v1/bookings", []byte(body), map[string]string{"Content-Type": "application/json"})
	wantStatus(t, br, http.StatusCreated, "")
	booking := decode[struct{ ID int64 }](t, br)
	if err := f.E.Srv.Files().SyncPlansNow(ctx); err != nil {
		t.Fatal(err)
	}
	r = f.fileAPI(store.RoleViewer, http.MethodGet, plan, nil, nil)
	if n := versions(); n != 2 || !strings.Contains(r.String(), fmt.Sprintf("- id: %d", booking.ID)) || !strings.Contains(r.String(), "card_hours: 6") ||
		!strings.Contains(r.String(), "booked: 6") {
		t.Errorf("after a booking: %d versions, plan:\n%s", n, r)
	}
	last := decode[struct{ Versions []fileVersion }](t, f.fileAPI(store.RoleViewer, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/versions/plan/card-hours.yaml", f.Core.ID), nil, nil)).Versions[0]
	if last.Author != "system" || last.Source != "plan" || last.AuthorID != nil {
		t.Errorf("plan version = %+v", last)
	}
	// The plan is the portal's: people cannot overwrite or roll it back.
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPut, plan, []byte("x"), nil), http.StatusUnprocessableEntity, "invalid")
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPost, fmt.Sprintf("/api/v1/tasks/%d/rollback/plan/card-hours.yaml?version=1", f.Core.ID), nil, nil), http.StatusUnprocessableEntity, "invalid")

	// A cancelled booking leaves the plan; a bookings' file versions are the
	// ones current at its start.
	wantStatus(t, f.fileAPI(store.RoleMember, http.MethodPost, fmt.Sprintf("/api/v1/bookings/%d/cancel", booking.ID), nil, nil), http.StatusOK, "")
	if err := f.E.Srv.Files().SyncPlansNow(ctx); err != nil {
		t.Fatal(err)
	}
	if n := versions(); n != 3 {
		t.Errorf("after a cancel: %d versions, want 3", n)
	}
	r = f.fileAPI(store.RoleMember, http.MethodGet, fmt.Sprintf("/api/v1/bookings/%d/file-versions", booking.ID), nil, nil)
	wantStatus(t, r, http.StatusOK, "")
	used := decode[struct{ Versions []fileVersion }](t, r).Versions
	if len(used) != 1 || used[0].Path != "plan/card-hours.yaml" || used[0].Version != 3 {
		t.Errorf("booking file versions = %+v", used)
	}
	wantStatus(t, f.fileAPIAs(f.Outsider.Token, http.MethodGet, fmt.Sprintf("/api/v1/bookings/%d/file-versions", booking.ID), nil, nil), http.StatusNotFound, "not_found")
}

// The pages: upload, edit in the browser, diff, roll back, and who sees what.
func TestFilesPages(t *testing.T) {
	t.Parallel()
	f := newFleet(t, servertest.Options{Vars: map[string]string{"CARDHOUR_MAX_FILE_MIB": "1"}}, 1, 1000)
	c := f.E.Client()
	c.MustLogin(f.E.Users[store.RoleMember].Username, "password-member")
	files := fmt.Sprintf("/tasks/%d/files", f.Core.ID)

	page := c.Get(files)
	if page.StatusCode != http.StatusOK || page.Doc(t).Find("[data-testid=upload-form]").Length() != 1 {
		t.Fatalf("files page: %d\n%.600s", page.StatusCode, page)
	}
	r := uploadForm(t, c, files+"/upload", "train.sh", "echo one\necho two\n", "", "first")
	if r.StatusCode != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "/files/show/train.sh?version=1") {
		t.Fatalf("upload: %d %s\n%.600s", r.StatusCode, r.Header.Get("Location"), r)
	}
	show := c.Get(r.Header.Get("Location"))
	doc := show.Doc(t)
	if doc.Find("[data-testid=version-row]").Length() != 1 || !strings.Contains(doc.Find("[data-testid=file-lines]").Text(), "echo two") ||
		!strings.Contains(doc.Find("[data-testid=flash]").Text(), "train.sh") {
		t.Errorf("file page after upload:\n%.1200s", show)
	}

	editURL := fmt.Sprintf("/tasks/%d/files/edit/train.sh", f.Core.ID)
	edit := c.Get(editURL)
	if got := edit.Doc(t).Find("[data-testid=input-content]").Text(); got != "echo one\necho two\n" {
		t.Errorf("editor holds %q", got)
	}
	// Browsers send textarea lines with CRLF; the file keeps its LF.
	r = c.PostForm(editURL, url.Values{"content": {"echo one\r\necho 2\r\n"}, "message": {"second"}, "base": {"1"}}, true)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%.600s", r.StatusCode, r)
	}
	// A save based on an old version is refused with the text kept.
	r = c.PostForm(editURL, url.Values{"content": {"mine"}, "message": {"late"}, "base": {"1"}}, true)
	if r.StatusCode != http.StatusConflict || r.Doc(t).Find("[data-testid=input-content]").Text() != "mine" ||
		r.Doc(t).Find("[data-testid=form-error]").Length() != 1 {
		t.Errorf("stale edit: %d\n%.800s", r.StatusCode, r)
	}
	r = c.PostForm(editURL, url.Values{"content": {"echo one\necho 2\necho three\n"}, "base": {"2"}}, true)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit 2: %d", r.StatusCode)
	}

	diff := c.Get(fmt.Sprintf("/tasks/%d/files/diff/train.sh?from=1&to=3", f.Core.ID)).Doc(t)
	d := diff.Find("[data-testid=diff]")
	if d.AttrOr("data-added", "") != "2" || d.AttrOr("data-removed", "") != "1" {
		t.Errorf("diff 1→3 added %s removed %s", d.AttrOr("data-added", "?"), d.AttrOr("data-removed", "?"))
	}
	var kinds []string
	diff.Find("[data-testid=diff-lines] tr[data-kind]").Each(func(_ int, s *goquery.Selection) {
		kind := s.AttrOr("data-kind", "")
		kinds = append(kinds, kind+strings.TrimPrefix(strings.TrimSpace(s.Find(".fl-tx").Text()), kind))
	})
	if strings.Join(kinds, "|") != "=echo one|-echo two|+echo 2|+echo three" {
		t.Errorf("diff lines %q", kinds)
	}

	r = c.PostForm(fmt.Sprintf("/tasks/%d/files/rollback/train.sh", f.Core.ID), url.Values{"version": {"1"}}, true)
	if r.StatusCode != http.StatusSeeOther || !strings.HasSuffix(r.Header.Get("Location"), "version=4") {
		t.Fatalf("rollback: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	show = c.Get(r.Header.Get("Location"))
	if n := show.Doc(t).Find("[data-testid=version-row]").Length(); n != 4 {
		t.Errorf("versions after rollback = %d, want 4", n)
	}
	if got := show.Doc(t).Find("[data-testid=file-lines]").Text(); !strings.Contains(got, "echo two") {
		t.Errorf("latest after rollback:\n%s", got)
	}
	raw := c.Get(fmt.Sprintf("/tasks/%d/files/raw/train.sh?version=2", f.Core.ID))
	if raw.String() != "echo one\necho 2\n" || !strings.Contains(raw.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("download v2: %q %v", raw.Body, raw.Header)
	}

	// Bad input in the forms: inline messages, right status, nothing saved.
	before := versionCount(t, f.E)
	r = uploadForm(t, c, files+"/upload", "big.bin", strings.Repeat("x", 1<<20+10), "", "")
	if r.StatusCode != http.StatusRequestEntityTooLarge || r.Doc(t).Find("[data-testid=error-file]").Length() != 1 {
		t.Errorf("over-size upload: %d\n%.600s", r.StatusCode, r)
	}
	r = uploadForm(t, c, files+"/upload", "x.sh", "x", "../x.sh", "")
	if r.StatusCode != http.StatusUnprocessableEntity || r.Doc(t).Find("[data-testid=error-path]").Length() != 1 {
		t.Errorf("traversal upload: %d\n%.600s", r.StatusCode, r)
	}
	r = c.PostForm(files+"/new", url.Values{"path": {"train.sh"}, "content": {"x"}}, true)
	if r.StatusCode != http.StatusConflict || r.Doc(t).Find("[data-testid=error-path]").Length() != 1 {
		t.Errorf("new file over an existing one: %d", r.StatusCode)
	}
	r = c.PostForm(files+"/new", url.Values{"path": {""}, "content": {"x"}}, true)
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("new file without a path: %d", r.StatusCode)
	}
	if n := versionCount(t, f.E); n != before {
		t.Errorf("refused forms saved %d versions", n-before)
	}
	r = c.PostForm(files+"/new", url.Values{"path": {"cfg/train.yaml"}, "content": {"lr: 1\r\n"}, "message": {"new"}}, true)
	if r.StatusCode != http.StatusSeeOther {
		t.Errorf("new file: %d\n%.600s", r.StatusCode, r)
	}

	// The team's viewer reads without forms; an outsider is told the files
	// are the team's.
	v := f.E.Client()
	v.MustLogin(f.E.Users[store.RoleViewer].Username, "password-viewer")
	vp := v.Get(files).Doc(t)
	if vp.Find("[data-testid=file-row]").Length() != 2 || vp.Find("[data-testid=upload-form]").Length() != 0 || vp.Find("[data-testid=files-readonly]").Length() != 1 {
		t.Errorf("viewer's files page: %d rows", vp.Find("[data-testid=file-row]").Length())
	}
	if v.Get(fmt.Sprintf("/tasks/%d/files/show/train.sh", f.Core.ID)).Doc(t).Find("[data-testid=rollback]").Length() != 0 {
		t.Error("the viewer is offered rollback")
	}
	o := f.E.Client()
	tok, err := f.E.St.CreateSession(context.Background(), f.Outsider.ID)
	if err != nil {
		t.Fatal(err)
	}
	o.SetCookie("cardhour_session", tok)
	op := o.Get(files + "?lang=en")
	if op.StatusCode != http.StatusNotFound || !strings.Contains(op.String(), "open to its team") {
		t.Errorf("outsider's files page: %d\n%.600s", op.StatusCode, op)
	}
}

func uploadForm(t *testing.T, c *servertest.Client, path, name, content, as, message string) servertest.Response {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("_csrf", c.CSRF())
	_ = w.WriteField("path", as)
	_ = w.WriteField("message", message)
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(content))
	_ = w.Close()
	return c.Do(http.MethodPost, path, &buf, http.Header{"Content-Type": {w.FormDataContentType()}})
}
