package schedule

import (
	"sort"
	"time"
)

// Data readiness of a task, least ready first.
const (
	DataNotReady = "not_ready"
	DataPartial  = "partial"
	DataReady    = "ready"
)

// ReadinessRank orders readiness: ready 3, partial 2, not ready 1.
func ReadinessRank(r string) int {
	switch r {
	case DataReady:
		return 3
	case DataPartial:
		return 2
	case DataNotReady:
		return 1
	}
	return 0
}

// Waiting is a request in the queue.
type Waiting struct {
	BookingID int64
	Priority  string
	Readiness string
	Submitted time.Time
}

// OrderQueue sorts waiting requests the way the article asks: core tasks
// first, then data-ready before waiting-for-data ("就绪的先跑"), then first
// come first served.
func OrderQueue(q []Waiting) {
	sort.SliceStable(q, func(i, j int) bool {
		a, b := q[i], q[j]
		if pa, pb := PriorityRank(a.Priority), PriorityRank(b.Priority); pa != pb {
			return pa > pb
		}
		if ra, rb := ReadinessRank(a.Readiness), ReadinessRank(b.Readiness); ra != rb {
			return ra > rb
		}
		if !a.Submitted.Equal(b.Submitted) {
			return a.Submitted.Before(b.Submitted)
		}
		return a.BookingID < b.BookingID
	})
}
