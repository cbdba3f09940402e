package telemetry_test

import (
	"testing"
	"time"

	"cardhour/telemetry"
)

func f(v float64) *float64 { return &v }

func TestClassify(t *testing.T) {
	th := telemetry.DefaultThresholds()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	fresh := now.Add(-time.Second)
	total := f(81559)
	cases := []struct {
		name string
		in   telemetry.Reading
		want telemetry.State
	}{
		{"maintenance wins over a busy sample", telemetry.Reading{Maintenance: true, LastSample: fresh, Util: f(100)}, telemetry.StateMaintenance},
		{"never sampled is offline", telemetry.Reading{}, telemetry.StateOffline},
		{"silent for 30 s is offline", telemetry.Reading{LastSample: now.Add(-30 * time.Second), Util: f(100)}, telemetry.StateOffline},
		{"silent for 29 s is still what it reported", telemetry.Reading{LastSample: now.Add(-29 * time.Second), Util: f(50)}, telemetry.StateBusy},
		{"95 % utilisation is full", telemetry.Reading{LastSample: fresh, Util: f(95)}, telemetry.StateFull},
		{"94 % utilisation is busy", telemetry.Reading{LastSample: fresh, Util: f(94)}, telemetry.StateBusy},
		{"90 % VRAM is full even when quiet", telemetry.Reading{LastSample: fresh, Util: f(0), MemUsedMiB: f(73404), MemTotalMiB: total}, telemetry.StateFull},
		{"89 % VRAM and quiet is idle", telemetry.Reading{LastSample: fresh, Util: f(0), MemUsedMiB: f(72587), MemTotalMiB: total}, telemetry.StateIdle},
		{"full wins over held idle", telemetry.Reading{LastSample: fresh, Util: f(1), MemUsedMiB: f(80000), MemTotalMiB: total,
			Held: true, HeldSince: now.Add(-time.Hour), LowSince: now.Add(-time.Hour)}, telemetry.StateFull},
		{"10 % utilisation is busy", telemetry.Reading{LastSample: fresh, Util: f(10)}, telemetry.StateBusy},
		{"9 % utilisation unbooked is idle", telemetry.Reading{LastSample: fresh, Util: f(9)}, telemetry.StateIdle},
		{"booked and quiet for 10 min is held idle", telemetry.Reading{LastSample: fresh, Util: f(2),
			Held: true, HeldSince: now.Add(-time.Hour), LowSince: now.Add(-10 * time.Minute)}, telemetry.StateHeldIdle},
		{"booked and quiet for 9 min is idle", telemetry.Reading{LastSample: fresh, Util: f(2),
			Held: true, HeldSince: now.Add(-time.Hour), LowSince: now.Add(-9 * time.Minute)}, telemetry.StateIdle},
		{"quiet before the booking began counts from its start", telemetry.Reading{LastSample: fresh, Util: f(0),
			Held: true, HeldSince: now.Add(-5 * time.Minute), LowSince: now.Add(-3 * time.Hour)}, telemetry.StateIdle},
		{"quiet for hours but not booked is idle", telemetry.Reading{LastSample: fresh, Util: f(0), LowSince: now.Add(-3 * time.Hour)}, telemetry.StateIdle},
		{"unknown utilisation is never busy", telemetry.Reading{LastSample: fresh}, telemetry.StateIdle},
		{"unknown VRAM total is never full", telemetry.Reading{LastSample: fresh, Util: f(20), MemUsedMiB: f(80000)}, telemetry.StateBusy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now = now
			if got := telemetry.Classify(c.in, th); got != c.want {
				t.Errorf("Classify = %s, want %s", got, c.want)
			}
		})
	}
}

