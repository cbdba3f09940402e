package telemetry_test

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"cardhour/telemetry"
)

// familyText is the lines of one family of a scrape (HELP, TYPE, samples),
// cut out of the recording as they are.
func familyText(b []byte, name string) []byte {
	var out bytes.Buffer
	for _, l := range strings.SplitAfter(string(b), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, name+"{") || strings.HasPrefix(t, name+" ") ||
			strings.HasPrefix(t, "# HELP "+name+" ") || strings.HasPrefix(t, "# TYPE "+name+" ") {
			out.WriteString(strings.TrimRight(l, "\n") + "\n")
		}
	}
	return out.Bytes()
}

// The scrape parser reads sample lines itself; expfmt, the reference
// reading of the format, must find the same values in every recording.
func TestParseDCGMAgreesWithExpfmt(t *testing.T) {
	type key struct{ uuid, gi string }
	files := map[string][]byte{"dcgm-exporter.txt": fixture(t, "dcgm-exporter.txt"), "dcgm-exporter-hostname.txt": fixture(t, "dcgm-exporter-hostname.txt")}
	for _, f := range []string{dcgmA800MIG, dcgmL4, dcgmRTX4000, dcgmA30MIG, dcgmH100MIG} {
		files[f] = recording(t, f)
	}
	fams := []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_FB_TOTAL",
		"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
	for file, b := range files {
		ref := map[key]map[string]float64{}
		for _, fam := range fams {
			text := familyText(b, fam)
			if len(text) == 0 {
				continue
			}
			p := expfmt.NewTextParser(model.LegacyValidation)
			got, err := p.TextToMetricFamilies(bytes.NewReader(text))
			if err != nil {
				t.Fatalf("%s %s: expfmt: %v", file, fam, err)
			}
			for _, m := range got[fam].GetMetric() {
				var k key
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "UUID":
						k.uuid = l.GetValue()
					case "GPU_I_ID":
						k.gi = l.GetValue()
					}
				}
				v := expfmtValue(m)
				if v >= 9.2e18 {
					continue // DCGM's blank markers
				}
				if ref[k] == nil {
					ref[k] = map[string]float64{}
				}
				ref[k][fam] = v
			}
		}
		if len(ref) == 0 {
			t.Fatalf("%s: expfmt found no series", file)
		}
		res, err := telemetry.ParseDCGMScrape(bytes.NewReader(b), "h", at)
		if err != nil {
			t.Fatal(err)
		}
		cards := map[string]telemetry.Sample{}
		for _, s := range res.Samples {
			cards[s.UUID] = s
		}
		same := func(what string, k key, got *float64, want float64, ok bool) {
			t.Helper()
			if !ok && got != nil || ok && (got == nil || math.Abs(*got-want) > 1e-9) {
				t.Errorf("%s %v %s: got %s, expfmt %v (present %v)", file, k, what, show(got), want, ok)
			}
		}
		for k, vals := range ref {
			get := func(f string) (float64, bool) { v, ok := vals[f]; return v, ok }
			used, hasUsed := get("DCGM_FI_DEV_FB_USED")
			free, hasFree := get("DCGM_FI_DEV_FB_FREE")
			res, _ := get("DCGM_FI_DEV_FB_RESERVED")
			total, hasTotal := get("DCGM_FI_DEV_FB_TOTAL")
			if !hasTotal {
				total, hasTotal = used+free+res, hasUsed && hasFree
			}
			gr, hasGR := get("DCGM_FI_PROF_GR_ENGINE_ACTIVE")
			s, ok := cards[k.uuid]
			if !ok {
				t.Errorf("%s: no sample for %v", file, k)
				continue
			}
			if k.gi == "" {
				util, hasUtil := get("DCGM_FI_DEV_GPU_UTIL")
				temp, hasTemp := get("DCGM_FI_DEV_GPU_TEMP")
				power, hasPower := get("DCGM_FI_DEV_POWER_USAGE")
				same("util", k, s.UtilPct, util, hasUtil)
				same("used", k, s.MemUsedMiB, used, hasUsed)
				same("total", k, s.MemTotalMiB, total, hasTotal)
				same("temp", k, s.TempC, temp, hasTemp)
				same("power", k, s.PowerW, power, hasPower)
				same("sm", k, s.SMActivePct, gr*100, hasGR)
				continue
			}
			var in *telemetry.Instance
			for i := range s.Instances {
				if k.gi == strconv.Itoa(s.Instances[i].ID) {
					in = &s.Instances[i]
				}
			}
			if in == nil {
				t.Errorf("%s: no instance %v", file, k)
				continue
			}
			same("instance used", k, in.MemUsedMiB, used, hasUsed)
			same("instance total", k, in.MemTotalMiB, total, hasTotal)
			same("instance sm", k, in.SMActivePct, gr*100, hasGR)
		}
	}
}

func expfmtValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return m.GetGauge().GetValue()
}
