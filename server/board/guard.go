package board

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
)

// A board socket is admitted once, at the upgrade, but stays open for days
// on a wall. Its credential can go meanwhile — a board token revoked, a
// session logged out or expired, a user disabled or their API token
// revoked — and the socket must not go on receiving frames: the guard asks
// each open socket's credential again, at once when a token or user
// changed (the store's change, or another replica's through the cluster:
// Forget), and every credCheckEvery in any case (a logout or an expiry
// raises no change), and hangs up on those refused.

// credCheckEvery is how often every open socket's credential is asked
// again without a change to prompt it: the longest a logged-out or expired
// session's socket stays open.
const credCheckEvery = 5 * time.Second

// closeRevoked is the close code of a socket whose credential went: in the
// range RFC 6455 leaves to applications, 4000 + HTTP's 401.
const closeRevoked = 4401

// credential is what let a socket in, kept so it can be asked again.
type credential struct {
	// key is the same for sockets on one credential (a wall of boards on one
	// board token), so each is asked once per round; it holds the secret's
	// hash, never the secret.
	key string
	// check answers nil while the credential admits its holder.
	check func(ctx context.Context) error
}

// socketCredential is how the caller boardAuth admitted proved who they
// are. A caller whose proof it cannot tell gets a credential that always
// fails: the socket then closes at the first check instead of staying open
// unwatched.
func (a *Area) socketCredential(c echo.Context, v boardViewer) credential {
	st := a.Store
	if v.token != "" {
		tok := v.token
		return credential{key: "board " + store.HashSecret(tok), check: func(ctx context.Context) error {
			_, err := st.FindTelemetryToken(ctx, store.TokenBoard, tok)
			return err
		}}
	}
	switch request.AuthKind(c) {
	case request.ByToken:
		if secret, ok := request.BearerToken(c.Request()); ok {
			return credential{key: "token " + store.HashSecret(secret), check: func(ctx context.Context) error {
				_, _, err := st.FindTokenUser(ctx, secret)
				return err
			}}
		}
	case request.BySession:
		if secret, ok := request.SessionToken(c); ok {
			return credential{key: "session " + store.HashSecret(secret), check: func(ctx context.Context) error {
				_, err := st.FindSessionUser(ctx, secret)
				return err
			}}
		}
	}
	return credential{key: "unknown", check: func(context.Context) error {
		return errs.E(errs.Unauthorized, "server.socketCredential", "auth.required")
	}}
}

// askRecheck wakes the guard now: a token or a user changed.
func (l *live) askRecheck() {
	select {
	case l.recheck <- struct{}{}:
	default:
	}
}

// guardSockets asks the open sockets' credentials again every interval and
// whenever woken, until ctx ends.
func (l *live) guardSockets(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-l.recheck:
		}
		l.checkSockets(ctx)
	}
}

// checkSockets asks each credential of the open sockets once and expels
// the sockets of those refused. A credential that cannot be asked (the
// database unreachable) keeps its sockets: an outage must not blank every
// wall, and the next round asks again.
func (l *live) checkSockets(ctx context.Context) {
	h := l.hub
	byCred := map[string][]*client{}
	checks := map[string]func(context.Context) error{}
	for _, c := range h.clients(ctx) {
		if c.cred.check == nil {
			continue
		}
		byCred[c.cred.key] = append(byCred[c.cred.key], c)
		checks[c.cred.key] = c.cred.check
	}
	for key, check := range checks {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := check(cctx)
		cancel()
		switch {
		case err == nil:
			continue
		case !refused(err):
			if ctx.Err() == nil {
				l.a.Log.Warn("board sockets' credentials not checked", "err", err)
			}
			return // the rest would wait on the same unreachable database
		}
		for _, c := range byCred[key] {
			h.expel(ctx, c, closeRevoked, "credentials revoked or expired")
		}
	}
}

// refused tells a credential that no longer admits anyone from a check that
// could not be made.
func refused(err error) bool {
	return errs.Is(err, errs.Unauthorized) || errs.Is(err, errs.NotFound) || errs.Is(err, errs.Forbidden)
}
