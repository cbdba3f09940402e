package board

import (
	"context"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"cardhour/telemetry"
)

// hubOptions are the hub's timings; tests shorten them.
type hubOptions struct {
	// minInterval coalesces changes: at most one frame per interval, so
	// 2,000 cards reporting every second make ~20 frames a second, not 2,000.
	minInterval time.Duration
	// heartbeat sends a frame even when nothing changed, so a board can
	// tell a quiet fleet from a dead connection.
	heartbeat time.Duration
	// sweep reclassifies the fleet (offline, held idle) without samples.
	sweep time.Duration
	// sendBuffer is how many frames a client may fall behind before it is
	// dropped: the hub never waits for a slow client.
	sendBuffer int
	// Client timings (gorilla's chat example).
	writeWait  time.Duration
	pongWait   time.Duration
	pingPeriod time.Duration
	readLimit  int64
}

func defaultHubOptions() hubOptions {
	return hubOptions{minInterval: 50 * time.Millisecond, heartbeat: 2 * time.Second, sweep: time.Second, sendBuffer: 32,
		writeWait: 10 * time.Second, pongWait: 60 * time.Second, pingPeriod: 54 * time.Second, readLimit: 512}
}

// frame is one message queued to a client: the encoded frame, and when the
// oldest sample in it arrived (zero for snapshots and heartbeats).
type frame struct {
	pm    *websocket.PreparedMessage
	since time.Time
}

// hub is the board's broadcaster. One goroutine (run) owns the set of
// clients and the frame encoder: it registers and unregisters clients,
// turns fleet changes into frames and queues them to every client without
// ever blocking on one. Each client has its own reader and writer
// goroutines (client.go); only the writer writes to the connection.
type hub struct {
	opts    hubOptions
	fleet   *telemetry.Fleet
	alerts  func() []telemetry.AlertView
	metrics *boardMetrics
	now     func() time.Time

	register   chan *client
	unregister chan *client
	// The credential guard (guard.go) lists the clients and expels those
	// whose credential went, through the hub: it alone owns the set.
	list     chan chan []*client
	expelled chan expulsion
	done     chan struct{} // closed when run returns
	pumps    sync.WaitGroup

	mu      sync.Mutex
	running bool
}

func newHub(fl *telemetry.Fleet, alerts func() []telemetry.AlertView, m *boardMetrics, opts hubOptions) *hub {
	return &hub{opts: opts, fleet: fl, alerts: alerts, metrics: m, now: time.Now,
		register: make(chan *client), unregister: make(chan *client), list: make(chan chan []*client), expelled: make(chan expulsion),
		done: make(chan struct{})}
}

// expulsion is a client to hang up on, and what to tell it.
type expulsion struct {
	c      *client
	code   int
	reason string
}

// clients lists the connected clients; none once the hub stopped or ctx
// ended.
func (h *hub) clients(ctx context.Context) []*client {
	reply := make(chan []*client, 1) // the hub never waits to answer
	select {
	case h.list <- reply:
		return <-reply
	case <-h.done:
	case <-ctx.Done():
	}
	return nil
}

// expel closes a client's connection with code and reason (its writer
// sends the close frame); a client already gone is left alone.
func (h *hub) expel(ctx context.Context, c *client, code int, reason string) {
	select {
	case h.expelled <- expulsion{c: c, code: code, reason: reason}:
	case <-h.done:
	case <-ctx.Done():
	}
}

// isRunning tells whether run has started and not ended.
func (h *hub) isRunning() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}

// markRunning says the hub is running before its goroutine gets to: a
// client arriving in between waits in join instead of being turned away.
func (h *hub) markRunning() {
	h.mu.Lock()
	h.running = true
	h.mu.Unlock()
}

// join hands a client to the hub; false when the hub is not running.
func (h *hub) join(c *client) bool {
	select {
	case h.register <- c:
		return true
	case <-h.done:
		return false
	}
}

// leave tells the hub a client is gone; safe after the hub stopped.
func (h *hub) leave(c *client) {
	select {
	case h.unregister <- c:
	case <-h.done:
	}
}

