// Package telemetry turns what GPU hosts report — nvidia-smi output, DCGM
// exporter metrics, or the simulator — into samples, and keeps the live
// state of the fleet from them. Parsers never trust their input: missing
// values stay missing (never zero), and malformed lines are skipped with a
// reason rather than crashing the server.
package telemetry

import (
	"math"
	"time"
)

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

// ValidUUID reports whether s looks like an nvidia-smi GPU-… or MIG-… uuid.
func ValidUUID(s string) bool { return validUUID(s) }

// Sanitize makes a sample from an untrusted JSON body obey what the parsers
// guarantee: percentages within 0–100, no negative sizes or power, no
// absurd temperatures, bounded names and process lists. Values outside
// become missing, never clamped into plausible-looking numbers.
func (s *Sample) Sanitize() {
	s.UtilPct = percent(finite(s.UtilPct))
	s.MemUsedMiB = nonNegative(finite(s.MemUsedMiB))
	s.MemTotalMiB = nonNegative(finite(s.MemTotalMiB))
	s.PowerW = nonNegative(finite(s.PowerW))
	if t := finite(s.TempC); t == nil || *t < -50 || *t > 200 {
		s.TempC = nil
	}
	if s.Index < -1 || s.Index >= 1024 {
		s.Index = -1
	}
	s.Name = clip(s.Name, 100)
	s.Host = clip(s.Host, 100)
	if len(s.Processes) > 64 {
		s.Processes = s.Processes[:64]
	}
	for i := range s.Processes {
		p := &s.Processes[i]
		p.Name = clip(p.Name, 200)
		p.MemMiB = nonNegative(finite(p.MemMiB))
	}
}

func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}
