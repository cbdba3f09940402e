package config_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"cardhour/config"
	"cardhour/telemetry"
)

func TestTelemetryDefaults(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Simulator || len(c.DCGMTargets) != 0 || c.DCGMInterval != 5*time.Second || c.AutoRelease != 0 {
		t.Errorf("defaults: simulator %v targets %v interval %v auto-release %v", c.Simulator, c.DCGMTargets, c.DCGMInterval, c.AutoRelease)
	}
	if c.Thresholds != telemetry.DefaultThresholds() {
		t.Errorf("thresholds %+v, want the issue's %+v", c.Thresholds, telemetry.DefaultThresholds())
	}
	if c.KeepMinutes != 14*24*time.Hour || c.KeepHours != 400*24*time.Hour {
		t.Errorf("retention %v / %v", c.KeepMinutes, c.KeepHours)
	}
	my, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_DB": "mysql://u:p@tcp(h:3306)/d"}), io.Discard)
	if err != nil || my.Simulator {
		t.Errorf("with MySQL the simulator is off by default: %v %v", my.Simulator, err)
	}
}

func TestTelemetryOptionsAreRead(t *testing.T) {
	c, err := config.Load("serve", []string{"--held-idle-minutes", "20", "--idle-util-pct", "5"}, env(map[string]string{
		"CARDHOUR_DCGM_TARGETS":         "gpu-01:9400, https://gpu-02:9400/metrics",
		"CARDHOUR_FULL_VRAM_PCT":        "85",
		"CARDHOUR_AUTO_RELEASE_MINUTES": "60",
		"CARDHOUR_SIMULATOR":            "false",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Thresholds.HeldIdleAfter != 20*time.Minute || c.Thresholds.IdleUtilPct != 5 || c.Thresholds.FullMemPct != 85 ||
		c.AutoRelease != time.Hour || c.Simulator || strings.Join(c.DCGMTargets, " ") != "http://gpu-01:9400/metrics https://gpu-02:9400/metrics" {
		t.Errorf("config %+v", c)
	}
}

func TestTelemetryOptionsAreValidated(t *testing.T) {
	for env1, want := range map[string]string{
		"CARDHOUR_DCGM_TARGETS=ftp://x":       "CARDHOUR_DCGM_TARGETS",
		"CARDHOUR_DCGM_INTERVAL=1ms":          "CARDHOUR_DCGM_INTERVAL",
		"CARDHOUR_FULL_VRAM_PCT=120":          "CARDHOUR_FULL_VRAM_PCT",
		"CARDHOUR_IDLE_UTIL_PCT=99":           "CARDHOUR_IDLE_UTIL_PCT", // above the full line
		"CARDHOUR_HELD_IDLE_MINUTES=0":        "CARDHOUR_HELD_IDLE_MINUTES",
		"CARDHOUR_OFFLINE_SECONDS=2":          "CARDHOUR_OFFLINE_SECONDS",
		"CARDHOUR_AUTO_RELEASE_MINUTES=5":     "CARDHOUR_AUTO_RELEASE_MINUTES", // shorter than held-idle
		"CARDHOUR_ROLLUP_HOURS_DAYS=1":        "CARDHOUR_ROLLUP_HOURS_DAYS",    // shorter than the minutes
		"CARDHOUR_SIMULATOR=sometimes":        "CARDHOUR_SIMULATOR",
		"CARDHOUR_VRAM_ALERT_PCT=ninety-five": "CARDHOUR_VRAM_ALERT_PCT",
	} {
		k, v, _ := strings.Cut(env1, "=")
		_, err := config.Load("serve", nil, env(map[string]string{k: v}), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", env1, err, want)
		}
	}
}
