// Command cardhour is the GPU-on-demand portal. This file only wires the
// parts together; each subcommand's logic lives in its package.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"cardhour/cluster"
	"cardhour/config"
	"cardhour/errs"
	"cardhour/objects"
	"cardhour/server"
	"cardhour/store"
	"cardhour/telemetry"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: tests call it with their own arguments,
// environment and outputs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, getenv, stdout, stderr)
	case "migrate":
		err = migrate(ctx, args, getenv, stdout, stderr)
	case "token":
		err = token(ctx, args, getenv, stdout, stderr)
	case "admin":
		err = admin(ctx, args, getenv, stdout, stderr)
	case "agent":
		err = telemetry.AgentCommand(ctx, args, getenv, stderr)
	case "version":
		fmt.Fprintln(stdout, "cardhour", version)
	case "help", "-h", "--help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "cardhour: unknown command %q\n", cmd)
		usage(stderr)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "cardhour:", err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: cardhour [command] [flags]

commands:
  serve                          run the portal (default)
  migrate up|status              apply or list database migrations
  token --user NAME [--name L]   issue an API token for a user and print it once
  admin reset-password --user NAME
                                 give a user a new random password, print it once, and end
                                 their sessions (for a lost admin password)
  agent --server URL --token T   on a GPU host: sample nvidia-smi every --interval (1s) and push to the portal
  version                        print the version

