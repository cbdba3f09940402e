package telemetry_test

import (
	"testing"
	"time"

	"cardhour/telemetry"
)

func intp(v int) *int { return &v }

// TestASampleVouchesOnlyForItsGap: after a silence a sample is credited
// with at most three of the card's intervals, never with time before the
// booking began, and no minute of a card holds more than a minute.
func TestASampleVouchesOnlyForItsGap(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 1)
	start := t0.Add(30 * time.Second)
	fl.SetHolds(map[string]telemetry.Hold{uuidOf(0): {BookingID: 9, Start: start, End: t0.Add(time.Hour)}})
	// Every second for 20 s, silent until 5:00, then every second again.
	var ats []time.Time
	for s := 0; s < 20; s++ {
		ats = append(ats, t0.Add(time.Duration(s)*time.Second))
	}
	for s := 300; s < 330; s++ {
		ats = append(ats, t0.Add(time.Duration(s)*time.Second))
	}
	for _, at := range ats {
		fl.Ingest([]telemetry.Sample{sample(0, at, 80, 2000)}, telemetry.SourceAgent, at)
	}
	rs, us := fl.TakeRollups(time.Time{})
	var sampled float64
	for _, r := range rs {
		if r.SampledSeconds > 60 || r.HeldSeconds > r.SampledSeconds || r.BusySeconds > r.SampledSeconds {
			t.Errorf("minute %s: sampled %.1f, held %.1f, busy %.1f", r.Start.Format("15:04"), r.SampledSeconds, r.HeldSeconds, r.BusySeconds)
		}
		sampled += r.SampledSeconds
	}
	// 19 s before the silence, 3 s (three 1 s intervals) for the sample that
	// ends it, 29 s after.
	if sampled != 19+3+29 {
		t.Errorf("sampled %.0f s in all, want 51", sampled)
	}
	// The booking began at 0:30, in the silence: it gets the 3 s vouched for
	// by the sample at 5:00 and the 29 s after — nothing from before.
	if len(us) != 1 || us[0].SampledSeconds != 32 || us[0].BusySeconds != 32 {
		t.Errorf("usage %+v, want 32 s sampled and busy", us)
	}
	if elapsed := ats[len(ats)-1].Sub(start).Seconds(); us[0].SampledSeconds > elapsed {
		t.Errorf("booking sampled %.0f s of %.0f elapsed", us[0].SampledSeconds, elapsed)
	}
}

// TestASlowSourceKeepsItsInterval: a card pushed every 30 s (cron) is
// credited with its whole interval, not cut to the agent's.
func TestASlowSourceKeepsItsInterval(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 1)
	for s := 0; s <= 300; s += 30 {
		at := t0.Add(time.Duration(s) * time.Second)
		fl.Ingest([]telemetry.Sample{sample(0, at, 80, 2000)}, telemetry.SourcePush, at)
	}
	rs, _ := fl.TakeRollups(time.Time{})
	var sampled float64
	for _, r := range rs {
		sampled += r.SampledSeconds
	}
	if sampled != 300 {
		t.Errorf("sampled %.0f s of 300", sampled)
	}
}

// TestMIGCardIsBusyWhileItsInstancesWork: a card in MIG mode reports no
// utilisation; with processes on it, or an instance's engine active, it
// is busy (and counted busy in the rollups), never idle.
func TestMIGCardIsBusyWhileItsInstancesWork(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 3)
	hold := telemetry.Hold{BookingID: 4, Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)}
	fl.SetHolds(map[string]telemetry.Hold{uuidOf(0): hold, uuidOf(1): hold, uuidOf(2): hold})
	mig := func(i int, at time.Time, procs []telemetry.Process, active *float64) telemetry.Sample {
		s := telemetry.Sample{UUID: uuidOf(i), Index: i, Host: "h00", At: at, MIG: true, MemUsedMiB: f(16959), MemTotalMiB: f(143771),
			PowerW: f(295), Processes: procs, Instances: []telemetry.Instance{
				{ID: 2, Profile: "3g.71gb", MemUsedMiB: f(16925), MemTotalMiB: f(71424), SMActivePct: active, Processes: len(procs)},
				{ID: 9, Profile: "1g.18gb", MemUsedMiB: f(9), MemTotalMiB: f(16384)},
			}}
		return s
	}
	burn := []telemetry.Process{{PID: 12267, Name: "./gpu_burn", MemMiB: f(13526), GPUInstance: intp(2)}}
	for s := 0; s <= 60; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		c.t = at
		fl.Ingest([]telemetry.Sample{mig(0, at, burn, nil), mig(1, at, nil, f(87)), mig(2, at, nil, nil)}, telemetry.SourceAgent, at)
	}
	for i, want := range []telemetry.State{telemetry.StateBusy, telemetry.StateBusy, telemetry.StateIdle} {
		if got := stateOf(t, fl, i); got != want {
			t.Errorf("MIG card %d: %s, want %s", i, got, want)
		}
	}
	v, _ := fl.Card(uuidOf(1))
	if !v.MIG || len(v.Instances) != 2 || v.Instances[0].Profile != "3g.71gb" || v.SMActive == nil || *v.SMActive != 87 || v.Util != nil {
		t.Errorf("MIG card view %+v", v)
	}
	_, us := fl.TakeRollups(time.Time{})
	if len(us) != 1 || us[0].BusySeconds != 120 || us[0].SampledSeconds != 180 {
		t.Errorf("usage %+v, want 60 s busy on each of the two working cards, 180 s sampled", us)
	}
}

