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

// CheckTemplateInput runs a template's own checks (name, count, length)
// without the database, for a form that could not parse every field.
func (s *Store) CheckTemplateInput(in TemplateInput) error {
	in.Name = strings.TrimSpace(in.Name)
	return s.checkTemplate("store.CheckTemplateInput", in)
}

func (s *Store) checkTemplate(op string, in TemplateInput) error {
	v := errs.NewValidation(op)
	v.Check(in.Name != "", "name", "field.required")
	lim := s.TemplateLimits()
	lim.checkLen(v, "name", in.Name)
	v.Check(lim["count"].Allows(float64(in.Count)), "count", "booking.count_range", s.policy.MaxCards)
	v.Check(lim["duration_hours"].Allows(in.Duration.Hours()), "duration_hours", "template.duration_range")
	return v.Err()
}

// CreateTemplateFromTask saves the task's baseline with a booking shape.
func (s *Store) CreateTemplateFromTask(ctx context.Context, in TemplateInput) (*BookingTemplate, error) {
	const op = "store.CreateTemplate"
	in.Name = strings.TrimSpace(in.Name)
	if err := s.checkTemplate(op, in); err != nil {
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

// taskInput is the task a use of the template creates, named name.
func (t BookingTemplate) taskInput(name string) TaskInput {
	return TaskInput{TeamID: t.TeamID, Name: name, Priority: t.Priority, EstimateCardHours: t.EstimateCardHours(),
		DataReadiness: t.DataReadiness, VRAMGiB: t.VRAMGiB, Precision: t.Precision, CardTypeIDs: []int64{t.CardTypeID},
		ImageID: t.ImageID, Notes: t.Notes}
}

// templateRequest is the booking a use of the template asks for from
// start, checked as CreateBooking checks one (its task is made later).
func (s *Store) templateRequest(op string, t *BookingTemplate, start time.Time, queue bool) (BookingRequest, error) {
	req := BookingRequest{CardTypeID: t.CardTypeID, Count: t.CardCount, Start: start,
		End: start.Add(time.Duration(t.DurationSeconds) * time.Second), Queue: queue}
	v := errs.NewValidation(op)
	s.checkBookingShape(op, &req, v)
	return req, v.Err()
}

// PreviewTemplate is what UseTemplate would do — the task it would create
// and the booking with its cost, quota and capacity — worked out by
// PreviewBooking's rules without writing anything, so that the member sees
// the bill before confirming. Task is the task as it would be (no id).
func (s *Store) PreviewTemplate(ctx context.Context, id int64, taskName string, start time.Time, queue bool) (*BookingPreview, error) {
	const op = "store.PreviewTemplate"
	t, err := s.FindTemplateByID(ctx, id)
	if err != nil {
		return nil, err
	}
	in := t.taskInput(taskName)
	if err := in.validate(op); err != nil {
		return nil, err
	}
	req, err := s.templateRequest(op, t, start, queue)
	if err != nil {
		return nil, err
	}
	db := s.read(ctx)
	var taken int64
	if err := db.Model(&Task{}).Where("team_id = ? AND name = ?", in.TeamID, in.Name).Count(&taken).Error; err != nil {
		return nil, translate(op, err)
	}
	if taken > 0 {
		return nil, fieldErr(op, "name", "task.name_taken")
	}
	var task Task
	in.apply(&task)
	party, err := s.readTemplateParty(ctx, db, op, task)
	if err != nil {
		return nil, err
	}
	return s.previewPlan(ctx, op, req, party)
}

// readTemplateParty is readBookingParty for a task not written yet: the
// actor, the task's team with its approval rule, and the actor's role in it.
func (s *Store) readTemplateParty(ctx context.Context, db *gorm.DB, op string, task Task) (*bookingParty, error) {
	u, err := actorUser(ctx, db, op)
	if err != nil {
		return nil, err
	}
	var team Team
	if err := db.First(&team, task.TeamID).Error; err != nil {
		return nil, withKey(translate(op, err), "team.not_found")
	}
	role, err := teamRole(db, team.ID, u.ID)
	if err != nil {
		return nil, translate(op, err)
	}
	return &bookingParty{user: u, task: task, teamName: team.Name, requiresApproval: team.RequiresApproval,
		teamRole: role, mayBook: mayBookAs(u, role), manager: managesAs(u, role)}, nil
}

// UseTemplate creates a new task from the template's baseline and books its
// shape from start, in one transaction: a booking refused (no capacity,
// over quota, a window the rules refuse) leaves no task behind.
func (s *Store) UseTemplate(ctx context.Context, id int64, taskName string, start time.Time, queue bool) (*Task, *BookingResult, error) {
	const op = "store.UseTemplate"
	t, err := s.FindTemplateByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	in := t.taskInput(taskName)
	if err := in.validate(op); err != nil {
		return nil, nil, err
	}
	req, err := s.templateRequest(op, t, start, queue)
	if err != nil {
		return nil, nil, err
	}
	var task *Task
	var res *BookingResult
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		task, res = nil, nil
		made, err := s.createTask(ctx, tx, op, in)
		if err != nil {
			return err
		}
		r := req
		r.TaskID = made.ID
		party, err := s.readBookingParty(ctx, tx, createBookingOp, &r)
		if err != nil {
			return err
		}
		// The booking is written as a batch of one in this transaction,
		// under the card type's lock as every booking is; its refusal is
		// the transaction's, so the task goes with it.
		j := &bookingJob{ctx: ctx, req: r, party: party}
		jobs := []*bookingJob{j}
		if err := s.writeJobs(tx, &jobs, nil); err != nil {
			return err
		}
		if j.err != nil {
			return j.err
		}
		task, res = made, j.res
		return nil
	})
	if err != nil {
		return nil, nil, nameTaken(err, "task.name_taken")
	}
	s.maybePruneBookChanges(ctx)
	s.nameAssigned(ctx, res.View)
	return task, res, nil
}
