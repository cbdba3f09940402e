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
	UUID  string    `json:"uuid"`
	Index int       `json:"index"` // -1 when unknown
	Name  string    `json:"name,omitempty"`
	Host  string    `json:"host,omitempty"`
	BusID string    `json:"bus_id,omitempty"` // PCI bus id, to place nvidia-smi's per-GPU error lines
	At    time.Time `json:"at"`
	// UtilPct is nvidia-smi's utilization.gpu, or DCGM's DCGM_FI_DEV_GPU_UTIL
	// (the same measure): the share of time a kernel ran. A GPU in MIG mode
	// has none.
	UtilPct *float64 `json:"util"`
	// SMActivePct is DCGM's DCGM_FI_PROF_GR_ENGINE_ACTIVE as a percentage
	// ("SM activity"): a different, finer measure, kept beside UtilPct and
	// never in its place.
	SMActivePct *float64  `json:"sm_active,omitempty"`
	MemUsedMiB  *float64  `json:"mem_used_mib"`
	MemTotalMiB *float64  `json:"mem_total_mib"`
	TempC       *float64  `json:"temp_c"`
	PowerW      *float64  `json:"power_w"`
	MIG         bool      `json:"mig,omitempty"` // mig.mode.current is Enabled
	Processes   []Process `json:"processes,omitempty"`
	// Instances are the card's MIG GPU instances, when it is in MIG mode.
	Instances []Instance `json:"instances,omitempty"`
	// Fault is set when the card reported a reading that means it is
	// unhealthy ("GPU requires reset", "Unknown Error", an XID error): such a
	// card is never idle, whatever else it says.
	Fault string `json:"fault,omitempty"`
}

// Process is a compute process on a card.
type Process struct {
	PID    int      `json:"pid"`
	Name   string   `json:"name"`
	MemMiB *float64 `json:"mem_mib"`
	// User is the process's OS account (from /proc/PID/status), for telling
	// a booking's own processes from someone else's.
	User string `json:"user,omitempty"`
	// GPUInstance is the MIG GPU instance the process runs in; nil on a
	// card that is not in MIG mode.
	GPUInstance *int `json:"gpu_instance,omitempty"`
}

// Instance is one MIG GPU instance of a card.
type Instance struct {
	ID          int      `json:"id"`      // GPU instance id (DCGM's GPU_I_ID)
	Profile     string   `json:"profile"` // e.g. 2g.20gb (DCGM's GPU_I_PROFILE)
	UUID        string   `json:"uuid,omitempty"`
	MemUsedMiB  *float64 `json:"mem_used_mib"`
	MemTotalMiB *float64 `json:"mem_total_mib"`
	SMActivePct *float64 `json:"sm_active"` // the instance's engine activity, where DCGM gives it
	Processes   int      `json:"processes"`
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
	s.SMActivePct = percent(finite(s.SMActivePct))
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
	s.BusID = clip(s.BusID, 32)
	s.Fault = clip(s.Fault, 200)
	if len(s.Processes) > 64 {
		s.Processes = s.Processes[:64]
	}
	for i := range s.Processes {
		p := &s.Processes[i]
		p.Name = clip(p.Name, 200)
		p.User = clip(p.User, 64)
		p.MemMiB = nonNegative(finite(p.MemMiB))
	}
	if len(s.Instances) > 64 {
		s.Instances = s.Instances[:64]
	}
	for i := range s.Instances {
		in := &s.Instances[i]
		in.Profile = clip(in.Profile, 32)
		in.UUID = clip(in.UUID, 64)
		in.MemUsedMiB = nonNegative(finite(in.MemUsedMiB))
		in.MemTotalMiB = nonNegative(finite(in.MemTotalMiB))
		in.SMActivePct = percent(finite(in.SMActivePct))
		if in.Processes < 0 {
			in.Processes = 0
		}
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
