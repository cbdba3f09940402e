package telemetry_test

import (
	"bytes"
	"testing"

	"cardhour/telemetry"
)

// eightCards repeats rows of a recording to make a body of 8 cards, one
// host's worth as cron pushes it; the header (if any) is kept once.
func eightCards(tb table, header bool) []byte {
	out := table{header: tb.header}
	for len(out.rows) < 8 {
		out.rows = append(out.rows, tb.rows...)
	}
	out.rows = out.rows[:8]
	return out.bytes(header)
}

func benchGPUs(b *testing.B, in []byte, want int) {
	b.SetBytes(int64(len(in)))
	samples := 0
	for b.Loop() {
		got := telemetry.ParseGPUCSV(bytes.NewReader(in), "h", at).Samples
		if len(got) != want {
			b.Fatalf("%d samples, want %d", len(got), want)
		}
		samples += len(got)
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkParseGPUQuery: GPUQuery's columns without a header (what the
// push benchmark sends), and the recorded 212-column H100 query with its
// header.
func BenchmarkParseGPUQuery(b *testing.B) {
	b.Run("headerless", func(b *testing.B) {
		benchGPUs(b, eightCards(csvTable(b, fixture(b, "nvidia-smi-nounits.csv")), false), 8)
	})
	b.Run("header-212-columns", func(b *testing.B) {
		benchGPUs(b, eightCards(csvTable(b, recording(b, h100LoadGPU)), true), 8)
	})
}

// BenchmarkParsePush: the server benchmark's body (8 cards, GPUQuery
// without a header) and the recorded H200 MIG body (212-column header and
// the compute-apps part).
func BenchmarkParsePush(b *testing.B) {
	for _, c := range []struct {
		name string
		in   []byte
		want int
	}{
		{"headerless-8", eightCards(csvTable(b, fixture(b, "nvidia-smi-nounits.csv")), false), 8},
		{"H200-MIG-with-apps", body(recording(b, h200LoadGPU), recording(b, h200LoadApps)), 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			samples := 0
			for b.Loop() {
				res, err := telemetry.ParsePush(c.in, "h", at)
				if err != nil || len(res.Samples) != c.want {
					b.Fatal(err)
				}
				samples += len(res.Samples)
			}
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

func BenchmarkParseDCGM(b *testing.B) {
	for _, c := range []struct {
		name string
		in   []byte
		want int
	}{
		{"A800x8-MIG", recording(b, dcgmA800MIG), 8},
		{"L4", recording(b, dcgmL4), 1},
		{"RTX4000Ada", recording(b, dcgmRTX4000), 1},
		{"H100x2", fixture(b, "dcgm-exporter.txt"), 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			samples := 0
			for b.Loop() {
				res, err := telemetry.ParseDCGMScrape(bytes.NewReader(c.in), "h", at)
				if err != nil || len(res.Samples) != c.want {
					b.Fatalf("%d samples, %v", len(res.Samples), err)
				}
				samples += len(res.Samples)
			}
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
