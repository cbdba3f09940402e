package store

import (
	"context"
	"strings"
)

// FindHostByName returns one host by its name; the column's collation makes
// the match case-insensitive on both dialects, as names are unique that way.
func (s *Store) FindHostByName(ctx context.Context, name string) (*Host, error) {
	var h Host
	if err := s.read(ctx).Where("name = ?", strings.TrimSpace(name)).First(&h).Error; err != nil {
		return nil, withKey(translate("store.FindHostByName", err), "host.not_found")
	}
	return &h, nil
}
