package store

import (
	"context"

	"cardhour/schedule"
)

// QuotaUseBoth runs quotaUse and quotaUseSQL on the same data, for the test
// that they agree.
func (s *Store) QuotaUseBoth(ctx context.Context, teamID, cardTypeID int64, quotaWindow, w schedule.Interval, except int64) (used, peak, usedSQL, peakSQL int64, err error) {
	tx := s.read(ctx)
	u, p, err := quotaUse(tx, teamID, cardTypeID, quotaWindow, w, except)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	u2, p2, err := quotaUseSQL(tx, s.dialect, teamID, cardTypeID, quotaWindow, w, except)
	return u, int64(p), u2, int64(p2), err
}

// HeldBoth runs heldAssignments and heldAssignmentsIndexed on the same data.
func (s *Store) HeldBoth(ctx context.Context, cardTypeID int64, w schedule.Interval, except int64) (scan, indexed []schedule.Assignment, err error) {
	tx := s.read(ctx)
	if scan, err = heldAssignments(tx, cardTypeID, w, except); err != nil {
		return nil, nil, err
	}
	indexed, err = heldAssignmentsIndexed(tx, cardTypeID, w, except)
	return scan, indexed, err
}
