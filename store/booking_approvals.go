package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// MaxRejectReason is the longest reason a rejection may give, in runes
// (bookings.reject_reason is VARCHAR(500)).
const MaxRejectReason = 500

// Notification kinds and keys of approvals.
const (
	// NoticeApprovalWaiting tells a team's managers a booking waits for
	// them; args: the booking's id, the requester, the task.
	NoticeApprovalWaiting = "notify.approval_waiting"
	// NoticeApproved tells the requester the booking was approved and
	// cards assigned; args: the booking's id, the number of cards.
	NoticeApproved = "notify.approved"
	// NoticeApprovedQueued: approved, and now waiting for free cards;
	// args: the booking's id.
	NoticeApprovedQueued = "notify.approved_queued"
	// NoticeApprovedData: approved, and now waiting for the task's data;
	// args: the booking's id.
	NoticeApprovedData = "notify.approved_data"
	// NoticeRejected tells the requester the booking was rejected; args:
	// the booking's id, the reason.
	NoticeRejected = "notify.rejected"
)

// ApprovalNoticeKeys lists the notification keys approvals write, for the
// test that each has its messages.
func ApprovalNoticeKeys() []string {
	return []string{NoticeApprovalWaiting, NoticeApproved, NoticeApprovedQueued, NoticeApprovedData, NoticeRejected}
}

// awaitingApproval narrows q (bookings as "b") to the live bookings that
// wait for u's approval: in the teams u manages, every team for an admin.
// ok is false when u decides on none. The count and the inbox share it, so
// that they never disagree.
func (s *Store) awaitingApproval(ctx context.Context, q *gorm.DB, u *User) (_ *gorm.DB, ok bool) {
	if u == nil || (u.Role != RoleAdmin && RoleRank(u.Role) < RoleRank(RoleManager)) {
		return q, false
	}
	q = q.Where("b.state = ? AND b.wait_reason = ? AND b.end_at > ?", BookingPending, WaitApproval, s.now())
	if u.Role != RoleAdmin {
		q = q.Where("b.team_id IN (?)", s.read(ctx).Table("memberships").Select("team_id").
			Where("user_id = ? AND role = ?", u.ID, TeamRoleManager))
	}
	return q, true
}

// CountAwaitingApproval counts the live bookings that wait for u's
// approval: in the teams u manages (every team for an admin). It is the
// number the header shows as "待审批 N"; the approvals inbox
// (FindAwaitingApproval) lists the same bookings.
func (s *Store) CountAwaitingApproval(ctx context.Context, u *User) (int, error) {
	q, ok := s.awaitingApproval(ctx, s.read(ctx).Table("bookings b"), u)
	if !ok {
		return 0, nil
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		return 0, translate("store.CountAwaitingApproval", err)
	}
	return int(n), nil
}

// QuotaEffect is what approving a booking does to its team's quota for the
// card type: the card-seconds left without it and with it, and the quota
// check's verdict on it.
type QuotaEffect struct {
	// QuotaID is the quota in force at the booking's start; 0 for none.
	QuotaID            int64
	GrantedCardSeconds int64
	// BeforeCardSeconds is what is left without the booking;
	// AfterCardSeconds with it, below 0 when it goes over.
	BeforeCardSeconds int64
	AfterCardSeconds  int64
	Verdict           schedule.QuotaVerdict
}

// Over tells whether the booking breaks a limit of the quota (or the team
// has none).
func (e QuotaEffect) Over() bool { return !e.Verdict.OK() }

// ApprovalRow is one booking of the approvals inbox, with what a manager
// weighs: the task's baseline, the card-hours and cost, the quota effect.
type ApprovalRow struct {
	BookingView
	Task        Task
	CardSeconds int64
	Quota       QuotaEffect
}

// FindAwaitingApproval lists the bookings CountAwaitingApproval counts,
// oldest request first.
func (s *Store) FindAwaitingApproval(ctx context.Context, u *User) ([]ApprovalRow, error) {
	const op = "store.FindAwaitingApproval"
	q, ok := s.awaitingApproval(ctx, s.bookingViews(ctx), u)
	if !ok {
		return nil, nil
	}
	var views []BookingView
	if err := q.Order("b.submitted_at, b.id").Scan(&views).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(views) == 0 {
		return nil, nil
	}
	if err := s.fillCards(ctx, views); err != nil {
		return nil, translate(op, err)
	}
	var taskIDs []int64
	for _, v := range views {
		if !slices.Contains(taskIDs, v.TaskID) {
			taskIDs = append(taskIDs, v.TaskID)
		}
	}
	var tasks []Task
	if err := s.read(ctx).Where("id IN ?", taskIDs).Find(&tasks).Error; err != nil {
		return nil, translate(op, err)
	}
	byID := map[int64]Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	out := make([]ApprovalRow, len(views))
	db := s.read(ctx)
	for i, v := range views {
		b := v.Booking
		effect, err := s.quotaEffect(db, &b)
		if err != nil {
			return nil, translate(op, err)
		}
		out[i] = ApprovalRow{BookingView: v, Task: byID[v.TaskID], CardSeconds: schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt), Quota: effect}
	}
	return out, nil
}

