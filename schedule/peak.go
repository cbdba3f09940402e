package schedule

import (
	"sort"
	"time"
)

// Span is a window holding N cards.
type Span struct {
	Interval
	N int
}

// PeakCards is the most cards the spans hold at one instant inside w.
// Touching spans ([a,b) then [b,c)) never add up.
func PeakCards(spans []Span, w Interval) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, s := range spans {
		if s.N <= 0 || !s.Overlaps(w) {
			continue
		}
		start, end := s.Start, s.End
		if start.Before(w.Start) {
			start = w.Start
		}
		if end.After(w.End) {
			end = w.End
		}
		edges = append(edges, edge{start, s.N}, edge{end, -s.N})
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}
