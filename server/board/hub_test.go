package board

// The hub's mechanics with short timings, on a bare websocket endpoint: the
// full route (authentication, origin, the real push API) is tested in
// board_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"cardhour/telemetry"
)

type hubWorld struct {
	fleet   *telemetry.Fleet
	hub     *hub
	metrics *boardMetrics
	url     string
	cards   int
}

func uuidN(i int) string { return fmt.Sprintf("GPU-%08x-1111-2222-3333-%012x", i, i) }

func newHubWorld(t *testing.T, cards int, opts hubOptions) *hubWorld {
	t.Helper()
	fl := telemetry.NewFleet(telemetry.Options{})
	var metas []telemetry.CardMeta
	for i := range cards {
		metas = append(metas, telemetry.CardMeta{UUID: uuidN(i), ID: int64(i + 1), Host: fmt.Sprintf("h%03d", i/8), Index: i % 8, Type: "NVIDIA H800 80GB", MemTotalMiB: 81920})
	}
	fl.SetInventory(metas)
	m := newBoardMetrics(prometheus.NewRegistry(), fl)
	h := newHub(fl, func() []telemetry.AlertView { return nil }, m, opts)
	ctx, cancel := context.WithCancel(context.Background())
	go h.run(ctx)
	s := &Area{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := s.upgraderFor().Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c := &client{hub: h, conn: conn, send: make(chan frame, h.opts.sendBuffer)}
		h.pumps.Add(2)
		go c.writePump()
		go c.readPump()
		if !h.join(c) {
			close(c.send)
		}
	}))
	t.Cleanup(func() {
		cancel()
		<-h.done
		ts.Close()
	})
	return &hubWorld{fleet: fl, hub: h, metrics: m, url: "ws" + strings.TrimPrefix(ts.URL, "http"), cards: cards}
}

// upgraderFor is the upgrader without the area's origin check (these
// tests dial without an Origin header anyway).
func (a *Area) upgraderFor() *websocket.Upgrader {
	u := a.upgrader()
	u.CheckOrigin = func(*http.Request) bool { return true }
	return u
}

func (w *hubWorld) push(util float64) {
	now := time.Now()
	samples := make([]telemetry.Sample, w.cards)
	for i := range samples {
		u, m, total := util, float64(i*10)+util, 81920.0
		samples[i] = telemetry.Sample{UUID: uuidN(i), Host: fmt.Sprintf("h%03d", i/8), Index: i % 8, At: now, UtilPct: &u, MemUsedMiB: &m, MemTotalMiB: &total}
	}
	w.fleet.Ingest(samples, telemetry.SourceAgent, now)
}

type wireMsg struct {
	Type  string           `json:"type"`
	Since int64            `json:"since"`
	Cards []map[string]any `json:"cards"`
}

func read(t *testing.T, c *websocket.Conn) wireMsg {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("frame is not JSON: %v", err)
	}
	return m
}

func TestHubDropsASlowClientAndNeverWaitsForIt(t *testing.T) {
	opts := defaultHubOptions()
	opts.minInterval, opts.sendBuffer = time.Millisecond, 4
	w := newHubWorld(t, 2000, opts)

	// The slow client reads nothing, through a tiny receive window, so the
	// server's writes to it block almost at once.
	slowDialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}
	slow, _, err := slowDialer.Dial(w.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, _, err := websocket.DefaultDialer.Dial(w.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	if m := read(t, fast); m.Type != "snapshot" || len(m.Cards) != 2000 {
		t.Fatalf("first frame %s with %d cards, want a snapshot of 2000", m.Type, len(m.Cards))
	}

	// Keep the fleet changing; the fast client must keep getting deltas
	// while the slow one's queue fills and the hub hangs up on it.
	var got atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = fast.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, _, err := fast.ReadMessage(); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; testutil.ToFloat64(w.metrics.dropped.WithLabelValues("slow")) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("the slow client was never dropped (fast client got %d frames)", got.Load())
		}
		w.push(float64(i % 100))
		time.Sleep(2 * time.Millisecond)
	}
	before := got.Load()
	for i := 0; i < 50; i++ {
		w.push(float64(i))
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, func() bool { return got.Load() > before }, "the fast client receiving frames after the drop")
	if n := testutil.ToFloat64(w.metrics.clients); n != 1 {
		t.Errorf("%v clients registered after the drop, want 1", n)
	}
	// The hub let go of it: its queue is closed, so its writer ends (with
	// a close frame once the peer reads, or at the write deadline).
	if n := testutil.ToFloat64(w.metrics.dropped.WithLabelValues("slow")); n != 1 {
		t.Errorf("%v slow clients dropped, want exactly the one", n)
	}
	fast.Close()
	<-done
}