// run is the hub goroutine. When ctx ends it closes every client's queue
// (their writers send a close frame and hang up), waits briefly for them,
// and returns.
func (h *hub) run(ctx context.Context) {
	h.markRunning()
	defer func() {
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	}()
	defer close(h.done)

	enc := telemetry.NewFrameEncoder()
	clients := map[*client]bool{}
	var snap *websocket.PreparedMessage
	var snapFor []byte

	// The encoder starts from the whole fleet, so the first snapshot is
	// complete; the changes pending now are part of it.
	now := h.now()
	h.fleet.TakeChanges()
	enc.Delta(h.fleet.Snapshot(), h.fleet.Summary(now), h.alerts(), now, time.Time{}, false)

	drop := func(c *client, code int, reason string) {
		if !clients[c] {
			return
		}
		delete(clients, c)
		c.closeCode, c.closeText = code, reason
		close(c.send)
		h.metrics.clients.Set(float64(len(clients)))
	}
	snapshot := func() *websocket.PreparedMessage {
		b := enc.Snapshot()
		if snap == nil || &b[0] != &snapFor[0] {
			pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
			if err != nil {
				return nil
			}
			snap, snapFor = pm, b
		}
		return snap
	}
	lastFrame, lastSweep := now, now
	pending := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	tick := time.NewTicker(min(h.opts.sweep, h.opts.heartbeat))
	defer tick.Stop()

	flush := func(heartbeat bool) {
		now := h.now()
		changes, since := h.fleet.TakeChanges()
		b := enc.Delta(changes, h.fleet.Summary(now), h.alerts(), now, since, heartbeat)
		pending = false
		lastFrame = now
		if b == nil {
			return
		}
		pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b)
		if err != nil {
			return
		}
		h.metrics.frames.Inc()
		h.metrics.frameBytes.Add(float64(len(b) * len(clients)))
		for c := range clients {
			select {
			case c.send <- frame{pm: pm, since: since}:
			default:
				h.metrics.dropped.WithLabelValues("slow").Inc()
				drop(c, websocket.ClosePolicyViolation, "too slow: frames were piling up")
			}
		}
	}

	for {
		select {
		case <-ctx.Done():
			for c := range clients {
				drop(c, websocket.CloseGoingAway, "server shutting down")
			}
			h.drain(3 * time.Second)
			return
		case c := <-h.register:
			clients[c] = true
			h.metrics.clients.Set(float64(len(clients)))
			if pm := snapshot(); pm != nil {
				c.send <- frame{pm: pm} // a fresh queue has room
			}
		case c := <-h.unregister:
			drop(c, websocket.CloseNormalClosure, "")
		case x := <-h.expelled:
			drop(x.c, x.code, x.reason)
		case reply := <-h.list:
			out := make([]*client, 0, len(clients))
			for c := range clients {
				out = append(out, c)
			}
			reply <- out
		case <-h.fleet.Changed():
			if pending {
				continue
			}
			pending = true
			if wait := h.opts.minInterval - h.now().Sub(lastFrame); wait > 0 {
				timer.Reset(wait)
			} else {
				flush(false)
			}
		case <-timer.C:
			if pending {
				flush(false)
			}
		case <-tick.C:
			now := h.now()
			if now.Sub(lastSweep) >= h.opts.sweep {
				lastSweep = now
				h.fleet.Sweep(now) // signals Changed when a state moved
			}
			if !pending && now.Sub(lastFrame) >= h.opts.heartbeat {
				flush(true)
			}
		}
	}
}

// drain waits (at most d) for every client's pumps to end after the
// clients were told to close, answering their goodbyes meanwhile: a reader
// that ends tells the hub, and the hub must be there to hear it.
func (h *hub) drain(d time.Duration) {
	done := make(chan struct{})
	go func() {
		h.pumps.Wait()
		close(done)
	}()
	timeout := time.After(d)
	for {
		select {
		case <-done:
			return
		case <-timeout:
			return
		case <-h.unregister:
		case c := <-h.register:
			close(c.send) // joined while we were stopping
		}
	}
}
