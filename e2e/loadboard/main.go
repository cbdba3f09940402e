// Command loadboard measures the live board against a running cardhour
// server: -cards cards reporting every second through the raw nvidia-smi
// push endpoint (one request per host of -per-host cards, as cron or the
// agent would), and -clients board websockets watching.
//
// It creates its own fixtures through the API with an admin's token — a card
// type LOADB-<ts>, the hosts and cards, an agent token and a board token —
// then connects the clients (gradually: each first receives a snapshot of
// the whole fleet), warms up, and measures for -duration: the latency from
// a sample's arrival at the server to the frame carrying it reaching each
// client (every delta frame says when its oldest sample arrived, "since",
// and the clients, on the same machine and clock, note when they read it;
// the server's own histogram of arrival → frame written is reported beside
// it); the server's CPU (process_cpu_seconds_total from /metrics) and this
// process's own, so the load generator's share of the machine is seen; and
// bytes per client per second, frames per second, samples per second.
//
//	go run ./e2e/loadboard -server http://127.0.0.1:8080 -token cht_… -cards 2000 -clients 500 -duration 30s
//
// With several replicas, -push and -watch spread the pushes and the clients
// over them: pushing only to A and watching only C measures a sample's way
// from A's arrival to a frame on C (the frame's "since" is A's arrival).
//
// Run the portal with CARDHOUR_SIMULATOR=false so only the pushed samples
// move the board. The exit status is 1 when pushes fail or clients drop.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// firstPushError keeps what the first refused push was told, for the summary.
var firstPushError atomic.Value

type options struct {
	server string
	// push and watch are the replicas pushes go to and board clients watch
	// (each spread round-robin); both default to server. Pushing to one
	// replica and watching another measures the way through Redis.
	push, watch []string
	token       string
	cards       int
	perHost     int
	clients     int
	warmup      time.Duration
	settle      time.Duration
	duration    time.Duration
	interval    time.Duration
	jsonOut     bool
}

func main() {
	var o options
	flag.StringVar(&o.server, "server", "http://127.0.0.1:8080", "base URL of the portal")
	flag.StringVar(&o.token, "token", os.Getenv("CARDHOUR_TOKEN"), "an admin's API token (default $CARDHOUR_TOKEN)")
	flag.IntVar(&o.cards, "cards", 2000, "cards reporting")
	flag.IntVar(&o.perHost, "per-host", 8, "cards per host (one push per host per interval)")
	flag.IntVar(&o.clients, "clients", 500, "board websocket clients")
	flag.DurationVar(&o.warmup, "warmup", 5*time.Second, "load before measuring")
	flag.DurationVar(&o.settle, "settle", 0, "wait after creating the cards, before they report (35s: the server's inventory loop has loaded them)")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long to measure")
	flag.DurationVar(&o.interval, "interval", time.Second, "how often each card reports")
	flag.BoolVar(&o.jsonOut, "json", false, "print the summary as one JSON object")
	push := flag.String("push", "", "replicas the pushes go to, comma-separated (default -server)")
	watch := flag.String("watch", "", "replicas the board clients watch, comma-separated (default -server)")
	flag.Parse()
	if o.token == "" {
		fmt.Fprintln(os.Stderr, "loadboard: -token (an admin's API token) is required; issue one with `cardhour token --user admin`")
		os.Exit(2)
	}
	o.server = strings.TrimRight(o.server, "/")
	o.push, o.watch = urls(*push, o.server), urls(*watch, o.server)
	sum, err := run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadboard:", err)
		os.Exit(1)
	}
	if o.jsonOut {
		_ = json.NewEncoder(os.Stdout).Encode(sum)
	} else {
		sum.print(os.Stdout)
	}
	if sum.PushErrors > 0 || sum.ClientsLost > 0 {
		os.Exit(1)
	}
}

// urls splits a comma-separated list of base URLs; empty is def alone.
func urls(list, def string) []string {
	var out []string
	for _, u := range strings.Split(list, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return []string{def}
	}
	return out
}

