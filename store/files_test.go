package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// fileWorld is the booking world plus a team viewer, for files.
type fileWorld struct {
	*bookingWorld
	viewer *store.User // viewer role in the task's team
}

func newFileWorld(t testing.TB, dialect string) *fileWorld {
	t.Helper()
	w := &fileWorld{bookingWorld: newBookingWorld(t, dialect, 4)}
	w.viewer = MustUser(t, w.st, "watcher", store.RoleViewer)
	if _, err := w.st.SetMembership(as(w.admin), w.team.ID, w.viewer.ID, store.TeamRoleViewer); err != nil {
		t.Fatal(err)
	}
	return w
}

// version is a FileVersionInput for content as if already stored.
func version(task *store.Task, path, content, msg string) store.FileVersionInput {
	sum := sha256.Sum256([]byte(content))
	return store.FileVersionInput{TaskID: task.ID, Path: path, ObjectKey: fmt.Sprintf("tasks/%d/files/%s", task.ID, path),
		VersionID: "v-" + hex.EncodeToString(sum[:4]) + fmt.Sprint(time.Now().UnixNano()), Size: int64(len(content)),
		SHA256: hex.EncodeToString(sum[:]), Message: msg, Source: store.FileSourceUpload}
}

func mustVersion(t testing.TB, st *store.Store, ctx context.Context, in store.FileVersionInput) *store.FileVersion {
	t.Helper()
	v, err := st.CreateFileVersion(ctx, in)
	if err != nil {
		t.Fatalf("CreateFileVersion %s: %v", in.Path, err)
	}
	return v
}

func TestFileVersionsAreNumberedListedAndAudited(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newFileWorld(t, dialect)
		ctx := as(w.member)
		before := auditCount(t, w.st)
		v1 := mustVersion(t, w.st, ctx, version(w.core, "scripts/train.sh", "echo 1\n", "first"))
		w.clock.Advance(time.Minute)
		v2 := mustVersion(t, w.st, ctx, version(w.core, "scripts/train.sh", "echo 2\n", "second"))
		in := version(w.core, "scripts/train.sh", "echo 1\n", "back to the first")
		in.Source, in.RestoredFrom = store.FileSourceRollback, &v1.No
		v3 := mustVersion(t, w.st, as(w.manager), in)
		if v1.No != 1 || v2.No != 2 || v3.No != 3 {
			t.Fatalf("numbers %d %d %d, want 1 2 3", v1.No, v2.No, v3.No)
		}
		if v1.AuthorID == nil || *v1.AuthorID != w.member.ID || v1.AuthorName != "dev" || v3.AuthorName != "boss" {
			t.Errorf("authors: %+v / %+v", v1, v3)
		}
		if n := auditCount(t, w.st); n != before+3 {
			t.Fatalf("audit entries +%d, want +3 (one per version)", n-before)
		}
		entries, _, err := w.st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "task_file", Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range entries {
			actions = append(actions, e.Action)
			if e.AfterJSON == nil || !strings.Contains(*e.AfterJSON, `"sha256"`) {
				t.Errorf("audit %s has no version snapshot: %v", e.Action, e.AfterJSON)
			}
		}
		if strings.Join(actions, ",") != "rollback,update,create" {
			t.Errorf("audit actions %v, want rollback,update,create", actions)
		}
		if !strings.Contains(entries[0].Summary, "scripts/train.sh v3 ← v1") {
			t.Errorf("rollback summary %q", entries[0].Summary)
		}

		files, err := w.st.FindTaskFiles(ctx, w.core.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].LatestNo != 3 || files[0].Latest == nil || files[0].Latest.No != 3 || files[0].Latest.Path != "scripts/train.sh" {
			t.Fatalf("FindTaskFiles = %+v", files)
		}
		vs, total, err := w.st.FindFileVersions(ctx, w.core.ID, "scripts/train.sh", store.FileVersionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if total != 3 || len(vs) != 3 || vs[0].No != 3 || vs[2].No != 1 || vs[2].Message != "first" || vs[0].RestoredFrom == nil || *vs[0].RestoredFrom != 1 {
			t.Errorf("FindFileVersions = %d %+v", total, vs)
		}
		if !vs[1].CreatedAt.Equal(w.clock.Now()) || !vs[2].CreatedAt.Equal(w.clock.Now().Add(-time.Minute)) {
			t.Errorf("times %v %v, want the store clock", vs[1].CreatedAt, vs[2].CreatedAt)
		}
		page, _, _ := w.st.FindFileVersions(ctx, w.core.ID, "scripts/train.sh", store.FileVersionFilter{Limit: 1, Offset: 1})
		if len(page) != 1 || page[0].No != 2 {
			t.Errorf("second page = %+v, want v2", page)
		}
		got, err := w.st.FindFileVersion(ctx, w.core.ID, "scripts/train.sh", 2)
		if err != nil || got.SHA256 != v2.SHA256 || got.VersionID != v2.VersionID || got.Path != "scripts/train.sh" {
			t.Errorf("FindFileVersion 2 = %+v, %v", got, err)
		}
		if latest, err := w.st.FindFileVersion(ctx, w.core.ID, "scripts/train.sh", 0); err != nil || latest.No != 3 {
			t.Errorf("FindFileVersion 0 = %+v, %v; want the latest", latest, err)
		}
		_, err = w.st.FindFileVersion(ctx, w.core.ID, "scripts/train.sh", 9)
		storetest.AssertCode(t, err, errs.NotFound, "files.version_not_found")
		_, err = w.st.FindTaskFile(ctx, w.core.ID, "scripts/missing.sh")
		storetest.AssertCode(t, err, errs.NotFound, "files.not_found")
	})
}

