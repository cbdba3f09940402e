package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// BookingTemplate freezes a task baseline and a booking shape so the next
// round is one step ("固化取用模板"): same card type, count, length and
// baseline, new name and start.
type BookingTemplate struct {
	ID                  int64     `json:"id"`
	TeamID              int64     `json:"team_id"`
	Name                string    `json:"name"`
	Priority            string    `json:"priority"`
	EstimateCardSeconds int64     `json:"-"`
	DataReadiness       string    `json:"data_readiness"`
	VRAMGiB             float64   `json:"vram_gib" gorm:"column:vram_gib"`
	Precision           string    `json:"precision" gorm:"column:compute_precision"`
	ImageID             *int64    `json:"image_id"`
	CardTypeID          int64     `json:"card_type_id"`
	CardCount           int       `json:"count"`
	DurationSeconds     int64     `json:"duration_seconds"`
	Notes               string    `json:"notes"`
	CreatedBy           int64     `json:"created_by"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

func (BookingTemplate) TableName() string { return "booking_templates" }

// EstimateCardHours is the frozen baseline estimate.
func (t BookingTemplate) EstimateCardHours() float64 { return float64(t.EstimateCardSeconds) / 3600 }

// TemplateInput creates a template from a task and a booking shape.
type TemplateInput struct {
	Name       string
	TaskID     int64
	CardTypeID int64
	Count      int
	Duration   time.Duration
}

// CreateTemplateFromTask saves the task's baseline with a booking shape.
func (s *Store) CreateTemplateFromTask(ctx context.Context, in TemplateInput) (*BookingTemplate, error) {
	const op = "store.CreateTemplate"
	in.Name = strings.TrimSpace(in.Name)
	v := errs.NewValidation(op)
	v.Check(in.Name != "", "name", "field.required")
	lim := s.TemplateLimits()
	lim.checkLen(v, "name", in.Name)
	v.Check(lim["count"].Allows(float64(in.Count)), "count", "booking.count_range", s.policy.MaxCards)
	v.Check(lim["duration_hours"].Allows(in.Duration.Hours()), "duration_hours", "template.duration_range")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var t BookingTemplate
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		u, err := actorUser(ctx, tx, op)
		if err != nil {
			return err
		}
		var task Task
		if err := tx.First(&task, in.TaskID).Error; err != nil {
			return fieldErr(op, "task_id", "task.not_found")
		}
		ok, err := mayBookFor(tx, u, task.TeamID)
		if err != nil {
			return err
		}
		if !ok {
			return fieldErr(op, "task_id", "booking.not_your_team")
		}
		var n int64
		if err := tx.Model(&CardType{}).Where("id = ?", in.CardTypeID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return fieldErr(op, "card_type", "cardtype.not_found")
		}
		now := s.now()
		t = BookingTemplate{TeamID: task.TeamID, Name: in.Name, Priority: task.Priority, EstimateCardSeconds: task.EstimateCardSeconds,
			DataReadiness: task.DataReadiness, VRAMGiB: task.VRAMGiB, Precision: task.Precision, ImageID: task.ImageID,
			CardTypeID: in.CardTypeID, CardCount: in.Count, DurationSeconds: int64(in.Duration / time.Second), Notes: task.Notes,
			CreatedBy: u.ID, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(&t).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "template", t.ID, t.Name, nil, t)
	})
	if err != nil {
		return nil, nameTaken(err, "template.name_taken")
	}
	return &t, nil
}

// FindTemplates lists the teams' templates by name.
func (s *Store) FindTemplates(ctx context.Context, teamIDs []int64) ([]BookingTemplate, error) {
	q := s.read(ctx).Order("name")
	if teamIDs != nil {
		if len(teamIDs) == 0 {
			return nil, nil
		}
		q = q.Where("team_id IN ?", teamIDs)
	}
	var out []BookingTemplate
	if err := q.Find(&out).Error; err != nil {
		return nil, translate("store.FindTemplates", err)
	}
	return out, nil
}

// FindTemplateByID returns one template.
func (s *Store) FindTemplateByID(ctx context.Context, id int64) (*BookingTemplate, error) {
	var t BookingTemplate
	if err := s.read(ctx).First(&t, id).Error; err != nil {
		return nil, withKey(translate("store.FindTemplateByID", err), "template.not_found")
	}
	return &t, nil
}

// DeleteTemplate removes a template; the actor must be able to book for its team.
func (s *Store) DeleteTemplate(ctx context.Context, id int64) error {
	const op = "store.DeleteTemplate"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var t BookingTemplate
		if err := tx.First(&t, id).Error; err != nil {
			return withKey(translate(op, err), "template.not_found")
		}
		u, err := actorUser(ctx, tx, op)
		if err != nil {
			return err
		}
		if ok, err := mayBookFor(tx, u, t.TeamID); err != nil || !ok {
			if err != nil {
				return err
			}
			return errs.E(errs.Forbidden, op, "booking.not_your_team")
		}
		if err := tx.Delete(&t).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "delete", "template", t.ID, t.Name, t, nil)
	})
}

// UseTemplate creates, in one step, a new task from the template's baseline
// and books its shape starting at start.
func (s *Store) UseTemplate(ctx context.Context, id int64, taskName string, start time.Time, queue bool) (*Task, *BookingResult, error) {
	t, err := s.FindTemplateByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	// Check the window first, so a bad start leaves no task behind.
	v := errs.NewValidation("store.UseTemplate")
	s.validateWindow("store.UseTemplate", start, start.Add(time.Duration(t.DurationSeconds)*time.Second), v)
	if err := v.Err(); err != nil {
		return nil, nil, err
	}
	task, err := s.CreateTask(ctx, TaskInput{TeamID: t.TeamID, Name: taskName, Priority: t.Priority,
		EstimateCardHours: t.EstimateCardHours(), DataReadiness: t.DataReadiness, VRAMGiB: t.VRAMGiB, Precision: t.Precision,
		CardTypeIDs: []int64{t.CardTypeID}, ImageID: t.ImageID, Notes: t.Notes})
	if err != nil {
		return nil, nil, err
	}
	start = start.UTC()
	res, err := s.CreateBooking(ctx, BookingRequest{TaskID: task.ID, CardTypeID: t.CardTypeID, Count: t.CardCount,
		Start: start, End: start.Add(time.Duration(t.DurationSeconds) * time.Second), Queue: queue})
	if err != nil {
		// The task stays: its baseline is valid on its own and the member can
		// book it by hand with another window.
		return task, nil, err
	}
	return task, res, nil
}
