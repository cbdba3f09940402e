package board

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"cardhour/errs"
	"cardhour/server/area"
	"cardhour/telemetry"
)

// TestGuardKeepsSocketsWhenTheirCredentialCannotBeAsked: while the
// database is unreachable the checks fail with Unavailable, and the walls
// stay lit; once it answers that the credential went, the socket closes —
// and one credential is asked once however many sockets share it.
func TestGuardKeepsSocketsWhenTheirCredentialCannotBeAsked(t *testing.T) {
	t.Parallel()
	fl := telemetry.NewFleet(telemetry.Options{})
	h := newHub(fl, func() []telemetry.AlertView { return nil }, newBoardMetrics(prometheus.NewRegistry(), fl), defaultHubOptions())
	ctx, cancel := context.WithCancel(context.Background())
	go h.run(ctx)
	t.Cleanup(func() { cancel(); <-h.done })

	var answer atomic.Pointer[error]
	var asked atomic.Int64
	var down error = errs.E(errs.Unavailable, "test", "error.unavailable")
	answer.Store(&down)
	cred := credential{key: "board shared", check: func(context.Context) error { asked.Add(1); return *answer.Load() }}
	s := &Area{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := s.upgraderFor().Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c := &client{hub: h, conn: conn, send: make(chan frame, h.opts.sendBuffer), cred: cred}
		h.pumps.Add(2)
		go c.writePump()
		go c.readPump()
		if !h.join(c) {
			close(c.send)
		}
	}))
	t.Cleanup(ts.Close)
	var conns []*websocket.Conn
	for range 3 {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		read(t, c) // the snapshot: the hub has it
		conns = append(conns, c)
	}

	l := &live{a: &Area{Deps: area.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}, hub: h}
	l.checkSockets(ctx)
	if n := asked.Load(); n != 1 {
		t.Errorf("one credential of three sockets was asked %d times, want once", n)
	}
	if n := len(h.clients(ctx)); n != 3 {
		t.Fatalf("%d sockets left after a check that could not be made, want all 3", n)
	}

	var gone error = errs.E(errs.Unauthorized, "test", "auth.token_invalid")
	answer.Store(&gone)
	l.checkSockets(ctx)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				if !websocket.IsCloseError(err, closeRevoked) {
					t.Errorf("socket %d ended with %v, want close code %d", i, err, closeRevoked)
				}
				break
			}
		}
	}
}