type summary struct {
	Server           string   `json:"server"`
	Push             []string `json:"push"`
	Watch            []string `json:"watch"`
	Cards            int      `json:"cards"`
	Hosts            int      `json:"hosts"`
	Clients          int      `json:"clients"`
	Seconds          float64  `json:"seconds"`
	SamplesPerSec    float64  `json:"samples_per_s"`
	PushP99ms        float64  `json:"push_p99_ms"`
	PushErrors       int64    `json:"push_errors"`
	FramesPerSec     float64  `json:"frames_per_s_per_client"`
	BytesPerClientPS float64  `json:"bytes_per_client_per_s"`
	LatP50ms         float64  `json:"latency_p50_ms"`
	LatP90ms         float64  `json:"latency_p90_ms"`
	LatP99ms         float64  `json:"latency_p99_ms"`
	LatMaxms         float64  `json:"latency_max_ms"`
	ServerP99ms      float64  `json:"server_written_p99_ms"`
	ServerCores      float64  `json:"server_cpu_cores"`
	LoadgenCores     float64  `json:"loadgen_cpu_cores"`
	ClientsLost      int64    `json:"clients_lost"`
	Load1Before      float64  `json:"loadavg1_before"` // the machine's noise: other work running
	Load1After       float64  `json:"loadavg1_after"`
	SnapshotBytes    int64    `json:"snapshot_bytes"`
}

func (s summary) print(w io.Writer) {
	fmt.Fprintf(w, "loadboard: %d cards on %d hosts every second, %d board clients, measured %.1f s at %s\n", s.Cards, s.Hosts, s.Clients, s.Seconds, s.Server)
	if len(s.Push) > 1 || len(s.Watch) > 1 || s.Push[0] != s.Server || s.Watch[0] != s.Server {
		fmt.Fprintf(w, "  pushes to %s; clients watch %s\n", strings.Join(s.Push, ", "), strings.Join(s.Watch, ", "))
	}
	fmt.Fprintf(w, "  samples in            %9.0f /s   (push p99 %.1f ms, %d errors)\n", s.SamplesPerSec, s.PushP99ms, s.PushErrors)
	if e, ok := firstPushError.Load().(string); ok {
		fmt.Fprintf(w, "  first refused push    %s\n", e)
	}
	fmt.Fprintf(w, "  arrival → client read p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms\n", s.LatP50ms, s.LatP90ms, s.LatP99ms, s.LatMaxms)
	fmt.Fprintf(w, "  arrival → written     p99 %.1f ms (server histogram, bucket-interpolated)\n", s.ServerP99ms)
	fmt.Fprintf(w, "  per client            %9.0f B/s, %.1f frames/s (snapshot %d B)\n", s.BytesPerClientPS, s.FramesPerSec, s.SnapshotBytes)
	fmt.Fprintf(w, "  server CPU            %9.2f cores   (load generator %.2f cores)\n", s.ServerCores, s.LoadgenCores)
	fmt.Fprintf(w, "  clients lost          %9d\n", s.ClientsLost)
	fmt.Fprintf(w, "  machine load (1 min)  %9.2f before, %.2f after\n", s.Load1Before, s.Load1After)
}

