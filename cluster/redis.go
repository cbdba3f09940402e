package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// prefix starts every channel and key the portal uses in its Redis
// database.
const prefix = "cardhour:"

// Timeouts: a replica that cannot reach Redis within these goes on alone.
const (
	opTimeout    = time.Second
	pingEvery    = time.Second // how often a replica cut off while subscribed asks again
	retryMin     = 200 * time.Millisecond
	retryMax     = 2 * time.Second
	receiveEvery = 2 * time.Second
)

// go-redis logs every failed dial on its own (a global logger, the
// library's only one): during an outage that is a line per call. The
// cluster warns once per outage instead.
var quietLibrary sync.Once

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// Redis shares through a Redis server: pub/sub for messages, INCR with
// an expiry for counters.
type Redis struct {
	id     string // this replica, so its own messages are not applied again
	client *redis.Client
	log    *slog.Logger
	addr   string // host:port, for messages (never the password)

	mu       sync.RWMutex
	handlers map[Topic][]func([]byte)
	rejoin   []func()

	stateMu sync.Mutex
	up      bool // connected: publishes and the subscription work
	warned  bool // the current outage was logged

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	psMu   sync.Mutex
	ps     *redis.PubSub // the subscription now, closed by Close to end a wait
}

// NewRedis connects to the Redis at url (redis://[:password@]host:port/db,
// or rediss://… for TLS) and starts listening. It does not wait for the
// server: until it answers, the replica works alone.
func NewRedis(url string, log *slog.Logger) (*Redis, error) {
	o, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = opTimeout, opTimeout, opTimeout
	o.MaxRetries = -1 // a failed call is an outage, not a reason to wait
	o.DialerRetries = 1
	quietLibrary.Do(func() { redis.SetLogger(discard{}) })
	o.PoolSize = 16
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	ctx, cancel := context.WithCancel(context.Background())
	r := &Redis{id: hex.EncodeToString(b), client: redis.NewClient(o), log: log, addr: o.Addr,
		handlers: map[Topic][]func([]byte){}, ctx: ctx, cancel: cancel, up: true}
	r.wg.Add(1)
	go r.listen()
	return r, nil
}

// ParseURL checks a CARDHOUR_REDIS value and returns its client options.
func ParseURL(url string) (*redis.Options, error) {
	if !strings.HasPrefix(url, "redis://") && !strings.HasPrefix(url, "rediss://") {
		return nil, errors.New("want redis://[:password@]host:port/db or rediss://… (TLS)")
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		// go-redis quotes the URL, password and all: say what is wrong without it.
		msg := err.Error()
		if i := strings.Index(msg, "redis: "); i >= 0 {
			msg = msg[i+len("redis: "):]
		}
		if strings.Contains(msg, url) || strings.Contains(msg, "@") {
			msg = "invalid URL"
		}
		return nil, fmt.Errorf("want redis://[:password@]host:port/db or rediss://… (TLS): %s", msg)
	}
	if u, err := neturl.Parse(url); err != nil || u.Hostname() == "" {
		return nil, errors.New("want redis://[:password@]host:port/db: no host")
	}
	return o, nil
}

// ID names this replica in its messages.
func (r *Redis) ID() string { return r.id }

// Publish sends data to the other replicas. A failure marks an outage.
func (r *Redis) Publish(ctx context.Context, topic Topic, data []byte) error {
	msg := make([]byte, 0, len(r.id)+1+len(data))
	msg = append(append(append(msg, r.id...), ' '), data...)
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := r.client.Publish(ctx, prefix+string(topic), msg).Err(); err != nil {
		r.down(err)
		return fmt.Errorf("%w: %v", ErrNotShared, err)
	}
	r.answered()
	return nil
}

// Subscribe adds fn for topic's messages from the other replicas.
func (r *Redis) Subscribe(topic Topic, fn func([]byte)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[topic] = append(r.handlers[topic], fn)
}

// OnRejoin adds fn, called after every outage once the replica is back.
func (r *Redis) OnRejoin(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejoin = append(r.rejoin, fn)
}

// Shared tells whether Redis answered last time.
func (r *Redis) Shared() bool {
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	return r.up
}

// Close stops listening and closes the connections.
func (r *Redis) Close() error {
	r.cancel()
	r.psMu.Lock()
	if r.ps != nil {
		_ = r.ps.Close()
	}
	r.psMu.Unlock()
	r.wg.Wait()
	return r.client.Close()
}

// down records an outage, warning once per outage.
func (r *Redis) down(err error) {
	if r.ctx.Err() != nil {
		return
	}
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	r.up = false
	if !r.warned {
		r.warned = true
		r.log.Warn("Redis (CARDHOUR_REDIS) unreachable: this replica goes on alone — its board shows only the samples it receives, "+
			"caches expire on their own, rate limits count per process — until Redis is back", "addr", r.addr, "err", err)
	}
}

// answered ends an outage a failed call began while the subscription
// stayed up.
func (r *Redis) answered() {
	r.stateMu.Lock()
	out := !r.up
	r.stateMu.Unlock()
	if out {
		r.rejoined()
	}
}

