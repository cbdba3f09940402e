package objects

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"cardhour/errs"
)

// Local keeps versions in a directory tree: each key is a directory (its
// segments escaped, see escapeSegment) holding one file per version. A
// write goes to a temporary file in that directory, is synced, and is then
// renamed to its version name and the directory synced, so a crash leaves
// either the whole version or none (a stray temporary file at most, which
// Walk clears away).
type Local struct {
	root string
	ids  idSource
}

// NewLocal returns a store rooted at dir; the directory is created on the
// first write.
func NewLocal(dir string) *Local {
	return &Local{root: dir, ids: idSource{now: time.Now}}
}

// staleTemp is how old an unfinished write must be before Walk removes it;
// younger ones may belong to a write still in progress.
const staleTemp = time.Hour

func (l *Local) dirOf(key string) string {
	return filepath.Join(l.root, filepath.FromSlash(escapeKey(key)))
}

// fsErr codes a file system error: a missing file is NotFound, anything
// else (a full disk, permissions) Unavailable, since retrying later may work
// and the user can do nothing about it but wait.
func fsErr(op string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errs.Wrap(errs.NotFound, op, err)
	}
	return &errs.Error{Code: errs.Unavailable, Op: op, Key: "objects.unavailable", Err: err}
}

// Put writes data as a new version file.
func (l *Local) Put(ctx context.Context, key string, data []byte) (Version, error) {
	const op = "objects.Local.Put"
	if err := ValidateKey(key); err != nil {
		return Version{}, err
	}
	if err := ctx.Err(); err != nil {
		return Version{}, errs.Wrap(errs.Unavailable, op, err)
	}
	id := l.ids.next()
	if err := l.writeVersion(key, versionName(id, false), data); err != nil {
		return Version{}, fsErr(op, err)
	}
	sum := sha256.Sum256(data)
	return Version{Key: key, VersionID: id, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), ModTime: idTime(id), IsLatest: true}, nil
}

// writeVersion stores data under name in key's directory, crash-safely.
func (l *Local) writeVersion(key, name string, data []byte) error {
	dir := l.dirOf(key)
	if err := mkdirAllSynced(dir); err != nil {
		return err
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	tmp := filepath.Join(dir, tmpPrefix+hex.EncodeToString(suffix))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(dir, name))
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return werr
	}
	return syncDir(dir)
}

// mkdirAllSynced creates dir and its missing parents, syncing each parent
// whose entries changed so the new directories survive a crash.
func mkdirAllSynced(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// versionsIn lists the versions stored in dir for key, newest first.
func (l *Local) versionsIn(key, dir string) ([]Version, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Version
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		id, marker, ok := parseVersionName(e.Name())
		if !ok {
			continue
		}
		v := Version{Key: key, VersionID: id, DeleteMarker: marker, ModTime: idTime(id)}
		if !marker {
			fi, err := e.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed while listing
				}
				return nil, err
			}
			v.Size = fi.Size()
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VersionID > out[j].VersionID })
	if len(out) > 0 {
		out[0].IsLatest = true
	}
	return out, nil
}

// ListVersions lists key's versions newest first.
func (l *Local) ListVersions(ctx context.Context, key string) ([]Version, error) {
	const op = "objects.Local.ListVersions"
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	vs, err := l.versionsIn(key, l.dirOf(key))
	if err != nil {
		return nil, fsErr(op, err)
	}
	return vs, nil
}

// Get opens a version; "" is the latest.
func (l *Local) Get(ctx context.Context, key, versionID string) (io.ReadCloser, Version, error) {
	const op = "objects.Local.Get"
	if err := ValidateKey(key); err != nil {
		return nil, Version{}, err
	}
	dir := l.dirOf(key)
	var v Version
	if versionID == "" {
		vs, err := l.versionsIn(key, dir)
		if err != nil {
			return nil, Version{}, fsErr(op, err)
		}
		if len(vs) == 0 || vs[0].DeleteMarker {
			return nil, Version{}, notFound(op, key, "")
		}
		v = vs[0]
	} else {
		if !isOwnID(versionID) {
			return nil, Version{}, notFound(op, key, versionID)
		}
		v = Version{Key: key, VersionID: versionID, ModTime: idTime(versionID)}
	}
	f, err := os.Open(filepath.Join(dir, versionName(v.VersionID, false)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Version{}, notFound(op, key, versionID)
		}
		return nil, Version{}, fsErr(op, err)
	}
	if fi, err := f.Stat(); err == nil {
		v.Size = fi.Size()
	}
	return f, v, nil
}

