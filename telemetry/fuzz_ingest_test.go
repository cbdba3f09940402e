package telemetry_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"cardhour/telemetry"
)

// FuzzIngestBatch feeds what an agent might post (any JSON at all) through
// the live state and the frame encoder: nothing may panic, every frame must
// be valid JSON, and no number outside its range may reach a tile.
func FuzzIngestBatch(f *testing.F) {
	seed, _ := json.Marshal(telemetry.Batch{Host: "gpu-01", Samples: []telemetry.Sample{
		sample(0, t0, 50, 1000), sample(1, t0, 99, 80000), {UUID: uuidOf(7), At: t0.Add(time.Hour)},
	}})
	f.Add(seed)
	gpus := telemetry.ParseGPUCSV(bytes.NewReader(fixture(f, "nvidia-smi-units.csv")), "h", t0).Samples
	recorded, _ := json.Marshal(telemetry.Batch{Host: "h", Samples: gpus})
	f.Add(recorded)
	f.Add([]byte(`{"host":"h","samples":[{"uuid":"GPU-00000000-aaaa-bbbb-cccc-000000000000","util":1e308,"mem_used_mib":-1,"temp_c":1e9,"name":"\u2028</script>"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var b telemetry.Batch
		if json.Unmarshal(in, &b) != nil {
			return
		}
		c := &clock{t0}
		fl := newFleet(c, 2)
		enc := telemetry.NewFrameEncoder()
		fl.Ingest(b.Samples, telemetry.SourceAgent, t0)
		fl.Sweep(t0.Add(time.Minute))
		changes, since := fl.TakeChanges()
		frame := enc.Delta(changes, fl.Summary(t0), nil, t0, since, true)
		if !json.Valid(frame) || !json.Valid(enc.Snapshot()) {
			t.Fatalf("invalid frame:\n%s", frame)
		}
		for _, v := range fl.Snapshot() {
			if v.Util != nil && (*v.Util < 0 || *v.Util > 100) || v.MemUsedMiB != nil && *v.MemUsedMiB < 0 {
				t.Fatalf("out-of-range reading reached the board: %+v", v)
			}
		}
		fl.TakeRollups(time.Time{})
	})
}