// api sends JSON with the admin token.
func api(ctx context.Context, hc *http.Client, method, url, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, url, res.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

type card struct {
	uuid  string
	index int
	util  float64
	mem   float64
}

type host struct {
	name  string
	token string // an agent token bound to this host (among others)
	cards []card
}

// hostsPerToken is how many hosts one agent token is bound to: a token
// reports only the hosts it names, and their list is at most 1,000
// characters (store.MaxTokenHosts hosts).
const hostsPerToken = 32

func uuidFor(run string, i int) string {
	return fmt.Sprintf("GPU-%s-%04x-4%03x-8%03x-%012x", run, i>>16&0xffff, i>>8&0xfff, i&0xfff, i)
}

// setup creates the card type, hosts and cards, and the tokens: agent
// tokens (each bound to hostsPerToken hosts, set on each host) and a board
// token.
func setup(ctx context.Context, hc *http.Client, o options) ([]host, string, error) {
	stamp := time.Now().Format("0102150405")
	run := fmt.Sprintf("%08x", uint32(time.Now().UnixNano()))
	typeName := "LOADB-" + stamp
	if err := api(ctx, hc, http.MethodPost, o.server+"/api/v1/card-types", o.token,
		map[string]any{"name": typeName, "vram_gib": 80, "tflops_bf16": 989.4, "price_fen": 2200}, nil); err != nil {
		return nil, "", err
	}
	nHosts := (o.cards + o.perHost - 1) / o.perHost
	hosts := make([]host, nHosts)
	for h := range hosts {
		hosts[h].name = fmt.Sprintf("loadb-%s-%04d", stamp, h)
	}
	// Hosts and cards, a few requests at a time.
	sem := make(chan struct{}, 8)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for h := range hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			name := hosts[h].name
			if err := api(ctx, hc, http.MethodPost, o.server+"/api/v1/hosts", o.token, map[string]any{"name": name, "zone": "load"}, nil); err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
				return
			}
			for i := 0; i < o.perHost && h*o.perHost+i < o.cards; i++ {
				n := h*o.perHost + i
				c := card{uuid: uuidFor(run, n), index: i, util: float64(rand.IntN(100)), mem: float64(rand.IntN(70000))}
				if err := api(ctx, hc, http.MethodPost, o.server+"/api/v1/cards", o.token,
					map[string]any{"uuid": c.uuid, "index": i, "host": name, "card_type": typeName}, nil); err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
					return
				}
				hosts[h].cards = append(hosts[h].cards, c)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, "", firstErr
	}
	for start := 0; start < len(hosts); start += hostsPerToken {
		part := hosts[start:min(start+hostsPerToken, len(hosts))]
		names := make([]string, len(part))
		for i := range part {
			names[i] = part[i].name
		}
		var agent struct {
			Token string `json:"token"`
		}
		if err := api(ctx, hc, http.MethodPost, o.server+"/api/v1/agent-tokens", o.token,
			map[string]any{"name": fmt.Sprintf("loadboard %d", start/hostsPerToken), "hosts": names}, &agent); err != nil {
			return nil, "", err
		}
		for i := range part {
			part[i].token = agent.Token
		}
	}
	var board struct {
		Token string `json:"token"`
	}
	if err := api(ctx, hc, http.MethodPost, o.server+"/api/v1/board-tokens", o.token, map[string]string{"name": "loadboard"}, &board); err != nil {
		return nil, "", err
	}
	return hosts, board.Token, nil
}

// watcher is one board client.
type watcher struct {
	bytes, frames atomic.Int64
	mu            sync.Mutex
	lat           []float64 // ms, while measuring
	snapshot      atomic.Int64
}

var measuring atomic.Bool

func (w *watcher) run(ctx context.Context, url string, lost *atomic.Int64, ready chan<- struct{}) {
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 64 << 10}
	conn, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		lost.Add(1)
		ready <- struct{}{}
		return
	}
	defer conn.Close()
	go func() {
		<-ctx.Done()
		_ = conn.Close()
	}()
	first := true
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() == nil {
				lost.Add(1)
			}
			if first {
				ready <- struct{}{}
			}
			return
		}
		now := time.Now()
		if first {
			first = false
			w.snapshot.Store(int64(len(b)))
			ready <- struct{}{}
			continue
		}
		if !measuring.Load() {
			continue
		}
		w.bytes.Add(int64(len(b)))
		w.frames.Add(1)
		// "since" sits in the frame's head: {"type":"delta","at":…,"since":…
		head := b[:min(len(b), 80)]
		if i := bytes.Index(head, []byte(`"since":`)); i >= 0 {
			rest := head[i+8:]
			j := bytes.IndexByte(rest, ',')
			if j < 0 {
				j = bytes.IndexByte(rest, '}')
			}
			if j > 0 {
				if ms, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
					w.mu.Lock()
					w.lat = append(w.lat, float64(now.UnixMicro()-ms*1000)/1000)
					w.mu.Unlock()
				}
			}
		}
	}
}