func isClosed(err error) bool {
	var ce *websocket.CloseError
	if e, ok := err.(*websocket.CloseError); ok {
		ce = e
	}
	return ce != nil || strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "closed")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestHubPingsAndHangsUpOnAClientThatStopsPonging(t *testing.T) {
	opts := defaultHubOptions()
	opts.pingPeriod, opts.pongWait, opts.heartbeat = 50*time.Millisecond, 300*time.Millisecond, time.Hour
	w := newHubWorld(t, 4, opts)

	// A well-behaved client answers pings (gorilla does so while reading)
	// and stays connected well past pongWait.
	good, _, err := websocket.DefaultDialer.Dial(w.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	var pings atomic.Int32
	good.SetPingHandler(func(data string) error {
		pings.Add(1)
		return good.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	// A mute one reads (so it sees pings) but never answers them.
	mute, _, err := websocket.DefaultDialer.Dial(w.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	mute.SetPingHandler(func(string) error { return nil })

	muteErr := make(chan error, 1)
	go func() {
		_ = mute.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, _, err := mute.ReadMessage(); err != nil {
				muteErr <- err
				return
			}
		}
	}()
	goodErr := make(chan error, 1)
	go func() {
		_ = good.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
		for {
			if _, _, err := good.ReadMessage(); err != nil {
				goodErr <- err
				return
			}
		}
	}()
	select {
	case err := <-muteErr:
		var ne net.Error
		if ok := asNetTimeout(err, &ne); ok {
			t.Fatalf("the mute client was never hung up on (read timed out): %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the mute client is still connected after 5 s without pongs")
	}
	err = <-goodErr
	var ne net.Error
	if !asNetTimeout(err, &ne) {
		t.Errorf("the ponging client was disconnected: %v", err)
	}
	if pings.Load() < 5 {
		t.Errorf("%d pings in 1.5 s at a 50 ms period, want many", pings.Load())
	}
}

func asNetTimeout(err error, ne *net.Error) bool {
	if e, ok := err.(net.Error); ok && e.Timeout() {
		*ne = e
		return true
	}
	return false
}

func TestHubRefusesOversizedClientMessages(t *testing.T) {
	w := newHubWorld(t, 1, defaultHubOptions())
	c, _, err := websocket.DefaultDialer.Dial(w.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read(t, c) // snapshot
	if err := c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 4096))); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) && !isClosed(err) {
			t.Errorf("after 4 KiB from the client: %v, want the connection closed (read limit 512)", err)
		}
		return
	}
}

func TestHubClosesEveryClientWhenItStops(t *testing.T) {
	fl := telemetry.NewFleet(telemetry.Options{})
	m := newBoardMetrics(prometheus.NewRegistry(), fl)
	h := newHub(fl, func() []telemetry.AlertView { return nil }, m, defaultHubOptions())
	ctx, cancel := context.WithCancel(context.Background())
	go h.run(ctx)
	s := &Area{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := s.upgraderFor().Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c := &client{hub: h, conn: conn, send: make(chan frame, 4)}
		h.pumps.Add(2)
		go c.writePump()
		go c.readPump()
		h.join(c)
	}))
	defer ts.Close()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read(t, c)
	cancel()
	<-h.done
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = c.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("at shutdown the client got %v, want a going-away close frame", err)
	}
	if h.join(&client{}) {
		t.Error("a stopped hub accepted a client")
	}
}
