package telemetry

import (
	"fmt"
	"time"
)

// State is what the board shows a card doing.
type State string

// The states, in the order the board's legend lists them.
const (
	StateBusy     State = "busy"
	StateFull     State = "full"
	StateHeldIdle State = "held_idle"
	StateIdle     State = "idle"
	// StateUnbooked is a card in use — load, VRAM taken or processes — that
	// no booking holds (异常占用).
	StateUnbooked State = "unbooked"
	// StateFault is a card that reported a reading meaning it is unhealthy
	// (reset required, unknown error, an XID error), or that the inventory
	// marks faulty until an admin clears it.
	StateFault       State = "fault"
	StateOffline     State = "offline"
	StateMaintenance State = "maintenance"
)

// States lists every state in legend order.
var States = []State{StateBusy, StateFull, StateHeldIdle, StateIdle, StateUnbooked, StateFault, StateOffline, StateMaintenance}

// InUseMemMiB is the VRAM above which a card counts as in use even when
// nothing computes: a loaded model. Below it lies what a driver context
// alone takes.
const InUseMemMiB = 1024

// Thresholds decide the states and the alerts. The defaults follow the
// issue: full at ≥ 90 % VRAM or ≥ 95 % utilisation, held-but-idle when a
// booked card stays under 10 % for 10 minutes, offline after 30 s of silence.
type Thresholds struct {
	FullMemPct    float64       // VRAM share at or above which a card is full
	FullUtilPct   float64       // utilisation at or above which a card is full
	IdleUtilPct   float64       // utilisation below which a card is idle
	HeldIdleAfter time.Duration // how long a held card may idle before it is held_idle
	OfflineAfter  time.Duration // silence after which a card is offline
	VRAMAlertPct  float64       // VRAM share that raises an alert
}

// DefaultThresholds are the numbers.
func DefaultThresholds() Thresholds {
	return Thresholds{FullMemPct: 90, FullUtilPct: 95, IdleUtilPct: 10, HeldIdleAfter: 10 * time.Minute,
		OfflineAfter: 30 * time.Second, VRAMAlertPct: 95}
}

// Validate refuses thresholds that would make states contradict each other.
func (t Thresholds) Validate() error {
	switch {
	case t.IdleUtilPct <= 0 || t.IdleUtilPct >= 100:
		return fmt.Errorf("idle utilisation %v%%: want more than 0 and less than 100", t.IdleUtilPct)
	case t.FullUtilPct <= t.IdleUtilPct || t.FullUtilPct > 100:
		return fmt.Errorf("full utilisation %v%%: want above the idle threshold (%v%%) and at most 100", t.FullUtilPct, t.IdleUtilPct)
	case t.FullMemPct <= 0 || t.FullMemPct > 100:
		return fmt.Errorf("full VRAM %v%%: want more than 0 and at most 100", t.FullMemPct)
	case t.VRAMAlertPct <= 0 || t.VRAMAlertPct > 100:
		return fmt.Errorf("VRAM alert %v%%: want more than 0 and at most 100", t.VRAMAlertPct)
	case t.HeldIdleAfter < time.Minute:
		return fmt.Errorf("held-idle after %v: want at least a minute", t.HeldIdleAfter)
	case t.OfflineAfter < 5*time.Second:
		return fmt.Errorf("offline after %v: want at least 5 s", t.OfflineAfter)
	}
	return nil
}

// Reading is everything Classify looks at for one card.
type Reading struct {
	Now        time.Time
	LastSample time.Time // zero: never sampled
	Util       *float64  // utilisation; none on a GPU in MIG mode
	// SMActive is engine activity where that is all there is to know — the
	// busiest MIG instance's, from DCGM.
	SMActive    *float64
	Processes   int  // compute processes on the card, when the source reports them
	MIG         bool // in MIG mode: no utilisation, by design
	MemUsedMiB  *float64
	MemTotalMiB *float64
	Maintenance bool
	Fault       bool      // the card reported a fault, or the inventory marks it faulty
	Registered  bool      // the inventory knows the card, so no booking holding it means none
	Held        bool      // a booking holds the card now
	HeldSince   time.Time // start of that booking
	LowSince    time.Time // since when utilisation has been below IdleUtilPct; zero when it is not
}

