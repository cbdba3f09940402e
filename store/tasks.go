package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// Task is a unit of work with its baseline ("基线"): priority, card-hour
// estimate and data readiness, plus what it needs of a card.
type Task struct {
	ID                  int64      `json:"id"`
	TeamID              int64      `json:"team_id"`
	Name                string     `json:"name"`
	Priority            string     `json:"priority"`
	EstimateCardSeconds int64      `json:"-"`
	DataReadiness       string     `json:"data_readiness"`
	DataReadyAt         *time.Time `json:"data_ready_at"`
	VRAMGiB             float64    `json:"vram_gib" gorm:"column:vram_gib"`
	Precision           string     `json:"precision" gorm:"column:compute_precision"`
	ImageID             *int64     `json:"image_id"`
	Notes               string     `json:"notes"`
	CreatedBy           int64      `json:"created_by"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
	// CardTypeIDs are the preferred card types, filled by the Find methods.
	CardTypeIDs []int64 `json:"card_type_ids" gorm:"-"`
}

// EstimateCardHours is the baseline estimate in card-hours.
func (t Task) EstimateCardHours() float64 { return schedule.CardHours(t.EstimateCardSeconds) }

type taskCardType struct {
	TaskID     int64
	CardTypeID int64
}

func (taskCardType) TableName() string { return "task_card_types" }

// TaskInput creates or replaces a task.
type TaskInput struct {
	TeamID            int64      `json:"team_id"`
	Name              string     `json:"name"`
	Priority          string     `json:"priority"`
	EstimateCardHours float64    `json:"estimate_card_hours"`
	DataReadiness     string     `json:"data_readiness"`
	DataReadyAt       *time.Time `json:"data_ready_at"`
	VRAMGiB           float64    `json:"vram_gib"`
	Precision         string     `json:"precision"`
	CardTypeIDs       []int64    `json:"card_type_ids"`
	ImageID           *int64     `json:"image_id"`
	Notes             string     `json:"notes"`
}

// TaskFilter narrows FindTasks.
type TaskFilter struct {
	TeamIDs []int64 // any of these teams; nil means all
	TeamID  int64
}

// Priority classes and readiness values, in the order forms show them.
var (
	Priorities     = []string{schedule.Core, schedule.Normal, schedule.Backfill}
	Readinesses    = []string{schedule.DataReady, schedule.DataPartial, schedule.DataNotReady}
	TaskPrecisions = []string{"bf16", "fp16", "fp8", "int8", "tf32", "fp32"}
)

func validPrecision(p string) bool {
	for _, x := range Precisions {
		if p == x {
			return true
		}
	}
	return false
}

func (in *TaskInput) validate(op string) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Notes = strings.TrimSpace(in.Notes)
	v := errs.NewValidation(op)
	v.Check(in.TeamID > 0, "team_id", "task.team_required")
	v.Check(in.Name != "", "name", "field.required")
	v.CheckLen(in.Name, 100, "name")
	v.Check(schedule.PriorityRank(in.Priority) > 0, "priority", "task.priority_invalid")
	v.Check(in.EstimateCardHours > 0 && in.EstimateCardHours <= 1_000_000, "estimate_card_hours", "task.estimate_range")
	v.Check(schedule.ReadinessRank(in.DataReadiness) > 0, "data_readiness", "task.readiness_invalid")
	v.Check(in.VRAMGiB >= 0 && in.VRAMGiB <= 100_000, "vram_gib", "task.vram_range")
	v.Check(in.Precision == "" || validPrecision(in.Precision), "precision", "task.precision_invalid")
	v.CheckLen(in.Notes, 2000, "notes")
	if in.DataReadyAt != nil {
		t := in.DataReadyAt.UTC()
		in.DataReadyAt = &t
	}
	return v.Err()
}

// checkTaskRefs makes unknown team, image or card types field messages.
func checkTaskRefs(tx *gorm.DB, op string, in TaskInput) error {
	v := errs.NewValidation(op)
	var n int64
	if err := tx.Model(&Team{}).Where("id = ?", in.TeamID).Count(&n).Error; err != nil {
		return err
	}
	v.Check(n == 1, "team_id", "team.not_found")
	if in.ImageID != nil {
		if err := tx.Model(&Image{}).Where("id = ?", *in.ImageID).Count(&n).Error; err != nil {
			return err
		}
		v.Check(n == 1, "image_id", "image.not_found")
	}
	if len(in.CardTypeIDs) > 0 {
		if err := tx.Model(&CardType{}).Where("id IN ?", in.CardTypeIDs).Count(&n).Error; err != nil {
			return err
		}
		v.Check(int(n) == len(uniqueIDs(in.CardTypeIDs)), "card_type_ids", "cardtype.not_found")
	}
	return v.Err()
}

func uniqueIDs(ids []int64) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, id := range ids {
		if id > 0 && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (in TaskInput) apply(t *Task) {
	t.TeamID, t.Name, t.Priority = in.TeamID, in.Name, in.Priority
	t.EstimateCardSeconds = int64(in.EstimateCardHours*3600 + 0.5)
	t.DataReadiness, t.DataReadyAt = in.DataReadiness, in.DataReadyAt
	t.VRAMGiB, t.Precision, t.ImageID, t.Notes = in.VRAMGiB, in.Precision, in.ImageID, in.Notes
	t.CardTypeIDs = uniqueIDs(in.CardTypeIDs)
}

func setTaskCardTypes(tx *gorm.DB, taskID int64, ids []int64) error {
	if err := tx.Where("task_id = ?", taskID).Delete(&taskCardType{}).Error; err != nil {
		return err
	}
	for _, id := range ids {
		if err := tx.Create(&taskCardType{TaskID: taskID, CardTypeID: id}).Error; err != nil {
			return err
		}
	}
	return nil
}

// CreateTask adds a task baseline.
func (s *Store) CreateTask(ctx context.Context, in TaskInput) (*Task, error) {
	const op = "store.CreateTask"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var t *Task
	err := s.tx(ctx, op, func(tx *gorm.DB) (err error) {
		t, err = s.createTask(ctx, tx, op, in)
		return err
	})
	if err != nil {
		return nil, nameTaken(err, "task.name_taken")
	}
	return t, nil
}

// createTask writes a validated task inside tx, for CreateTask and for a
// template used to book (whose task and booking commit together or not at
// all). A fresh row each call: a failed run of tx left its id in the last.
func (s *Store) createTask(ctx context.Context, tx *gorm.DB, op string, in TaskInput) (*Task, error) {
	now := s.now()
	t := &Task{CreatedBy: ActorFrom(ctx).UserID, CreatedAt: now, UpdatedAt: now}
	in.apply(t)
	if err := checkTaskRefs(tx, op, in); err != nil {
		return nil, err
	}
	if err := mayPlanFor(ctx, tx, op, in.TeamID); err != nil {
		return nil, err
	}
	if err := tx.Create(t).Error; err != nil {
		return nil, err
	}
	if err := setTaskCardTypes(tx, t.ID, t.CardTypeIDs); err != nil {
		return nil, err
	}
	return t, s.audit(ctx, tx, "create", "task", t.ID, t.Name, nil, t)
}

// UpdateTask replaces a task's baseline. Marking data ready lets the queue
// place the task's waiting bookings, which the caller triggers.
func (s *Store) UpdateTask(ctx context.Context, id int64, in TaskInput) (*Task, error) {
	const op = "store.UpdateTask"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var t Task
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		t = Task{}
		if err := tx.First(&t, id).Error; err != nil {
			return withKey(translate(op, err), "task.not_found")
		}
		if err := checkTaskRefs(tx, op, in); err != nil {
			return err
		}
		if in.TeamID != t.TeamID {
			return &errs.Error{Code: errs.Invalid, Op: op, Key: "task.team_fixed", Fields: map[string]string{"team_id": "task.team_fixed"}}
		}
		if err := mayPlanFor(ctx, tx, op, t.TeamID); err != nil {
			return err
		}
		before := t
		ids, err := taskCardTypeIDs(tx, id)
		if err != nil {
			return err // past a deadlock the rest would commit without what came before
		}
		before.CardTypeIDs = ids
		in.apply(&t)
		t.UpdatedAt = s.now()
		if err := tx.Save(&t).Error; err != nil {
			return err
		}
		if err := setTaskCardTypes(tx, t.ID, t.CardTypeIDs); err != nil {
			return err
		}
		// Bookings copy the task's class when submitted; keep waiting ones in
		// step so the queue orders them by the current baseline.
		if err := tx.Model(&Booking{}).Where("task_id = ? AND state = ?", id, BookingPending).
			Update("priority", t.Priority).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "task", t.ID, t.Name, before, t)
	})
	if err != nil {
		return nil, nameTaken(err, "task.name_taken")
	}
	return &t, nil
}

func taskCardTypeIDs(tx *gorm.DB, taskID int64) ([]int64, error) {
	var ids []int64
	err := tx.Model(&taskCardType{}).Where("task_id = ?", taskID).Order("card_type_id").Pluck("card_type_id", &ids).Error
	return ids, err
}

// FindTaskByID returns one task with its preferred card types.
func (s *Store) FindTaskByID(ctx context.Context, id int64) (*Task, error) {
	const op = "store.FindTaskByID"
	var t Task
	if err := s.read(ctx).First(&t, id).Error; err != nil {
		return nil, withKey(translate(op, err), "task.not_found")
	}
	ids, err := taskCardTypeIDs(s.read(ctx), id)
	if err != nil {
		return nil, translate(op, err)
	}
	t.CardTypeIDs = ids
	return &t, nil
}

// FindTasks lists tasks, core first, then by name.
func (s *Store) FindTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	const op = "store.FindTasks"
	q := s.read(ctx)
	if f.TeamIDs != nil {
		if len(f.TeamIDs) == 0 {
			return nil, nil
		}
		q = q.Where("team_id IN ?", f.TeamIDs)
	}
	if f.TeamID != 0 {
		q = q.Where("team_id = ?", f.TeamID)
	}
	var out []Task
	order := "CASE priority WHEN 'core' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, name"
	if err := q.Order(order).Find(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]int64, len(out))
	for i, t := range out {
		ids[i] = t.ID
	}
	var links []taskCardType
	if err := s.read(ctx).Where("task_id IN ?", ids).Order("card_type_id").Find(&links).Error; err != nil {
		return nil, translate(op, err)
	}
	byTask := map[int64][]int64{}
	for _, l := range links {
		byTask[l.TaskID] = append(byTask[l.TaskID], l.CardTypeID)
	}
	for i := range out {
		out[i].CardTypeIDs = byTask[out[i].ID]
	}
	return out, nil
}

func (Task) TableName() string { return "tasks" }

// mayPlanFor refuses task changes by anyone who may not book for the team:
// a task baseline is the team's plan, written by its members and managers.
func mayPlanFor(ctx context.Context, tx *gorm.DB, op string, teamID int64) error {
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return err
	}
	ok, err := mayBookFor(tx, u, teamID)
	if err != nil {
		return err
	}
	if !ok {
		return fieldErr(op, "team_id", "booking.not_your_team")
	}
	return nil
}
