package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/area"
	"cardhour/store"
)

// Each task's card-hour plan (hours and time windows) is a file of its
// own, store.PlanPath, written from the task's baseline and its bookings.
// A sync on every tick regenerates the plans of tasks whose baseline or
// bookings changed and saves a new version only when the text differs from
// the latest one, so the history shows each real change of plan and
// nothing else. Nothing in the booking code knows about it: the changes
// are found through the audit log, which every booking change writes.

// planBatch bounds how many tasks one query reads.
const planBatch = 100

// planEvery paces the ticker's syncs: a task whose plan was saved less than
// this long ago waits for a later tick. A task booked many times a second
// (thousands of bookings) would otherwise have its whole plan read, written
// and stored as a new version on every tick.
const planEvery = time.Minute

// syncPlans brings the plans of changed tasks up to date. The first call
// sweeps every task, later ones only those changed since the last call.
// Tasks whose plan could not be saved (object storage away) are retried
// on the next call; so are, when paced, those saved within planEvery.
func (f *service) syncPlans(ctx context.Context, paced bool) error {
	var ids []int64
	var next int64
	var err error
	if !f.planStarted {
		if next, err = f.st.LastAuditID(ctx); err != nil {
			return err
		}
		if ids, err = f.st.FindTaskIDs(ctx); err != nil {
			return err
		}
	} else if ids, next, err = f.st.FindTasksChangedSince(ctx, f.planCursor); err != nil {
		return err
	}
	for id := range f.planRetry {
		ids = append(ids, id)
	}
	var firstErr error
	failed := map[int64]bool{}
	if paced {
		due := ids[:0:0]
		for _, id := range ids {
			if time.Since(f.planWritten[id]) < planEvery {
				failed[id] = true // not failed: later
				continue
			}
			due = append(due, id)
		}
		ids = due
	}
	for start := 0; start < len(ids); start += planBatch {
		chunk := ids[start:min(start+planBatch, len(ids))]
		err := f.syncPlanBatch(ctx, chunk, failed)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if errs.Is(err, errs.Unavailable) {
			for _, id := range ids[start:] {
				failed[id] = true
			}
			break
		}
	}
	f.planRetry = failed
	f.planCursor, f.planStarted = next, true
	return firstErr
}

func (f *service) syncPlanBatch(ctx context.Context, ids []int64, failed map[int64]bool) error {
	plans, err := f.st.FindTaskPlans(ctx, ids)
	if err != nil {
		for _, id := range ids {
			failed[id] = true
		}
		return err
	}
	latest, err := f.st.LatestPlanSHA256(ctx, ids)
	if err != nil {
		for _, id := range ids {
			failed[id] = true
		}
		return err
	}
	var firstErr error
	for _, p := range plans {
		text := renderPlan(p, f.tz)
		sum := sha256.Sum256(text)
		if latest[p.Task.ID] == hex.EncodeToString(sum[:]) {
			continue
		}
		// The plan is the portal's own: written without a user in ctx.
		_, err := f.save(store.WithActor(context.WithoutCancel(ctx), store.Actor{Username: "system"}), saveRequest{
			TaskID: p.Task.ID, Path: store.PlanPath, Data: text, Source: store.FileSourcePlan})
		if err == nil {
			if f.planWritten == nil {
				f.planWritten = map[int64]time.Time{}
			}
			f.planWritten[p.Task.ID] = time.Now()
		}
		if err != nil {
			failed[p.Task.ID] = true
			if firstErr == nil {
				firstErr = err
			}
			if errs.Is(err, errs.Unavailable) {
				// The store is away: the rest waits for the next tick rather
				// than each timing out in turn.
				for _, q := range plans {
					failed[q.Task.ID] = true
				}
				return firstErr
			}
		}
	}
	return firstErr
}

