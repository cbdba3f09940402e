package store

import (
	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// checkQuota tests cards over w against the team's quota for the card type,
// counting every live or finished booking but except (nil for none): the
// quota's running total, less what except draws, and the peak of cards held
// during w.
func (s *Store) checkQuota(tx *gorm.DB, teamID, cardTypeID int64, cards int, w schedule.Interval, except *Booking) (schedule.QuotaVerdict, *Quota, error) {
	q, err := s.quotaFor(tx, teamID, cardTypeID, w.Start)
	if err != nil || q == nil {
		return schedule.CheckQuota(nil, cards, w, 0, 0), nil, err
	}
	sq := q.policy()
	var exceptID int64
	if except != nil {
		exceptID = except.ID
	}
	// The cap on cards at once needs the peak only when there is a cap and
	// w lies inside the quota (outside it the verdict is already no).
	var peak int
	if q.MaxCards > 0 && !w.Start.Before(sq.ValidFrom) && !w.End.After(sq.ExpiresAt) {
		if peak, err = s.teamHeldPeak(tx, teamID, cardTypeID, w, exceptID); err != nil {
			return schedule.QuotaVerdict{}, nil, err
		}
	}
	used := q.UsedCardSeconds - drawnCardSeconds(except, q.window())
	return schedule.CheckQuota(&sq, cards, w, used, peak), q, nil
}

func quotaErr(op string, v schedule.QuotaVerdict) error {
	switch v.Limit {
	case schedule.LimitHours:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.over_hours", Args: []any{schedule.HoursText(v.OverBy)}}
	case schedule.LimitCards:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.over_cards", Args: []any{v.OverBy}}
	case schedule.LimitExpiry:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.past_expiry", Args: []any{schedule.HoursText(v.OverBy)}}
	case schedule.LimitNotYet:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.not_yet_valid", Args: []any{schedule.HoursText(v.OverBy)}}
	}
	return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.none"}
}

// quotaSummary says which limit an admin's override broke, and by how much.
func quotaSummary(v schedule.QuotaVerdict) auditNote {
	switch v.Limit {
	case schedule.LimitHours:
		return auditMsg("audit.sum.over_hours", argText(schedule.HoursText(v.OverBy)))
	case schedule.LimitCards:
		return auditMsg("audit.sum.over_cards", argText(v.OverBy))
	case schedule.LimitExpiry:
		return auditMsg("audit.sum.over_expiry", argText(schedule.HoursText(v.OverBy)))
	case schedule.LimitNotYet:
		return auditMsg("audit.sum.not_yet_valid", argText(schedule.HoursText(v.OverBy)))
	}
	return auditMsg("audit.sum.no_quota")
}

// teamHeldPeak is the most cards of the type the team holds at once during
// w, but except: the quota's cap on cards at once. It counts held cards,
// so a preempted booking counts until its cut, as its cards are still busy.
func (s *Store) teamHeldPeak(tx *gorm.DB, teamID, cardTypeID int64, w schedule.Interval, except int64) (int, error) {
	rows, err := s.heldRows(tx, cardTypeID, w, except)
	if err != nil {
		return 0, err
	}
	var spans []schedule.Span
	for _, r := range rows {
		if r.TeamID == teamID {
			spans = append(spans, schedule.Span{Interval: schedule.Interval{Start: r.StartAt.UTC(), End: r.EndAt.UTC()}, N: 1})
		}
	}
	return schedule.PeakCards(spans, w), nil
}
