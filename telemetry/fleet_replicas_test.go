package telemetry_test

import (
	"math"
	"testing"
	"time"

	"cardhour/telemetry"
)

// Three replicas behind a balancer, each push of a card to a random one: a
// replica takes its own pushes with IngestFrom and the others' with
// IngestShared (cluster fan-out). Every replica's board sees every sample,
// and the rollups and usage the three write add up to the card's time once
// — each sample vouching for the time since the card's previous sample,
// whichever replica got it — never more than the booking lasted.
func TestFleetReplicasAccountEachSecondOnce(t *testing.T) {
	c := &clock{t0}
	fleets := []*telemetry.Fleet{newFleet(c, 1), newFleet(c, 1), newFleet(c, 1)}
	hold := map[string]telemetry.Hold{uuidOf(0): {BookingID: 7, Start: t0, End: t0.Add(time.Hour)}}
	for _, fl := range fleets {
		fl.SetHolds(hold)
	}
	const n = 180
	for s := 0; s < n; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		c.t = at
		got := (s*7 + s/3) % 3 // spread unevenly, as a balancer does
		for i, fl := range fleets {
			batch := []telemetry.Sample{sample(0, at, 80, 2000)}
			if i == got {
				fl.IngestFrom(batch, telemetry.SourceAgent, "token:1", at)
			} else {
				fl.IngestShared(batch, telemetry.SourceAgent, "token:1", at)
			}
		}
	}
	var sampled, busy, held, usage float64
	for i, fl := range fleets {
		v, ok := fl.Card(uuidOf(0))
		if !ok || !v.LastSample.Equal(t0.Add((n-1)*time.Second)) || v.State != telemetry.StateBusy {
			t.Errorf("replica %d sees %+v, want the last sample, busy", i, v)
		}
		rs, us := fl.TakeRollups(time.Time{})
		for _, r := range rs {
			sampled += r.SampledSeconds
			busy += r.BusySeconds
			held += r.HeldSeconds
		}
		for _, u := range us {
			usage += u.SampledSeconds
		}
	}
	want := float64(n - 1) // from the first sample to the last
	for name, got := range map[string]float64{"sampled": sampled, "busy": busy, "held": held, "usage": usage} {
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s seconds over the three replicas = %.0f, want %.0f (the card's time, once)", name, got, want)
		}
	}
}
