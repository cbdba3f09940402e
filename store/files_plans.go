package store

import (
	"context"
	"time"
)

// What the plan generator reads: each task's baseline and bookings, the
// audit log's cursor for the tasks that changed, and the newest plan
// version already written.

// TaskPlan is what a task's card-hour plan is written from: the baseline
// and the bookings that hold, held or wait for cards.
type TaskPlan struct {
	Task     Task
	TeamName string
	Bookings []PlanBooking
}

// PlanBooking is one booking as the plan shows it.
type PlanBooking struct {
	ID           int64
	TaskID       int64
	CardTypeName string
	CardCount    int
	StartAt      time.Time
	EndAt        time.Time
	EndedAt      *time.Time
	State        string
	Username     string
}

// FindTaskPlans reads the plans of the given tasks, bookings by start.
// Cancelled bookings are left out: they never held cards.
func (s *Store) FindTaskPlans(ctx context.Context, taskIDs []int64) ([]TaskPlan, error) {
	const op = "store.FindTaskPlans"
	if len(taskIDs) == 0 {
		return nil, nil
	}
	var tasks []Task
	if err := s.read(ctx).Where("id IN ?", taskIDs).Order("id").Find(&tasks).Error; err != nil {
		return nil, translate(op, err)
	}
	var teams []Team
	if err := s.read(ctx).Find(&teams).Error; err != nil {
		return nil, translate(op, err)
	}
	teamName := map[int64]string{}
	for _, t := range teams {
		teamName[t.ID] = t.Name
	}
	var bs []PlanBooking
	err := s.read(ctx).Table("bookings b").
		Select("b.id, b.task_id, ct.name AS card_type_name, b.card_count, b.start_at, b.end_at, b.ended_at, b.state, u.username").
		Joins("JOIN card_types ct ON ct.id = b.card_type_id").
		Joins("JOIN users u ON u.id = b.user_id").
		Where("b.task_id IN ? AND b.state NOT IN ?", taskIDs, withdrawnStates).
		Order("b.start_at, b.id").Scan(&bs).Error
	if err != nil {
		return nil, translate(op, err)
	}
	byTask := map[int64][]PlanBooking{}
	for _, b := range bs {
		byTask[b.TaskID] = append(byTask[b.TaskID], b)
	}
	out := make([]TaskPlan, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, TaskPlan{Task: t, TeamName: teamName[t.TeamID], Bookings: byTask[t.ID]})
	}
	return out, nil
}

// FindTaskIDs lists every task's id, for the first plan sweep.
func (s *Store) FindTaskIDs(ctx context.Context) ([]int64, error) {
	ids := []int64{}
	err := s.read(ctx).Model(&Task{}).Order("id").Pluck("id", &ids).Error
	return ids, translate("store.FindTaskIDs", err)
}

// LastAuditID is the newest audit entry's id, 0 for an empty log.
func (s *Store) LastAuditID(ctx context.Context) (int64, error) {
	var ids []int64
	err := s.read(ctx).Model(&AuditEntry{}).Order("id DESC").Limit(1).Pluck("id", &ids).Error
	if err != nil || len(ids) == 0 {
		return 0, translate("store.LastAuditID", err)
	}
	return ids[0], nil
}

// FindTasksChangedSince lists the tasks whose baseline or bookings changed
// after audit entry afterID, and the newest entry id read. Every change to
// a task or booking is audited, so the log's primary key is a cheap cursor
// where scanning the bookings' update times would read the whole table.
func (s *Store) FindTasksChangedSince(ctx context.Context, afterID int64) ([]int64, int64, error) {
	const op = "store.FindTasksChangedSince"
	var entries []AuditEntry
	err := s.read(ctx).Select("id, entity, entity_id").Where("id > ? AND entity IN ?", afterID, []string{"task", "booking"}).
		Order("id").Limit(5000).Find(&entries).Error
	if err != nil {
		return nil, afterID, translate(op, err)
	}
	last := afterID
	tasks := map[int64]bool{}
	var bookingIDs []int64
	for _, e := range entries {
		last = max(last, e.ID)
		if e.Entity == "task" {
			tasks[e.EntityID] = true
		} else {
			bookingIDs = append(bookingIDs, e.EntityID)
		}
	}
	if len(entries) < 5000 {
		// Entries of other entities after the last task or booking one need
		// not be read again.
		if l, err := s.LastAuditID(ctx); err == nil {
			last = max(last, l)
		}
	}
	if len(bookingIDs) > 0 {
		var ids []int64
		if err := s.read(ctx).Model(&Booking{}).Where("id IN ?", bookingIDs).Distinct().Pluck("task_id", &ids).Error; err != nil {
			return nil, afterID, translate(op, err)
		}
		for _, id := range ids {
			tasks[id] = true
		}
	}
	out := make([]int64, 0, len(tasks))
	for id := range tasks {
		out = append(out, id)
	}
	return out, last, nil
}

// LatestPlanSHA256 returns, per task, the SHA-256 of its plan's newest
// version; tasks without a plan yet are absent.
func (s *Store) LatestPlanSHA256(ctx context.Context, taskIDs []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(taskIDs) == 0 {
		return out, nil
	}
	var rows []FileVersion
	err := s.versionsWithPath(ctx).Where("f.task_id IN ? AND f.path = ? AND v.version_no = f.latest_no", taskIDs, PlanPath).Scan(&rows).Error
	if err != nil {
		return nil, translate("store.LatestPlanSHA256", err)
	}
	for _, r := range rows {
		out[r.TaskID] = r.SHA256
	}
	return out, nil
}