// pusher reports one host's cards every interval, as raw nvidia-smi CSV.
func pusher(ctx context.Context, hc *http.Client, o options, server string, h *host, offset time.Duration, pushed *atomic.Int64, errs *atomic.Int64, lat *latencies) {
	select {
	case <-time.After(offset):
	case <-ctx.Done():
		return
	}
	t := time.NewTicker(o.interval)
	defer t.Stop()
	url := server + "/api/v1/telemetry/nvidia-smi?host=" + h.name
	var buf bytes.Buffer
	for {
		buf.Reset()
		for i := range h.cards {
			c := &h.cards[i]
			c.util = math.Max(0, math.Min(100, c.util+rand.NormFloat64()*12))
			c.mem = math.Max(0, math.Min(81559, c.mem+rand.NormFloat64()*800))
			fmt.Fprintf(&buf, "%d, %s, NVIDIA H800, %.0f, %.0f, 81559, %d, %.2f\n", c.index, c.uuid, c.util, c.mem, 40+int(c.util/3), 80+c.util*6)
		}
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(buf.Bytes()))
		req.Header.Set("Authorization", "Bearer "+h.token)
		req.Header.Set("Content-Type", "text/csv")
		res, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				err = errors.New(res.Status)
				firstPushError.CompareAndSwap(nil, fmt.Sprintf("%s: %s", res.Status, strings.TrimSpace(string(body))))
			}
		}
		if ctx.Err() != nil {
			return
		}
		if measuring.Load() {
			if err != nil {
				errs.Add(1)
			} else {
				pushed.Add(int64(len(h.cards)))
				lat.add(float64(time.Since(start).Microseconds()) / 1000)
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

type latencies struct {
	mu sync.Mutex
	v  []float64
}

func (l *latencies) add(ms float64) {
	l.mu.Lock()
	l.v = append(l.v, ms)
	l.mu.Unlock()
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// serverMetrics reads the CPU counter and the frame latency histogram.
func serverMetrics(ctx context.Context, hc *http.Client, base string) (cpu float64, buckets map[float64]float64, err error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	buckets = map[float64]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "process_cpu_seconds_total "):
			cpu, _ = strconv.ParseFloat(strings.TrimPrefix(line, "process_cpu_seconds_total "), 64)
		case strings.HasPrefix(line, `cardhour_board_frame_latency_seconds_bucket{le="`):
			rest := strings.TrimPrefix(line, `cardhour_board_frame_latency_seconds_bucket{le="`)
			le, v, _ := strings.Cut(rest, `"} `)
			b := math.Inf(1)
			if le != "+Inf" {
				b, _ = strconv.ParseFloat(le, 64)
			}
			buckets[b], _ = strconv.ParseFloat(v, 64)
		}
	}
	return cpu, buckets, sc.Err()
}

// histQuantile interpolates a quantile from the difference of two bucket
// readings, as Prometheus' histogram_quantile does.
func histQuantile(q float64, before, after map[float64]float64) float64 {
	var les []float64
	for le := range after {
		les = append(les, le)
	}
	sort.Float64s(les)
	if len(les) == 0 {
		return 0
	}
	total := after[math.Inf(1)] - before[math.Inf(1)]
	if total <= 0 {
		return 0
	}
	rank := q * total
	prevLe, prevCount := 0.0, 0.0
	for _, le := range les {
		c := after[le] - before[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				return prevLe
			}
			return prevLe + (le-prevLe)*(rank-prevCount)/math.Max(c-prevCount, 1e-9)
		}
		prevLe, prevCount = le, c
	}
	return prevLe
}