// Delete writes a delete marker.
func (l *Local) Delete(ctx context.Context, key string) (Version, error) {
	const op = "objects.Local.Delete"
	if err := ValidateKey(key); err != nil {
		return Version{}, err
	}
	id := l.ids.next()
	if err := l.writeVersion(key, versionName(id, true), nil); err != nil {
		return Version{}, fsErr(op, err)
	}
	return Version{Key: key, VersionID: id, ModTime: idTime(id), DeleteMarker: true, IsLatest: true}, nil
}

// Copy writes an older version's content as the new latest version.
func (l *Local) Copy(ctx context.Context, key, fromVersionID string) (Version, error) {
	return copyByReading(ctx, l, key, fromVersionID)
}

// copyByReading is Copy for any store: read the old version, put it again.
// Server-side copy of a given version is not offered by every S3-compatible
// store, and files here are small enough to pass through memory.
func copyByReading(ctx context.Context, s Store, key, fromVersionID string) (Version, error) {
	if fromVersionID == "" {
		return Version{}, errs.Wrap(errs.Invalid, "objects.Copy", errors.New("copy needs a version id"))
	}
	rc, _, err := s.Get(ctx, key, fromVersionID)
	if err != nil {
		return Version{}, err
	}
	var buf bytes.Buffer
	_, err = io.Copy(&buf, rc)
	_ = rc.Close()
	if err != nil {
		return Version{}, &errs.Error{Code: errs.Unavailable, Op: "objects.Copy", Key: "objects.unavailable", Err: err}
	}
	return s.Put(ctx, key, buf.Bytes())
}

// RemoveVersion deletes one version file for good.
func (l *Local) RemoveVersion(ctx context.Context, key, versionID string) error {
	const op = "objects.Local.RemoveVersion"
	if err := ValidateKey(key); err != nil {
		return err
	}
	if !isOwnID(versionID) {
		return notFound(op, key, versionID)
	}
	dir := l.dirOf(key)
	err := os.Remove(filepath.Join(dir, versionName(versionID, false)))
	if errors.Is(err, fs.ErrNotExist) {
		err = os.Remove(filepath.Join(dir, versionName(versionID, true)))
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound(op, key, versionID)
		}
		return fsErr(op, err)
	}
	return syncDir(dir)
}

// Walk visits every version under prefix and clears away stale temporary
// files left by writes that never finished.
func (l *Local) Walk(ctx context.Context, prefix string, fn func(Version) error) error {
	const op = "objects.Local.Walk"
	start := l.root
	if prefix = strings.Trim(prefix, "/"); prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return err
		}
		start = l.dirOf(prefix)
	}
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.IsDir() {
			if strings.HasPrefix(d.Name(), tmpPrefix) {
				if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
					_ = os.Remove(path)
				}
			}
			return nil
		}
		rel, err := filepath.Rel(l.root, path)
		if err != nil || rel == "." {
			return nil
		}
		key := unescapeKey(filepath.ToSlash(rel))
		vs, err := l.versionsIn(key, path)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if _, coded := errs.As(err); coded {
			return err
		}
		return fsErr(op, err)
	}
	return nil
}

// Describe checks that the directory can be created and written.
func (l *Local) Describe(ctx context.Context) (Info, error) {
	info := Info{Backend: "local", Location: l.root, Versioning: Native, Detail: "version files in the directory"}
	if err := mkdirAllSynced(l.root); err != nil {
		return info, fsErr("objects.Local.Describe", fmt.Errorf("object directory %s: %w", l.root, err))
	}
	f, err := os.CreateTemp(l.root, tmpPrefix+"probe-")
	if err != nil {
		return info, fsErr("objects.Local.Describe", fmt.Errorf("object directory %s is not writable: %w", l.root, err))
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return info, nil
}
