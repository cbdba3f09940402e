// Package cluster is what the portal's replicas share: telemetry samples
// (each batch published once by the replica that received it and applied
// by every other), cache invalidations, and counters for rate limits.
//
// In process (Local, the default) there is no one to share with: one
// process needs nothing more, and behaves exactly as it always did. With
// CARDHOUR_REDIS the replicas share through Redis pub/sub and counters
// (Redis). A Redis outage never stops booking or ingest: each replica goes
// on alone (its caches fall back to their short lifetimes, its rate limits
// to its own count), warns once, and rejoins by itself.
package cluster

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Topic names a kind of message the replicas share.
type Topic string

// Topics.
const (
	// TopicSamples carries telemetry batches (board.live's encoding).
	TopicSamples Topic = "samples"
	// TopicInvalidate carries what changed (Change), for caches to forget.
	TopicInvalidate Topic = "invalidate"
)

// Cluster is the replicas' shared state.
type Cluster interface {
	// Publish sends data on topic to every other replica — never back to
	// this one, which has already acted on it. An error means the others
	// did not get it; the caller carries on regardless.
	Publish(ctx context.Context, topic Topic, data []byte) error
	// Subscribe calls fn with every message another replica publishes on
	// topic, one at a time, in the order received. Subscribe before the
	// messages are wanted; fn must not block for long.
	Subscribe(topic Topic, fn func(data []byte))
	// OnRejoin calls fn whenever this replica is connected to the others
	// again after an outage (messages published meanwhile are lost, so
	// caches should forget everything).
	OnRejoin(fn func())
	// Shared tells whether messages reach the other replicas now.
	Shared() bool
	// Close stops sharing.
	Close() error
}

// Counter is implemented by clusters whose counters are shared (Redis):
// fixed windows of counts, for rate limits across replicas.
type Counter interface {
	// Shared tells whether the counters are reachable now (callers skip
	// them during an outage rather than wait on each call).
	Shared() bool
	// Incr counts one under key and returns the count in key's window
	// (which starts with the first count and lasts window) and what is
	// left of the window.
	Incr(ctx context.Context, key string, window time.Duration) (n int64, left time.Duration, err error)
	// Count reads key's count and what is left of its window.
	Count(ctx context.Context, key string) (n int64, left time.Duration, err error)
	// Reset forgets key.
	Reset(ctx context.Context, key string) error
}

// ErrNotShared is what a shared operation answers while the replicas are
// cut off from each other.
var ErrNotShared = errors.New("cluster: replicas not connected (Redis unreachable)")

// Open returns the cluster for url: Local when it is empty, else Redis
// (redis://[:password@]host:port/db or rediss://… for TLS). It does not
// wait for Redis: an unreachable one is an outage, warned about and
// recovered from.
func Open(url string, log *slog.Logger) (Cluster, error) {
	if url == "" {
		return NewLocal(), nil
	}
	return NewRedis(url, log)
}

// Local is the cluster of one process: nothing to publish to, nobody to
// hear from.
type Local struct{}

// NewLocal returns the in-process cluster.
func NewLocal() *Local { return &Local{} }

// Publish has nobody to send to.
func (*Local) Publish(context.Context, Topic, []byte) error { return nil }

// Subscribe never calls fn: no other replica publishes.
func (*Local) Subscribe(Topic, func([]byte)) {}

// OnRejoin never calls fn: one process is never cut off.
func (*Local) OnRejoin(func()) {}

// Shared is false: there are no other replicas.
func (*Local) Shared() bool { return false }

// Close does nothing.
func (*Local) Close() error { return nil }
