package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Runner runs a command and returns its standard output. The agent runs
// nvidia-smi through one, so tests can replay recorded output.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner runs the real command.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return out, fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(ee.Stderr)))
		}
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Batch is what an agent posts to /api/v1/telemetry/samples: the samples of
// one or more rounds, each stamped with the time it was taken on the host.
type Batch struct {
	Host    string   `json:"host"`
	Samples []Sample `json:"samples"`
}

// SamplesPath is where agents post batches.
const SamplesPath = "/api/v1/telemetry/samples"

// AgentConfig configures an Agent.
type AgentConfig struct {
	Server   string        // the portal's base URL
	Token    string        // an agent token
	Host     string        // this host's name in the inventory; the OS host name by default
	Interval time.Duration // between rounds; 1 s by default
	Run      Runner        // ExecRunner by default
	Client   *http.Client
	// MaxBuffered bounds the rounds kept while the portal is away; the
	// oldest are dropped first. 900 by default: 15 minutes at 1 s.
	MaxBuffered int
	// MaxPerPost bounds the rounds sent in one request after an outage.
	MaxPerPost int
	MinBackoff time.Duration // first wait after a failed post; 1 s by default
	MaxBackoff time.Duration // longest wait; 1 min by default
	Log        *slog.Logger
	// ProcRoot is where processes' status files are read, for their OS
	// users: /proc by default.
	ProcRoot string
	// LookupUser names a uid; os/user.LookupId by default. A uid it cannot
	// name is reported as the number.
	LookupUser func(uid string) (string, error)
}

// AgentStats counts what an agent did.
type AgentStats struct {
	Rounds, Posts, Failures, Sent, Dropped int
}

// Agent samples this host's GPUs with nvidia-smi and posts the samples to
// the portal. While the portal is away it keeps a bounded window of rounds
// and retries with exponential backoff, so a restart of the portal loses
// nothing and an outage loses only the oldest rounds.
type Agent struct {
	cfg     AgentConfig
	url     string
	buf     [][]Sample
	backoff time.Duration
	nextTry time.Time
	stats   AgentStats

	// query is the --query-gpu list: AgentGPUQuery, or GPUQuery alone once
	// this driver refused one of its fields.
	query string
	// cards remembers each bus id's card from earlier rounds, to report a
	// GPU nvidia-smi can no longer reach.
	cards map[string]Sample
	users map[string]string // uid → name
}

