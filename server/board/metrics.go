package board

import (
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
	loads      *prometheus.CounterVec
	cards      *cardMetrics
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
		// Each is a whole read of the cards (or the bookings holding them):
		// with 10,000 cards, a rate of more than a few a minute is a storm.
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardhour_board_loads_total", Help: "Loads of the inventory or of the holds from the database into the live state, by what was loaded.",
		}, []string{"what"}),
		cards: &cardMetrics{fleet: fl},
	}
	reg.MustRegister(m.samples, m.clients, m.frames, m.frameBytes, m.dropped, m.latency, m.loads, &fleetCollector{fleet: fl})
	return m
}

// fleetCollector exports the fleet's totals through the registry. The
// per-card gauges are cardMetrics' (card_metrics.go): written straight
// from the live state, not through the registry.
type fleetCollector struct {
	fleet *telemetry.Fleet
}

var (
	descFleetCards    = prometheus.NewDesc("cardhour_fleet_cards", "Cards on the board by state.", []string{"state"}, nil)
	descFleetBooked   = prometheus.NewDesc("cardhour_fleet_booked_cards", "Cards a booking holds now.", nil, nil)
	descFleetBusy     = prometheus.NewDesc("cardhour_fleet_busy_cards", "Cards busy or full now.", nil, nil)
	descFleetUtil     = prometheus.NewDesc("cardhour_fleet_utilization_percent", "Mean utilisation of the cards reporting.", nil, nil)
	descFleetHeldIdle = prometheus.NewDesc("cardhour_fleet_held_idle_card_hours_today", "Card-hours held by bookings but idle, today.", nil, nil)
	descFleetUnreg    = prometheus.NewDesc("cardhour_fleet_unregistered_cards", "Cards reporting that are not in the inventory.", nil, nil)
)

func (fc *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFleetCards, descFleetBooked, descFleetBusy, descFleetUtil, descFleetHeldIdle, descFleetUnreg} {
		ch <- d
	}
}

func (fc *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	sum := fc.fleet.Summary(time.Now())
	for _, st := range telemetry.States {
		ch <- prometheus.MustNewConstMetric(descFleetCards, prometheus.GaugeValue, float64(sum.States[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(descFleetBooked, prometheus.GaugeValue, float64(sum.Booked))
	ch <- prometheus.MustNewConstMetric(descFleetBusy, prometheus.GaugeValue, float64(sum.Busy))
	ch <- prometheus.MustNewConstMetric(descFleetUtil, prometheus.GaugeValue, sum.UtilNow)
	ch <- prometheus.MustNewConstMetric(descFleetHeldIdle, prometheus.GaugeValue, sum.HeldIdleHoursToday)
	ch <- prometheus.MustNewConstMetric(descFleetUnreg, prometheus.GaugeValue, float64(sum.Unregistered))
}