// TestFaultyCardIsFaultAndAlertsOnce: a fault reading makes the card
// faulty (never idle) with one episode; the inventory's mark keeps it so
// after the reading goes.
func TestFaultyCardIsFaultAndAlertsOnce(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 1)
	for s := 0; s < 5; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		smp := telemetry.Sample{UUID: uuidOf(0), Index: 0, Host: "h00", At: at, Fault: "GPU requires reset"}
		fl.Ingest([]telemetry.Sample{smp}, telemetry.SourceAgent, at)
	}
	if got := stateOf(t, fl, 0); got != telemetry.StateFault {
		t.Fatalf("state %s, want fault", got)
	}
	ev := fl.TakeEvents()
	if len(ev) != 1 || ev[0].Kind != telemetry.EventFault || !ev[0].Open || ev[0].Reason != "GPU requires reset" {
		t.Fatalf("events %+v, want one fault opening", ev)
	}
	fl.SetInventory([]telemetry.CardMeta{{UUID: uuidOf(0), ID: 1, Host: "h00", Type: "H800", Fault: "GPU requires reset"}})
	fl.Ingest([]telemetry.Sample{sample(0, t0.Add(10*time.Second), 0, 100)}, telemetry.SourceAgent, t0.Add(10*time.Second))
	if v, _ := fl.Card(uuidOf(0)); v.State != telemetry.StateFault || v.Fault != "GPU requires reset" {
		t.Errorf("a card the inventory marks faulty reads healthy: %+v", v)
	}
}

