package server

import (
	"bufio"
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"cardhour/assets"
	"cardhour/errs"
	"cardhour/server/route"
	"cardhour/store"
)

// opsRoutes are the kernel's own routes: health, metrics, static files and
// the API's description.
func (s *Server) opsRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/healthz", route.Public, s.healthz),
		route.New(route.GET, "/readyz", route.Public, s.readyz),
		route.New(route.GET, "/metrics", route.Public, s.serveMetrics),
		// The catalog decides the caching: a year for content-hashed URLs
		// (what the pages link to), revalidation for anything else.
		route.New(route.GET, "/assets/*", route.Public, echo.WrapHandler(assets.Default().Handler())),
		route.New(route.GET, "/favicon.ico", route.Public, favicon),
		// Documentation of the API itself: public, like a README.
		route.Op(route.GET, "/api/v1/openapi.json", route.Public, s.apiOpenAPI, route.API{Tag: "meta", Summary: "This document",
			Status: http.StatusOK, Result: route.Raw("the OpenAPI 3 document", "application/json")}),
	}
}

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

// serveMetrics answers /metrics: the registry's families, then the
// board's per-card gauges, written from the live state as they are
// formatted — with 10,000 cards those are most of the 20 MB body, which
// the registry would have built whole in memory, as protobuf messages,
// at every scrape. The answer is in the text format whatever the scraper
// would prefer: every scraper reads it, and it can be written a line at a
// time. Compression, where asked for, is the gzip middleware's.
func (s *Server) serveMetrics(c echo.Context) error {
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	mfs, err := s.metrics.registry.Gather()
	if err != nil {
		return errs.Wrap(errs.Internal, "server.metrics", err)
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, string(format))
	res.WriteHeader(http.StatusOK)
	w := bufio.NewWriterSize(res, 32<<10)
	enc := expfmt.NewEncoder(w, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil // the scraper went away; the status is sent
		}
	}
	s.board.WriteMetrics(w)
	_ = w.Flush() // an error here is the scraper gone, too
	return nil
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

// favicon points old browsers at the current favicon. The target changes
// with each release, so the redirect is not permanent.
func favicon(c echo.Context) error {
	return c.Redirect(http.StatusFound, assets.URL("favicon.svg"))
}

// apiOpenAPI serves the document built from the route table at start.
func (s *Server) apiOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSONBlob(http.StatusOK, s.openapi)
}