// NewAgent checks the configuration and fills in the defaults.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	u, err := url.Parse(strings.TrimRight(cfg.Server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server %q: want the portal's URL, e.g. https://cardhour.example.com", cfg.Server)
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("--token: an agent token is required (an admin creates one on the telemetry admin page)")
	}
	if cfg.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--host: cannot read the host name: %w", err)
		}
		cfg.Host = h
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Interval < 100*time.Millisecond {
		return nil, fmt.Errorf("--interval %v: want at least 100ms", cfg.Interval)
	}
	if cfg.Run == nil {
		cfg.Run = ExecRunner
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.MaxBuffered <= 0 {
		cfg.MaxBuffered = 900
	}
	if cfg.MaxPerPost <= 0 {
		cfg.MaxPerPost = 60
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(time.Minute, cfg.MinBackoff)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.LookupUser == nil {
		cfg.LookupUser = lookupUser
	}
	return &Agent{cfg: cfg, url: u.String() + SamplesPath, query: AgentGPUQuery,
		cards: map[string]Sample{}, users: map[string]string{}}, nil
}

// Stats returns the counters.
func (a *Agent) Stats() AgentStats { return a.stats }

// Buffered is the number of rounds waiting to be sent.
func (a *Agent) Buffered() int { return len(a.buf) }

// Collect runs nvidia-smi once for the cards and once for their processes;
// when a card is in MIG mode also -L and -q, for its GPU instances. The
// process query is optional: old drivers lack it, and cards without
// processes are still worth reporting. Cards nvidia-smi reports broken go
// out with their Fault set.
func (a *Agent) Collect(ctx context.Context, at time.Time) ([]Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, max(5*time.Second, 3*a.cfg.Interval))
	defer cancel()
	out, err := a.cfg.Run(ctx, "nvidia-smi", "--query-gpu="+a.query, "--format=csv,nounits")
	if err != nil && a.query != GPUQuery && refusedField(out, err) {
		// nvidia-smi answers an unknown field with exit status 2 and
		// `Field "mig.mode.current" is not a valid field to query.`
		a.cfg.Log.Info("nvidia-smi refused a field; querying without the bus id and MIG mode from now on", "err", err)
		a.query = GPUQuery
		out, err = a.cfg.Run(ctx, "nvidia-smi", "--query-gpu="+a.query, "--format=csv,nounits")
	}
	if err != nil && len(bytes.TrimSpace(out)) == 0 {
		return nil, err
	}
	if err != nil {
		// A GPU it cannot reach makes nvidia-smi fail, after the rows of the others.
		a.cfg.Log.Warn("nvidia-smi failed; reading what it printed", "err", err)
	}
	res := ParseGPUCSV(bytes.NewReader(out), a.cfg.Host, at)
	for _, b := range res.Skipped {
		a.cfg.Log.Warn("nvidia-smi line skipped", "err", b.Error())
	}
	samples := res.Samples
	for _, s := range samples {
		if s.BusID != "" {
			a.cards[s.BusID] = Sample{UUID: s.UUID, Index: s.Index, Name: s.Name}
		}
	}
	faulty := a.faulty(res.GPUErrors, at)
	if len(samples) == 0 && len(faulty) == 0 {
		if err != nil {
			return nil, err
		}
		return nil, errors.New("nvidia-smi reported no GPUs")
	}
	if apps, err := a.cfg.Run(ctx, "nvidia-smi", "--query-compute-apps="+AppsQuery, "--format=csv,nounits"); err == nil {
		rows, bad := ParseComputeApps(bytes.NewReader(apps))
		for _, b := range bad {
			a.cfg.Log.Debug("nvidia-smi compute-apps line skipped", "err", b.Error())
		}
		AttachProcesses(samples, rows)
	} else {
		a.cfg.Log.Debug("nvidia-smi compute apps unavailable", "err", err)
	}
	if anyMIG(samples) {
		a.collectMIG(ctx, samples)
	}
	a.attachUsers(samples)
	return append(samples, faulty...), nil
}

func refusedField(out []byte, err error) bool {
	const msg = "is not a valid field to query"
	return bytes.Contains(out, []byte(msg)) || strings.Contains(err.Error(), msg)
}

// faulty turns nvidia-smi's per-GPU error lines into samples of the cards
// those bus ids had in earlier rounds.
func (a *Agent) faulty(errs []GPUError, at time.Time) []Sample {
	var out []Sample
	for _, e := range errs {
		c, ok := a.cards[e.BusID]
		if !ok {
			a.cfg.Log.Warn("nvidia-smi cannot reach a GPU this agent has not seen before; not reported", "bus_id", e.BusID, "reason", e.Reason)
			continue
		}
		out = append(out, Sample{UUID: c.UUID, Index: c.Index, Name: c.Name, Host: a.cfg.Host, BusID: e.BusID, At: at, Fault: e.Reason})
	}
	return out
}

func anyMIG(samples []Sample) bool {
	for _, s := range samples {
		if s.MIG {
			return true
		}
	}
	return false
}

// collectMIG reads nvidia-smi -L (profiles) and -q (instance memory and
// the processes' instances) once for the round.
func (a *Agent) collectMIG(ctx context.Context, samples []Sample) {
	var list []ListedGPU
	if out, err := a.cfg.Run(ctx, "nvidia-smi", "-L"); err == nil {
		var bad []LineError
		list, bad = ParseMIGList(bytes.NewReader(out))
		for _, b := range bad {
			a.cfg.Log.Debug("nvidia-smi -L line skipped", "err", b.Error())
		}
	} else {
		a.cfg.Log.Warn("nvidia-smi -L failed", "err", err)
	}
	var query []QueriedGPU
	if out, err := a.cfg.Run(ctx, "nvidia-smi", "-q"); err == nil {
		query, _ = ParseQueryMIG(bytes.NewReader(out))
	} else {
		a.cfg.Log.Warn("nvidia-smi -q failed", "err", err)
	}
	AttachMIG(samples, list, query)
}