// load1 is the machine's 1-minute load average (0 where /proc is absent).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}

func cpuSelf() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func run(ctx context.Context, o options) (summary, error) {
	sum := summary{Server: o.server, Push: o.push, Watch: o.watch, Cards: o.cards, Clients: o.clients}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}
	fmt.Fprintf(os.Stderr, "loadboard: creating %d cards…\n", o.cards)
	hosts, boardTok, err := setup(ctx, hc, o)
	if err != nil {
		return sum, fmt.Errorf("fixtures: %w", err)
	}
	sum.Hosts = len(hosts)
	if o.settle > 0 {
		fmt.Fprintf(os.Stderr, "loadboard: settling %s…\n", o.settle)
		time.Sleep(o.settle)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Pushers first, so the board is busy while clients join.
	var pushed, pushErrs atomic.Int64
	pushLat := &latencies{}
	var wg sync.WaitGroup
	for i := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			offset := time.Duration(i) * o.interval / time.Duration(len(hosts))
			pusher(ctx, hc, o, o.push[i%len(o.push)], &hosts[i], offset, &pushed, &pushErrs, pushLat)
		}()
	}
	fmt.Fprintf(os.Stderr, "loadboard: connecting %d clients…\n", o.clients)
	watchers := make([]*watcher, o.clients)
	var lost atomic.Int64
	ready := make(chan struct{}, o.clients)
	for i := range watchers {
		watchers[i] = &watcher{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			server := o.watch[i%len(o.watch)]
			watchers[i].run(ctx, "ws"+strings.TrimPrefix(server, "http")+"/ws/board?token="+boardTok, &lost, ready)
		}()
		if i%25 == 24 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for range watchers {
		select {
		case <-ready:
		case <-time.After(2 * time.Minute):
			return sum, errors.New("clients did not all receive their snapshot in 2 minutes")
		}
	}
	time.Sleep(o.warmup)
	cpu0, h0, err := serverMetrics(ctx, hc, o.server)
	if err != nil {
		return sum, err
	}
	self0 := cpuSelf()
	sum.Load1Before = load1()
	start := time.Now()
	measuring.Store(true)
	time.Sleep(o.duration)
	measuring.Store(false)
	secs := time.Since(start).Seconds()
	self1 := cpuSelf()
	sum.Load1After = load1()
	cpu1, h1, err := serverMetrics(ctx, hc, o.server)
	if err != nil {
		return sum, err
	}
	sum.ClientsLost = lost.Load()
	cancel()
	wg.Wait()

	sum.Seconds = secs
	sum.SamplesPerSec = float64(pushed.Load()) / secs
	sum.PushErrors = pushErrs.Load()
	sort.Float64s(pushLat.v)
	sum.PushP99ms = quantile(pushLat.v, .99)
	var all []float64
	var bytesTotal, framesTotal int64
	for _, w := range watchers {
		bytesTotal += w.bytes.Load()
		framesTotal += w.frames.Load()
		all = append(all, w.lat...)
		sum.SnapshotBytes = max(sum.SnapshotBytes, w.snapshot.Load())
	}
	sort.Float64s(all)
	sum.LatP50ms, sum.LatP90ms, sum.LatP99ms = quantile(all, .5), quantile(all, .9), quantile(all, .99)
	if len(all) > 0 {
		sum.LatMaxms = all[len(all)-1]
	}
	n := float64(max(1, o.clients-int(sum.ClientsLost)))
	sum.BytesPerClientPS = float64(bytesTotal) / n / secs
	sum.FramesPerSec = float64(framesTotal) / n / secs
	sum.ServerCores = (cpu1 - cpu0) / secs
	sum.LoadgenCores = (self1 - self0) / secs
	sum.ServerP99ms = histQuantile(.99, h0, h1) * 1000
	return sum, nil
}
