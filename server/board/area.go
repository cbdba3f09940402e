// Package board is the area of live occupancy (盯住每张卡的占用与等待):
// telemetry in (nvidia-smi pushes, the agent, DCGM scrapes, the
// simulator), the live fleet state and its loops (inventory, holds,
// alerts, rollups, retention, auto-release), the wall board and its
// websocket hub, the heatmap, the fleet API and metrics, and the admin
// page of telemetry tokens and unregistered cards.
package board

import (
	"bufio"
	"time"

	"cardhour/server/area"

	"github.com/prometheus/client_golang/prometheus"
)

// Area serves the board and keeps the live fleet.
type Area struct {
	area.Deps
	live *live
}

// New builds the area; its collectors go into reg.
func New(d area.Deps, reg *prometheus.Registry) *Area {
	a := &Area{Deps: d}
	a.live = newLive(a, reg)
	return a
}

// WriteMetrics writes the live fleet's per-card gauges in Prometheus' text
// format, for the kernel's /metrics to follow the registry's families with.
func (a *Area) WriteMetrics(w *bufio.Writer) { a.live.metrics.cards.write(w, time.Now()) }
