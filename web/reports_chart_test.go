package web_test

import (
	"math"
	"strconv"
	"testing"

	"cardhour/web"
)

// TestChartTicksAreRound: whatever the largest value, a chart's ticks are
// 0, step, 2·step … with step 1, 2 or 5 × a power of ten, the last tick at
// or above the largest value and the axis not more than 2.5 times it (a
// top of 125 gave ticks 0, 31.25, 62.5 … printed as 0, 31, 63, 94, 125).
func TestChartTicksAreRound(t *testing.T) {
	for _, v := range []float64{0.07, 0.7, 1, 3.3, 7, 9.99, 10, 12, 63, 99, 125, 250, 333, 1000, 1234.5, 98765} {
		c := web.TrendChart("t", []web.TrendPoint{{Label: "a", Values: []float64{v}}}, nil, func(x float64) string {
			return strconv.FormatFloat(x, 'g', -1, 64)
		})
		var ticks []float64
		for _, tx := range c.Texts {
			if tx.Class != "chart-tick" {
				continue
			}
			x, err := strconv.ParseFloat(tx.Text, 64)
			if err != nil {
				t.Fatalf("max %v: tick %q is not a plain number", v, tx.Text)
			}
			ticks = append(ticks, x)
		}
		if len(ticks) < 3 || len(ticks) > 6 || ticks[0] != 0 {
			t.Errorf("max %v: ticks %v, want 0 and two to five steps", v, ticks)
			continue
		}
		step := ticks[1]
		p := math.Pow(10, math.Floor(math.Log10(step)))
		if m := math.Round(step/p*1000) / 1000; m != 1 && m != 2 && m != 5 {
			t.Errorf("max %v: step %v is not 1, 2 or 5 × a power of ten (ticks %v)", v, step, ticks)
		}
		for i, x := range ticks {
			if math.Abs(x-step*float64(i)) > step*1e-9 {
				t.Errorf("max %v: tick %d is %v, want %v (ticks %v)", v, i, x, step*float64(i), ticks)
			}
		}
		if top := ticks[len(ticks)-1]; top < v || top > 2.5*v {
			t.Errorf("max %v: axis ends at %v (ticks %v)", v, top, ticks)
		}
	}
}