func TestClassifyFollowsConfiguredThresholds(t *testing.T) {
	th := telemetry.Thresholds{FullMemPct: 80, FullUtilPct: 99, IdleUtilPct: 30, HeldIdleAfter: 2 * time.Minute, OfflineAfter: 10 * time.Second, VRAMAlertPct: 85}
	if err := th.Validate(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := telemetry.Reading{Now: now, LastSample: now, Util: f(25), Held: true, HeldSince: now.Add(-time.Hour), LowSince: now.Add(-2 * time.Minute)}
	if got := telemetry.Classify(r, th); got != telemetry.StateHeldIdle {
		t.Errorf("25 %% under a 30 %% idle line for 2 min: %s, want held_idle", got)
	}
	r.Util = f(97)
	if got := telemetry.Classify(r, th); got != telemetry.StateBusy {
		t.Errorf("97 %% under a 99 %% full line: %s, want busy", got)
	}
	r.LastSample = now.Add(-10 * time.Second)
	if got := telemetry.Classify(r, th); got != telemetry.StateOffline {
		t.Errorf("10 s silent with a 10 s limit: %s, want offline", got)
	}
}

func TestThresholdsValidateRefusesContradictions(t *testing.T) {
	bad := []telemetry.Thresholds{
		{FullMemPct: 90, FullUtilPct: 5, IdleUtilPct: 10, HeldIdleAfter: time.Minute, OfflineAfter: time.Minute, VRAMAlertPct: 95},
		{FullMemPct: 0, FullUtilPct: 95, IdleUtilPct: 10, HeldIdleAfter: time.Minute, OfflineAfter: time.Minute, VRAMAlertPct: 95},
		{FullMemPct: 90, FullUtilPct: 95, IdleUtilPct: 0, HeldIdleAfter: time.Minute, OfflineAfter: time.Minute, VRAMAlertPct: 95},
		{FullMemPct: 90, FullUtilPct: 95, IdleUtilPct: 10, HeldIdleAfter: time.Second, OfflineAfter: time.Minute, VRAMAlertPct: 95},
		{FullMemPct: 90, FullUtilPct: 95, IdleUtilPct: 10, HeldIdleAfter: time.Minute, OfflineAfter: time.Second, VRAMAlertPct: 95},
		{FullMemPct: 90, FullUtilPct: 95, IdleUtilPct: 10, HeldIdleAfter: time.Minute, OfflineAfter: time.Minute, VRAMAlertPct: 120},
	}
	for i, th := range bad {
		if th.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, th)
		}
	}
	if err := telemetry.DefaultThresholds().Validate(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

func TestNextLowSince(t *testing.T) {
	th := telemetry.DefaultThresholds()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	cases := []struct {
		name string
		prev time.Time
		util *float64
		want time.Time
	}{
		{"the first quiet sample starts the mark", time.Time{}, f(3), t1},
		{"a quiet sample keeps an old mark", t0, f(3), t0},
		{"a busy sample clears the mark", t0, f(50), time.Time{}},
		{"an unknown utilisation keeps the mark", t0, nil, t0},
		{"an unknown utilisation does not start one", time.Time{}, nil, time.Time{}},
	}
	for _, c := range cases {
		if got := telemetry.NextLowSince(c.prev, c.util, t1, th); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestVRAMAlertingHasHysteresis(t *testing.T) {
	th := telemetry.DefaultThresholds() // alert at 95 %, ends below 90 %
	total := f(100)
	cases := []struct {
		name string
		was  bool
		used float64
		want bool
	}{
		{"starts at the threshold", false, 95, true},
		{"does not start below it", false, 94, false},
		{"continues just below it", true, 91, true},
		{"ends below threshold minus hysteresis", true, 89, false},
	}
	for _, c := range cases {
		if got := telemetry.VRAMAlerting(c.was, f(c.used), total, th); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !telemetry.VRAMAlerting(true, nil, total, th) {
		t.Error("a missing reading ended an episode; it should leave it as it was")
	}
}

// TestFigureIsWhatMakesTheCardFull: a tile's big number is the metric that
// makes the card full or busy — the VRAM share for a card full by its VRAM
// alone, engine activity on a MIG card, else utilisation.
func TestFigureIsWhatMakesTheCardFull(t *testing.T) {
	th := telemetry.DefaultThresholds()
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name                  string
		state                 telemetry.State
		util, sm, used, total *float64
		want                  string
	}{
		{"full by VRAM, compute low", telemetry.StateFull, f(40), nil, f(78000), f(81559), telemetry.FigureVRAM},
		{"full by compute and VRAM", telemetry.StateFull, f(99), nil, f(78000), f(81559), telemetry.FigureUtil},
		{"full by compute", telemetry.StateFull, f(99), nil, f(3000), f(81559), telemetry.FigureUtil},
		{"busy with much VRAM", telemetry.StateBusy, f(60), nil, f(78000), f(81559), telemetry.FigureUtil},
		{"MIG, full by VRAM", telemetry.StateFull, nil, f(12), f(78000), f(81559), telemetry.FigureVRAM},
		{"MIG, busy", telemetry.StateBusy, nil, f(92), f(20000), f(81559), telemetry.FigureSM},
		{"offline", telemetry.StateOffline, nil, nil, nil, nil, telemetry.FigureUtil},
	} {
		if got := telemetry.Figure(c.state, c.util, c.sm, c.used, c.total, th); got != c.want {
			t.Errorf("%s: figure %q, want %q", c.name, got, c.want)
		}
	}
}
