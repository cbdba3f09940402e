package notify

import (
	"slices"
	"time"
)

// Event is one kind of thing worth telling someone. Its Name is the kind a
// notice is stored under; its defaults say where a recipient hears it
// until they switch it (the bell always: in-app cannot be switched off).
type Event struct {
	Name string
	// Group orders the preferences page: booking, quota, telemetry, ledger,
	// approval, admin.
	Group string
	// Mail and Chat are the defaults for e-mail and for the team's group
	// robots.
	Mail, Chat bool
	// Admin events go to the system-wide channels; the others to the
	// subject's team's channels.
	Admin bool
	// Audience is who can receive it at all: anyone (""), managers
	// ("manager", admins too) or admins ("admin"); the preferences page
	// offers a user only what can reach them.
	Audience string
}

// Audiences of events.
const (
	ForManagers = "manager"
	ForAdmins   = "admin"
)

// Reaches tells whether the event can reach a user who is (or is not) a
// manager or an admin.
func (e Event) Reaches(manager, admin bool) bool {
	switch e.Audience {
	case ForAdmins:
		return admin
	case ForManagers:
		return manager || admin
	}
	return true
}

// The events. Each constant is a notice kind; the store writes notices of
// these kinds and the preferences page lists them.
const (
	QuotaExpiring       = "quota_expiring"
	QuotaLow            = "quota_low"
	BookingStarts       = "booking_starts"
	BookingEnds         = "booking_ends"
	HeldIdle            = "alert_held_idle"
	ReleaseWarned       = "alert_release_warned"
	Released            = "alert_released"
	VRAMAlert           = "alert_vram"
	Fault               = "alert_fault"
	Unbooked            = "alert_unbooked"
	Foreign             = "alert_foreign"
	Spoof               = "alert_spoof"
	Preempted           = "preempted"
	ApprovalWaiting     = "approval_waiting"
	Approved            = "approved"
	Rejected            = "rejected"
	Placed              = "placed"
	DataWait            = "data_wait"
	NoShow              = "no_show"
	RecordOutput        = "record_output"
	Digest              = "digest"
	QuotaRequest        = "quota_request"
	QuotaRequestDecided = "quota_request_decided"
	DeliveryFailed      = "delivery_failed"
)

// Events is the catalogue, in the order the preferences page shows it.
// The defaults follow what a user would expect: what needs them to act
// (approve, renew, release, extend, record output) reaches them in chat
// and mail; what only informs stays in the bell and the team's robot.
var Events = []Event{
	{Name: ApprovalWaiting, Group: "approval", Mail: true, Chat: true, Audience: ForManagers},
	{Name: Approved, Group: "approval", Mail: true, Chat: false},
	{Name: Rejected, Group: "approval", Mail: true, Chat: false},
	{Name: BookingStarts, Group: "booking", Mail: false, Chat: true},
	{Name: BookingEnds, Group: "booking", Mail: true, Chat: true},
	{Name: Placed, Group: "booking", Mail: true, Chat: false},
	{Name: DataWait, Group: "booking", Mail: true, Chat: false},
	{Name: Preempted, Group: "booking", Mail: true, Chat: true},
	{Name: NoShow, Group: "booking", Mail: true, Chat: true},
	{Name: HeldIdle, Group: "telemetry", Mail: false, Chat: true},
	{Name: ReleaseWarned, Group: "telemetry", Mail: true, Chat: true},
	{Name: Released, Group: "telemetry", Mail: true, Chat: true},
	{Name: VRAMAlert, Group: "telemetry", Mail: false, Chat: true},
	{Name: QuotaExpiring, Group: "quota", Mail: true, Chat: true},
	{Name: QuotaLow, Group: "quota", Mail: true, Chat: true},
	{Name: QuotaRequest, Group: "quota", Mail: true, Chat: false, Admin: true, Audience: ForAdmins},
	{Name: QuotaRequestDecided, Group: "quota", Mail: true, Chat: false},
	{Name: RecordOutput, Group: "ledger", Mail: true, Chat: false},
	{Name: Digest, Group: "ledger", Mail: true, Chat: true, Audience: ForManagers},
	{Name: Fault, Group: "admin", Mail: true, Chat: true, Admin: true},
	{Name: Unbooked, Group: "admin", Mail: true, Chat: true, Admin: true, Audience: ForAdmins},
	{Name: Foreign, Group: "admin", Mail: true, Chat: true, Admin: true, Audience: ForAdmins},
	{Name: Spoof, Group: "admin", Mail: true, Chat: true, Admin: true, Audience: ForAdmins},
	{Name: DeliveryFailed, Group: "admin", Mail: true, Chat: false, Admin: true, Audience: ForAdmins},
}

