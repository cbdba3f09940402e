package board

import (
	"bufio"
	"strconv"
	"sync"
	"time"

	"cardhour/telemetry"
)

// cardMetrics writes the live fleet's per-card gauges on /metrics: one
// series per card and reading, labelled uuid/host/type (and index), so an
// existing Prometheus and Grafana can chart the same numbers the board
// shows.
//
// They bypass the client library's registry on purpose. With 10,000 cards
// they are some 160,000 series, and Gather builds every one as a protobuf
// message with its own label pairs, and holds them all, before the first
// byte goes out: 160 MB allocated per scrape, a jump of 120–160 MiB of RSS
// at each of Prometheus' scrapes (issue #14). Here a scrape copies the
// fleet once into a compact slice (reused from scrape to scrape) and
// formats each line straight into the response's buffer.
type cardMetrics struct {
	fleet *telemetry.Fleet
	bufs  sync.Pool // *[]telemetry.CardGauges, emptied, of earlier scrapes
}

// cardReading is a gauge family with one series per card that reports the
// reading.
type cardReading struct {
	name, help string
	value      func(*telemetry.CardGauges) *float64
}

var cardReadings = []cardReading{
	{"cardhour_gpu_utilization_percent", "GPU utilisation reported by the card.", func(c *telemetry.CardGauges) *float64 { return c.Util }},
	{"cardhour_gpu_memory_used_mib", "VRAM in use, MiB.", func(c *telemetry.CardGauges) *float64 { return c.MemUsedMiB }},
	{"cardhour_gpu_memory_total_mib", "VRAM size, MiB.", func(c *telemetry.CardGauges) *float64 { return c.MemTotalMiB }},
	{"cardhour_gpu_temperature_celsius", "GPU temperature.", func(c *telemetry.CardGauges) *float64 { return c.TempC }},
	{"cardhour_gpu_power_watts", "Board power draw.", func(c *telemetry.CardGauges) *float64 { return c.PowerW }},
	{"cardhour_gpu_sm_active_percent", "SM (graphics engine) activity from DCGM; on a MIG card the busiest instance's.",
		func(c *telemetry.CardGauges) *float64 { return c.SMActive }},
}

// instanceReading is a gauge family with one series per MIG GPU instance.
type instanceReading struct {
	name, help string
	value      func(*telemetry.Instance) (float64, bool)
}

var instanceReadings = []instanceReading{
	{"cardhour_gpu_instance_memory_used_mib", "VRAM in use in a MIG GPU instance, MiB.", func(in *telemetry.Instance) (float64, bool) { return deref(in.MemUsedMiB) }},
	{"cardhour_gpu_instance_memory_total_mib", "VRAM of a MIG GPU instance, MiB.", func(in *telemetry.Instance) (float64, bool) { return deref(in.MemTotalMiB) }},
	{"cardhour_gpu_instance_processes", "Compute processes in a MIG GPU instance.", func(in *telemetry.Instance) (float64, bool) { return float64(in.Processes), true }},
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

const (
	helpBooked = "1 when a booking holds the card now."
	helpAge    = "Seconds since the card's last sample."
	helpState  = "1 for the card's current board state (busy, full, held_idle, idle, unbooked, fault, offline, maintenance)."
)

// write writes every registered card's gauges at now to w. A family no
// card has a value for is left out, as the registry leaves it out.
func (m *cardMetrics) write(w *bufio.Writer, now time.Time) {
	bp, _ := m.bufs.Get().(*[]telemetry.CardGauges)
	if bp == nil {
		bp = new([]telemetry.CardGauges)
	}
	cards := m.fleet.AppendGauges((*bp)[:0], now)
	defer func() {
		// Emptied, so the pool holds no samples alive.
		clear(cards)
		*bp = cards[:0]
		m.bufs.Put(bp)
	}()
	t := &textWriter{w: w}
	// Labels in the order the library prints them: sorted by name.
	var ls [6]label
	cardLabels := func(c *telemetry.CardGauges) []label {
		ls[0], ls[1], ls[2], ls[3] = label{"host", c.Host}, label{"index", strconv.Itoa(c.Index)}, label{"type", c.Type}, label{"uuid", c.UUID}
		return ls[:4]
	}
	for _, r := range cardReadings {
		started := false
		for i := range cards {
			v := r.value(&cards[i])
			if v == nil {
				continue
			}
			if !started {
				t.family(r.name, r.help)
				started = true
			}
			t.series(r.name, cardLabels(&cards[i]), *v)
		}
	}
	for _, r := range instanceReadings {
		started := false
		for i := range cards {
			c := &cards[i]
			for j := range c.Instances {
				in := &c.Instances[j]
				v, ok := r.value(in)
				if !ok {
					continue
				}
				if !started {
					t.family(r.name, r.help)
					started = true
				}
				ls = [6]label{{"gpu_instance", strconv.Itoa(in.ID)}, {"host", c.Host}, {"index", strconv.Itoa(c.Index)},
					{"profile", in.Profile}, {"type", c.Type}, {"uuid", c.UUID}}
				t.series(r.name, ls[:6], v)
			}
		}
	}
	if len(cards) == 0 {
		return
	}
	const booked, age, state = "cardhour_gpu_booked", "cardhour_gpu_sample_age_seconds", "cardhour_gpu_state"
	t.family(booked, helpBooked)
	for i := range cards {
		v := 0.0
		if cards[i].Held {
			v = 1
		}
		t.series(booked, cardLabels(&cards[i]), v)
	}
	started := false
	for i := range cards {
		c := &cards[i]
		if c.LastSample.IsZero() {
			continue
		}
		if !started {
			t.family(age, helpAge)
			started = true
		}
		t.series(age, cardLabels(c), now.Sub(c.LastSample).Seconds())
	}
	t.family(state, helpState)
	for i := range cards {
		c := &cards[i]
		for _, st := range telemetry.States {
			v := 0.0
			if c.State == st {
				v = 1
			}
			ls = [6]label{{"host", c.Host}, {"index", strconv.Itoa(c.Index)}, {"state", string(st)}, {"type", c.Type}, {"uuid", c.UUID}}
			t.series(state, ls[:5], v)
		}
	}
}
