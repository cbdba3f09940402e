// Package telemetry turns what GPU hosts report — nvidia-smi output, DCGM
// exporter metrics, or the simulator — into samples, and keeps the live
// state of the fleet from them. Parsers never trust their input: missing
// values stay missing (never zero), and malformed lines are skipped with a
// reason rather than crashing the server.
package telemetry

import "time"

// Sample is one reading of one card. Cards are keyed by UUID: nvidia-smi's
// index can change at boot.
type Sample struct {
	UUID        string    `json:"uuid"`
	Index       int       `json:"index"` // -1 when unknown
	Name        string    `json:"name,omitempty"`
	Host        string    `json:"host,omitempty"`
	At          time.Time `json:"at"`
	UtilPct     *float64  `json:"util"`
	MemUsedMiB  *float64  `json:"mem_used_mib"`
	MemTotalMiB *float64  `json:"mem_total_mib"`
	TempC       *float64  `json:"temp_c"`
	PowerW      *float64  `json:"power_w"`
	Processes   []Process `json:"processes,omitempty"`
}

// Process is a compute process on a card.
type Process struct {
	PID    int      `json:"pid"`
	Name   string   `json:"name"`
	MemMiB *float64 `json:"mem_mib"`
}

// LineError reports a line a parser skipped.
type LineError struct {
	Line   int
	Reason string
}

func (e LineError) Error() string { return "line " + itoa(e.Line) + ": " + e.Reason }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
