package schedule_test

import (
	"testing"
	"time"

	"cardhour/schedule"
)

func TestCheckQuota(t *testing.T) {
	q := &schedule.Quota{CardSeconds: 100 * 3600, MaxCards: 4, ValidFrom: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour)}
	cases := []struct {
		name      string
		q         *schedule.Quota
		cards     int
		w         schedule.Interval
		used      int64
		peak      int
		wantLimit string
		wantOver  int64
		wantLeft  int64
	}{
		{"fits", q, 2, win(0, 10), 50 * 3600, 1, schedule.LimitNone, 0, 30 * 3600},
		{"exactly uses it up", q, 2, win(0, 25), 50 * 3600, 0, schedule.LimitNone, 0, 0},
		{"over the hours by 4 card-hours", q, 2, win(0, 12), 80 * 3600, 0, schedule.LimitHours, 4 * 3600, 0},
		{"over the card cap by one", q, 2, win(0, 1), 0, 3, schedule.LimitCards, 1, 0},
		{"runs 6 hours past expiry", q, 1, schedule.Interval{Start: q.ExpiresAt.Add(-2 * time.Hour), End: q.ExpiresAt.Add(6 * time.Hour)}, 0, 0, schedule.LimitExpiry, 6 * 3600, 0},
		{"starts before the quota is valid", q, 1, schedule.Interval{Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)}, 0, 0, schedule.LimitNotYet, 3600, 0},
		{"no quota", nil, 1, win(0, 1), 0, 0, schedule.LimitNoQuota, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := schedule.CheckQuota(c.q, c.cards, c.w, c.used, c.peak)
			if v.Limit != c.wantLimit || v.OverBy != c.wantOver || v.RemainingCardSeconds != c.wantLeft {
				t.Errorf("got %+v, want limit %q over %d left %d", v, c.wantLimit, c.wantOver, c.wantLeft)
			}
			if v.OK() != (c.wantLimit == schedule.LimitNone) {
				t.Errorf("OK() = %v", v.OK())
			}
		})
	}
}

func TestQuotaRemindersCoreHalfAMonthAhead(t *testing.T) {
	expires := t0.Add(30 * 24 * time.Hour)
	cases := []struct {
		name    string
		now     time.Time
		core    bool
		wantDue bool
	}{
		{"core, 16 days out", expires.Add(-16 * 24 * time.Hour), true, false},
		{"core, 15 days out", expires.Add(-15 * 24 * time.Hour), true, true},
		{"normal, 10 days out", expires.Add(-10 * 24 * time.Hour), false, false},
		{"normal, 7 days out", expires.Add(-7 * 24 * time.Hour), false, true},
		{"already expired", expires.Add(time.Hour), true, false},
	}
	for _, c := range cases {
		if got := schedule.DueForReminder(expires, c.now, c.core); got != c.wantDue {
			t.Errorf("%s: due = %v, want %v", c.name, got, c.wantDue)
		}
	}
}
