package files

import (
	"context"
	"time"

	"cardhour/objects"
)

// ReconcileReport says what reconciling the database with object storage
// found and did.
type ReconcileReport struct {
	Rows    int // version rows in the database
	Objects int // versions in object storage under the files prefix
	Orphans int // objects without a row
	Removed int // orphans removed (old enough to be no write in progress)
	Missing int // rows whose object is gone (logged; nothing to restore from)
}

// Reconcile compares every version row with the versions in object
// storage. A write stores the object first and the row second, and takes
// the object back if the row is refused; a crash or an outage between the
// two can still leave an object without a row, which is removed here once
// it is older than the grace period. A row without its object cannot be
// mended: it is logged so an operator can restore the bucket.
func (a *Area) Reconcile(ctx context.Context) (ReconcileReport, error) {
	return a.files.reconcile(ctx)
}

func (f *service) reconcile(ctx context.Context) (ReconcileReport, error) {
	f.reconcileMu.Lock()
	defer f.reconcileMu.Unlock()
	var rep ReconcileReport
	refs, err := f.st.FindFileVersionRefs(ctx)
	if err != nil {
		return rep, err
	}
	rep.Rows = len(refs)
	type ref struct{ key, id string }
	known := make(map[ref]bool, len(refs))
	for _, r := range refs {
		known[ref{r.ObjectKey, r.VersionID}] = true
	}
	seen := map[ref]bool{}
	var orphans []objects.Version
	obj := f.objects()
	err = obj.Walk(ctx, filesPrefix, func(v objects.Version) error {
		if v.DeleteMarker {
			return nil
		}
		rep.Objects++
		k := ref{v.Key, v.VersionID}
		seen[k] = true
		if !known[k] {
			orphans = append(orphans, v)
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	cutoff := time.Now().Add(-f.orphanGrace)
	for _, v := range orphans {
		rep.Orphans++
		if v.ModTime.After(cutoff) {
			continue
		}
		if err := obj.RemoveVersion(ctx, v.Key, v.VersionID); err != nil {
			f.log.Warn("could not remove an object version without a row", "key", v.Key, "version_id", v.VersionID, "err", err)
			continue
		}
		rep.Removed++
		f.log.Info("removed an object version without a row (an interrupted write)", "key", v.Key, "version_id", v.VersionID)
	}
	for _, r := range refs {
		if !seen[ref{r.ObjectKey, r.VersionID}] {
			rep.Missing++
			if rep.Missing <= 20 {
				f.log.Error("a file version's content is missing from object storage", "task", r.TaskID, "path", r.Path,
					"version", r.No, "key", r.ObjectKey, "version_id", r.VersionID)
			}
		}
	}
	f.mu.Lock()
	f.reconciled = true
	f.mu.Unlock()
	return rep, nil
}

// reconcileIfPending retries a reconciliation that could not run at start
// (object storage away), once it can.
func (f *service) reconcileIfPending(ctx context.Context) {
	f.mu.RLock()
	done := f.reconciled
	f.mu.RUnlock()
	if done {
		return
	}
	rep, err := f.reconcile(ctx)
	if err != nil {
		f.log.Debug("files reconciliation still pending", "err", err)
		return
	}
	f.log.Info("files reconciled with object storage", "rows", rep.Rows, "objects", rep.Objects, "orphans", rep.Orphans,
		"removed", rep.Removed, "missing", rep.Missing)
}
