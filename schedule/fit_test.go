package schedule_test

import (
	"testing"
	"time"

	"cardhour/schedule"
)

var fleet = []schedule.CardSpec{
	{ID: 1, Name: "H800", VRAMGiB: 80, TFLOPS: map[string]float64{"bf16": 989.4, "fp8": 1978.9}, PriceFen: 2200},
	{ID: 2, Name: "A800", VRAMGiB: 80, TFLOPS: map[string]float64{"bf16": 312}, PriceFen: 1200},
	{ID: 3, Name: "L40S", VRAMGiB: 48, TFLOPS: map[string]float64{"bf16": 362, "fp8": 733}, PriceFen: 700},
	{ID: 4, Name: "4090", VRAMGiB: 24, TFLOPS: map[string]float64{"bf16": 165.2, "fp8": 330.3}, PriceFen: 350},
}

func names(fits []schedule.Fit) []string {
	var out []string
	for _, f := range fits {
		out = append(out, f.Spec.Name)
	}
	return out
}

func TestFitCardTypesCheapestFitFirst(t *testing.T) {
	cases := []struct {
		name      string
		need      float64
		precision string
		maxCards  int
		want      []string
		wantCards []int
	}{
		{"small model: every type fits on one card, cheapest first", 16, "bf16", 0, []string{"4090", "L40S", "A800", "H800"}, []int{1, 1, 1, 1}},
		{"40 GiB: two 4090s cost what one L40S does; the faster one goes first", 40, "bf16", 0, []string{"L40S", "4090", "A800", "H800"}, []int{1, 2, 1, 1}},
		{"fp8 leaves out cards without fp8", 40, "fp8", 0, []string{"L40S", "4090", "H800"}, []int{1, 2, 1}},
		{"a one-card limit drops multi-card fits", 60, "bf16", 1, []string{"A800", "H800"}, []int{1, 1}},
		{"headroom: 73 GiB does not fit one 80 GiB card", 73, "bf16", 1, nil, nil},
		{"no type supports int8 here", 10, "int8", 0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := schedule.FitCardTypes(c.need, c.precision, fleet, schedule.DefaultHeadroom, c.maxCards)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", names(got), c.want)
			}
			for i := range got {
				if got[i].Spec.Name != c.want[i] || got[i].Cards != c.wantCards[i] {
					t.Errorf("#%d = %s×%d, want %s×%d", i, got[i].Spec.Name, got[i].Cards, c.want[i], c.wantCards[i])
				}
				if got[i].HeadroomShare < schedule.DefaultHeadroom-1e-9 {
					t.Errorf("%s leaves %.2f free, less than the headroom", got[i].Spec.Name, got[i].HeadroomShare)
				}
			}
		})
	}
}

func TestCostIsCardHoursTimesPrice(t *testing.T) {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		cards    int
		dur      time.Duration
		price    int64
		wantSecs int64
		wantFen  int64
	}{
		{2, 3 * time.Hour, 2200, 21600, 13200}, // 6 card-hours × ¥22
		{1, 90 * time.Minute, 350, 5400, 525},  // 1.5 × ¥3.50
		{4, 20 * time.Minute, 1, 4800, 1},      // 1.33 fen rounds to 1
		{3, 30 * time.Minute, 1, 5400, 2},      // 1.5 fen rounds half up
		{2, -time.Hour, 2200, 0, 0},            // end before start costs nothing
		{0, time.Hour, 2200, 0, 0},
	}
	for _, c := range cases {
		secs := schedule.CardSeconds(c.cards, start, start.Add(c.dur))
		if secs != c.wantSecs {
			t.Errorf("CardSeconds(%d, %v) = %d, want %d", c.cards, c.dur, secs, c.wantSecs)
		}
		if fen := schedule.CostFen(secs, c.price); fen != c.wantFen {
			t.Errorf("CostFen(%d, %d) = %d, want %d", secs, c.price, fen, c.wantFen)
		}
	}
}
