package telemetry_test

import (
	"reflect"
	"testing"
	"time"

	"cardhour/telemetry"
)

func TestSimulateIsDeterministicAndPlausible(t *testing.T) {
	c := telemetry.SimCard{UUID: uuidOf(1), Host: "gpu-01", Index: 1, Model: "NVIDIA H800 80GB", MemTotalMiB: 81920, BookingID: 5}
	a, b := telemetry.Simulate(c, t0), telemetry.Simulate(c, t0)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
	for s := 0; s < 3600; s += 7 {
		for id := int64(0); id < 8; id++ {
			c.BookingID = id
			got := telemetry.Simulate(c, t0.Add(time.Duration(s)*time.Second))
			if *got.UtilPct < 0 || *got.UtilPct > 100 || *got.MemUsedMiB > *got.MemTotalMiB || *got.PowerW <= 0 || *got.PowerW > 700 {
				t.Fatalf("implausible sample for booking %d at %d s: util %v mem %v/%v power %v", id, s, *got.UtilPct, *got.MemUsedMiB, *got.MemTotalMiB, *got.PowerW)
			}
		}
	}
}

// The demo must show every state the board knows: booked cards mostly
// busy, one booking in four idle on purpose (held idle after the
// threshold), one in four with VRAM nearly full, unbooked cards idle.
func TestSimulatedFleetShowsEveryState(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 32)
	fl.SetInventory(append(metas(32), telemetry.CardMeta{UUID: uuidOf(40), ID: 41, Host: "h05", Type: "NVIDIA H800 80GB", MemTotalMiB: 81920, Maintenance: true}))
	holds := map[string]telemetry.Hold{}
	for i := 0; i < 16; i++ { // bookings 1–4 hold four cards each
		holds[uuidOf(i)] = telemetry.Hold{BookingID: int64(i/4 + 1), Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)}
	}
	fl.SetHolds(holds)
	if err := fl.SimulateSince(t0.Add(-12*time.Minute), t0, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	c.t = t0
	fl.Sweep(t0)
	got := map[telemetry.State]int{}
	for _, v := range fl.Snapshot() {
		got[v.State]++
		if v.Source != "" && v.Source != telemetry.SourceSimulator {
			t.Errorf("card %s source %s", v.UUID, v.Source)
		}
	}
	// booking 4 idles (held idle), 3 serves (full), 1 trains (busy, or full in
	// a checkpoint-free second at ≥ 95 %), 2 runs inference; 16 unbooked idle.
	if got[telemetry.StateHeldIdle] != 4 || got[telemetry.StateFull] < 4 || got[telemetry.StateIdle] != 16 || got[telemetry.StateMaintenance] != 1 {
		t.Errorf("states %v", got)
	}
	if got[telemetry.StateBusy]+got[telemetry.StateFull] != 12 {
		t.Errorf("busy+full %d, want the 12 cards of working bookings: %v", got[telemetry.StateBusy]+got[telemetry.StateFull], got)
	}
}

func TestSimulatorLeavesRealCardsAlone(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 2)
	fl.Ingest([]telemetry.Sample{sample(0, t0, 77, 5)}, telemetry.SourceAgent, t0)
	if n := fl.SimulateStep(t0.Add(time.Second)); n != 1 {
		t.Errorf("simulated %d cards, want 1 (the other reports for real)", n)
	}
	if v, _ := fl.Card(uuidOf(0)); *v.Util != 77 || v.Source != telemetry.SourceAgent {
		t.Errorf("the real card was overwritten: %+v", v)
	}
	// A minute of silence hands it back to the simulator.
	if n := fl.SimulateStep(t0.Add(61 * time.Second)); n != 2 {
		t.Errorf("simulated %d cards after a silent minute, want 2", n)
	}
}

func metas(n int) []telemetry.CardMeta {
	var out []telemetry.CardMeta
	for i := range n {
		out = append(out, telemetry.CardMeta{UUID: uuidOf(i), ID: int64(i + 1), Host: "h", Index: i, Type: "NVIDIA H800 80GB", MemTotalMiB: 81920})
	}
	return out
}
