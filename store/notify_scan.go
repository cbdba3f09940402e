package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"

	"cardhour/notify"
	"cardhour/schedule"
)

// ScanResult counts the reminders one scan told.
type ScanResult struct {
	QuotaExpiring, QuotaLow, BookingStarts, BookingEnds, RecordOutput, Digests int
}

// Total is every reminder the scan told.
func (r ScanResult) Total() int {
	return r.QuotaExpiring + r.QuotaLow + r.BookingStarts + r.BookingEnds + r.RecordOutput + r.Digests
}

// ScanReminders tells what has come due: quotas 30 / 15 / 7 / 1 days before
// they expire and at 80 / 95 % used, bookings 15 minutes before they start
// and 30 minutes before they end, rounds a day after they ended without
// output, and each manager's daily digest. It is idempotent — each
// reminder is marked (notify_marks) in the transaction that tells it, so a
// scan run again, or by another process at the same moment, tells nothing
// twice — and cheap when nothing is due: one query per kind finds the
// candidates, one finds which were already told.
func (s *Store) ScanReminders(ctx context.Context) (ScanResult, error) {
	var r ScanResult
	now := s.now()
	steps := []struct {
		n    *int
		find func(context.Context, time.Time) ([]notice, error)
	}{
		{&r.QuotaExpiring, s.dueQuotaExpiry},
		{&r.QuotaLow, s.dueQuotaUse},
		{&r.BookingStarts, s.dueBookingStarts},
		{&r.BookingEnds, s.dueBookingEnds},
		{&r.RecordOutput, s.dueOutputs},
		{&r.Digests, s.dueDigests},
	}
	for _, st := range steps {
		due, err := st.find(ctx, now)
		if err != nil {
			return r, err
		}
		n, err := s.tellDue(ctx, due)
		*st.n += n
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// tellDue tells the notices whose marks are not yet set, a few per
// transaction; it returns how many it told.
func (s *Store) tellDue(ctx context.Context, due []notice) (int, error) {
	const op = "store.ScanReminders"
	if len(due) == 0 {
		return 0, nil
	}
	keys := make([]string, len(due))
	for i, n := range due {
		keys[i] = n.Mark
	}
	told := map[string]bool{}
	for chunk := range chunks(keys, 500) {
		var have []string
		if err := s.read(ctx).Model(&notifyMark{}).Where("mark_key IN ?", chunk).Pluck("mark_key", &have).Error; err != nil {
			return 0, translate(op, err)
		}
		for _, k := range have {
			told[k] = true
		}
	}
	var fresh []notice
	for _, n := range due {
		if !told[n.Mark] {
			fresh = append(fresh, n)
		}
	}
	count := 0
	for batch := range chunks(fresh, 200) {
		err := s.tx(ctx, op, func(tx *gorm.DB) error { return s.tellAll(tx, batch) })
		if err == nil {
			count += len(batch)
			continue
		}
		if !errors.Is(err, errRaced) {
			return count, err
		}
		// Another scan told some of them meanwhile: one by one, each
		// telling only if its mark is still free. Counted once committed:
		// a run rolled back after a collision told nobody.
		toldHere := 0
		err = s.tx(ctx, op, func(tx *gorm.DB) error {
			toldHere = 0
			for _, n := range batch {
				ok, err := s.tell(tx, n)
				if err != nil {
					return err
				}
				if ok {
					toldHere++
				}
			}
			return nil
		})
		if err != nil {
			return count, err
		}
		count += toldHere
	}
	return count, nil
}

func chunks[T any](xs []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for i := 0; i < len(xs); i += n {
			if !yield(xs[i:min(i+n, len(xs))]) {
				return
			}
		}
	}
}

// quotaRow is what a quota reminder needs of a quota.
type quotaRow struct {
	ID, TeamID                   int64
	TeamName, CardTypeName       string
	CardSeconds, UsedCardSeconds int64
	ExpiresAt                    time.Time
}

func (s *Store) quotaRows(ctx context.Context, where string, args ...any) ([]quotaRow, error) {
	var rows []quotaRow
	err := s.read(ctx).Table("quotas q").
		Select("q.id, q.team_id, t.name AS team_name, ct.name AS card_type_name, q.card_seconds, q.used_card_seconds, q.expires_at").
		Joins("JOIN teams t ON t.id = q.team_id").Joins("JOIN card_types ct ON ct.id = q.card_type_id").
		Where(where, args...).Order("q.id").Scan(&rows).Error
	return rows, translate("store.ScanReminders", err)
}

// quotaAudience are who hear of a team's quota: its managers, and from
// the core stage on the members who own a core task in it.
func (s *Store) quotaAudience(ctx context.Context, teams []int64) (managers, core map[int64][]int64, err error) {
	managers, core = map[int64][]int64{}, map[int64][]int64{}
	if len(teams) == 0 {
		return managers, core, nil
	}
	var ms []Membership
	if err := s.read(ctx).Where("team_id IN ? AND role = ?", teams, TeamRoleManager).Order("user_id").Find(&ms).Error; err != nil {
		return nil, nil, translate("store.ScanReminders", err)
	}
	for _, m := range ms {
		managers[m.TeamID] = append(managers[m.TeamID], m.UserID)
	}
	var owners []struct{ TeamID, UserID int64 }
	err = s.read(ctx).Table("tasks t").Select("DISTINCT t.team_id, t.created_by AS user_id").
		Joins("JOIN memberships m ON m.team_id = t.team_id AND m.user_id = t.created_by AND m.role IN ?", []string{TeamRoleManager, TeamRoleMember}).
		Where("t.team_id IN ? AND t.priority = ?", teams, schedule.Core).Order("t.created_by").Scan(&owners).Error
	if err != nil {
		return nil, nil, translate("store.ScanReminders", err)
	}
	for _, o := range owners {
		core[o.TeamID] = append(core[o.TeamID], o.UserID)
	}
	return managers, core, nil
}

func union(a, b []int64) []int64 {
	out := append([]int64(nil), a...)
	for _, x := range b {
		seen := false
		for _, y := range out {
			seen = seen || x == y
		}
		if !seen {
			out = append(out, x)
		}
	}
	return out
}

func teamsOf(rows []quotaRow) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, r := range rows {
		if !seen[r.TeamID] {
			seen[r.TeamID] = true
			out = append(out, r.TeamID)
		}
	}
	return out
}

