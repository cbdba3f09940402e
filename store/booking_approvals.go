package store

import (
	"context"
)

// CountAwaitingApproval counts the live bookings that wait for u's
// approval: in the teams u manages (every team for an admin). It is the
// number the header shows as "待审批 N"; the approvals inbox lists the
// same bookings.
func (s *Store) CountAwaitingApproval(ctx context.Context, u *User) (int, error) {
	if u == nil || (u.Role != RoleAdmin && RoleRank(u.Role) < RoleRank(RoleManager)) {
		return 0, nil
	}
	q := s.read(ctx).Table("bookings b").
		Where("b.state = ? AND b.wait_reason = ? AND b.end_at > ?", BookingPending, WaitApproval, s.now())
	if u.Role != RoleAdmin {
		q = q.Where("b.team_id IN (?)", s.read(ctx).Table("memberships").Select("team_id").
			Where("user_id = ? AND role = ?", u.ID, TeamRoleManager))
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		return 0, translate("store.CountAwaitingApproval", err)
	}
	return int(n), nil
}
