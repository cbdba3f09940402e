// Package server is cardhour's HTTP kernel: it builds the areas (one
// package each under server/: account, admin, booking, planning, board,
// ledger, files), holds the one route table they contribute to, the
// middleware for sessions, CSRF and roles, the one error handler, the
// operations endpoints and the OpenAPI document generated from the table.
// Business rules live in store and schedule; areas translate between HTTP
// and those packages.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"cardhour/cluster"
	"cardhour/config"
	"cardhour/server/account"
	"cardhour/server/admin"
	"cardhour/server/area"
	"cardhour/server/board"
	"cardhour/server/booking"
	"cardhour/server/files"
	"cardhour/server/ledger"
	"cardhour/server/notify"
	"cardhour/server/planning"
	"cardhour/server/response"
	"cardhour/server/route"
	"cardhour/store"
)

// Server wires the portal together. Create it with New, serve it with Run.
type Server struct {
	cfg     config.Config
	store   *store.Store
	log     *slog.Logger
	echo    *echo.Echo
	version string
	pages   *response.Pages
	metrics *metrics
	routes  []route.Route
	deps    area.Deps // what the areas were built from; its Holder names this process in the leases
	openapi []byte

	// refusals logs unavailable answers, summed up during an outage.
	refusals *refusals

	account  *account.Area
	admin    *admin.Area
	booking  *booking.Area
	ledger   *ledger.Area
	planning *planning.Area
	board    *board.Area
	files    *files.Area
	notify   *notify.Area
}

// New builds the server and its route table. A table that breaks its own
// rules (a route without an access level, an API route without a
// description, one registered twice) is a programming error: New panics,
// so every test fails until it is mended.
func New(cfg config.Config, st *store.Store, log *slog.Logger, version string) *Server {
	return NewShared(cfg, st, log, version, cluster.NewLocal())
}

// NewShared is New for one of several replicas sharing cl (cluster.Open
// of CARDHOUR_REDIS): telemetry batches, cache invalidations and login
// rate limits go through it. The caller closes cl after Run.
func NewShared(cfg config.Config, st *store.Store, log *slog.Logger, version string, cl cluster.Cluster) *Server {
	s := &Server{
		cfg:     cfg,
		store:   st,
		log:     log,
		echo:    echo.New(),
		version: version,
		pages:   response.NewPages(cfg, version, st),
	}
	s.metrics = newMetrics(prometheus.NewRegistry(), st)
	s.refusals = newRefusals(log, 10*time.Second)
	s.deps = area.Deps{Store: st, Config: cfg, Log: log, Pages: s.pages, Holder: store.NewHolder(), Cluster: cl}
	d := s.deps
	dirs, err := directories(cfg)
	if err != nil {
		// config.Load validated these settings: what is left is a
		// programming error, like a broken route table.
		panic(err)
	}
	s.account = account.New(d, dirs)
	s.admin = admin.New(d)
	s.booking = booking.New(d)
	s.planning = planning.New(d)
	s.board = board.New(d, s.metrics.registry)
	s.ledger = ledger.New(d)
	s.files = files.New(d)
	s.notify = notify.New(d)
	s.shareChanges(cl)
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.IPExtractor = clientIP(cfg.TrustedProxies)
	s.middleware()
	s.routes = s.table()
	if err := s.register(s.routes); err != nil {
		panic(err)
	}
	s.pages.SetNavRanks(navRanks(s.routes))
	doc, err := buildOpenAPI(s.routes)
	if err != nil {
		panic(err)
	}
	s.openapi = doc
	return s
}

// shareChanges makes a change committed here forget the cached answers of
// every replica: this one's store and board at once, the others' when the
// cluster brings it (within a second; after an outage every replica
// forgets everything, having missed what changed meanwhile).
func (s *Server) shareChanges(cl cluster.Cluster) {
	st := s.store
	s.store.OnChange(func(c store.Change) {
		s.board.Forget(c)
		_ = cl.Publish(context.Background(), cluster.TopicInvalidate, []byte(c))
	})
	forget := func(c store.Change) {
		st.Forget(c)
		s.board.Forget(c)
	}
	cl.Subscribe(cluster.TopicInvalidate, func(b []byte) { forget(store.Change(b)) })
	cl.OnRejoin(func() {
		for _, c := range store.Changes {
			forget(c)
		}
	})
}

// jobs is the background work of the areas: the directory sync, the booking tick, the ledger
// pass, the card-hour plan sync, the reminder scan and the notice sender. All but the sender (whose
// outbox claim is safe on every replica) run once across the replicas, each under a lease in the
// database. (The board's loops keep this process's live state and start with the board.)
func (s *Server) jobs() []area.Job {
	return slices.Concat(s.account.Jobs(), s.booking.Jobs(), s.ledger.Jobs(), s.files.Jobs(), s.notify.Jobs())
}

// Files is the task files' area, for main (it opens and checks the object
// store at start) and for tests.
func (s *Server) Files() *files.Area { return s.files }

// Board is the live board's area, for tests that start its loops.
func (s *Server) Board() *board.Area { return s.board }

// Notices is the notices area, whose sender tests drive.
func (s *Server) Notices() *notify.Area { return s.notify }

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
	jobCtx, stopJobs := context.WithCancel(ctx)
	defer stopJobs()
	for _, j := range s.jobs() {
		go area.Loop(jobCtx, s.deps, j)
	}
	// The board outlives ctx until the requests have drained: then its
	// websockets close and its last rollups are written (stopLive below).
	stopLive := s.board.Start(context.WithoutCancel(ctx))
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

// Account is the person's area, whose directory sync tests drive.
func (s *Server) Account() *account.Area { return s.account }