// Classify is the board's one rule, in order of precedence: maintenance
// (whatever it reports), fault (an unhealthy card is never idle, never
// free), offline (silent too long), unbooked (a registered card in use
// that no booking holds), full (VRAM or compute at the limit, even when
// booked and otherwise quiet: something is loaded), busy, held_idle
// (booked, quiet for HeldIdleAfter counted from the later of the quiet
// start and the booking start), idle.
func Classify(r Reading, t Thresholds) State {
	switch {
	case r.Maintenance:
		return StateMaintenance
	case r.Fault:
		return StateFault
	case r.LastSample.IsZero() || r.Now.Sub(r.LastSample) >= t.OfflineAfter:
		return StateOffline
	case r.Registered && !r.Held && InUse(r, t):
		return StateUnbooked
	case IsFull(r.Util, r.MemUsedMiB, r.MemTotalMiB, t):
		return StateFull
	case Active(r, t):
		return StateBusy
	case r.Held && !r.LowSince.IsZero():
		since := r.LowSince
		if r.HeldSince.After(since) {
			since = r.HeldSince
		}
		if r.Now.Sub(since) >= t.HeldIdleAfter {
			return StateHeldIdle
		}
	}
	return StateIdle
}

// Active tells whether the card computes: utilisation at or above the idle
// threshold; where utilisation is unknown (MIG), engine activity, and
// failing that any compute process on it — a card with processes running
// is never taken for idle because a number is missing.
func Active(r Reading, t Thresholds) bool {
	switch {
	case r.Util != nil:
		return *r.Util >= t.IdleUtilPct
	case r.SMActive != nil && *r.SMActive >= t.IdleUtilPct:
		return true
	}
	return r.Processes > 0
}

// InUse tells whether anything occupies the card: it computes, runs
// processes, or holds more VRAM than a bare driver context.
func InUse(r Reading, t Thresholds) bool {
	return Active(r, t) || r.Processes > 0 || (r.MemUsedMiB != nil && *r.MemUsedMiB >= InUseMemMiB)
}

// IsFull applies the full thresholds; missing values never make a card full.
func IsFull(util, used, total *float64, t Thresholds) bool {
	if util != nil && *util >= t.FullUtilPct {
		return true
	}
	p, ok := MemPct(used, total)
	return ok && p >= t.FullMemPct
}

// The metric a tile shows large: the one that makes the card full or busy.
const (
	FigureUtil = "util" // utilisation, the default
	FigureVRAM = "vram" // VRAM share: full by its memory, not its compute
	FigureSM   = "sm"   // engine activity: a MIG card has no utilisation
)

// Figure picks a card's big figure. A card full because its VRAM is at the
// limit while its compute is not shows that VRAM share: its utilisation (2 %,
// say) would tell a reader across the room nothing about why it is full.
func Figure(state State, util, smActive, used, total *float64, t Thresholds) string {
	if state == StateFull && (util == nil || *util < t.FullUtilPct) {
		if p, ok := MemPct(used, total); ok && p >= t.FullMemPct {
			return FigureVRAM
		}
	}
	if util == nil && smActive != nil {
		return FigureSM
	}
	return FigureUtil
}

// MemPct is VRAM used as a share of the total, when both are known.
func MemPct(used, total *float64) (float64, bool) {
	if used == nil || total == nil || *total <= 0 {
		return 0, false
	}
	return *used / *total * 100, true
}

// NextLowSince carries the "quiet since" mark from one sample to the next:
// it starts at the first quiet sample, ends at the first busy one, and an
// unknown utilisation leaves it as it was.
func NextLowSince(prev time.Time, util *float64, at time.Time, t Thresholds) time.Time {
	switch {
	case util == nil:
		return prev
	case *util >= t.IdleUtilPct:
		return time.Time{}
	case prev.IsZero():
		return at
	}
	return prev
}

// Quietness is the measure NextLowSince follows for a reading: its
// utilisation; without one, its engine activity; on a MIG card without
// either, 0 when no process runs and 100 when one does, so its quiet
// stretch starts and ends with its work. Otherwise unknown.
func Quietness(r Reading) *float64 {
	switch {
	case r.Util != nil:
		return r.Util
	case r.SMActive != nil:
		return r.SMActive
	case !r.MIG:
		return nil
	}
	v := 0.0
	if r.Processes > 0 {
		v = 100
	}
	return &v
}

// VRAMAlertHysteresis is how far below the alert threshold VRAM must fall
// to end an episode, so a card hovering at the line raises one alert, not
// one per sample.
const VRAMAlertHysteresis = 5.0

// VRAMAlerting is the VRAM alert rule with hysteresis: an episode starts at
// VRAMAlertPct and lasts until VRAM drops below VRAMAlertPct − hysteresis.
func VRAMAlerting(wasAlerting bool, used, total *float64, t Thresholds) bool {
	p, ok := MemPct(used, total)
	if !ok {
		return wasAlerting
	}
	if wasAlerting {
		return p >= t.VRAMAlertPct-VRAMAlertHysteresis
	}
	return p >= t.VRAMAlertPct
}