// renderPlan writes a plan as YAML a person reads and a diff shows well:
// one fact per line, times in the portal's zone with their offset, and
// nothing that changes with the clock alone (no "elapsed"), so a new
// version means a changed plan.
func renderPlan(p store.TaskPlan, tz *time.Location) []byte {
	var b strings.Builder
	t := p.Task
	q := strconv.Quote
	ts := func(x time.Time) string { return x.In(tz).Format(time.RFC3339) }
	b.WriteString("# 卡时计划 · card-hour plan\n")
	b.WriteString("# Written by cardhour from the task's baseline and bookings whenever they change; edits here are not kept.\n")
	b.WriteString("task:\n")
	b.WriteString("  id: " + strconv.FormatInt(t.ID, 10) + "\n")
	b.WriteString("  name: " + q(t.Name) + "\n")
	b.WriteString("  team: " + q(p.TeamName) + "\n")
	b.WriteString("  priority: " + t.Priority + "\n")
	b.WriteString("  estimate_card_hours: " + schedule.HoursPlain(t.EstimateCardSeconds) + "\n")
	b.WriteString("  data_readiness: " + t.DataReadiness + "\n")
	if t.DataReadyAt != nil {
		b.WriteString("  data_ready_at: " + ts(*t.DataReadyAt) + "\n")
	}
	if t.VRAMGiB > 0 {
		b.WriteString("  vram_gib: " + strconv.FormatFloat(t.VRAMGiB, 'f', -1, 64) + "\n")
	}
	if t.Precision != "" {
		b.WriteString("  precision: " + t.Precision + "\n")
	}
	var planned, waiting int64
	var rows strings.Builder
	for _, bk := range p.Bookings {
		end := bk.EndAt
		status := "booked"
		switch bk.State {
		case store.BookingPending:
			status = "waiting"
		case store.BookingReleased:
			status = "released"
		case store.BookingPreempted:
			status = "preempted"
		}
		if bk.EndedAt != nil && bk.EndedAt.Before(end) && (status == "released" || status == "preempted") {
			end = *bk.EndedAt
		}
		if end.Before(bk.StartAt) {
			end = bk.StartAt
		}
		secs := schedule.CardSeconds(bk.CardCount, bk.StartAt, end)
		if status == "waiting" {
			waiting += secs
		} else {
			planned += secs
		}
		rows.WriteString("  - id: " + strconv.FormatInt(bk.ID, 10) + "\n")
		rows.WriteString("    card_type: " + q(bk.CardTypeName) + "\n")
		rows.WriteString("    cards: " + strconv.Itoa(bk.CardCount) + "\n")
		rows.WriteString("    start: " + ts(bk.StartAt) + "\n")
		rows.WriteString("    end: " + ts(bk.EndAt) + "\n")
		if end.Before(bk.EndAt) {
			rows.WriteString("    ended: " + ts(end) + "\n")
		}
		rows.WriteString("    card_hours: " + schedule.HoursPlain(secs) + "\n")
		rows.WriteString("    status: " + status + "\n")
		rows.WriteString("    booked_by: " + q(bk.Username) + "\n")
	}
	b.WriteString("card_hours:\n")
	b.WriteString("  estimate: " + schedule.HoursPlain(t.EstimateCardSeconds) + "\n")
	b.WriteString("  booked: " + schedule.HoursPlain(planned) + "\n")
	b.WriteString("  waiting: " + schedule.HoursPlain(waiting) + "\n")
	b.WriteString("  remaining: " + schedule.HoursPlain(t.EstimateCardSeconds-planned-waiting) + "\n")
	if len(p.Bookings) == 0 {
		b.WriteString("bookings: []\n")
	} else {
		b.WriteString("bookings:\n")
		b.WriteString(rows.String())
	}
	return []byte(b.String())
}

// syncEvery is how often the plans are brought up to date.
const syncEvery = 10 * time.Second

// Jobs brings the card-hour plans up to date every syncEvery
// (reconciling with object storage first, while that is pending). It runs
// beside the booking tick, never in its way: a slow or unreachable object
// store must not hold bookings back; a failed round is retried on the next.
func (a *Area) Jobs() []area.Job {
	return []area.Job{{Name: "card-hour plan sync", Every: syncEvery, Run: func(ctx context.Context) error {
		a.files.reconcileIfPending(ctx)
		return a.files.syncPlans(ctx, true)
	}, Once: "plan sync"}}
}
