// Package server is cardhour's HTTP side: one route table, one error
// handler, the middleware for sessions, CSRF and roles, and one handler file
// per area. Business rules live in store (and later schedule); handlers only
// translate between HTTP and those packages.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"cardhour/config"
	"cardhour/store"
)

// Server wires the portal together. Create it with New, serve it with Run.
type Server struct {
	cfg     config.Config
	store   *store.Store
	log     *slog.Logger
	echo    *echo.Echo
	routes  []Route
	metrics *metrics
	limiter *loginLimiter
	version string
	live    *live // the board: fleet state, websocket hub, telemetry loops
	files   *files
}

// New builds the server and its route table.
func New(cfg config.Config, st *store.Store, log *slog.Logger, version string) *Server {
	s := &Server{
		cfg:     cfg,
		store:   st,
		log:     log,
		echo:    echo.New(),
		limiter: newLoginLimiter(10, 15*time.Minute),
		version: version,
	}
	s.metrics = newMetrics(prometheus.NewRegistry(), st)
	s.live = newLive(s)
	s.files = newFiles(cfg, st, log)
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.IPExtractor = echo.ExtractIPFromXFFHeader(echo.TrustLoopback(true), echo.TrustPrivateNet(true))
	s.middleware()
	s.registerRoutes()
	return s
}

// Handler is the portal as an http.Handler, for tests.
func (s *Server) Handler() http.Handler { return s.echo }

// Run serves on cfg.Addr until ctx ends, then shuts down gracefully: stop
// accepting, drain requests in flight, close the board's websockets and
// write the last telemetry rollups, then return so the caller closes the
// database.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	tickCtx, stopTicker := context.WithCancel(ctx)
	defer stopTicker()
	go s.runTicker(tickCtx)
	// The board outlives ctx until the requests have drained: then its
	// websockets close and its last rollups are written (stopLive below).
	stopLive := s.StartLive(context.WithoutCancel(ctx))
	defer stopLive()
	s.log.Info("serving", "addr", ln.Addr().String(), "db", s.store.Dialect())
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: draining requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		s.log.Warn("shutdown did not drain in time", "err", err)
		_ = srv.Close()
	}
	s.log.Info("shutting down: closing board websockets")
	stopLive()
	return nil
}