func (s *Store) dueQuotaExpiry(ctx context.Context, now time.Time) ([]notice, error) {
	rows, err := s.quotaRows(ctx, "q.valid_from <= ? AND q.expires_at > ? AND q.expires_at <= ?", now, now, now.AddDate(0, 0, notify.ExpiryStages[0]))
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	managers, core, err := s.quotaAudience(ctx, teamsOf(rows))
	if err != nil {
		return nil, err
	}
	var out []notice
	for _, q := range rows {
		stage := notify.ExpiryStage(q.ExpiresAt, now)
		if stage == 0 {
			continue
		}
		to := managers[q.TeamID]
		if stage <= notify.CoreStage {
			to = union(to, core[q.TeamID])
		}
		left := schedule.CardHours(max(0, q.CardSeconds-q.UsedCardSeconds))
		out = append(out, notice{Kind: notify.QuotaExpiring, Key: "notify.quota_expiring", Link: fmt.Sprintf("/quotas#quota-%d", q.ID),
			Args:  []any{q.TeamName, q.CardTypeName, stage, q.ExpiresAt.In(s.zone()).Format("2006-01-02"), roundHours(left)},
			Users: to, TeamID: q.TeamID, Mark: fmt.Sprintf("%s:q%d:%d", notify.QuotaExpiring, q.ID, stage)})
	}
	return out, nil
}

func roundHours(h float64) float64 { return math.Round(h*10) / 10 }

func (s *Store) dueQuotaUse(ctx context.Context, now time.Time) ([]notice, error) {
	rows, err := s.quotaRows(ctx, "q.valid_from <= ? AND q.expires_at > ? AND q.card_seconds > 0 AND q.used_card_seconds * 100 >= q.card_seconds * ?",
		now, now, notify.UseStages[0])
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	managers, core, err := s.quotaAudience(ctx, teamsOf(rows))
	if err != nil {
		return nil, err
	}
	var out []notice
	for _, q := range rows {
		stage := notify.UseStage(q.UsedCardSeconds, q.CardSeconds)
		left := schedule.CardHours(max(0, q.CardSeconds-q.UsedCardSeconds))
		out = append(out, notice{Kind: notify.QuotaLow, Key: "notify.quota_low", Link: fmt.Sprintf("/quotas#quota-%d", q.ID),
			Args:  []any{q.TeamName, q.CardTypeName, stage, roundHours(left)},
			Users: union(managers[q.TeamID], core[q.TeamID]), TeamID: q.TeamID, Mark: fmt.Sprintf("%s:q%d:%d", notify.QuotaLow, q.ID, stage)})
	}
	return out, nil
}

