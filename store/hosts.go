package store

import (
	"context"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Host is a machine that carries cards.
type Host struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Zone      string    `json:"zone"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// HostInput creates or replaces a host.
type HostInput struct {
	Name string `json:"name"`
	Zone string `json:"zone"`
}

// Host names travel in telemetry URLs (?host=NAME), so they stay plain.
var hostNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

func (in *HostInput) validate(op string) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Zone = strings.TrimSpace(in.Zone)
	v := errs.NewValidation(op)
	v.Check(in.Name != "", "name", "field.required")
	if in.Name != "" {
		v.Check(hostNamePattern.MatchString(in.Name), "name", "host.name_invalid")
	}
	v.CheckLen(in.Zone, 100, "zone")
	return v.Err()
}

// CreateHost adds a host.
func (s *Store) CreateHost(ctx context.Context, in HostInput) (*Host, error) {
	const op = "store.CreateHost"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	if err := in.validate(op); err != nil {
		return nil, err
	}
	now := s.now()
	h := new(Host)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*h = Host{Name: in.Name, Zone: in.Zone, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(h).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "host", h.ID, h.Name, nil, h)
	})
	if err != nil {
		return nil, nameTaken(err, "host.name_taken")
	}
	return h, nil
}

// UpdateHost replaces a host's fields.
func (s *Store) UpdateHost(ctx context.Context, id int64, in HostInput) (*Host, error) {
	const op = "store.UpdateHost"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var h Host
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		h = Host{}
		if err := tx.First(&h, id).Error; err != nil {
			return withKey(translate(op, err), "host.not_found")
		}
		before := h
		h.Name, h.Zone, h.UpdatedAt = in.Name, in.Zone, s.now()
		if err := tx.Save(&h).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "host", h.ID, h.Name, before, h)
	})
	if err != nil {
		return nil, nameTaken(err, "host.name_taken")
	}
	return &h, nil
}

// DeleteHost removes a host that carries no cards.
func (s *Store) DeleteHost(ctx context.Context, id int64) error {
	const op = "store.DeleteHost"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var h Host
		if err := tx.First(&h, id).Error; err != nil {
			return withKey(translate(op, err), "host.not_found")
		}
		if err := tx.Delete(&h).Error; err != nil {
			return inUse(translate(op, err), "host.in_use")
		}
		return s.audit(ctx, tx, "delete", "host", h.ID, h.Name, h, nil)
	})
}

// FindHostByID returns one host.
func (s *Store) FindHostByID(ctx context.Context, id int64) (*Host, error) {
	var h Host
	if err := s.read(ctx).First(&h, id).Error; err != nil {
		return nil, withKey(translate("store.FindHostByID", err), "host.not_found")
	}
	return &h, nil
}

// FindHosts lists hosts by name.
func (s *Store) FindHosts(ctx context.Context) ([]Host, error) {
	var out []Host
	if err := s.read(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, translate("store.FindHosts", err)
	}
	return out, nil
}

// FindHostByName returns one host by its name; the column's collation makes
// the match case-insensitive on both dialects, as names are unique that way.
func (s *Store) FindHostByName(ctx context.Context, name string) (*Host, error) {
	var h Host
	if err := s.read(ctx).Where("name = ?", strings.TrimSpace(name)).First(&h).Error; err != nil {
		return nil, withKey(translate("store.FindHostByName", err), "host.not_found")
	}
	return &h, nil
}
