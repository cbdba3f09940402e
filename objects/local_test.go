package objects_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/objects"
)

// A write that died half-way leaves a temporary file: it is never a version,
// and Walk clears it away once it is stale.
func TestLocalUnfinishedWriteIsNoVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := objects.NewLocal(dir)
	v := mustPut(t, st, "scripts/train.sh", "v1")
	keyDir := filepath.Join(dir, "scripts", "train.sh")
	stray := filepath.Join(keyDir, "~tmp-deadbeef")
	if err := os.WriteFile(stray, []byte("half a vers"), 0o640); err != nil {
		t.Fatal(err)
	}
	vs := mustList(t, st, "scripts/train.sh")
	if len(vs) != 1 || vs[0].VersionID != v.VersionID {
		t.Fatalf("versions with a stray temp file = %+v, want only v1", vs)
	}
	if got, _ := mustGet(t, st, "scripts/train.sh", ""); got != "v1" {
		t.Errorf("latest = %q, want v1", got)
	}
	// A fresh temp file may be a write in progress: kept.
	if err := st.Walk(ctx, "", func(objects.Version) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a fresh temp file was removed: %v", err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stray, old, old); err != nil {
		t.Fatal(err)
	}
	if err := st.Walk(ctx, "", func(objects.Version) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("a stale temp file is still there (err %v)", err)
	}
}

// Keys stay readable on disk, and a key segment that looks like a version
// file cannot be taken for one.
func TestLocalLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := objects.NewLocal(dir)
	v := mustPut(t, st, "tasks/7/files/plan/card-hours.yaml", "plan")
	if _, err := os.Stat(filepath.Join(dir, "tasks", "7", "files", "plan", "card-hours.yaml", "~"+v.VersionID)); err != nil {
		t.Errorf("version file not where expected: %v", err)
	}
	w := mustPut(t, st, "k/~"+v.VersionID, "tricky")
	if _, err := os.Stat(filepath.Join(dir, "k", "~~"+v.VersionID, "~"+w.VersionID)); err != nil {
		t.Errorf("a key segment starting with ~ is not escaped on disk: %v", err)
	}
	if vs := mustList(t, st, "k"); len(vs) != 0 {
		t.Errorf("key k has versions %+v; the tricky sub-key must not count", vs)
	}
	var keys []string
	_ = st.Walk(ctx, "k", func(v objects.Version) error { keys = append(keys, v.Key); return nil })
	if strings.Join(keys, ",") != "k/~"+v.VersionID {
		t.Errorf("Walk keys = %q", keys)
	}
}

func TestLocalDescribeRefusesAnUnwritableDirectory(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st := objects.NewLocal(filepath.Join(file, "objects"))
	if _, err := st.Describe(ctx); !errs.Is(err, errs.Unavailable) {
		t.Errorf("Describe under a file: %v, want unavailable", err)
	}
	if _, err := st.Put(ctx, "a", []byte("x")); !errs.Is(err, errs.Unavailable) {
		t.Errorf("Put under a file: %v, want unavailable", err)
	}
}
