package store

import (
	"context"
	"slices"
)

// ReportScope is whose figures a report shows.
type ReportScope struct {
	// TeamIDs are the teams the viewer may see: nil for every team (admins),
	// empty for none.
	TeamIDs []int64
	// TeamID narrows the report to one of them; 0 keeps them all.
	TeamID int64
}

// teams is the effective team list: nil for every team.
func (sc ReportScope) teams() []int64 {
	if sc.TeamID == 0 {
		return sc.TeamIDs
	}
	if sc.TeamIDs != nil && !slices.Contains(sc.TeamIDs, sc.TeamID) {
		return []int64{}
	}
	return []int64{sc.TeamID}
}

// reportNames resolves the ids a report holds to the names it shows.
type reportNames struct {
	teams, cardTypes, tasks, users, kinds map[int64]string
}

func (s *Store) loadReportNames(ctx context.Context, taskIDs, userIDs []int64) (*reportNames, error) {
	n := &reportNames{teams: map[int64]string{}, cardTypes: map[int64]string{}, tasks: map[int64]string{},
		users: map[int64]string{}, kinds: map[int64]string{}}
	type idName struct {
		ID   int64
		Name string
		Kind string
	}
	var rows []idName
	if err := s.read(ctx).Table("teams").Select("id, name").Scan(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		n.teams[r.ID] = r.Name
	}
	rows = nil
	if err := s.read(ctx).Table("card_types").Select("id, name").Scan(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		n.cardTypes[r.ID] = r.Name
	}
	for _, chunk := range chunkIDs(taskIDs, 500) {
		rows = nil
		if err := s.read(ctx).Table("tasks").Select("id, name, kind").Where("id IN ?", chunk).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			n.tasks[r.ID], n.kinds[r.ID] = r.Name, r.Kind
		}
	}
	for _, chunk := range chunkIDs(userIDs, 500) {
		rows = nil
		if err := s.read(ctx).Table("users").Select("id, username AS name").Where("id IN ?", chunk).Scan(&rows).Error; err != nil {
			return nil, err
		}
		for _, r := range rows {
			n.users[r.ID] = r.Name
		}
	}
	return n, nil
}

// chunkIDs splits distinct ids into lists of at most size.
func chunkIDs(ids []int64, size int) [][]int64 {
	seen := map[int64]bool{}
	var uniq []int64
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	var out [][]int64
	for start := 0; start < len(uniq); start += size {
		out = append(out, uniq[start:min(start+size, len(uniq))])
	}
	return out
}
