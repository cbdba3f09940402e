package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"cardhour/notify"
	"cardhour/schedule"
)

// DigestLongHours is how long a card must have stood idle or full in a day
// to be named in the digest (占用看板每日盯).
const DigestLongHours = 6

// DigestTask is one task's yesterday in a manager's digest, in card-hours.
type DigestTask struct {
	Task   string  `json:"task"`
	Team   string  `json:"team"`
	Booked float64 `json:"booked"`
	Used   float64 `json:"used"`
	Idle   float64 `json:"idle"`
}

// dueDigests are the daily digests whose minute has come today for the
// managers who have not had today's: yesterday's card-hours booked, used
// and held idle per task of their teams, how many cards stood long idle or
// full, and their teams' quotas expiring within 15 days.
func (s *Store) dueDigests(ctx context.Context, now time.Time) ([]notice, error) {
	const op = "store.ScanReminders"
	loc := s.zone()
	local := now.In(loc)
	minute := local.Hour()*60 + local.Minute()
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	today := day.Format("2006-01-02")
	var managers []int64
	err := s.read(ctx).Table("users u").Select("DISTINCT u.id").
		Joins("JOIN memberships m ON m.user_id = u.id AND m.role = ?", TeamRoleManager).
		Where("u.disabled = ? AND u.digest_minute >= 0 AND u.digest_minute <= ?", false, minute).Order("u.id").Pluck("u.id", &managers).Error
	if err != nil || len(managers) == 0 {
		return nil, translate(op, err)
	}
	marks := make([]string, len(managers))
	for i, id := range managers {
		marks[i] = fmt.Sprintf("%s:u%d:%s", notify.Digest, id, today)
	}
	var have []string
	if err := s.read(ctx).Model(&notifyMark{}).Where("mark_key IN ?", marks).Pluck("mark_key", &have).Error; err != nil {
		return nil, translate(op, err)
	}
	done := map[string]bool{}
	for _, k := range have {
		done[k] = true
	}
	if len(done) == len(managers) {
		// Told already, the common case every minute after the digests'
		// hour: the fleet's long states are not read for nothing.
		return nil, nil
	}
	from, to := day.AddDate(0, 0, -1).UTC(), day.UTC()
	long, err := s.FindLongStates(ctx, from, to, DigestLongHours)
	if err != nil {
		return nil, err
	}
	var out []notice
	for i, uid := range managers {
		if done[marks[i]] {
			continue
		}
		n, err := s.digestFor(ctx, uid, from, to, now, len(long))
		if err != nil {
			return nil, err
		}
		n.Mark = marks[i]
		n.Args = append([]any{from.In(loc).Format("2006-01-02")}, n.Args...)
		out = append(out, n)
	}
	return out, nil
}

func (s *Store) digestFor(ctx context.Context, uid int64, from, to, now time.Time, longCards int) (notice, error) {
	const op = "store.ScanReminders"
	var teams []int64
	if err := s.read(ctx).Model(&Membership{}).Where("user_id = ? AND role = ?", uid, TeamRoleManager).Pluck("team_id", &teams).Error; err != nil {
		return notice{}, translate(op, err)
	}
	var bs []struct {
		ID, TaskID, CardCount     int
		TaskName, TeamName, State string
		StartAt, EndAt            time.Time
		EndedAt                   *time.Time
	}
	err := s.read(ctx).Table("bookings b").
		Select("b.id, b.task_id, b.card_count, t.name AS task_name, tm.name AS team_name, b.state, b.start_at, b.end_at, b.ended_at").
		Joins("JOIN tasks t ON t.id = b.task_id").Joins("JOIN teams tm ON tm.id = b.team_id").
		Where("b.team_id IN ? AND b.state NOT IN ? AND b.start_at < ? AND b.end_at > ?", teams, []string{BookingCancelled, BookingPending}, to, from).
		Scan(&bs).Error
	if err != nil {
		return notice{}, translate(op, err)
	}
	rows := map[int]*DigestTask{}
	byBooking := map[int]int{}
	var ids []int
	for _, b := range bs {
		end := b.EndAt
		if b.EndedAt != nil && b.EndedAt.Before(end) {
			end = *b.EndedAt
		}
		w := schedule.Interval{Start: b.StartAt, End: end}.Overlap(schedule.Interval{Start: from, End: to})
		r := rows[b.TaskID]
		if r == nil {
			r = &DigestTask{Task: b.TaskName, Team: b.TeamName}
			rows[b.TaskID] = r
		}
		r.Booked += float64(b.CardCount) * w.Hours()
		byBooking[b.ID] = b.TaskID
		ids = append(ids, b.ID)
	}
	if len(ids) > 0 {
		var hs []struct {
			BookingID                    int
			BusySeconds, HeldIdleSeconds float64
		}
		err := s.read(ctx).Table("telemetry_booking_hours").Select("booking_id, SUM(busy_seconds) AS busy_seconds, SUM(held_idle_seconds) AS held_idle_seconds").
			Where("booking_id IN ? AND hour_at >= ? AND hour_at < ?", ids, from, to).Group("booking_id").Scan(&hs).Error
		if err != nil {
			return notice{}, translate(op, err)
		}
		for _, h := range hs {
			r := rows[byBooking[h.BookingID]]
			r.Used += h.BusySeconds / 3600
			r.Idle += h.HeldIdleSeconds / 3600
		}
	}
	var tasks []DigestTask
	var booked, used, idle float64
	for _, r := range rows {
		r.Booked, r.Used, r.Idle = roundHours(r.Booked), roundHours(r.Used), roundHours(r.Idle)
		booked, used, idle = booked+r.Booked, used+r.Used, idle+r.Idle
		tasks = append(tasks, *r)
	}
	sort.Slice(tasks, func(i, j int) bool {
		return tasks[i].Booked > tasks[j].Booked || (tasks[i].Booked == tasks[j].Booked && tasks[i].Task < tasks[j].Task)
	})
	var expiring int64
	if len(teams) > 0 {
		err = s.read(ctx).Model(&Quota{}).Where("team_id IN ? AND expires_at > ? AND expires_at <= ?", teams, now, now.AddDate(0, 0, notify.CoreStage)).Count(&expiring).Error
		if err != nil {
			return notice{}, translate(op, err)
		}
	}
	detail, err := json.Marshal(tasks)
	if err != nil {
		return notice{}, translate(op, err)
	}
	return notice{Kind: notify.Digest, Key: "notify.digest", Link: "/ledger",
		Args:  []any{roundHours(booked), roundHours(used), roundHours(idle), int(expiring), longCards, string(detail)},
		Users: []int64{uid}, TeamID: 0}, nil
}