// bookingRow is what a booking reminder needs of a booking.
type bookingRow struct {
	ID, TeamID, UserID int64
	TaskName           string
	StartAt, EndAt     time.Time
}

func (s *Store) bookingRows(ctx context.Context, where string, args ...any) ([]bookingRow, error) {
	var rows []bookingRow
	err := s.read(ctx).Table("bookings b").Select("b.id, b.team_id, b.user_id, t.name AS task_name, b.start_at, b.end_at").
		Joins("JOIN tasks t ON t.id = b.task_id").Where(where, args...).Order("b.id").Scan(&rows).Error
	return rows, translate("store.ScanReminders", err)
}

func (s *Store) dueBookingStarts(ctx context.Context, now time.Time) ([]notice, error) {
	rows, err := s.bookingRows(ctx, "b.state = ? AND b.start_at > ? AND b.start_at <= ?", BookingConfirmed, now, now.Add(notify.StartsAhead))
	return bookingNotices(rows, notify.BookingStarts, "/bookings/%d", func(b bookingRow) time.Time { return b.StartAt }, now), err
}

func (s *Store) dueBookingEnds(ctx context.Context, now time.Time) ([]notice, error) {
	rows, err := s.bookingRows(ctx, "b.state IN ? AND b.start_at <= ? AND b.end_at > ? AND b.end_at <= ?",
		[]string{BookingConfirmed, BookingActive}, now, now, now.Add(notify.EndsAhead))
	return bookingNotices(rows, notify.BookingEnds, "/bookings/%d#extend", func(b bookingRow) time.Time { return b.EndAt }, now), err
}

// bookingNotices tell each booking's owner that its start or end (at) is
// near, in minutes. The time is in the mark: a booking moved or extended is
// reminded again before its new start or end.
func bookingNotices(rows []bookingRow, kind, link string, at func(bookingRow) time.Time, now time.Time) []notice {
	var out []notice
	for _, b := range rows {
		mins := int(math.Ceil(at(b).Sub(now).Minutes()))
		out = append(out, notice{Kind: kind, Key: noticeKey(kind), Link: fmt.Sprintf(link, b.ID),
			Args: []any{b.ID, b.TaskName, mins}, Users: []int64{b.UserID}, TeamID: b.TeamID,
			Mark: fmt.Sprintf("%s:b%d:%d", kind, b.ID, at(b).Unix())})
	}
	return out
}

func (s *Store) dueOutputs(ctx context.Context, now time.Time) ([]notice, error) {
	var rows []bookingRow
	err := s.read(ctx).Table("ledger_rounds r").Select("r.booking_id AS id, r.team_id, r.user_id, t.name AS task_name, r.start_at, r.end_at").
		Joins("JOIN tasks t ON t.id = r.task_id").
		Where("r.end_at > ? AND r.end_at <= ? AND NOT EXISTS (SELECT 1 FROM ledger_outputs o WHERE o.booking_id = r.booking_id)",
			now.Add(-notify.OutputWithin), now.Add(-notify.OutputAfter)).Order("r.booking_id").Scan(&rows).Error
	if err != nil {
		return nil, translate("store.ScanReminders", err)
	}
	var out []notice
	for _, b := range rows {
		out = append(out, notice{Kind: notify.RecordOutput, Key: "notify.record_output", Link: fmt.Sprintf("/ledger/rounds/%d", b.ID),
			Args: []any{b.ID, b.TaskName}, Users: []int64{b.UserID}, TeamID: b.TeamID,
			Mark: fmt.Sprintf("%s:b%d", notify.RecordOutput, b.ID)})
	}
	return out, nil
}

// rearmQuotaReminders forgets the reminders a renewal or a larger grant
// made stale: a quota whose expiry moved later is reminded again as its
// new end nears, one granted more as its use climbs again.
func rearmQuotaReminders(tx *gorm.DB, before, after Quota) error {
	if after.ExpiresAt.After(before.ExpiresAt) {
		if err := tx.Where("mark_key LIKE ?", fmt.Sprintf("%s:q%d:%%", notify.QuotaExpiring, after.ID)).Delete(&notifyMark{}).Error; err != nil {
			return err
		}
	}
	if after.CardSeconds > before.CardSeconds {
		return tx.Where("mark_key LIKE ?", fmt.Sprintf("%s:q%d:%%", notify.QuotaLow, after.ID)).Delete(&notifyMark{}).Error
	}
	return nil
}
