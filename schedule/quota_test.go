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

func TestQuotaUrgency(t *testing.T) {
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		name    string
		expires time.Time
		want    string
	}{
		{"expired is no longer urgent", now.Add(-time.Hour), schedule.UrgencyNone},
		{"one hour left is due", now.Add(time.Hour), schedule.UrgencyDue},
		{"exactly fifteen days is due", now.Add(15 * day), schedule.UrgencyDue},
		{"sixteen days is a warning", now.Add(16 * day), schedule.UrgencyWarn},
		{"exactly thirty days is a warning", now.Add(30 * day), schedule.UrgencyWarn},
		{"thirty-one days is nothing yet", now.Add(31 * day), schedule.UrgencyNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := schedule.QuotaUrgency(c.expires, now); got != c.want {
				t.Errorf("schedule.QuotaUrgency = %q, want %q", got, c.want)
			}
		})
	}
}

func TestUsedPercentHighFromEighty(t *testing.T) {
	for _, c := range []struct {
		used, granted int64
		pct           int
		high          bool
	}{
		{0, 3600, 0, false},
		{2876, 3600, 79, false}, // 79.9 % rounds down
		{2880, 3600, 80, true},
		{4000, 3600, 111, true},
		{10, 0, 0, false},
	} {
		if p, h := schedule.UsedPercent(c.used, c.granted), schedule.HighUse(c.used, c.granted); p != c.pct || h != c.high {
			t.Errorf("schedule.UsedPercent(%d, %d) = %d, high %v; want %d, %v", c.used, c.granted, p, h, c.pct, c.high)
		}
	}
}
