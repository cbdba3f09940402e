package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"cardhour/store"
)

// metrics holds this server's collectors in its own registry; no
// package-level state, so tests can run several servers side by side.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry, st *store.Store) *metrics {
	m := &metrics{
		registry: reg,
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cardhour_http_request_duration_seconds",
			Help:    "HTTP request durations by method, route pattern and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route", "status"}),
	}
	reg.MustRegister(m.requests,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(st.DB(), "cardhour"),
	)
	return m
}

// Registry lets other parts (telemetry) add their collectors.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only when the database answers and its schema is
// current, so a load balancer sends no traffic to a portal that would fail.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	out := map[string]string{"status": "ready", "database": "ok", "migrations": "current"}
	status := http.StatusOK
	if err := s.store.Ping(ctx); err != nil {
		out["status"], out["database"], out["migrations"] = "unavailable", "unreachable", "unknown"
		status = http.StatusServiceUnavailable
	} else if current, err := s.store.MigrationsCurrent(ctx); err != nil || !current {
		out["status"], out["migrations"] = "unavailable", "pending"
		status = http.StatusServiceUnavailable
	}
	return c.JSON(status, out)
}

func (s *Server) metricsHandler() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
}
