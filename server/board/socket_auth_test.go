package board_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"cardhour/server/servertest"
	"cardhour/store"
)

// closeRevoked is the close code the portal hangs up with when a socket's
// credential went (server/board/guard.go).
const closeRevoked = 4401

// watcher is an open board socket read until the portal hangs up.
type watcher struct {
	name   string
	frames atomic.Int64
	done   chan error // the read error that ended it
}

// watch dials the board socket and reads it in the background.
func (fe *fleetEnv) watch(t *testing.T, name, query string, header http.Header) *watcher {
	t.Helper()
	c, res, err := fe.dial(t, query, header)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("%s: dial: %v (status %d)", name, err, status)
	}
	t.Cleanup(func() { _ = c.Close() })
	w := &watcher{name: name, done: make(chan error, 1)}
	go func() {
		for {
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			if _, _, err := c.ReadMessage(); err != nil {
				w.done <- err
				return
			}
			w.frames.Add(1)
		}
	}()
	return w
}

// mustClose waits for the portal to hang up on w with closeRevoked.
func (w *watcher) mustClose(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-w.done:
		if !websocket.IsCloseError(err, closeRevoked) {
			t.Errorf("%s: the socket ended with %v, want close code %d", w.name, err, closeRevoked)
		}
	case <-time.After(within):
		t.Errorf("%s: the socket is still open %s after its credential went (%d frames received)", w.name, within, w.frames.Load())
	}
}

// mustStayOpen checks that w is open and still receiving frames: the
// board's heartbeat brings one every few seconds (a loaded CI box can be
// seconds late, hence the margin).
func (w *watcher) mustStayOpen(t *testing.T) { t.Helper(); w.framesAfter(t, w.frames.Load()) }

// ready waits for the snapshot every socket starts with.
func (w *watcher) ready(t *testing.T) { t.Helper(); w.framesAfter(t, 0) }

func (w *watcher) framesAfter(t *testing.T, before int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-w.done:
			t.Fatalf("%s: closed although its credential is valid: %v", w.name, err)
		case <-time.After(50 * time.Millisecond):
		}
		if w.frames.Load() > before {
			return
		}
	}
	t.Errorf("%s: no frame for 10 s", w.name)
}

func sessionHeader(c *servertest.Client) http.Header {
	return http.Header{"Cookie": {"cardhour_session=" + c.Cookie("cardhour_session")}}
}

// TestBoardSocketsCloseWhenTheirCredentialGoes: an open board socket is
// closed (4401) within seconds of its board token being revoked, its API
// token being revoked, or its user being disabled — each through the
// portal's own routes — while the sockets of other credentials go on
// receiving frames. The unprompted re-check is an hour here, so only the
// invalidation signal can close them this fast.
func TestBoardSocketsCloseWhenTheirCredentialGoes(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	fe.Srv.Board().SetCredentialCheck(time.Hour)
	stop := fe.Srv.Board().Start(context.Background())
	t.Cleanup(stop)
	ctx := fe.AdminCtx()
	wallTok, wallSecret, err := fe.St.CreateTelemetryToken(ctx, store.TokenBoard, "lobby")
	if err != nil {
		t.Fatal(err)
	}
	member := fe.Users[store.RoleMember]
	memberToks, err := fe.St.FindAPITokens(ctx, member.ID)
	if err != nil || len(memberToks) != 1 {
		t.Fatalf("member's tokens: %v, %v", memberToks, err)
	}
	viewer := fe.LoggedIn(store.RoleViewer)
	admin := fe.LoggedIn(store.RoleAdmin)

	lobby := fe.watch(t, "board token", "?token="+wallSecret, nil)
	other := fe.watch(t, "another board token", "?token="+fe.boardTok, nil)
	byToken := fe.watch(t, "member's API token", "", http.Header{"Authorization": {"Bearer " + member.Token}})
	bySession := fe.watch(t, "viewer's session", "", sessionHeader(viewer))
	for _, w := range []*watcher{lobby, other, byToken, bySession} {
		w.ready(t)
	}

	if r := admin.PostForm(fmt.Sprintf("/admin/telemetry/tokens/%d/revoke", wallTok.ID), nil, true); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke the board token: %d\n%s", r.StatusCode, r)
	}
	lobby.mustClose(t, 3*time.Second)

	m := fe.LoggedIn(store.RoleMember)
	if r := m.PostForm(fmt.Sprintf("/account/tokens/%d/revoke", memberToks[0].ID), nil, true); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke the member's token: %d\n%s", r.StatusCode, r)
	}
	byToken.mustClose(t, 3*time.Second)

	r := admin.APICall(http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", fe.Users[store.RoleViewer].ID), fe.Users[store.RoleAdmin].Token, `{"disabled":true}`)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("disable the viewer: %d\n%s", r.StatusCode, r)
	}
	bySession.mustClose(t, 3*time.Second)

	other.mustStayOpen(t)
	if _, res, err := fe.dial(t, "?token="+wallSecret, nil); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked board token dials again: %v", err)
	}
}

// TestBoardSocketClosesAfterLogout: logging out raises no change to signal,
// so the unprompted re-check closes the session's socket — here within a
// few of its (shortened) rounds — while the same user's API-token socket,
// a credential the logout did not end, stays.
func TestBoardSocketClosesAfterLogout(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	fe.Srv.Board().SetCredentialCheck(200 * time.Millisecond)
	stop := fe.Srv.Board().Start(context.Background())
	t.Cleanup(stop)
	manager := fe.LoggedIn(store.RoleManager)
	bySession := fe.watch(t, "manager's session", "", sessionHeader(manager))
	byToken := fe.watch(t, "manager's API token", "", http.Header{"Authorization": {"Bearer " + fe.Users[store.RoleManager].Token}})
	bySession.ready(t)
	byToken.ready(t)

	if r := manager.PostForm("/logout", nil, true); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d\n%s", r.StatusCode, r)
	}
	bySession.mustClose(t, 3*time.Second)
	byToken.mustStayOpen(t)
}