func TestFilePathsAreChecked(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"":                              "files.path_required",
		"../etc/passwd":                 "files.path_traversal",
		"a/../../b":                     "files.path_traversal",
		"./a":                           "files.path_traversal",
		"/abs/path":                     "files.path_empty_segment",
		"dir/":                          "files.path_empty_segment",
		"a//b":                          "files.path_empty_segment",
		`a\b`:                           "files.path_backslash",
		"a\x00b":                        "files.path_control",
		"tab\there":                     "files.path_control",
		"line\nbreak":                   "files.path_control",
		"bidi\u202eexe.sh":              "files.path_control",
		string([]byte{'a', 0xff}):       "files.path_control",
		" lead.sh":                      "files.path_blank_edge",
		"dir /x":                        "files.path_blank_edge",
		strings.Repeat("长", 301):        "files.path_too_long",
		strings.Repeat("a", 201) + "/b": "files.path_segment_too_long",
	}
	for p, key := range bad {
		err := store.ValidateFilePath(p)
		e := storetest.AssertCode(t, err, errs.Invalid, key)
		if e.Fields["path"] != key {
			t.Errorf("%q: fields %v, want path", p, e.Fields)
		}
	}
	for _, p := range []string{"train.sh", "scripts/train.sh", "配置/训练 参数.yaml", "a-b_c.d/e~f", ".env", "x/..y/z..", strings.Repeat("长", 60)} {
		if err := store.ValidateFilePath(p); err != nil {
			t.Errorf("ValidateFilePath(%q): %v", p, err)
		}
	}
}

func TestFilePermissions(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newFileWorld(t, dialect)
		in := version(w.core, "cfg/a.yaml", "a: 1\n", "")
		mustVersion(t, w.st, as(w.member), in)

		// Outsiders are told the files are the team's; nothing is written.
		before := auditCount(t, w.st)
		_, err := w.st.CreateFileVersion(as(w.outsider), version(w.core, "cfg/a.yaml", "a: 2\n", ""))
		storetest.AssertCode(t, err, errs.NotFound, "files.team_only")
		storetest.AssertCode(t, w.st.CheckFileWrite(as(w.outsider), w.core.ID, "cfg/a.yaml"), errs.NotFound, "files.team_only")
		_, err = w.st.FindTaskFiles(as(w.outsider), w.core.ID)
		storetest.AssertCode(t, err, errs.NotFound, "files.team_only")
		_, _, err = w.st.FindFileVersions(as(w.outsider), w.core.ID, "cfg/a.yaml", store.FileVersionFilter{})
		storetest.AssertCode(t, err, errs.NotFound, "files.team_only")

		// The team's viewer reads but may not write.
		if _, err := w.st.FindTaskFiles(as(w.viewer), w.core.ID); err != nil {
			t.Errorf("team viewer reading: %v", err)
		}
		_, err = w.st.CreateFileVersion(as(w.viewer), version(w.core, "cfg/a.yaml", "a: 3\n", ""))
		storetest.AssertCode(t, err, errs.Forbidden, "files.write_not_your_team")
		storetest.AssertCode(t, w.st.CheckFileWrite(as(w.viewer), w.core.ID, "cfg/a.yaml"), errs.Forbidden, "files.write_not_your_team")
		if ok, err := w.st.MayWriteFiles(as(w.viewer), w.core.ID); ok || err != nil {
			t.Errorf("MayWriteFiles(viewer) = %v, %v", ok, err)
		}
		if n := auditCount(t, w.st); n != before {
			t.Errorf("refused writes were audited as changes: +%d", n-before)
		}

		// Members, managers and admins write; nobody without a login does.
		for _, u := range []*store.User{w.member, w.manager, w.admin} {
			if ok, err := w.st.MayWriteFiles(as(u), w.core.ID); !ok || err != nil {
				t.Errorf("MayWriteFiles(%s) = %v, %v", u.Username, ok, err)
			}
			mustVersion(t, w.st, as(u), version(w.core, "cfg/a.yaml", "by "+u.Username, ""))
		}
		_, err = w.st.CreateFileVersion(context.Background(), version(w.core, "cfg/b.yaml", "x", ""))
		storetest.AssertCode(t, err, errs.Unauthorized, "auth.required")

		// The plan is the portal's: people cannot write it, the system can.
		storetest.AssertCode(t, w.st.CheckFileWrite(as(w.member), w.core.ID, store.PlanPath), errs.Invalid, "files.plan_reserved")
		plan := version(w.core, store.PlanPath, "plan: 1\n", "")
		_, err = w.st.CreateFileVersion(as(w.admin), plan)
		storetest.AssertCode(t, err, errs.Invalid, "files.plan_reserved")
		plan.Source = store.FileSourcePlan
		_, err = w.st.CreateFileVersion(as(w.admin), plan)
		storetest.AssertCode(t, err, errs.Invalid, "files.plan_reserved")
		v := mustVersion(t, w.st, context.Background(), plan)
		if v.AuthorID != nil || v.AuthorName != "system" {
			t.Errorf("plan author = %v %q, want the system", v.AuthorID, v.AuthorName)
		}
		bad := version(w.core, "other.txt", "x", "")
		bad.Source = store.FileSourcePlan
		_, err = w.st.CreateFileVersion(context.Background(), bad)
		storetest.AssertCode(t, err, errs.Invalid, "files.plan_reserved")

		_, err = w.st.CreateFileVersion(as(w.member), version(&store.Task{ID: 99999}, "x", "x", ""))
		storetest.AssertCode(t, err, errs.NotFound, "task.not_found")
	})
}