// quotaEffect is the quota check of b against its team's quota, leaving
// out what b itself draws: the same arithmetic as booking.
func (s *Store) quotaEffect(tx *gorm.DB, b *Booking) (QuotaEffect, error) {
	verdict, q, err := s.checkQuota(tx, b.TeamID, b.CardTypeID, b.CardCount, b.Window(), b)
	if err != nil {
		return QuotaEffect{}, err
	}
	e := QuotaEffect{Verdict: verdict}
	if q != nil {
		e.QuotaID, e.GrantedCardSeconds = q.ID, q.CardSeconds
		e.BeforeCardSeconds = q.CardSeconds - (q.UsedCardSeconds - drawnCardSeconds(b, q.window()))
		e.AfterCardSeconds = e.BeforeCardSeconds - drawnCardSeconds(b, q.window())
	}
	return e, nil
}

// noticeApprovalWaiting tells each manager of b's team that b waits for
// their approval; the admins when the team has no manager.
func (s *Store) noticeApprovalWaiting(tx *gorm.DB, b *Booking, requester, task string) error {
	var ids []int64
	err := tx.Table("memberships m").Joins("JOIN users u ON u.id = m.user_id").
		Where("m.team_id = ? AND m.role = ? AND u.role IN ? AND u.disabled = ?", b.TeamID, TeamRoleManager, []string{RoleManager, RoleAdmin}, false).
		Order("u.id").Pluck("u.id", &ids).Error
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		if err := tx.Model(&User{}).Where("role = ? AND disabled = ?", RoleAdmin, false).Order("id").Pluck("id", &ids).Error; err != nil {
			return err
		}
	}
	to := ids[:0]
	for _, id := range ids {
		if id != b.UserID {
			to = append(to, id)
		}
	}
	// One notice for all of them: the team's robot hears it once.
	_, err = s.tell(tx, notice{Kind: "approval_waiting", Key: NoticeApprovalWaiting, Link: "/approvals", Args: []any{b.ID, requester, task},
		Users: to, TeamID: b.TeamID, Mark: fmt.Sprintf("approval_waiting:b%d", b.ID)})
	return err
}

// checkRejectReason trims a rejection's reason and checks it is given and
// fits.
func checkRejectReason(op, reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	v := errs.NewValidation(op)
	v.Check(reason != "", "reason", "approval.reason_required")
	v.Check(utf8.RuneCountInString(reason) <= MaxRejectReason, "reason", "approval.reason_too_long")
	return reason, v.Err()
}

// RejectBooking refuses a booking that waits for approval: it ends
// rejected, drawing nothing, and the requester is told why. Only a manager
// of its team or an admin decides; the reason is required.
func (s *Store) RejectBooking(ctx context.Context, id int64, reason string) (*Booking, error) {
	const op = "store.RejectBooking"
	reason, err := checkRejectReason(op, reason)
	if err != nil {
		return nil, err
	}
	var out *Booking
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		out = nil
		var ct CardType
		b, u, err := s.loadOwnBooking(ctx, tx, op, id, &ct)
		if err != nil {
			return err
		}
		manager, err := managesTeam(tx, u, b.TeamID)
		if err != nil {
			return err
		}
		if !manager {
			return errs.E(errs.Forbidden, op, "booking.reject_managers")
		}
		now := s.now()
		if err := refusalErr(op, schedule.Reject, b, schedule.CheckAction(schedule.Reject, b.Facts(), now)); err != nil {
			return err
		}
		before := *b
		b.State, b.WaitReason, b.EndedAt, b.UpdatedAt = BookingRejected, "", &now, now
		b.DecidedBy, b.DecidedAt, b.RejectReason = &u.ID, &now, reason
		if err := s.saveBooking(tx, &before, b); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, "reject", "booking", b.ID, truncate(reason, 200), before, b); err != nil {
			return err
		}
		out = b
		return s.notifyTeam(tx, b.TeamID, b.UserID, "rejected", NoticeRejected, fmt.Sprintf("/bookings/%d", b.ID), b.ID, reason)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Decision is the outcome of one booking of DecideBookings: the booking as
// decided, or the coded error that refused it.
type Decision struct {
	ID      int64
	Booking *Booking
	Cards   []string // approved and placed: the cards assigned
	Err     error
}

// OK tells whether the booking was decided.
func (d Decision) OK() bool { return d.Err == nil }

// DecideBookings approves or rejects several bookings, each in its own
// transaction: one refused (or failed) leaves the others decided, and its
// Decision carries the coded error. A rejection's reason is checked first;
// without one nothing is decided. Ids repeated are decided once.
func (s *Store) DecideBookings(ctx context.Context, ids []int64, approve bool, reason string) ([]Decision, error) {
	const op = "store.DecideBookings"
	v := errs.NewValidation(op)
	v.Check(len(ids) > 0, "ids", "approval.none_selected")
	if err := v.Err(); err != nil {
		return nil, err
	}
	if !approve {
		var err error
		if reason, err = checkRejectReason(op, reason); err != nil {
			return nil, err
		}
	}
	var out []Decision
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		d := Decision{ID: id}
		if approve {
			res, err := s.ApproveBooking(ctx, id)
			if err == nil {
				d.Booking, d.Cards = res.Booking, res.Cards
			}
			d.Err = err
		} else {
			d.Booking, d.Err = s.RejectBooking(ctx, id, reason)
		}
		out = append(out, d)
	}
	return out, nil
}
