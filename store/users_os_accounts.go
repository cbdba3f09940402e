package store

import (
	"context"
	"slices"
)

// TeamOSAccounts returns, for every team, the OS accounts of its members
// (any team role), sorted and without duplicates: a process of another
// account on a card the team booked is foreign use. A team whose members
// have none maps to an empty list.
func (s *Store) TeamOSAccounts(ctx context.Context) (map[int64][]string, error) {
	const op = "store.TeamOSAccounts"
	var rows []struct {
		TeamID     int64
		OSAccounts NameList `gorm:"column:os_accounts"`
	}
	err := s.read(ctx).Table("teams t").Select("t.id AS team_id, COALESCE(u.os_accounts, '') AS os_accounts").
		Joins("LEFT JOIN memberships m ON m.team_id = t.id").
		Joins("LEFT JOIN users u ON u.id = m.user_id").
		Scan(&rows).Error
	if err != nil {
		return nil, translate(op, err)
	}
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.TeamID] = append(out[r.TeamID], r.OSAccounts...)
	}
	for id, names := range out {
		slices.Sort(names)
		out[id] = slices.Compact(names)
		if out[id] == nil {
			out[id] = []string{}
		}
	}
	return out, nil
}