func TestFileWriteConflicts(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newFileWorld(t, dialect)
		ctx := as(w.member)
		mustVersion(t, w.st, ctx, version(w.core, "run/train.py", "print(1)\n", ""))

		stale := version(w.core, "run/train.py", "print(2)\n", "")
		stale.BaseNo = 1
		mustVersion(t, w.st, ctx, stale)
		stale.SHA256 = strings.Repeat("a", 64)
		e := storetest.AssertCode(t, func() error { _, err := w.st.CreateFileVersion(ctx, stale); return err }(), errs.Conflict, "files.changed_meanwhile")
		if len(e.Args) != 1 || e.Args[0] != 2 {
			t.Errorf("changed_meanwhile args %v, want the latest number 2", e.Args)
		}

		same := version(w.core, "run/train.py", "print(2)\n", "")
		same.SkipIfUnchanged = true
		_, err := w.st.CreateFileVersion(ctx, same)
		storetest.AssertCode(t, err, errs.Conflict, "files.unchanged")

		fresh := version(w.core, "run/train.py", "new", "")
		fresh.MustBeNew = true
		_, err = w.st.CreateFileVersion(ctx, fresh)
		storetest.AssertCode(t, err, errs.Conflict, "files.exists")

		for _, p := range []string{"run/train.py/inner", "run", "run/train.py/a/b"} {
			_, err := w.st.CreateFileVersion(ctx, version(w.core, p, "x", ""))
			e := storetest.AssertCode(t, err, errs.Conflict, "files.path_folder_conflict")
			if e.Fields["path"] == "" {
				t.Errorf("%s: no field message", p)
			}
			storetest.AssertCode(t, w.st.CheckFileWrite(ctx, w.core.ID, p), errs.Conflict, "files.path_folder_conflict")
		}
		// LIKE wildcards in a name are literal.
		mustVersion(t, w.st, ctx, version(w.core, "a_b%/c", "x", ""))
		mustVersion(t, w.st, ctx, version(w.core, "axb/c", "x", ""))
		// Another task may use the same names.
		mustVersion(t, w.st, ctx, version(w.normal, "run", "x", ""))

		_, err = w.st.CreateFileVersion(ctx, func() store.FileVersionInput {
			in := version(w.core, "m.txt", "x", strings.Repeat("字", 501))
			return in
		}())
		storetest.AssertCode(t, err, errs.Invalid, "files.message_too_long")
		_, err = w.st.CreateFileVersion(ctx, version(w.core, "m.txt", "x", "two\nlines"))
		storetest.AssertCode(t, err, errs.Invalid, "files.message_control")
	})
}

// Writers of one file at once each get their own number, none lost.
func TestConcurrentFileVersions(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newFileWorld(t, dialect)
		const n = 8
		var wg sync.WaitGroup
		nos := make([]int, n)
		errc := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := w.st.CreateFileVersion(as(w.member), version(w.core, "same.txt", fmt.Sprint("writer ", i), ""))
				if err != nil {
					errc <- err
					return
				}
				nos[i] = v.No
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatalf("concurrent write: %v", err)
		}
		slices.Sort(nos)
		for i, no := range nos {
			if no != i+1 {
				t.Fatalf("numbers %v, want 1..%d", nos, n)
			}
		}
	})
}
