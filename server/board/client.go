package board

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// client is one board connection. The hub owns its send queue; readPump
// and writePump are its only goroutines, and only writePump writes to the
// connection.
type client struct {
	hub  *hub
	conn *websocket.Conn
	send chan frame
	// cred is what let the client in, asked again while it stays
	// (guard.go); zero for clients no credential admitted (the hub's tests).
	cred credential
	// Set by the hub before it closes send; the close of the channel
	// publishes them to writePump.
	closeCode int
	closeText string
}

// upgrader builds the websocket upgrader: buffers shared through a pool (500
// idle boards should not hold 500 write buffers), no compression (each frame
// is encoded once for every client; per-client deflate would multiply the
// work), and the origin check.
func (a *Area) upgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		ReadBufferSize:  512,
		WriteBufferSize: 4096,
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     a.sameOrigin,
	}
}

// sameOrigin refuses cross-site websocket connections: a page elsewhere must
// not ride on a viewer's session cookie. Clients that send no Origin (agents,
// scripts, the load generator) are not browsers and need none.
func (a *Area) sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	if a.Config.BaseURL != "" {
		if b, err := url.Parse(a.Config.BaseURL); err == nil && strings.EqualFold(u.Host, b.Host) {
			return true
		}
	}
	return false
}

// readPump reads (and discards) what the board sends, which is nothing but
// pongs; it notices a dead peer by its missed pongs and unregisters.
func (c *client) readPump() {
	defer func() {
		c.hub.leave(c)
		_ = c.conn.Close()
		c.hub.pumps.Done()
	}()
	o := c.hub.opts
	c.conn.SetReadLimit(o.readLimit)
	_ = c.conn.SetReadDeadline(time.Now().Add(o.pongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(o.pongWait))
	})
	for {
		if _, _, err := c.conn.ReadMessage(); err != nil {
			return
		}
	}
}

// writePump writes queued frames and pings, each under a write deadline.
// When the hub closes the queue it sends a close frame with the hub's
// reason and hangs up.
func (c *client) writePump() {
	o := c.hub.opts
	ticker := time.NewTicker(o.pingPeriod)
	defer func() {
		ticker.Stop()
		_ = c.conn.Close()
		c.hub.pumps.Done()
	}()
	for {
		select {
		case f, ok := <-c.send:
			_ = c.conn.SetWriteDeadline(time.Now().Add(o.writeWait))
			if !ok {
				code := c.closeCode
				if code == 0 {
					code = websocket.CloseNormalClosure
				}
				_ = c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, c.closeText))
				return
			}
			if err := c.conn.WritePreparedMessage(f.pm); err != nil {
				return
			}
			if !f.since.IsZero() {
				c.hub.metrics.latency.Observe(time.Since(f.since).Seconds())
			}
		case <-ticker.C:
			_ = c.conn.SetWriteDeadline(time.Now().Add(o.writeWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}
