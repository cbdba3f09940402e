package telemetry

import (
	"io"
	"math"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DCGM exporter metric names cardhour reads.
const (
	dcgmUtil     = "DCGM_FI_DEV_GPU_UTIL"
	dcgmFBUsed   = "DCGM_FI_DEV_FB_USED"
	dcgmFBFree   = "DCGM_FI_DEV_FB_FREE"
	dcgmTemp     = "DCGM_FI_DEV_GPU_TEMP"
	dcgmPower    = "DCGM_FI_DEV_POWER_USAGE"
	dcgmGRActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
)

// dcgmBlank reports DCGM's "blank" markers: values from
// 0x7ffffffffffffff0 to 0x7ffffffffffffff3 mean "not supported / no data",
// never a number. In a float64 they all round to 2^63, so anything that
// large is treated as blank.
func dcgmBlank(v float64) bool {
	return math.IsNaN(v) || math.IsInf(v, 0) || v >= 9.2233720368547758e18
}

// ParseDCGM reads a DCGM exporter scrape (Prometheus text format) into one
// sample per GPU, keyed by the UUID label. host is used when the metrics
// carry no hostname label (older exporters spell it Hostname).
func ParseDCGM(r io.Reader, host string, at time.Time) ([]Sample, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, err
	}
	byUUID := map[string]*Sample{}
	var order []string
	var free = map[string]float64{}
	for _, name := range []string{dcgmUtil, dcgmFBUsed, dcgmFBFree, dcgmTemp, dcgmPower, dcgmGRActive} {
		fam, ok := families[name]
		if !ok {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := labelMap(m)
			uuid := labels["UUID"]
			if !validUUID(uuid) {
				continue
			}
			v, ok := metricValue(m)
			if !ok || dcgmBlank(v) {
				continue
			}
			s := byUUID[uuid]
			if s == nil {
				s = &Sample{UUID: uuid, Index: -1, Name: labels["modelName"], Host: host, At: at}
				if h := labels["hostname"]; h != "" {
					s.Host = h
				} else if h := labels["Hostname"]; h != "" {
					s.Host = h
				}
				if idx, err := strconv.Atoi(labels["gpu"]); err == nil && idx >= 0 && idx < 1024 {
					s.Index = idx
				}
				byUUID[uuid] = s
				order = append(order, uuid)
			}
			switch name {
			case dcgmUtil:
				s.UtilPct = percent(&v)
			case dcgmGRActive:
				// The profiling metric is finer than GPU_UTIL; prefer it when both come.
				pct := v * 100
				s.UtilPct = percent(&pct)
			case dcgmFBUsed:
				s.MemUsedMiB = nonNegative(&v)
			case dcgmFBFree:
				free[uuid] = v
			case dcgmTemp:
				s.TempC = &v
			case dcgmPower:
				s.PowerW = nonNegative(&v)
			}
		}
	}
	out := make([]Sample, 0, len(order))
	for _, uuid := range order {
		s := byUUID[uuid]
		// DCGM reports used and free, not total.
		if f, ok := free[uuid]; ok && s.MemUsedMiB != nil && f >= 0 {
			total := *s.MemUsedMiB + f
			s.MemTotalMiB = &total
		}
		out = append(out, *s)
	}
	return out, nil
}

func labelMap(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func metricValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}