// Find is the event named name; ok is false for a kind the catalogue does
// not list (such a notice stays in the bell only).
func Find(name string) (Event, bool) {
	i := slices.IndexFunc(Events, func(e Event) bool { return e.Name == name })
	if i < 0 {
		return Event{}, false
	}
	return Events[i], true
}

// ExpiryStages are the days before a quota's expiry at which its reminders
// go out (30 / 15 / 7 / 1). CoreStage is the stage from which the members
// with core tasks are told too: the article's "核心任务额度提前15天盯".
var ExpiryStages = []int{30, 15, 7, 1}

// CoreStage is the first expiry stage that also reaches core-task members.
const CoreStage = 15

// ExpiryStage is the reminder stage a quota expiring at exp is in at now:
// the tightest stage whose day count the days left have reached (days
// left rounded up, so 14 days and an hour is 15). 0 when none is due: more
// than 30 days left, or already expired.
func ExpiryStage(exp, now time.Time) int {
	left := exp.Sub(now)
	if left <= 0 {
		return 0
	}
	days := int((left + 24*time.Hour - 1) / (24 * time.Hour))
	stage := 0
	for _, s := range ExpiryStages {
		if days <= s {
			stage = s
		}
	}
	return stage
}

// UseStages are the shares (%) of a quota used at which a reminder goes
// out.
var UseStages = []int{80, 95}

// UseStage is the highest use stage that used of granted card-seconds has
// reached, 0 when none.
func UseStage(used, granted int64) int {
	if granted <= 0 {
		return 0
	}
	stage := 0
	for _, s := range UseStages {
		if used*100 >= granted*int64(s) {
			stage = s
		}
	}
	return stage
}

// Ahead are how long before a booking's start and end its owner is told.
const (
	StartsAhead = 15 * time.Minute
	EndsAhead   = 30 * time.Minute
	// OutputAfter is how long after a round ends without output recorded
	// its owner is asked to record it (记真实账).
	OutputAfter = 24 * time.Hour
	// OutputWithin bounds how far back that reminder looks, so that a
	// fresh install does not remind of every old round.
	OutputWithin = 7 * 24 * time.Hour
)

// Quiet tells whether minute-of-day m (0–1439, in the portal's zone) is
// inside the quiet hours [from, to); the window may cross midnight. from
// == to means no quiet hours.
func Quiet(from, to, m int) bool {
	switch {
	case from == to:
		return false
	case from < to:
		return m >= from && m < to
	default:
		return m >= from || m < to
	}
}

// QuietUntil is when quiet hours [from, to) (minutes of day in loc) that
// cover t end; t itself when they do not.
func QuietUntil(from, to int, t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	if !Quiet(from, to, m) {
		return t
	}
	day := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc)
	end := day.Add(time.Duration(to) * time.Minute)
	if !end.After(lt) {
		end = end.AddDate(0, 0, 1)
	}
	return end.UTC()
}

// Backoff is how long to wait before try attempt+1 after attempt failed
// tries (1-based): base, 3×base, 9×base… capped at an hour. last is true
// once tries are spent: the notice is then marked failed.
func Backoff(base time.Duration, attempt, tries int) (wait time.Duration, last bool) {
	if attempt >= tries {
		return 0, true
	}
	wait = base
	for i := 1; i < attempt && wait < time.Hour; i++ {
		wait *= 3
	}
	return min(wait, time.Hour), false
}
