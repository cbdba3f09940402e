package web_test

import (
	"testing"

	"cardhour/web"
)

// TestLedgerHoursOfAShortRound: a 22-second round is 0.0061 card-hours,
// not 0.0 beside a utilisation of 100 %.
func TestLedgerHoursOfAShortRound(t *testing.T) {
	for h, want := range map[float64]string{22.0 / 3600: "0.0061", 0: "0.0", 0.05: "0.1", 0.049: "0.049", 1234.56: "1,234.6", -0.002: "-0.0020"} {
		if got := web.LgHours(h); got != want {
			t.Errorf("LgHours(%v) = %q, want %q", h, got, want)
		}
	}
}
