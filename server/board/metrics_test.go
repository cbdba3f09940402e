package board_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"cardhour/server/servertest"
	"cardhour/telemetry"
)

// TestCardMetricsAreTheLibrarysLines: the per-card gauges, written
// straight from the live state, are the series the client library would
// have built from the same fleet (oracleCollector, the collector /metrics
// used before) — names, help, label sets and values — and the whole
// answer parses as Prometheus' text format, each family once. The fleet
// has what the format must survive: a quote, a backslash and a newline in
// a label, a MIG card with an instance that lacks its VRAM, a card that
// never reported, a held one, and an unregistered one (not exported).
func TestCardMetricsAreTheLibrarysLines(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}})
	board := e.Srv.Board()
	f := func(v float64) *float64 { return &v }
	uuid := func(i int) string { return fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", i, i) }
	metas := []telemetry.CardMeta{
		{UUID: uuid(0), ID: 1, Host: "gpu-bj-01", Index: 0, Type: "NVIDIA H800 80GB", MemTotalMiB: 81920},
		{UUID: uuid(1), ID: 2, Host: "gpu-bj-01", Index: 1, Type: `H800 "SXM" \ 80GB` + "\nnext", MemTotalMiB: 81920},
		{UUID: uuid(2), ID: 3, Host: "北京-机房-02", Index: 12, Type: "A100", MemTotalMiB: 40960},
		{UUID: uuid(3), ID: 4, Host: "gpu-bj-01", Index: 2, Type: "A100", MemTotalMiB: 40960}, // never reports
		{UUID: uuid(4), ID: 5, Host: "gpu-bj-00", Index: 3, Type: "A100", MemTotalMiB: 40960, Maintenance: true},
	}
	board.SetInventoryNow(metas)
	now := time.Now()
	board.SetHoldsNow(map[string]telemetry.Hold{uuid(1): {BookingID: 7, Start: now.Add(-time.Hour), End: now.Add(time.Hour)}})
	res := board.IngestNow([]telemetry.Sample{
		{UUID: uuid(0), Index: 0, At: now, UtilPct: f(100), MemUsedMiB: f(19818), MemTotalMiB: f(81559), TempC: f(59), PowerW: f(631.95)},
		{UUID: uuid(1), Index: 1, At: now, UtilPct: f(0), MemUsedMiB: f(4), TempC: f(33.5), SMActivePct: f(0.125)},
		{UUID: uuid(2), Index: 12, At: now.Add(-3 * time.Second), MIG: true, MemUsedMiB: f(1e6 + 0.5), PowerW: f(1.5e-7),
			Instances: []telemetry.Instance{
				{ID: 1, Profile: "3g.40gb", MemUsedMiB: f(1000), MemTotalMiB: f(40192), SMActivePct: f(50), Processes: 2},
				{ID: 13, Profile: "1g.10gb", Processes: 0},
			}},
		{UUID: uuid(4), Index: 3, At: now, UtilPct: f(3)},
		{UUID: uuid(9), Host: "stranger", Index: 0, At: now, UtilPct: f(50)},
	})
	if res.Accepted != 4 || res.Unknown != 1 {
		t.Fatalf("ingest: %+v", res)
	}

	body := e.Client().Get("/metrics").String()
	p := expfmt.NewTextParser(model.UTF8Validation)
	got, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the text format: %v\n%s", err, grepLines(body, "cardhour_gpu_"))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(oracleCollector{board.Snapshot})
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range want {
		g := got[mf.GetName()]
		if g == nil {
			t.Errorf("/metrics lacks %s", mf.GetName())
			continue
		}
		if g.GetHelp() != mf.GetHelp() || g.GetType() != mf.GetType() {
			t.Errorf("%s: help %q type %s, want %q %s", mf.GetName(), g.GetHelp(), g.GetType(), mf.GetHelp(), mf.GetType())
		}
		gs, ws := seriesOf(g), seriesOf(mf)
		if !slices.Equal(slices.Sorted(maps.Keys(gs)), slices.Sorted(maps.Keys(ws))) {
			t.Errorf("%s: series\n%s\nwant\n%s", mf.GetName(), strings.Join(slices.Sorted(maps.Keys(gs)), "\n"), strings.Join(slices.Sorted(maps.Keys(ws)), "\n"))
			continue
		}
		for k, w := range ws {
			tol := 0.0
			if mf.GetName() == "cardhour_gpu_sample_age_seconds" {
				tol = 5 // read at two moments
			}
			if math.Abs(gs[k]-w) > tol {
				t.Errorf("%s{%s} = %v, want %v", mf.GetName(), k, gs[k], w)
			}
		}
	}
	for name := range got {
		if strings.HasPrefix(name, "cardhour_gpu_") && !slices.ContainsFunc(want, func(mf *dto.MetricFamily) bool { return mf.GetName() == name }) {
			t.Errorf("/metrics has %s, which the library would not", name)
		}
	}
	// The lines as printed, for what a person greps for.
	for _, line := range []string{
		`cardhour_gpu_memory_used_mib{host="北京-机房-02",index="12",type="A100",uuid="` + uuid(2) + `"} 1.0000005e+06`,
		`cardhour_gpu_state{host="gpu-bj-01",index="1",state="idle",type="H800 \"SXM\" \\ 80GB\nnext",uuid="` + uuid(1) + `"} 1`,
		`cardhour_gpu_instance_processes{gpu_instance="13",host="北京-机房-02",index="12",profile="1g.10gb",type="A100",uuid="` + uuid(2) + `"} 0`,
		`cardhour_gpu_booked{host="gpu-bj-01",index="1",type="H800 \"SXM\" \\ 80GB\nnext",uuid="` + uuid(1) + `"} 1`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("/metrics lacks the line\n%s\n%s", line, grepLines(body, "cardhour_gpu_"))
		}
	}
}

