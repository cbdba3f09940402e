package telemetry

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"
)

// SimCard is a card the simulator drives.
type SimCard struct {
	UUID        string
	Host        string
	Index       int
	Model       string
	MemTotalMiB float64
	BookingID   int64 // 0 when no booking holds it
}

// Workload is the pattern a simulated card follows.
type Workload string

// Simulated workloads. Every card of one booking follows the same one, so
// a booking is either working or idle as a whole, as real ones are.
const (
	WorkUnbooked  Workload = "unbooked"  // nothing runs: a few MiB, room temperature
	WorkTraining  Workload = "training"  // high steady compute, periodic checkpoint dips
	WorkInference Workload = "inference" // bursty compute under a request load
	WorkServing   Workload = "serving"   // an inference server that reserves ~93 % of VRAM
	WorkIdle      Workload = "idle"      // booked, model loaded, nothing running: held but idle on purpose
)

// WorkloadOf picks a booked card's pattern from its booking id: one
// booking in four idles on purpose, one in four serves with VRAM nearly
// full, one in four runs bursty inference, the rest train.
func WorkloadOf(c SimCard) Workload {
	if c.BookingID == 0 {
		return WorkUnbooked
	}
	switch c.BookingID % 4 {
	case 0:
		return WorkIdle
	case 3:
		return WorkServing
	case 2:
		return WorkInference
	}
	return WorkTraining
}

// noise is a deterministic value in [0, 1) for a card, a time step and a
// channel, so a simulated fleet is the same on every run.
func noise(uuid string, step int64, channel uint64) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uuid))
	x := h.Sum64() ^ uint64(step)*0x9e3779b97f4a7c15 ^ channel*0xbf58476d1ce4e5b9
	// splitmix64 finaliser
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / float64(1<<53)
}

// tdp guesses a card's board power from its name.
func tdp(model string) float64 {
	m := strings.ToUpper(model)
	switch {
	case strings.Contains(m, "H800"), strings.Contains(m, "H100"), strings.Contains(m, "H200"), strings.Contains(m, "H20"):
		return 700
	case strings.Contains(m, "A800"), strings.Contains(m, "A100"):
		return 400
	case strings.Contains(m, "4090"):
		return 450
	case strings.Contains(m, "L40"):
		return 350
	}
	return 300
}

// Simulate returns the sample the card would report at at. It is a pure
// function of the card and the time.
func Simulate(c SimCard, at time.Time) Sample {
	step := at.Unix()
	n := func(ch uint64) float64 { return noise(c.UUID, step, ch) }
	total := c.MemTotalMiB
	if total <= 0 {
		total = 81559
	}
	var util, used float64
	var procs []Process
	pid := 2000 + 37*c.Index
	switch WorkloadOf(c) {
	case WorkUnbooked:
		util, used = 0, 4+math.Floor(n(2)*3)
	case WorkTraining:
		// Ten-minute cycles with a 30 s checkpoint dip; the phase differs per
		// booking so the whole board does not dip at once.
		phase := (step + c.BookingID*97) % 600
		if phase < 30 {
			util = 5 + 15*n(1)
		} else {
			util = 84 + 10*n(1)
		}
		used = total * (0.70 + 0.04*noise(c.UUID, 0, 3))
		procs = []Process{{PID: pid, Name: "python train.py --config configs/run.yaml", MemMiB: ptr(used - 600)}}
	case WorkInference:
		wave := math.Sin(2 * math.Pi * float64(step+c.BookingID*31) / 180)
		util = math.Max(0, math.Min(92, 45+35*wave+12*(n(1)-0.5)))
		used = total * 0.46
		procs = []Process{{PID: pid, Name: "python serve.py --port 8000", MemMiB: ptr(used - 400)}}
	case WorkServing:
		wave := math.Sin(2 * math.Pi * float64(step+c.BookingID*53) / 240)
		util = math.Max(0, math.Min(90, 50+30*wave+10*(n(1)-0.5)))
		used = total * (0.925 + 0.01*n(2))
		procs = []Process{{PID: pid, Name: "python -m vllm.entrypoints.openai.api_server --gpu-memory-utilization 0.93", MemMiB: ptr(used - 300)}}
	case WorkIdle:
		util = math.Floor(3 * n(1))
		used = total * 0.34
		procs = []Process{{PID: pid, Name: "python -m ipykernel_launcher", MemMiB: ptr(used - 300)}}
	}
	util = math.Round(util)
	used = math.Round(used)
	peak := tdp(c.Model)
	temp := math.Round(31 + util*0.38 + 3*n(4))
	power := math.Round((0.09*peak+(0.93*peak-0.09*peak)*util/100+8*n(5))*100) / 100
	return Sample{
		UUID: c.UUID, Index: c.Index, Name: c.Model, Host: c.Host, At: at,
		UtilPct: ptr(util), MemUsedMiB: ptr(used), MemTotalMiB: ptr(total), TempC: ptr(temp), PowerW: ptr(power),
		Processes: procs,
	}
}

func ptr(v float64) *float64 { return &v }

// SimTargets lists the registered cards in service that no real source
// reported within quiet: those are the simulator's to drive. A card that
// reports for real is never overwritten by made-up numbers.
func (f *Fleet) SimTargets(now time.Time, quiet time.Duration) []SimCard {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []SimCard
	for _, c := range f.cards {
		if !c.registered || c.meta.Maintenance || (!c.realAt.IsZero() && now.Sub(c.realAt) < quiet) {
			continue
		}
		sc := SimCard{UUID: c.meta.UUID, Host: c.meta.Host, Index: c.meta.Index, Model: c.meta.Type, MemTotalMiB: c.meta.MemTotalMiB}
		if c.hold.covers(now) {
			sc.BookingID = c.hold.BookingID
		}
		out = append(out, sc)
	}
	return out
}

// SimulateStep samples every simulator target at at and feeds the fleet;
// it returns how many samples it made.
func (f *Fleet) SimulateStep(at time.Time) int {
	targets := f.SimTargets(at, time.Minute)
	if len(targets) == 0 {
		return 0
	}
	samples := make([]Sample, len(targets))
	for i, c := range targets {
		samples[i] = Simulate(c, at)
	}
	f.Ingest(samples, SourceSimulator, at)
	return len(samples)
}

// SimulateSince replays the simulator from `from` to `to` in steps, so a
// fresh demo starts with a few minutes of history (and held-but-idle cards
// that have been idle long enough to show as such).
func (f *Fleet) SimulateSince(from, to time.Time, step time.Duration) error {
	if step <= 0 || !from.Before(to) {
		return fmt.Errorf("simulate from %v to %v by %v: empty range", from, to, step)
	}
	for t := from; !t.After(to); t = t.Add(step) {
		f.SimulateStep(t)
	}
	return nil
}