// rejoined records the end of an outage and tells the OnRejoin functions.
func (r *Redis) rejoined() {
	r.stateMu.Lock()
	was := r.warned
	r.up, r.warned = true, false
	r.stateMu.Unlock()
	if !was {
		return
	}
	r.log.Info("Redis (CARDHOUR_REDIS) reachable again: replicas share live state again", "addr", r.addr)
	r.mu.RLock()
	fns := append([]func(){}, r.rejoin...)
	r.mu.RUnlock()
	for _, fn := range fns {
		fn()
	}
}

// listen keeps a subscription to every topic, reconnecting after an
// outage with a backoff, and hands the other replicas' messages to the
// handlers.
func (r *Redis) listen() {
	defer r.wg.Done()
	wait := retryMin
	for r.ctx.Err() == nil {
		err := r.session()
		if r.ctx.Err() != nil {
			return
		}
		r.down(err)
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
		if err == nil {
			wait = retryMin
		}
	}
}

// session subscribes, then receives until the connection fails.
func (r *Redis) session() error {
	ps := r.client.PSubscribe(r.ctx, prefix+"*")
	r.psMu.Lock()
	r.ps = ps
	r.psMu.Unlock()
	defer func() {
		r.psMu.Lock()
		r.ps = nil
		r.psMu.Unlock()
		_ = ps.Close()
	}()
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	ctx, cancel := context.WithTimeout(r.ctx, opTimeout)
	_, err := ps.Receive(ctx) // the subscription's confirmation
	cancel()
	if err != nil {
		return err
	}
	r.rejoined()
	quiet := 0
	var probed time.Time
	for {
		wait := receiveEvery
		if !r.Shared() {
			// A call failed while the subscription stayed up (Redis stalled
			// rather than went away). Callers skip Redis while cut off, so
			// nothing else would find out that it answers again: ask here.
			if time.Since(probed) >= pingEvery {
				probed = time.Now()
				r.probe()
			}
			wait = pingEvery
		}
		msg, err := ps.ReceiveTimeout(r.ctx, wait)
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() && r.ctx.Err() == nil {
				// Nothing for a while: ask, and give up if no answer comes.
				if quiet++; quiet > 1 {
					return fmt.Errorf("no answer for %s", 2*wait)
				}
				pctx, pcancel := context.WithTimeout(r.ctx, opTimeout)
				err = ps.Ping(pctx)
				pcancel()
				if err == nil {
					continue
				}
			}
			return err
		}
		quiet = 0
		if m, ok := msg.(*redis.Message); ok {
			r.deliver(m)
		}
	}
}

// probe publishes nothing to nobody (a channel without handlers): the
// call that failed, tried again; an answer ends the outage.
func (r *Redis) probe() {
	ctx, cancel := context.WithTimeout(r.ctx, opTimeout)
	defer cancel()
	if r.client.Publish(ctx, prefix+"probe", r.id+" ").Err() == nil {
		r.answered()
	}
}

func (r *Redis) deliver(m *redis.Message) {
	sender, data, ok := bytes.Cut([]byte(m.Payload), []byte{' '})
	if !ok || string(sender) == r.id {
		return
	}
	topic := Topic(strings.TrimPrefix(m.Channel, prefix))
	r.mu.RLock()
	fns := r.handlers[topic]
	r.mu.RUnlock()
	for _, fn := range fns {
		fn(data)
	}
}

// Incr counts one under key (see Counter).
func (r *Redis) Incr(ctx context.Context, key string, window time.Duration) (int64, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	k := prefix + "count:" + key
	var incr *redis.IntCmd
	var ttl *redis.DurationCmd
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, k)
		ttl = p.PTTL(ctx, k)
		return nil
	})
	if err != nil {
		r.down(err)
		return 0, 0, fmt.Errorf("%w: %v", ErrNotShared, err)
	}
	left := ttl.Val()
	if left < 0 { // the first count (or an expiry lost): the window starts now
		if err := r.client.PExpire(ctx, k, window).Err(); err != nil {
			r.down(err)
			return 0, 0, fmt.Errorf("%w: %v", ErrNotShared, err)
		}
		left = window
	}
	return incr.Val(), left, nil
}

// Count reads key's count (see Counter).
func (r *Redis) Count(ctx context.Context, key string) (int64, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	k := prefix + "count:" + key
	var get *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, k)
		ttl = p.PTTL(ctx, k)
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return 0, 0, nil
	}
	if err != nil {
		r.down(err)
		return 0, 0, fmt.Errorf("%w: %v", ErrNotShared, err)
	}
	n, _ := get.Int64()
	return n, max(ttl.Val(), 0), nil
}

// Reset forgets key (see Counter).
func (r *Redis) Reset(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := r.client.Del(ctx, prefix+"count:"+key).Err(); err != nil {
		r.down(err)
		return fmt.Errorf("%w: %v", ErrNotShared, err)
	}
	return nil
}