// Step takes one round at now and sends what is buffered when the backoff
// allows. It is the loop's body; tests call it with their own clock.
func (a *Agent) Step(ctx context.Context, now time.Time) {
	samples, err := a.Collect(ctx, now)
	if err != nil {
		a.cfg.Log.Warn("sampling failed", "err", err)
	} else {
		a.stats.Rounds++
		a.buf = append(a.buf, samples)
		if over := len(a.buf) - a.cfg.MaxBuffered; over > 0 {
			a.stats.Dropped += over
			a.buf = append(a.buf[:0:0], a.buf[over:]...)
			a.cfg.Log.Warn("portal unreachable for long: dropped the oldest rounds", "dropped", over)
		}
	}
	if len(a.buf) == 0 || now.Before(a.nextTry) {
		return
	}
	for len(a.buf) > 0 {
		n := min(len(a.buf), a.cfg.MaxPerPost)
		if err := a.post(ctx, a.buf[:n]); err != nil {
			var perm permanentError
			if errors.As(err, &perm) {
				// The portal refuses these samples for good; retrying would
				// block everything behind them.
				a.cfg.Log.Error("portal refused samples; dropping them", "rounds", n, "err", err)
				a.stats.Dropped += n
				a.buf = append(a.buf[:0:0], a.buf[n:]...)
				continue
			}
			a.stats.Failures++
			a.fail(now, err)
			return
		}
		a.stats.Sent += n
		a.buf = append(a.buf[:0:0], a.buf[n:]...)
		a.backoff, a.nextTry = 0, time.Time{}
	}
}

// fail schedules the next attempt: exponential backoff with ±20 % jitter,
// so agents of many hosts do not return all at once.
func (a *Agent) fail(now time.Time, err error) {
	if a.backoff == 0 {
		a.backoff = a.cfg.MinBackoff
	} else {
		a.backoff = min(2*a.backoff, a.cfg.MaxBackoff)
	}
	wait := time.Duration(float64(a.backoff) * (0.8 + 0.4*rand.Float64()))
	a.nextTry = now.Add(wait)
	a.cfg.Log.Warn("posting samples failed; will retry", "err", err, "in", wait.Round(time.Millisecond), "buffered", len(a.buf))
}

type permanentError struct{ error }

func (a *Agent) post(ctx context.Context, rounds [][]Sample) error {
	b := Batch{Host: a.cfg.Host}
	for _, r := range rounds {
		b.Samples = append(b.Samples, r...)
	}
	body, err := json.Marshal(b)
	if err != nil {
		return permanentError{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return permanentError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.cfg.Token)
	a.stats.Posts++
	res, err := a.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	switch {
	case res.StatusCode/100 == 2:
		return nil
	case res.StatusCode == http.StatusBadRequest, res.StatusCode == http.StatusRequestEntityTooLarge, res.StatusCode == http.StatusUnprocessableEntity:
		return permanentError{fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(msg)))}
	}
	// 401/403 keep the samples: a replaced token should not lose data.
	return fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(msg)))
}

// Run samples every interval until ctx ends, then tries once more to send
// what is buffered.
func (a *Agent) Run(ctx context.Context) error {
	a.cfg.Log.Info("agent started", "server", a.url, "host", a.cfg.Host, "interval", a.cfg.Interval)
	t := time.NewTicker(a.cfg.Interval)
	defer t.Stop()
	a.Step(ctx, time.Now())
	for {
		select {
		case <-ctx.Done():
			if len(a.buf) > 0 {
				fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				a.nextTry = time.Time{}
				a.flushOnly(fctx)
				cancel()
			}
			a.cfg.Log.Info("agent stopped", "sent_rounds", a.stats.Sent, "unsent_rounds", len(a.buf), "dropped_rounds", a.stats.Dropped)
			return nil
		case now := <-t.C:
			a.Step(ctx, now)
		}
	}
}

func (a *Agent) flushOnly(ctx context.Context) {
	for len(a.buf) > 0 {
		n := min(len(a.buf), a.cfg.MaxPerPost)
		if err := a.post(ctx, a.buf[:n]); err != nil {
			return
		}
		a.stats.Sent += n
		a.buf = a.buf[n:]
	}
}
