package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/config"
	"cardhour/errs"
	"cardhour/objects"
	"cardhour/store"
)

// service is the task files' engine: the object store beside the database, and
// the state of the plan generator and of reconciliation.
type service struct {
	st       *store.Store
	log      *slog.Logger
	maxBytes int64
	tz       *time.Location

	mu  sync.RWMutex
	obj objects.Store

	// Plan generation: its state is touched by one sync at a time.
	planCursor  int64 // audit log id read up to
	planStarted bool  // the first full sweep is done
	planRetry   map[int64]bool
	planWritten map[int64]time.Time // when each task's plan was last saved

	// Reconciliation: pending until it has run once against the store.
	reconciled  bool
	orphanGrace time.Duration
	reconcileMu sync.Mutex
}

// orphanGrace is how old an object without a row must be before
// reconciliation removes it: a younger one may belong to a write in
// progress in another portal process.
const orphanGrace = 10 * time.Minute

// newFiles opens the object store the configuration names. Opening makes
// no network call; a store that cannot be opened at all (no S3 credentials
// anywhere) answers every request as unavailable and is logged.
func newService(cfg config.Config, st *store.Store, log *slog.Logger) *service {
	f := &service{st: st, log: log, maxBytes: cfg.MaxFileBytes, tz: cfg.TZ, planRetry: map[int64]bool{}, orphanGrace: orphanGrace}
	if f.maxBytes <= 0 {
		f.maxBytes = 10 << 20
	}
	if f.tz == nil {
		f.tz = time.UTC
	}
	loc := cfg.Objects
	if loc.Kind == "" {
		loc = objects.Location{Kind: "local", Dir: cfg.DataDir + "/objects"}
	}
	obj, err := objects.Open(context.Background(), loc, cfg.S3)
	if err != nil {
		log.Error("object storage cannot be opened; task files are unavailable", "location", loc.String(), "err", err)
		obj = brokenStore{err: err}
	}
	f.obj = obj
	return f
}

// UseObjects replaces the object store (main opens and checks it at start).
func (a *Area) UseObjects(o objects.Store) {
	a.files.mu.Lock()
	defer a.files.mu.Unlock()
	a.files.obj = o
	a.files.reconciled = false
}

func (f *service) objects() objects.Store {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.obj
}

// brokenStore stands in for a store that could not be opened.
type brokenStore struct{ err error }

func (b brokenStore) fail() error {
	return &errs.Error{Code: errs.Unavailable, Op: "objects.open", Key: "objects.unavailable", Err: b.err}
}
func (b brokenStore) Put(context.Context, string, []byte) (objects.Version, error) {
	return objects.Version{}, b.fail()
}
func (b brokenStore) Get(context.Context, string, string) (io.ReadCloser, objects.Version, error) {
	return nil, objects.Version{}, b.fail()
}
func (b brokenStore) ListVersions(context.Context, string) ([]objects.Version, error) {
	return nil, b.fail()
}
func (b brokenStore) Delete(context.Context, string) (objects.Version, error) {
	return objects.Version{}, b.fail()
}
func (b brokenStore) Copy(context.Context, string, string) (objects.Version, error) {
	return objects.Version{}, b.fail()
}
func (b brokenStore) RemoveVersion(context.Context, string, string) error { return b.fail() }
func (b brokenStore) Walk(context.Context, string, func(objects.Version) error) error {
	return b.fail()
}
func (b brokenStore) Describe(context.Context) (objects.Info, error) { return objects.Info{}, b.fail() }

// fileKey is where a task file's versions live in the object store.
func fileKey(taskID int64, path string) string {
	return "tasks/" + strconv.FormatInt(taskID, 10) + "/files/" + path
}

// filesPrefix holds every task's files; reconciliation walks it.
const filesPrefix = "tasks"

// saveRequest is one write of a file.
type saveRequest struct {
	TaskID       int64
	Path         string
	Data         []byte // nil for a rollback, which copies From
	From         *store.FileVersion
	Message      string
	Source       string
	BaseNo       int
	MustBeNew    bool
	checkedWrite bool // the caller already ran CheckFileWrite
}

// saveResult is the version a save left as latest, and whether it is new.
type saveResult struct {
	Version *store.FileVersion
	Created bool
}

func tooLarge(op string, limit int64) error {
	return &errs.Error{Code: errs.TooLarge, Op: op, Key: "files.too_large", Args: []any{mib(limit)},
		Fields: map[string]string{"file": "files.too_large"}}
}

func mib(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64)
}