Every flag has a CARDHOUR_* environment variable; see README.md or "cardhour serve -h".`)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore connects and migrates. At start the database may still be
// coming up (a container starting beside it), so connecting is retried for
// a while before giving up with a clear message.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger, wait time.Duration) (*store.Store, error) {
	target, err := config.ParseDB(cfg.DB, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for attempt := 1; ; attempt++ {
		st, err := store.Open(ctx, store.Options{Dialect: target.Dialect, DSN: target.DSN, Logger: log})
		if err == nil {
			if err := st.Migrate(ctx); err != nil {
				_ = st.Close()
				return nil, fmt.Errorf("migrating the %s database: %w", target.Dialect, err)
			}
			return st, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("cannot reach the %s database (CARDHOUR_DB): %w", target.Dialect, err)
		}
		log.Warn("database not reachable yet, retrying", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Load("serve", args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	st, err := openStore(ctx, cfg, log, 60*time.Second)
	if err != nil {
		return err
	}
	defer st.Close()
	policy := store.DefaultBookingPolicy()
	policy.Horizon, policy.CoreReserveShare = cfg.Horizon, cfg.CoreReserve
	policy.NoShowAfter = cfg.NoShowAfter
	st.SetBookingPolicy(policy)

	password := cfg.AdminPassword
	generated := password == ""
	if generated {
		password = randomPassword()
	}
	created, err := st.EnsureAdmin(ctx, password)
	if err != nil {
		return fmt.Errorf("creating the admin account: %w", err)
	}
	if created {
		if generated {
			// Printed once to the terminal, never logged: logs are kept and shipped.
			fmt.Fprintf(stdout, "\n  Created the account admin with password: %s\n  (set CARDHOUR_ADMIN_PASSWORD to choose it; change it under 账户 / Account)\n\n", password)
		} else {
			log.Info("created the account admin with the password from CARDHOUR_ADMIN_PASSWORD")
		}
		if cfg.Demo {
			if err := st.SeedDemo(ctx, cfg.TZ); err != nil {
				return fmt.Errorf("loading demo data: %w", err)
			}
			log.Info("loaded demo data (CARDHOUR_DEMO); demo users share one password, see README", "users", "wangfang lihua zhangwei chenjing liuyang zhaolei")
		}
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("CARDHOUR_ADDR %s: %w", cfg.Addr, err)
	}
	cl, err := cluster.Open(cfg.Redis, log)
	if err != nil {
		return fmt.Errorf("CARDHOUR_REDIS: %w", err)
	}
	defer cl.Close()
	if cfg.Redis != "" {
		log.Info("replicas share live state through Redis (CARDHOUR_REDIS)")
	}
	srv := server.NewShared(cfg, st, log, version, cl)
	if err := startObjects(ctx, cfg, srv, log); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cardhour %s listening on http://%s\n", version, displayAddr(ln.Addr()))
	return srv.Run(ctx, ln)
}

// startObjects opens the object store of the task files, checks how it
// keeps versions (bucket versioning, or a key per version where it is
// off), and reconciles the database with it. A store that cannot be reached
// now is no reason not to serve bookings: files answer 503 and the ticker
// reconciles once it is back. A store that refuses (no such bucket, bad
// credentials) is a configuration error and stops the start.
func startObjects(ctx context.Context, cfg config.Config, srv *server.Server, log *slog.Logger) error {
	obj, err := objects.Open(ctx, cfg.Objects, cfg.S3)
	if err != nil {
		return fmt.Errorf("CARDHOUR_OBJECTS %s: %w", cfg.Objects, err)
	}
	if cfg.IsMySQL() && cfg.Objects.Kind == "local" {
		// A shared database suggests several replicas; a directory is one
		// machine's, and the versions it keeps the others cannot read.
		log.Warn("task file versions are kept in a local directory while the database is shared: "+
			"other replicas cannot read those versions; with several replicas set CARDHOUR_OBJECTS to S3 / Tianyi OOS (s3://bucket/prefix?endpoint=…)",
			"location", cfg.Objects.String())
	}
	checkCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	info, err := obj.Describe(checkCtx)
	cancel()
	switch {
	case errs.Is(err, errs.Unavailable):
		log.Warn("object storage not reachable; task files answer 503 until it is", "location", cfg.Objects.String(), "err", err)
		srv.Files().UseObjects(obj)
		return nil
	case err != nil:
		return fmt.Errorf("CARDHOUR_OBJECTS %s: %w", cfg.Objects, err)
	}
	log.Info("object storage", "backend", info.Backend, "location", info.Location, "versioning", info.Versioning, "detail", info.Detail)
	srv.Files().UseObjects(obj)
	rep, err := srv.Files().Reconcile(ctx)
	if err != nil {
		log.Warn("files not reconciled with object storage; retrying on the ticker", "err", err)
		return nil
	}
	log.Info("files reconciled with object storage", "rows", rep.Rows, "objects", rep.Objects, "orphans", rep.Orphans,
		"removed", rep.Removed, "missing", rep.Missing)
	return nil
}

func displayAddr(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if host == "::" || host == "0.0.0.0" || host == "" {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

func randomPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	action := "up"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	cfg, err := config.Load("migrate", args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	target, err := config.ParseDB(cfg.DB, cfg.DataDir)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Options{Dialect: target.Dialect, DSN: target.DSN, Logger: log})
	if err != nil {
		return fmt.Errorf("cannot reach the %s database (CARDHOUR_DB): %w", target.Dialect, err)
	}
	defer st.Close()
	switch action {
	case "up":
		if err := st.Migrate(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		fallthrough
	case "status":
		states, err := st.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		for _, m := range states {
			state := "pending"
			if m.Applied {
				state = "applied"
			}
			fmt.Fprintf(stdout, "%05d  %-8s %s\n", m.Version, state, m.Name)
		}
		return nil
	}
	return fmt.Errorf("migrate: unknown action %q (want up or status)", action)
}

// ownFlags takes the command's own flags (names) out of args, wherever they
// are; the rest are the usual settings for config.Load.
func ownFlags(cmd string, args []string, names ...string) (map[string]string, []string, error) {
	own := map[string]string{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !slices.Contains(names, key) {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("%s: --%s needs a value", cmd, key)
			}
			i++
			val = args[i]
		}
		own[key] = val
	}
	return own, rest, nil
}

func token(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	own, rest, err := ownFlags("token", args, "user", "name")
	if err != nil {
		return err
	}
	user, name := own["user"], own["name"]
	if user == "" {
		return errors.New("token: --user NAME is required")
	}
	cfg, err := config.Load("token", rest, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	st, err := openStore(ctx, cfg, log, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.FindUserByUsername(ctx, user)
	if err != nil {
		return fmt.Errorf("token: no user %q", user)
	}
	ctx = store.WithActor(ctx, store.Actor{UserID: u.ID, Username: u.Username, IP: "cli"})
	if name == "" {
		name = "cli"
	}
	_, secret, err := st.CreateAPIToken(ctx, u.ID, name, store.TokenUser)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	return nil
}

// admin holds the commands for whoever runs the portal's host, not its
// pages: today resetting a lost password.
func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("admin: want a subcommand: reset-password --user NAME")
	}
	sub, args := args[0], args[1:]
	if sub != "reset-password" {
		return fmt.Errorf("admin: unknown subcommand %q (want reset-password)", sub)
	}
	own, rest, err := ownFlags("admin reset-password", args, "user")
	if err != nil {
		return err
	}
	user := own["user"]
	if user == "" {
		return errors.New("admin reset-password: --user NAME is required")
	}
	cfg, err := config.Load("admin", rest, getenv, stderr)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, newLogger(cfg, stderr), 0)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.FindUserByUsername(ctx, user)
	if err != nil {
		return fmt.Errorf("admin reset-password: no user %q", user)
	}
	// Audited as done from the host's command line, by nobody in the portal.
	ctx = store.WithActor(ctx, store.Actor{Username: "cli", IP: "cli"})
	password := randomPassword()
	if _, err := st.UpdateUser(ctx, u.ID, store.UserUpdate{Password: &password}); err != nil {
		return fmt.Errorf("admin reset-password: %w", err)
	}
	fmt.Fprintf(stdout, "new password for %s (shown once; change it after signing in): %s\n", u.Username, password)
	if u.Disabled {
		fmt.Fprintf(stderr, "note: %s is disabled; an admin enables the account on its page\n", u.Username)
	}
	return nil
}
