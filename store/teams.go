package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Team is a group that owns tasks, bookings and quotas.
type Team struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// RequiresApproval makes members' bookings wait for a team manager.
	RequiresApproval bool      `json:"requires_approval"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// TeamInput creates or replaces a team's fields.
type TeamInput struct {
	Name             string `json:"name" form:"name"`
	Description      string `json:"description" form:"description"`
	RequiresApproval bool   `json:"requires_approval" form:"requires_approval"`
}

func (in *TeamInput) validate(op string) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Description = strings.TrimSpace(in.Description)
	v := errs.NewValidation(op)
	v.Check(in.Name != "", "name", "field.required")
	v.CheckLen(in.Name, 100, "name")
	v.CheckLen(in.Description, 500, "description")
	return v.Err()
}

// CreateTeam adds a team.
func (s *Store) CreateTeam(ctx context.Context, in TeamInput) (*Team, error) {
	const op = "store.CreateTeam"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	now := s.now()
	t := new(Team)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*t = Team{Name: in.Name, Description: in.Description, RequiresApproval: in.RequiresApproval, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "team", t.ID, t.Name, nil, t)
	})
	if err != nil {
		return nil, nameTaken(err, "team.name_taken")
	}
	return t, nil
}

// UpdateTeam replaces a team's fields.
func (s *Store) UpdateTeam(ctx context.Context, id int64, in TeamInput) (*Team, error) {
	const op = "store.UpdateTeam"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var t Team
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		t = Team{}
		if err := tx.First(&t, id).Error; err != nil {
			return withKey(translate(op, err), "team.not_found")
		}
		before := t
		t.Name, t.Description, t.RequiresApproval, t.UpdatedAt = in.Name, in.Description, in.RequiresApproval, s.now()
		if err := tx.Save(&t).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "team", t.ID, t.Name, before, t)
	})
	if err != nil {
		return nil, nameTaken(err, "team.name_taken")
	}
	return &t, nil
}

// DeleteTeam removes a team and its memberships.
func (s *Store) DeleteTeam(ctx context.Context, id int64) error {
	const op = "store.DeleteTeam"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var t Team
		if err := tx.First(&t, id).Error; err != nil {
			return withKey(translate(op, err), "team.not_found")
		}
		if err := tx.Delete(&t).Error; err != nil {
			return inUse(translate(op, err), "team.in_use")
		}
		return s.audit(ctx, tx, "delete", "team", t.ID, t.Name, t, nil)
	})
}

// FindTeamByID returns one team.
func (s *Store) FindTeamByID(ctx context.Context, id int64) (*Team, error) {
	var t Team
	if err := s.read(ctx).First(&t, id).Error; err != nil {
		return nil, withKey(translate("store.FindTeamByID", err), "team.not_found")
	}
	return &t, nil
}

// FindTeams lists teams by name.
func (s *Store) FindTeams(ctx context.Context) ([]Team, error) {
	var out []Team
	if err := s.read(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, translate("store.FindTeams", err)
	}
	return out, nil
}

// TeamNames maps every team's id to its name, for pages that show names
// beside ids.
func (s *Store) TeamNames(ctx context.Context) (map[int64]string, error) {
	teams, err := s.FindTeams(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(teams))
	for _, t := range teams {
		out[t.ID] = t.Name
	}
	return out, nil
}

// nameTaken gives a duplicate-name conflict its own message and field.
func nameTaken(err error, key string) error {
	if e, ok := errs.As(err); ok && e.Code == errs.Conflict && e.Key == "error.duplicate" {
		return &errs.Error{Code: errs.Conflict, Op: e.Op, Key: key, Fields: map[string]string{"name": key}, Err: err}
	}
	return err
}

// inUse gives a foreign-key conflict its own message.
func inUse(err error, key string) error {
	if e, ok := errs.As(err); ok && e.Code == errs.Conflict && e.Key == "error.in_use" {
		return &errs.Error{Code: errs.Conflict, Op: e.Op, Key: key, Err: err}
	}
	return err
}
