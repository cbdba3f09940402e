package board

import (
	"context"
	"encoding/json"
	"time"

	"cardhour/cluster"
	"cardhour/store"
	"cardhour/telemetry"
)

// sharedBatch is a batch of samples as one replica tells the others: what
// it received, from which source and origin, and when it arrived there —
// so every replica places the samples alike.
type sharedBatch struct {
	Source  telemetry.Source   `json:"source"`
	Origin  string             `json:"origin,omitempty"`
	Arrival time.Time          `json:"arrival"`
	Samples []telemetry.Sample `json:"samples"`
}

// share publishes a batch this replica took, once, for the others' fleets
// (and boards). With one process there is nobody to tell; with Redis away
// the batch stays here (the cluster warns once per outage).
func (l *live) share(ctx context.Context, samples []telemetry.Sample, src telemetry.Source, origin string, arrival time.Time) {
	if len(samples) == 0 || !l.sharing() {
		return
	}
	b, err := json.Marshal(sharedBatch{Source: src, Origin: origin, Arrival: arrival, Samples: samples})
	if err != nil {
		l.a.Log.Error("telemetry batch not shared with the other replicas", "err", err)
		return
	}
	_ = l.cluster.Publish(context.WithoutCancel(ctx), cluster.TopicSamples, b)
}

// sharing tells whether other replicas may hear: never in one process,
// and not during a Redis outage — ingest does not wait on a dead server
// for every batch; the cluster notices the end of the outage itself.
func (l *live) sharing() bool { return l.cluster.Shared() }

// applyShared takes a batch another replica received into this fleet: the
// board shows it, the receiving replica accounts for it.
func (l *live) applyShared(data []byte) {
	var b sharedBatch
	if err := json.Unmarshal(data, &b); err != nil {
		l.a.Log.Warn("unreadable telemetry batch from another replica", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.ensureFresh(ctx, time.Minute); err != nil {
		l.a.Log.Warn("telemetry batch from another replica applied before the inventory loaded", "err", err)
	}
	res := l.fleet.IngestShared(b.Samples, b.Source, b.Origin, b.Arrival)
	if res.Unknown > 0 {
		select {
		case l.reloadUnknown <- struct{}{}:
		default:
		}
	}
}

// Forget drops what the board cached about c, changed in this process or
// another replica: agent tokens (a revoked one is refused at once), the
// open sockets' credentials (asked again now), the inventory and the teams'
// OS accounts (reloaded now).
func (a *Area) Forget(c store.Change) {
	l := a.live
	switch c {
	case store.ChangeTokens, store.ChangeUsers:
		l.tokens.clear()
		l.askRecheck()
	}
	switch c {
	case store.ChangeInventory, store.ChangeUsers:
		l.askReload()
	}
}

func (l *live) askReload() {
	select {
	case l.reload <- struct{}{}:
	default:
	}
}

// reloadOnChange reloads the inventory when asked, until ctx ends.
func (l *live) reloadOnChange(ctx context.Context) {
	for {
		var maxAge time.Duration
		select {
		case <-ctx.Done():
			return
		case <-l.reload:
		case <-l.reloadUnknown:
			maxAge = unknownReloadAge
		}
		if err := l.inventory.within(ctx, maxAge); err != nil && ctx.Err() == nil {
			l.a.Log.Warn("board inventory not reloaded after a change", "err", err)
		}
	}
}
