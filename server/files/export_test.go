package files

import (
	"context"
	"time"

	"cardhour/store"
	"cardhour/web"
)

// Hooks for the external tests of task files.

// SyncPlansNow runs the plan sync the ticker would run next.
func (a *Area) SyncPlansNow(ctx context.Context) error { return a.files.syncPlans(ctx, false) }

// SetOrphanGrace changes how old an object without a row must be before
// reconciliation removes it.
func (a *Area) SetOrphanGrace(d time.Duration) { a.files.orphanGrace = d }

// DiffLines is the line diff of the diff page.
func DiffLines(a, b []byte) ([]web.DiffHunk, int, int, bool) { return diffLines(a, b) }

// IsText is the text/binary test of the file pages.
func IsText(b []byte) bool { return isText(b) }

// RenderPlan writes a card-hour plan.
func RenderPlan(p store.TaskPlan, tz *time.Location) []byte { return renderPlan(p, tz) }
