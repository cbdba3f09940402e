package board

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cardhour/telemetry"
)

// boardMetrics are the counters of ingest and of the board's websocket.
type boardMetrics struct {
	samples    *prometheus.CounterVec
	clients    prometheus.Gauge
	frames     prometheus.Counter
	frameBytes prometheus.Counter
	dropped    *prometheus.CounterVec
	latency    prometheus.Histogram
}

func newBoardMetrics(reg *prometheus.Registry, fl *telemetry.Fleet) *boardMetrics {
	m := &boardMetrics{
		samples: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardhour_telemetry_samples_total",
			Help: "Samples received, by source and what became of them (accepted, unknown card, ignored).",
		}, []string{"source", "result"}),
		clients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cardhour_board_clients", Help: "Board websocket connections open now.",
		}),
		frames: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cardhour_board_frames_total", Help: "Delta frames broadcast to the boards.",
		}),
		frameBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cardhour_board_frame_bytes_total", Help: "Bytes of delta frames queued, summed over clients.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardhour_board_clients_dropped_total", Help: "Board connections the server hung up on, by reason.",
		}, []string{"reason"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cardhour_board_frame_latency_seconds",
			Help:    "From a sample's arrival to the frame carrying it being written to a board, per board.",
			Buckets: []float64{.005, .01, .025, .05, .075, .1, .125, .15, .175, .2, .25, .3, .5, 1, 2, 5},
		}),
	}
	reg.MustRegister(m.samples, m.clients, m.frames, m.frameBytes, m.dropped, m.latency, &fleetCollector{fleet: fl})
	return m
}

// fleetCollector exports the live fleet on /metrics: one gauge per card and
// reading, labelled uuid/host/type (and index), so an existing Prometheus
// and Grafana can chart the same numbers the board shows.
type fleetCollector struct {
	fleet *telemetry.Fleet
}

var (
	cardLabels   = []string{"uuid", "host", "type", "index"}
	descUtil     = prometheus.NewDesc("cardhour_gpu_utilization_percent", "GPU utilisation reported by the card.", cardLabels, nil)
	descMemUsed  = prometheus.NewDesc("cardhour_gpu_memory_used_mib", "VRAM in use, MiB.", cardLabels, nil)
	descMemTotal = prometheus.NewDesc("cardhour_gpu_memory_total_mib", "VRAM size, MiB.", cardLabels, nil)
	descTemp     = prometheus.NewDesc("cardhour_gpu_temperature_celsius", "GPU temperature.", cardLabels, nil)
	descPower    = prometheus.NewDesc("cardhour_gpu_power_watts", "Board power draw.", cardLabels, nil)
	descHeld     = prometheus.NewDesc("cardhour_gpu_booked", "1 when a booking holds the card now.", cardLabels, nil)
	descAge      = prometheus.NewDesc("cardhour_gpu_sample_age_seconds", "Seconds since the card's last sample.", cardLabels, nil)
	descState    = prometheus.NewDesc("cardhour_gpu_state", "1 for the card's current board state (busy, full, held_idle, idle, unbooked, fault, offline, maintenance).",
		append(cardLabels, "state"), nil)
	descSM       = prometheus.NewDesc("cardhour_gpu_sm_active_percent", "SM (graphics engine) activity from DCGM; on a MIG card the busiest instance's.", cardLabels, nil)
	descInstUsed = prometheus.NewDesc("cardhour_gpu_instance_memory_used_mib", "VRAM in use in a MIG GPU instance, MiB.",
		append(cardLabels, "gpu_instance", "profile"), nil)
	descInstTotal = prometheus.NewDesc("cardhour_gpu_instance_memory_total_mib", "VRAM of a MIG GPU instance, MiB.",
		append(cardLabels, "gpu_instance", "profile"), nil)
	descInstProcs = prometheus.NewDesc("cardhour_gpu_instance_processes", "Compute processes in a MIG GPU instance.",
		append(cardLabels, "gpu_instance", "profile"), nil)
	descFleetCards    = prometheus.NewDesc("cardhour_fleet_cards", "Cards on the board by state.", []string{"state"}, nil)
	descFleetBooked   = prometheus.NewDesc("cardhour_fleet_booked_cards", "Cards a booking holds now.", nil, nil)
	descFleetBusy     = prometheus.NewDesc("cardhour_fleet_busy_cards", "Cards busy or full now.", nil, nil)
	descFleetUtil     = prometheus.NewDesc("cardhour_fleet_utilization_percent", "Mean utilisation of the cards reporting.", nil, nil)
	descFleetHeldIdle = prometheus.NewDesc("cardhour_fleet_held_idle_card_hours_today", "Card-hours held by bookings but idle, today.", nil, nil)
	descFleetUnreg    = prometheus.NewDesc("cardhour_fleet_unregistered_cards", "Cards reporting that are not in the inventory.", nil, nil)
)

func (fc *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUtil, descMemUsed, descMemTotal, descTemp, descPower, descHeld, descAge, descState,
		descSM, descInstUsed, descInstTotal, descInstProcs,
		descFleetCards, descFleetBooked, descFleetBusy, descFleetUtil, descFleetHeldIdle, descFleetUnreg} {
		ch <- d
	}
}

func (fc *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	gauge := func(d *prometheus.Desc, v *float64, labels []string) {
		if v != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, *v, labels...)
		}
	}
	for _, c := range fc.fleet.Snapshot() {
		if !c.Registered {
			continue
		}
		labels := []string{c.UUID, c.Host, c.Type, strconv.Itoa(c.Index)}
		gauge(descUtil, c.Util, labels)
		gauge(descMemUsed, c.MemUsedMiB, labels)
		gauge(descMemTotal, c.MemTotalMiB, labels)
		gauge(descTemp, c.TempC, labels)
		gauge(descPower, c.PowerW, labels)
		gauge(descSM, c.SMActive, labels)
		for _, in := range c.Instances {
			il := append(append([]string(nil), labels...), strconv.Itoa(in.ID), in.Profile)
			gauge(descInstUsed, in.MemUsedMiB, il)
			gauge(descInstTotal, in.MemTotalMiB, il)
			n := float64(in.Processes)
			gauge(descInstProcs, &n, il)
		}
		held := 0.0
		if c.Hold != nil && !now.Before(c.Hold.Start) && now.Before(c.Hold.End) {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(descHeld, prometheus.GaugeValue, held, labels...)
		if !c.LastSample.IsZero() {
			ch <- prometheus.MustNewConstMetric(descAge, prometheus.GaugeValue, now.Sub(c.LastSample).Seconds(), labels...)
		}
		for _, st := range telemetry.States {
			v := 0.0
			if c.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, append(labels, string(st))...)
		}
	}
	sum := fc.fleet.Summary(now)
	for _, st := range telemetry.States {
		ch <- prometheus.MustNewConstMetric(descFleetCards, prometheus.GaugeValue, float64(sum.States[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(descFleetBooked, prometheus.GaugeValue, float64(sum.Booked))
	ch <- prometheus.MustNewConstMetric(descFleetBusy, prometheus.GaugeValue, float64(sum.Busy))
	ch <- prometheus.MustNewConstMetric(descFleetUtil, prometheus.GaugeValue, sum.UtilNow)
	ch <- prometheus.MustNewConstMetric(descFleetHeldIdle, prometheus.GaugeValue, sum.HeldIdleHoursToday)
	ch <- prometheus.MustNewConstMetric(descFleetUnreg, prometheus.GaugeValue, float64(sum.Unregistered))
}
