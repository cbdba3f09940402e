// Package board is the area of live occupancy (盯住每张卡的占用与等待):
// telemetry in (nvidia-smi pushes, the agent, DCGM scrapes, the
// simulator), the live fleet state and its loops (inventory, holds,
// alerts, rollups, retention, auto-release), the wall board and its
// websocket hub, the heatmap, the fleet API and metrics, and the admin
// page of telemetry tokens and unregistered cards.
package board

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"cardhour/config"
	"cardhour/server/response"
	"cardhour/store"
)

// Area serves the board and keeps the live fleet.
type Area struct {
	store *store.Store
	cfg   config.Config
	log   *slog.Logger
	pages *response.Pages
	live  *live
}

// New builds the area; its collectors go into reg.
func New(st *store.Store, cfg config.Config, log *slog.Logger, pages *response.Pages, reg *prometheus.Registry) *Area {
	a := &Area{store: st, cfg: cfg, log: log, pages: pages}
	a.live = newLive(a, reg)
	return a
}
