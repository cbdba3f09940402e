package telemetry

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// AgentCommand is `cardhour agent`: it reads its flags (or the
// CARDHOUR_AGENT_* variables, which keep the token out of the process
// list) and runs the agent until ctx ends.
func AgentCommand(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", getenv("CARDHOUR_AGENT_SERVER"), "the portal's URL (CARDHOUR_AGENT_SERVER)")
	token := fs.String("token", getenv("CARDHOUR_AGENT_TOKEN"), "agent token from the telemetry admin page (CARDHOUR_AGENT_TOKEN)")
	host := fs.String("host", getenv("CARDHOUR_AGENT_HOST"), "this host's name in the inventory; default: the OS host name (CARDHOUR_AGENT_HOST)")
	interval := fs.Duration("interval", time.Second, "time between samples")
	buffer := fs.Int("buffer", 900, "rounds kept while the portal is unreachable")
	verbose := fs.Bool("v", false, "log every retry and skipped line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("agent: unexpected argument %q", fs.Arg(0))
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	a, err := NewAgent(AgentConfig{
		Server: *server, Token: *token, Host: *host, Interval: *interval, MaxBuffered: *buffer,
		Log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return a.Run(ctx)
}