// seriesOf maps each series of a family (its labels, sorted) to its value.
func seriesOf(mf *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+strconv.Quote(l.GetValue()))
		}
		slices.Sort(ls)
		out[strings.Join(ls, ",")] = m.GetGauge().GetValue()
	}
	return out
}

// oracleCollector is how /metrics built the per-card gauges through the
// client library, kept as the reference for the lines written now.
type oracleCollector struct {
	snapshot func() []telemetry.CardView
}

func oracleDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"uuid", "host", "type", "index"}, extra...), nil)
}

func (oracleCollector) Describe(chan<- *prometheus.Desc) {} // unchecked: the oracle is one collector

func (o oracleCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	gauge := func(d *prometheus.Desc, v *float64, labels []string) {
		if v != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, *v, labels...)
		}
	}
	for _, c := range o.snapshot() {
		if !c.Registered {
			continue
		}
		labels := []string{c.UUID, c.Host, c.Type, strconv.Itoa(c.Index)}
		gauge(oracleDesc("cardhour_gpu_utilization_percent", "GPU utilisation reported by the card."), c.Util, labels)
		gauge(oracleDesc("cardhour_gpu_memory_used_mib", "VRAM in use, MiB."), c.MemUsedMiB, labels)
		gauge(oracleDesc("cardhour_gpu_memory_total_mib", "VRAM size, MiB."), c.MemTotalMiB, labels)
		gauge(oracleDesc("cardhour_gpu_temperature_celsius", "GPU temperature."), c.TempC, labels)
		gauge(oracleDesc("cardhour_gpu_power_watts", "Board power draw."), c.PowerW, labels)
		gauge(oracleDesc("cardhour_gpu_sm_active_percent", "SM (graphics engine) activity from DCGM; on a MIG card the busiest instance's."), c.SMActive, labels)
		for _, in := range c.Instances {
			il := append(append([]string(nil), labels...), strconv.Itoa(in.ID), in.Profile)
			gauge(oracleDesc("cardhour_gpu_instance_memory_used_mib", "VRAM in use in a MIG GPU instance, MiB.", "gpu_instance", "profile"), in.MemUsedMiB, il)
			gauge(oracleDesc("cardhour_gpu_instance_memory_total_mib", "VRAM of a MIG GPU instance, MiB.", "gpu_instance", "profile"), in.MemTotalMiB, il)
			n := float64(in.Processes)
			gauge(oracleDesc("cardhour_gpu_instance_processes", "Compute processes in a MIG GPU instance.", "gpu_instance", "profile"), &n, il)
		}
		held := 0.0
		if c.Hold != nil && !now.Before(c.Hold.Start) && now.Before(c.Hold.End) {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(oracleDesc("cardhour_gpu_booked", "1 when a booking holds the card now."), prometheus.GaugeValue, held, labels...)
		if !c.LastSample.IsZero() {
			ch <- prometheus.MustNewConstMetric(oracleDesc("cardhour_gpu_sample_age_seconds", "Seconds since the card's last sample."),
				prometheus.GaugeValue, now.Sub(c.LastSample).Seconds(), labels...)
		}
		for _, st := range telemetry.States {
			v := 0.0
			if c.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(oracleDesc("cardhour_gpu_state",
				"1 for the card's current board state (busy, full, held_idle, idle, unbooked, fault, offline, maintenance).", "state"),
				prometheus.GaugeValue, v, append(labels, string(st))...)
		}
	}
}
