package store

import (
	"strconv"

	"gorm.io/gorm"
)

// The parties of a booking batch are read together. Read one request at a
// time, the party (actor, task, team, the actor's role in it, the named
// card type) was a query of its own for every booking: a round trip, SQL
// the database parsed again, and a quarter of a replica's CPU under load.
// A batch's requests are for one card type, by id or by one name, so one
// query answers all of them: every task named, each with the memberships
// of every actor in its team.

// readParties gives each job of jobs that has no party yet its party, or
// its refusal (partyErr: no such task, no such card type). The error is
// the database's; then no job's party is set.
func (s *Store) readParties(db *gorm.DB, op string, jobs []*bookingJob) error {
	byName := map[string][]*bookingJob{} // "" when the request gives the type's id
	var names []string
	for _, j := range jobs {
		if j.party != nil || j.partyErr != nil {
			continue
		}
		name := ""
		if j.req.CardTypeID == 0 {
			name = j.req.CardTypeName
		}
		if _, ok := byName[name]; !ok {
			names = append(names, name)
		}
		byName[name] = append(byName[name], j)
	}
	for _, name := range names {
		if err := s.readPartiesNamed(db, op, name, byName[name]); err != nil {
			return err
		}
	}
	return nil
}

// partyRow is one task of the party query with one actor's membership of
// its team (none: MemberID is nil).
type partyRow struct {
	Task
	TeamName         string
	RequiresApproval bool
	MemberID         *int64
	TeamRole         *string
	NamedTypeID      *int64
}

// readPartiesNamed is readParties for jobs that all name their card type by
// name, or ("") all by id.
func (s *Store) readPartiesNamed(db *gorm.DB, op, name string, jobs []*bookingJob) error {
	users := make([]*User, len(jobs))
	var userIDs, taskIDs []int64
	seenUser, seenTask := map[int64]bool{}, map[int64]bool{}
	for i, j := range jobs {
		u, err := actorUser(j.ctx, db, op)
		if err != nil {
			j.partyErr = err
			continue
		}
		users[i] = u
		if !seenUser[u.ID] {
			seenUser[u.ID], userIDs = true, append(userIDs, u.ID)
		}
		if !seenTask[j.req.TaskID] {
			seenTask[j.req.TaskID], taskIDs = true, append(taskIDs, j.req.TaskID)
		}
	}
	if len(taskIDs) == 0 {
		return nil
	}
	cols, args := "tasks.*, teams.name AS team_name, teams.requires_approval, m.user_id AS member_id, m.role AS team_role", []any(nil)
	if name != "" {
		cols += ", (SELECT id FROM card_types WHERE name = ?) AS named_type_id"
		args = append(args, name)
	}
	var rows []partyRow
	err := db.Table("tasks").Select(cols, args...).
		Joins("JOIN teams ON teams.id = tasks.team_id").
		Joins("LEFT JOIN memberships m ON m.team_id = tasks.team_id AND m.user_id IN ?", userIDs).
		Where("tasks.id IN ?", taskIDs).Find(&rows).Error
	if err != nil {
		return translate(op, err)
	}
	type roleKey struct{ task, user int64 }
	tasks := map[int64]*partyRow{}
	roles := map[roleKey]string{}
	for i := range rows {
		r := &rows[i]
		tasks[r.ID] = r
		if r.MemberID != nil && r.TeamRole != nil {
			roles[roleKey{r.ID, *r.MemberID}] = *r.TeamRole
		}
	}
	for i, j := range jobs {
		u := users[i]
		if u == nil {
			continue
		}
		r := tasks[j.req.TaskID]
		if r == nil {
			j.partyErr = fieldErr(op, "task_id", "task.not_found")
			continue
		}
		if j.req.CardTypeID == 0 {
			if r.NamedTypeID != nil {
				j.req.CardTypeID = *r.NamedTypeID
			} else if id, err := strconv.ParseInt(j.req.CardTypeName, 10, 64); err == nil && id > 0 {
				j.req.CardTypeID = id
			} else {
				j.partyErr = fieldErr(op, "card_type", "cardtype.not_found")
				continue
			}
		}
		role := roles[roleKey{r.ID, u.ID}]
		j.party = &bookingParty{user: u, task: r.Task, teamName: r.TeamName, requiresApproval: r.RequiresApproval,
			teamRole: role, mayBook: mayBookAs(u, role), manager: managesAs(u, role)}
	}
	return nil
}

// withParties keeps the jobs whose party was read; the others are given
// their refusal.
func withParties(jobs []*bookingJob) []*bookingJob {
	kept := jobs[:0]
	for _, j := range jobs {
		if j.partyErr != nil {
			j.res, j.err = nil, j.partyErr
			continue
		}
		kept = append(kept, j)
	}
	return kept
}

// reuseParties gives each job of jobs without a party the party of a job
// of read with the same task, actor and card type. The requests that join
// a batch under the lock arrive one or two at a time, and each read of
// theirs was a round trip made while the type's lock is held, for other
// processes too; an earlier job's party is as fresh as the batch's own,
// read moments before the lock. The actor is the job's own (its role may
// have changed since); only its role in the team is taken.
func reuseParties(read, jobs []*bookingJob) {
	type key struct {
		task, user, typeID int64
		typeName           string
	}
	keyOf := func(j *bookingJob, user int64) key {
		k := key{task: j.req.TaskID, user: user, typeName: j.req.CardTypeName}
		if k.typeName == "" {
			k.typeID = j.req.CardTypeID
		}
		return k
	}
	var known map[key]*bookingJob
	for _, j := range jobs {
		a := ActorFrom(j.ctx)
		if j.party != nil || j.partyErr != nil || a.UserID == 0 || a.Role == "" {
			continue // an actor without its role is read from the database (actorUser)
		}
		if known == nil {
			known = map[key]*bookingJob{}
			for _, r := range read {
				if r.party != nil {
					known[keyOf(r, r.party.user.ID)] = r
				}
			}
		}
		r := known[keyOf(j, a.UserID)]
		if r == nil {
			continue
		}
		u := &User{ID: a.UserID, Username: a.Username, Role: a.Role}
		p := *r.party
		p.user, p.mayBook, p.manager = u, mayBookAs(u, p.teamRole), managesAs(u, p.teamRole)
		j.party, j.req.CardTypeID = &p, r.req.CardTypeID
	}
}
