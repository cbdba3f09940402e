package ldap

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"cardhour/errs"
)

// conn is one connection to the directory, dialled for one call.
type conn struct {
	l       *goldap.Conn
	raw     net.Conn
	ctx     context.Context
	timeout time.Duration
	stop    func() bool
}

// dial connects (TLS for ldaps://, StartTLS when asked for ldap://) within
// the timeout and ctx. Cancelling ctx closes the connection, so no call
// outlives its request.
func (d *Directory) dial(ctx context.Context) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(dctx, "tcp", d.addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", d.addr, err)
	}
	c := &conn{raw: raw, ctx: ctx, timeout: d.cfg.Timeout}
	var nc net.Conn = raw
	if d.tls {
		tc := tls.Client(raw, d.tlsc)
		if err := tc.HandshakeContext(dctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", d.addr, err)
		}
		nc = tc
	}
	c.l = goldap.NewConn(nc, d.tls)
	c.l.Start()
	c.l.SetTimeout(d.cfg.Timeout)
	c.stop = context.AfterFunc(ctx, func() { c.l.Close() })
	if !d.tls && d.cfg.StartTLS {
		if err := c.step(func() error { return c.l.StartTLS(d.tlsc) }); err != nil {
			c.close()
			return nil, fmt.Errorf("StartTLS with %s: %w", d.addr, err)
		}
	}
	return c, nil
}

// step runs one operation under a fresh deadline on the socket: the
// library has no timeout of its own for the StartTLS answer and handshake,
// and a directory that accepts and then stalls must fail like one that is
// down. The deadline never reaches past ctx's.
func (c *conn) step(f func() error) error {
	deadline := time.Now().Add(c.timeout)
	if d, ok := c.ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := c.raw.SetDeadline(deadline); err != nil {
		return err
	}
	err := f()
	if cerr := c.ctx.Err(); err != nil && cerr != nil {
		return fmt.Errorf("%w (%w)", cerr, err)
	}
	return err
}

func (c *conn) close() {
	c.stop()
	c.l.Close()
}

// bind binds as dn. An empty password is refused here, whatever the
// caller: LDAP takes a simple bind with a DN and no password as an
// unauthenticated bind, which "succeeds" without checking anything.
func (c *conn) bind(dn, password string) error {
	if password == "" {
		return errEmptyPassword
	}
	return c.step(func() error { return c.l.Bind(dn, password) })
}

var errEmptyPassword = errors.New("empty password")

// bindService binds as the service account, or stays anonymous.
func (d *Directory) bindService(c *conn) error {
	if d.cfg.BindDN == "" {
		return nil
	}
	if err := c.bind(d.cfg.BindDN, d.cfg.BindPassword); err != nil {
		return fmt.Errorf("bind as the service account %s: %w", d.cfg.BindDN, err)
	}
	return nil
}

// unavailable is the error for a directory the portal cannot use: down,
// too slow, a TLS failure, or the service account refused. It is never the
// user's fault, and never a reason to think the user is gone.
func unavailable(op string, err error) error {
	return &errs.Error{Code: errs.Unavailable, Op: op, Key: "directory.unreachable", Err: err}
}

// badCredentials is the one answer for a wrong password, an unknown or
// ambiguous login and an empty password, so a caller cannot tell which.
func badCredentials(op string, err error) error {
	return &errs.Error{Code: errs.Unauthorized, Op: op, Key: "auth.bad_credentials", Err: err}
}

// refusedBind tells whether the directory answered a user's bind with a
// refusal of the person (wrong password, account locked or disabled)
// rather than failing itself.
func refusedBind(err error) bool {
	return goldap.IsErrorAnyOf(err,
		goldap.LDAPResultInvalidCredentials,
		goldap.LDAPResultInappropriateAuthentication,
		goldap.LDAPResultInsufficientAccessRights,
		goldap.LDAPResultUnwillingToPerform,
		goldap.LDAPResultConstraintViolation, // ppolicy: locked
	)
}
