package telemetry

import (
	"cmp"
	"slices"
	"time"
)

// CardGauges is one registered card's figures as /metrics exports them. It
// is smaller than a CardView and built without copying: the readings are
// the live state's own pointers and the instances its own slice, which are
// never written after a sample is taken in (a new sample replaces them) —
// so the reader must not write them either.
type CardGauges struct {
	UUID, Host, Type string
	Index            int
	State            State
	Util             *float64
	MemUsedMiB       *float64
	MemTotalMiB      *float64
	TempC            *float64
	PowerW           *float64
	SMActive         *float64
	Held             bool      // a booking holds the card now
	LastSample       time.Time // zero when the card never reported
	Instances        []Instance
}

// AppendGauges appends every registered card's gauges at now to dst, by
// host, index and uuid, and returns the extended slice. A scraper that
// passes the last scrape's slice (emptied) allocates nothing for the cards:
// with 10,000 of them, /metrics is scraped every 15–60 s.
func (f *Fleet) AppendGauges(dst []CardGauges, now time.Time) []CardGauges {
	f.mu.Lock()
	start := len(dst)
	dst = slices.Grow(dst, len(f.cards))
	for _, c := range f.cards {
		if !c.registered {
			continue
		}
		dst = append(dst, CardGauges{UUID: c.meta.UUID, Host: c.meta.Host, Type: c.meta.Type, Index: c.meta.Index, State: c.state,
			Util: c.last.UtilPct, MemUsedMiB: c.last.MemUsedMiB, MemTotalMiB: c.memTotal(), TempC: c.last.TempC, PowerW: c.last.PowerW,
			SMActive: c.smActive(), Held: c.hold.covers(now), LastSample: c.lastAt, Instances: c.last.Instances})
	}
	f.mu.Unlock()
	// Sorted outside the lock: ingest waits on the lock, not on the sort.
	slices.SortFunc(dst[start:], func(a, b CardGauges) int {
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Index, b.Index), cmp.Compare(a.UUID, b.UUID))
	})
	return dst
}
