package schedule

import "time"

// Quota is a team's grant for one card type: card-hours inside
// [ValidFrom, ExpiresAt) and a cap on cards held at once.
type Quota struct {
	CardSeconds int64 // granted card-hours × 3600
	MaxCards    int   // 0 = no cap
	ValidFrom   time.Time
	ExpiresAt   time.Time
}

// Quota limits a request can break.
const (
	LimitNone    = ""
	LimitHours   = "hours"
	LimitCards   = "cards"
	LimitExpiry  = "expiry"
	LimitNoQuota = "no_quota"
	LimitNotYet  = "not_yet_valid"
)

// QuotaVerdict says whether a request fits its quota and, if not, which
// limit it breaks and by how much: card-seconds for hours, cards for the
// cap, seconds past expiry.
type QuotaVerdict struct {
	Limit  string
	OverBy int64
	// RemainingCardSeconds is what is left after the request (never below 0).
	RemainingCardSeconds int64
}

// OK tells whether the request fits.
func (v QuotaVerdict) OK() bool { return v.Limit == LimitNone }

// CheckQuota tests a request of cards over w against q, given the card-
// seconds the team has already committed under q and the most cards it
// holds at one instant during w.
func CheckQuota(q *Quota, cards int, w Interval, usedCardSeconds int64, peakCards int) QuotaVerdict {
	if q == nil {
		return QuotaVerdict{Limit: LimitNoQuota}
	}
	if w.Start.Before(q.ValidFrom) {
		return QuotaVerdict{Limit: LimitNotYet, OverBy: int64(q.ValidFrom.Sub(w.Start) / time.Second)}
	}
	if w.End.After(q.ExpiresAt) {
		return QuotaVerdict{Limit: LimitExpiry, OverBy: int64(w.End.Sub(q.ExpiresAt) / time.Second)}
	}
	if q.MaxCards > 0 && peakCards+cards > q.MaxCards {
		return QuotaVerdict{Limit: LimitCards, OverBy: int64(peakCards + cards - q.MaxCards)}
	}
	need := CardSeconds(cards, w.Start, w.End)
	left := q.CardSeconds - usedCardSeconds - need
	if left < 0 {
		return QuotaVerdict{Limit: LimitHours, OverBy: -left}
	}
	return QuotaVerdict{RemainingCardSeconds: left}
}

// ReminderLead is how long before expiry a quota reminds its team: core
// tasks' quotas half a month ahead ("重要任务提前半月盯"), others a week.
func ReminderLead(hasCoreTasks bool) time.Duration {
	if hasCoreTasks {
		return 15 * 24 * time.Hour
	}
	return 7 * 24 * time.Hour
}

// DueForReminder tells whether a quota expiring at expires should be
// flagged at now.
func DueForReminder(expires, now time.Time, hasCoreTasks bool) bool {
	return now.Before(expires) && !now.Add(ReminderLead(hasCoreTasks)).Before(expires)
}

// Quota urgency as the quota pages show it: within UrgentDays of expiry a
// quota is due ("重要任务提前半月盯"), within WarnDays a warning; from
// HighUsePercent used up its hours are running low.
const (
	UrgencyNone    = ""
	UrgencyWarn    = "warn"
	UrgencyDue     = "due"
	UrgentDays     = 15
	WarnDays       = 30
	HighUsePercent = 80
)

// QuotaUrgency is how near a quota expiring at expires is to its end at
// now: due, warn, or none (also once expired).
func QuotaUrgency(expires, now time.Time) string {
	left := expires.Sub(now)
	switch {
	case left <= 0:
		return UrgencyNone
	case left <= UrgentDays*24*time.Hour:
		return UrgencyDue
	case left <= WarnDays*24*time.Hour:
		return UrgencyWarn
	}
	return UrgencyNone
}

// UsedPercent is the share of granted card-seconds used, as a whole
// percentage rounded down (so 79.9 % is not yet "high"), 0 for no grant.
func UsedPercent(used, granted int64) int {
	if granted <= 0 || used <= 0 {
		return 0
	}
	return int(used * 100 / granted)
}

// HighUse tells whether a quota's hours are running low.
func HighUse(used, granted int64) bool { return UsedPercent(used, granted) >= HighUsePercent }