// save writes a new version: check everything the database can refuse,
// put the content, record the row, and take the content back out if the
// row is refused after all. Content equal to the latest version's adds no
// version (Created false). An unreachable store is errs.Unavailable and
// leaves nothing behind.
func (f *service) save(ctx context.Context, r saveRequest) (saveResult, error) {
	const op = "server.files.save"
	obj := f.objects()
	var want string
	if r.From != nil {
		want = r.From.SHA256
	} else {
		if int64(len(r.Data)) > f.maxBytes {
			return saveResult{}, tooLarge(op, f.maxBytes)
		}
		sum := sha256.Sum256(r.Data)
		want = hex.EncodeToString(sum[:])
	}
	if r.Source == store.FileSourcePlan {
		if err := store.ValidateFilePath(r.Path); err != nil {
			return saveResult{}, err
		}
	} else if !r.checkedWrite {
		if err := f.st.CheckFileWrite(ctx, r.TaskID, r.Path); err != nil {
			return saveResult{}, err
		}
	}
	if r.Source != store.FileSourcePlan {
		latest, err := f.st.FindTaskFile(ctx, r.TaskID, r.Path)
		switch {
		case err == nil && r.MustBeNew:
			return saveResult{}, &errs.Error{Code: errs.Conflict, Op: op, Key: "files.exists", Args: []any{r.Path}, Fields: map[string]string{"path": "files.exists"}}
		case err == nil && r.BaseNo > 0 && latest.LatestNo != r.BaseNo:
			return saveResult{}, errs.E(errs.Conflict, op, "files.changed_meanwhile", latest.LatestNo)
		case err == nil && latest.Latest != nil && latest.Latest.SHA256 == want:
			return saveResult{Version: latest.Latest}, nil
		case err != nil && !errs.Is(err, errs.NotFound):
			return saveResult{}, err
		}
	}
	key := fileKey(r.TaskID, r.Path)
	var ov objects.Version
	var err error
	if r.From != nil {
		ov, err = obj.Copy(ctx, r.From.ObjectKey, r.From.VersionID)
		if err == nil && (ov.SHA256 != want || ov.Key != key) {
			f.removeObject(ov)
			f.log.Error("stored version does not match its checksum", "key", r.From.ObjectKey, "version_id", r.From.VersionID, "want", want, "got", ov.SHA256)
			return saveResult{}, errs.E(errs.Internal, op, "files.corrupt")
		}
	} else {
		ov, err = obj.Put(ctx, key, r.Data)
	}
	if err != nil {
		if errs.Is(err, errs.NotFound) && r.From != nil {
			return saveResult{}, f.objectMissing(op, r.From, err)
		}
		return saveResult{}, err
	}
	in := store.FileVersionInput{TaskID: r.TaskID, Path: r.Path, ObjectKey: key, VersionID: ov.VersionID, Size: ov.Size,
		SHA256: want, Message: r.Message, Source: r.Source, BaseNo: r.BaseNo, MustBeNew: r.MustBeNew, SkipIfUnchanged: true}
	if r.From != nil {
		no := r.From.No
		in.RestoredFrom = &no
	}
	v, err := f.st.CreateFileVersion(ctx, in)
	if err != nil {
		f.removeObject(ov)
		if e, ok := errs.As(err); ok && e.Key == "files.unchanged" {
			latest, lerr := f.st.FindFileVersion(ctx, r.TaskID, r.Path, 0)
			if lerr == nil {
				return saveResult{Version: latest}, nil
			}
		}
		return saveResult{}, err
	}
	return saveResult{Version: v, Created: true}, nil
}

// removeObject takes back content whose row was refused. If the store is
// gone now, reconciliation at the next start removes it.
func (f *service) removeObject(v objects.Version) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.objects().RemoveVersion(ctx, v.Key, v.VersionID); err != nil {
		f.log.Warn("could not remove an unrecorded object version; reconciliation will", "key", v.Key, "version_id", v.VersionID, "err", err)
	}
}

func (f *service) objectMissing(op string, v *store.FileVersion, err error) error {
	f.log.Error("a file version's content is missing from object storage", "task", v.TaskID, "path", v.Path,
		"version", v.No, "key", v.ObjectKey, "version_id", v.VersionID, "err", err)
	return errs.E(errs.NotFound, op, "files.object_missing", v.No)
}

// read loads a version's content and checks it against the recorded size
// and SHA-256, so what a user sees is what was saved.
func (f *service) read(ctx context.Context, v *store.FileVersion) ([]byte, error) {
	const op = "server.files.read"
	rc, _, err := f.objects().Get(ctx, v.ObjectKey, v.VersionID)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return nil, f.objectMissing(op, v, err)
		}
		return nil, err
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(rc, v.Size+1)); err != nil {
		if _, coded := errs.As(err); coded {
			return nil, err
		}
		return nil, &errs.Error{Code: errs.Unavailable, Op: op, Key: "objects.unavailable", Err: err}
	}
	sum := sha256.Sum256(buf.Bytes())
	if int64(buf.Len()) != v.Size || hex.EncodeToString(sum[:]) != v.SHA256 {
		f.log.Error("a file version's content does not match its checksum", "task", v.TaskID, "path", v.Path, "version", v.No,
			"key", v.ObjectKey, "version_id", v.VersionID, "size", buf.Len(), "want_size", v.Size)
		return nil, errs.E(errs.Internal, op, "files.corrupt")
	}
	return buf.Bytes(), nil
}

// rollback makes version no's content the latest again.
func (f *service) rollback(ctx context.Context, taskID int64, path string, no int, message string) (saveResult, error) {
	const op = "server.files.rollback"
	if err := f.st.CheckFileWrite(ctx, taskID, path); err != nil {
		return saveResult{}, err
	}
	from, err := f.st.FindFileVersion(ctx, taskID, path, no)
	if err != nil {
		return saveResult{}, err
	}
	latest, err := f.st.FindFileVersion(ctx, taskID, path, 0)
	if err != nil {
		return saveResult{}, err
	}
	if latest.No == from.No {
		return saveResult{}, errs.E(errs.Conflict, op, "files.rollback_latest", no)
	}
	return f.save(ctx, saveRequest{TaskID: taskID, Path: path, From: from, Message: message, Source: store.FileSourceRollback, checkedWrite: true})
}

// readLimited reads at most limit bytes; more is errs.TooLarge.
func readLimited(op string, r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		var he *echo.HTTPError
		if errors.As(err, &mbe) || (errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge) {
			return nil, tooLarge(op, limit)
		}
		return nil, errs.Wrap(errs.Invalid, op, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(op, limit)
	}
	return b, nil
}
