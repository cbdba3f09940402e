package schedule

import (
	"sort"
)

// DefaultHeadroom is the share of each card's VRAM left free when sizing.
const DefaultHeadroom = 0.10

// CardSpec is what sizing needs to know of a card type.
type CardSpec struct {
	ID       int64
	Name     string
	VRAMGiB  int
	TFLOPS   map[string]float64 // dense TFLOPS by precision; 0 or absent = unsupported
	PriceFen int64              // per card-hour
}

// Fit is one card type that can carry the need.
type Fit struct {
	Spec          CardSpec
	Cards         int     // cards needed with headroom
	TFLOPS        float64 // per card at the asked precision
	HourlyFen     int64   // Cards × price
	HeadroomShare float64 // VRAM left free per card at that count
}

// FitCardTypes lists the card types that support precision and carry
// needGiB with the headroom share of each card left free, cheapest per hour
// first; ties go to the faster type. Types needing more than maxCards are
// left out (0 means no limit).
func FitCardTypes(needGiB float64, precision string, specs []CardSpec, headroom float64, maxCards int) []Fit {
	var out []Fit
	for _, s := range specs {
		tf := s.TFLOPS[precision]
		if tf <= 0 {
			continue
		}
		n := CardsNeeded(needGiB, s.VRAMGiB, headroom)
		if n == 0 || (maxCards > 0 && n > maxCards) {
			continue
		}
		out = append(out, Fit{Spec: s, Cards: n, TFLOPS: tf, HourlyFen: int64(n) * s.PriceFen,
			HeadroomShare: 1 - needGiB/float64(n*s.VRAMGiB)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].HourlyFen != out[j].HourlyFen {
			return out[i].HourlyFen < out[j].HourlyFen
		}
		return out[i].TFLOPS*float64(out[i].Cards) > out[j].TFLOPS*float64(out[j].Cards)
	})
	return out
}
