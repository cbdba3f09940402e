package telemetry_test

import (
	"bytes"
	"math"
	"testing"

	"cardhour/telemetry"
)

// The parsers' fuzz targets, seeded with recorded output. Each checks what
// the parser promises: no panic, valid uuids, readings within their range,
// missing values never turned into numbers.

var gpuSeeds = []string{h100LoadGPU, h100IdleGPU, h200LoadGPU, h200IdleGPU, l40sIdleGPU, h100MIGMode, gtx770Other, i3Other, rtx3080Other,
	errGPUIsLost, errUnknown, errUnknownNoSp}

func checkSamples(t *testing.T, got []telemetry.Sample) {
	t.Helper()
	for _, s := range got {
		if !telemetry.ValidUUID(s.UUID) {
			t.Fatalf("sample without a valid uuid: %+v", s)
		}
		for _, pct := range []*float64{s.UtilPct, s.SMActivePct} {
			if pct != nil && (*pct < 0 || *pct > 100) {
				t.Fatalf("percentage out of range: %+v", s)
			}
		}
		for _, v := range []*float64{s.MemUsedMiB, s.MemTotalMiB, s.PowerW} {
			if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v)) {
				t.Fatalf("size or power out of range: %+v", s)
			}
		}
		if s.PowerW != nil && *s.PowerW >= 9.2e18 {
			t.Fatalf("a blank marker read as power: %+v", s)
		}
		for i, in := range s.Instances {
			if i > 0 && s.Instances[i-1].ID >= in.ID {
				t.Fatalf("instances not sorted by id: %+v", s.Instances)
			}
		}
	}
}

func FuzzParseGPUQuery(f *testing.F) {
	for _, name := range []string{"nvidia-smi-nounits.csv", "nvidia-smi-units.csv"} {
		f.Add(fixture(f, name))
	}
	for _, name := range gpuSeeds {
		f.Add(recording(f, name))
	}
	f.Add([]byte("0, GPU-x, , , , , ,\n,,,,,,,,,,,,,,\n[N/A]"))
	f.Fuzz(func(t *testing.T, in []byte) {
		res := telemetry.ParseGPUCSV(bytes.NewReader(in), "h", at)
		checkSamples(t, res.Samples)
		for _, e := range res.GPUErrors {
			if e.BusID == "" || e.Line < 1 {
				t.Fatalf("GPU error without a bus id or line: %+v", e)
			}
		}
	})
}

func FuzzParsePush(f *testing.F) {
	f.Add(body(fixture(f, "nvidia-smi-nounits.csv"), fixture(f, "nvidia-smi-apps.csv")))
	f.Add(body(recording(f, h200LoadGPU), recording(f, h200LoadApps)))
	f.Add(body(recording(f, h100LoadGPU), recording(f, h100LoadApps)))
	f.Add(append(recording(f, h200IdleGPU), recording(f, h200IdleApps)...))
	f.Add(bytes.ReplaceAll(fixture(f, "nvidia-smi-nounits.csv"), []byte("\n"), nil))
	f.Add(append(recording(f, l40sIdleGPU), recording(f, errGPUIsLost)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := telemetry.ParsePush(in, "h", at)
		if err != nil {
			return
		}
		checkSamples(t, res.Samples)
		n := 0
		for _, s := range res.Samples {
			n += len(s.Processes)
			for _, p := range s.Processes {
				if p.PID < 0 || p.MemMiB != nil && *p.MemMiB < 0 {
					t.Fatalf("invalid process %+v", p)
				}
			}
		}
		if n > len(in) {
			t.Fatalf("%d processes from %d bytes", n, len(in))
		}
	})
}

func FuzzParseComputeApps(f *testing.F) {
	f.Add(fixture(f, "nvidia-smi-apps.csv"))
	f.Add(recording(f, h200LoadApps))
	f.Add(recording(f, h100LoadApps))
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, _ := telemetry.ParseComputeApps(bytes.NewReader(in))
		for _, r := range rows {
			if r.PID < 0 || !telemetry.ValidUUID(r.UUID) {
				t.Fatalf("invalid row %+v", r)
			}
		}
	})
}

func FuzzParseDCGM(f *testing.F) {
	f.Add(fixture(f, "dcgm-exporter.txt"))
	f.Add(fixture(f, "dcgm-exporter-hostname.txt"))
	for _, name := range []string{dcgmA800MIG, dcgmL4, dcgmRTX4000, dcgmA30MIG, dcgmH100MIG, dcgmBroken122, dcgmBroken394} {
		f.Add(recording(f, name))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := telemetry.ParseDCGMScrape(bytes.NewReader(in), "h", at)
		if err != nil {
			return
		}
		checkSamples(t, res.Samples)
		for _, s := range res.Samples {
			if s.TempC != nil && *s.TempC >= 9.2e18 {
				t.Fatalf("blank marker leaked as a number: %+v", s)
			}
		}
	})
}

func FuzzParseMIGList(f *testing.F) {
	for _, name := range []string{h200List, a100OldList, a100SevenList} {
		f.Add(recording(f, name))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		gpus, _ := telemetry.ParseMIGList(bytes.NewReader(in))
		for _, g := range gpus {
			if !telemetry.ValidUUID(g.UUID) || g.Index < 0 || len(g.MIG) > 64 {
				t.Fatalf("invalid GPU %+v", g)
			}
			for _, m := range g.MIG {
				if !telemetry.ValidUUID(m.UUID) || m.Device < 0 || m.GPUProfile == "" {
					t.Fatalf("invalid MIG device %+v", m)
				}
			}
		}
	})
}

func FuzzParseQueryMIG(f *testing.F) {
	f.Add(recording(f, h200Query))
	f.Fuzz(func(t *testing.T, in []byte) {
		gpus, _ := telemetry.ParseQueryMIG(bytes.NewReader(in))
		for _, g := range gpus {
			if len(g.Devices) > 64 || len(g.Processes) > 256 {
				t.Fatalf("unbounded: %d devices, %d processes", len(g.Devices), len(g.Processes))
			}
			for _, p := range g.Processes {
				if p.PID < 0 || p.MemMiB != nil && *p.MemMiB < 0 {
					t.Fatalf("invalid process %+v", p)
				}
			}
		}
		// What it reads must join without harm.
		samples := []telemetry.Sample{{UUID: "GPU-00000000-0000-0000-0000-000000000000", MIG: true}}
		telemetry.AttachMIG(samples, nil, gpus)
		checkSamples(t, samples)
	})
}