// TestUnbookedAndForeignProcessesAreAbnormal: a registered card in use with
// no booking is unbooked; a booked card running an OS account no member
// of the team has raises a foreign episode naming the process.
func TestUnbookedAndForeignProcessesAreAbnormal(t *testing.T) {
	c := &clock{t0}
	fl := newFleet(c, 2)
	fl.SetTeamAccounts(map[int64][]string{5: {"lihua", "zhangwei"}})
	fl.SetHolds(map[string]telemetry.Hold{uuidOf(1): {BookingID: 3, TeamID: 5, Start: t0.Add(-time.Hour), End: t0.Add(time.Hour)}})
	unbooked := sample(0, t0, 0, 30000) // a loaded model, no kernel running
	unbooked.Processes = []telemetry.Process{{PID: 4242, Name: "python", User: "wangwu", MemMiB: f(29000)}}
	booked := sample(1, t0, 90, 40000)
	booked.Processes = []telemetry.Process{{PID: 1, Name: "train.py", User: "lihua", MemMiB: f(20000)},
		{PID: 2, Name: "miner", User: "wangwu", MemMiB: f(20000)}}
	fl.Ingest([]telemetry.Sample{unbooked, booked}, telemetry.SourceAgent, t0)
	if got := stateOf(t, fl, 0); got != telemetry.StateUnbooked {
		t.Errorf("card 0: %s, want unbooked", got)
	}
	var seen []string
	for _, e := range fl.TakeEvents() {
		seen = append(seen, string(e.Kind))
		switch e.Kind {
		case telemetry.EventUnbooked:
			if !e.Open || e.CardID != 1 || len(e.Processes) != 1 || e.Processes[0].User != "wangwu" {
				t.Errorf("unbooked event %+v", e)
			}
		case telemetry.EventForeign:
			if !e.Open || e.BookingID != 3 || len(e.Processes) != 1 || e.Processes[0].Name != "miner" {
				t.Errorf("foreign event %+v", e)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("events %v, want unbooked and foreign", seen)
	}
	// The same again is the same episode: nothing new.
	fl.Ingest([]telemetry.Sample{sample(0, t0.Add(time.Second), 0, 30000)}, telemetry.SourceAgent, t0.Add(time.Second))
	if ev := fl.TakeEvents(); len(ev) != 0 {
		t.Errorf("a second sample raised %+v", ev)
	}
}

// TestUnregisteredCardsAreCappedPerHostAndOrigin: one host or one token
// cannot fill the slots for unknown cards; others still get theirs.
func TestUnregisteredCardsAreCappedPerHostAndOrigin(t *testing.T) {
	fl := telemetry.NewFleet(telemetry.Options{MaxUnregisteredPerHost: 3, MaxUnregisteredPerOrigin: 5})
	var flood []telemetry.Sample
	for i := range 10 {
		flood = append(flood, telemetry.Sample{UUID: uuidOf(100 + i), Host: "evil", At: t0})
	}
	if res := fl.IngestFrom(flood, telemetry.SourcePush, "token-a", t0); res.Unknown != 3 || res.Ignored != 7 {
		t.Errorf("one host's flood: %+v, want 3 kept", res)
	}
	var spread []telemetry.Sample
	for i := range 10 {
		spread = append(spread, telemetry.Sample{UUID: uuidOf(200 + i), Host: "h" + string(rune('a'+i)), At: t0})
	}
	if res := fl.IngestFrom(spread, telemetry.SourcePush, "token-a", t0); res.Unknown != 2 {
		t.Errorf("one token over many hosts: %+v, want 2 more (5 in all)", res)
	}
	real := telemetry.Sample{UUID: uuidOf(300), Host: "gpu-07", At: t0}
	if res := fl.IngestFrom([]telemetry.Sample{real}, telemetry.SourceAgent, "token-b", t0); res.Unknown != 1 {
		t.Errorf("another token's new card: %+v, want it parked", res)
	}
}

// TestUnregisteredCapHoldsAcrossInventoryChanges: the cap counts the
// unregistered cards there are, whatever the inventory did meanwhile —
// registering cards that never reported, and dropping one that still does.
func TestUnregisteredCapHoldsAcrossInventoryChanges(t *testing.T) {
	unknown := func(i int) telemetry.Sample { return telemetry.Sample{UUID: uuidOf(i), Host: "gpu-09", At: t0} }
	fl := telemetry.NewFleet(telemetry.Options{MaxUnregistered: 3})
	fl.Ingest([]telemetry.Sample{unknown(100), unknown(101)}, telemetry.SourcePush, t0)
	// Three new cards in the inventory, none of them reporting yet.
	fl.SetInventory([]telemetry.CardMeta{{UUID: uuidOf(0), ID: 1}, {UUID: uuidOf(1), ID: 2}, {UUID: uuidOf(2), ID: 3}})
	if res := fl.Ingest([]telemetry.Sample{unknown(102), unknown(103), unknown(104)}, telemetry.SourcePush, t0); res.Unknown != 1 || res.Ignored != 2 {
		t.Errorf("after registering other cards: %+v, want 1 more kept (3 in all)", res)
	}

	fl = telemetry.NewFleet(telemetry.Options{MaxUnregistered: 2})
	fl.Ingest([]telemetry.Sample{unknown(100)}, telemetry.SourcePush, t0)
	fl.SetInventory([]telemetry.CardMeta{{UUID: uuidOf(100), ID: 1}})
	fl.SetInventory(nil) // deleted from the inventory while it still reports
	at := t0.Add(time.Second)
	if res := fl.Ingest([]telemetry.Sample{{UUID: uuidOf(101), Host: "gpu-09", At: at}, {UUID: uuidOf(102), Host: "gpu-09", At: at}},
		telemetry.SourcePush, at); res.Unknown != 1 || res.Ignored != 1 {
		t.Errorf("after a card went back to unregistered: %+v, want 1 more kept (2 in all)", res)
	}
}
