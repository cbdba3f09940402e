package cluster_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"cardhour/cluster"
)

// redisURL is the throwaway redis-server of scripts/testenv.sh.
func redisURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("CARDHOUR_TEST_REDIS")
	if u == "" {
		t.Skip("CARDHOUR_TEST_REDIS not set: run under scripts/testenv.sh (it starts a throwaway redis-server)")
	}
	return u
}

// ownRedis starts a redis-server of the test's own (scripts/redis-ctl.sh
// in a temporary directory), which it may stop and start without
// disturbing the other packages' tests on the shared one; ctl drives it.
func ownRedis(t *testing.T) (url string, ctl func(action string)) {
	t.Helper()
	script := os.Getenv("CARDHOUR_TEST_REDIS_CTL")
	if script == "" {
		t.Skip("CARDHOUR_TEST_REDIS_CTL not set: run under scripts/testenv.sh")
	}
	dir := t.TempDir()
	ctl = func(action string) {
		t.Helper()
		cmd := exec.Command(script, action)
		cmd.Env = append(os.Environ(), "CARDHOUR_TEST_REDIS_DIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("redis-ctl %s: %v\n%s", action, err, out)
		}
	}
	ctl("start")
	t.Cleanup(func() { ctl("stop") })
	port, err := os.ReadFile(dir + "/port")
	if err != nil {
		t.Fatal(err)
	}
	return "redis://127.0.0.1:" + strings.TrimSpace(string(port)) + "/0", ctl
}

// syncBuffer is a log both the cluster and the test touch.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type inbox struct {
	mu  sync.Mutex
	got []string
}

func (in *inbox) add(b []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.got = append(in.got, string(b))
}

func (in *inbox) all() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.got...)
}

func open(t *testing.T, url string, log *slog.Logger) *cluster.Redis {
	t.Helper()
	r, err := cluster.NewRedis(url, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// published sends until the others are subscribed (a subscription takes a
// moment to start).
func published(t *testing.T, r *cluster.Redis, topic cluster.Topic, msg string, got func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !got() {
		if time.Now().After(deadline) {
			t.Fatalf("%q never arrived", msg)
		}
		_ = r.Publish(context.Background(), topic, []byte(msg))
		time.Sleep(50 * time.Millisecond)
	}
}

func TestLocalSharesNothing(t *testing.T) {
	c, err := cluster.Open("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*cluster.Local); !ok || c.Shared() {
		t.Fatalf("Open(\"\") = %T shared=%v, want an unshared Local", c, c.Shared())
	}
	called := false
	c.Subscribe(cluster.TopicSamples, func([]byte) { called = true })
	if err := c.Publish(context.Background(), cluster.TopicSamples, []byte("x")); err != nil || called {
		t.Fatalf("Local publish: err %v, delivered to itself %v", err, called)
	}
	if _, ok := c.(cluster.Counter); ok {
		t.Fatal("Local must not offer shared counters: the rate limits stay per process")
	}
}

func TestParseURL(t *testing.T) {
	for _, ok := range []string{"redis://127.0.0.1:6379/0", "redis://:s3cret@redis.internal:6379/2", "rediss://user:pw@dcs.example:6380/0"} {
		if _, err := cluster.ParseURL(ok); err != nil {
			t.Errorf("ParseURL(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:6379", "http://x:1/0", "redis://:pw@host:6379/notadb", "redis://:topsecret@:6379/0"} {
		_, err := cluster.ParseURL(bad)
		if err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), ":pw@") {
			t.Errorf("ParseURL(%q) quotes the password: %v", bad, err)
		}
	}
}

// Every replica but the sender gets each message, once, in order.
func TestRedisPublishReachesOthersNotSelf(t *testing.T) {
	url := redisURL(t)
	a, b, c := open(t, url, nil), open(t, url, nil), open(t, url, nil)
	var ina, inb, inc inbox
	a.Subscribe(cluster.TopicSamples, ina.add)
	b.Subscribe(cluster.TopicSamples, inb.add)
	c.Subscribe(cluster.TopicSamples, inc.add)
	var other inbox
	b.Subscribe(cluster.TopicInvalidate, other.add)
	published(t, a, cluster.TopicSamples, "hello", func() bool { return len(inb.all()) > 0 && len(inc.all()) > 0 })
	for i := range 50 {
		if err := a.Publish(context.Background(), cluster.TopicSamples, []byte{byte('0' + i%10)}); err != nil {
			t.Fatal(err)
		}
	}
	// The numbered ones, without the greetings that were still on their way.
	numbered := func(in *inbox) []string {
		var out []string
		for _, m := range in.all() {
			if m != "hello" {
				out = append(out, m)
			}
		}
		return out
	}
	waitFor(t, 3*time.Second, "50 messages at b and c", func() bool { return len(numbered(&inb)) == 50 && len(numbered(&inc)) == 50 })
	for i, m := range numbered(&inb) {
		if m != string(rune('0'+i%10)) {
			t.Fatalf("message %d = %q: out of order", i, m)
		}
	}
	if n := len(ina.all()); n != 0 {
		t.Fatalf("the sender got %d of its own messages back", n)
	}
	if n := len(other.all()); n != 0 {
		t.Fatalf("another topic's handler got %d sample messages", n)
	}
}

func TestRedisCounter(t *testing.T) {
	url := redisURL(t)
	a, b := open(t, url, nil), open(t, url, nil)
	ctx := context.Background()
	key := "test:" + a.ID()
	for i := 1; i <= 3; i++ {
		r := a
		if i%2 == 0 {
			r = b
		}
		n, left, err := r.Incr(ctx, key, time.Minute)
		if err != nil || n != int64(i) || left <= 0 || left > time.Minute {
			t.Fatalf("Incr %d: n %d left %s err %v", i, n, left, err)
		}
	}
	if n, left, err := b.Count(ctx, key); err != nil || n != 3 || left <= 0 {
		t.Fatalf("Count: %d %s %v", n, left, err)
	}
	if err := a.Reset(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n, _, err := b.Count(ctx, key); err != nil || n != 0 {
		t.Fatalf("Count after Reset: %d %v", n, err)
	}
	// The window ends by itself.
	if _, _, err := a.Incr(ctx, key, 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the window to expire", func() bool { n, _, _ := b.Count(ctx, key); return n == 0 })
}

// An outage: publishing fails fast (never hangs ingest), one warning is
// logged however many calls fail, and once Redis is back the replicas
// rejoin by themselves, tell OnRejoin and share again.
func TestRedisOutageAndRecovery(t *testing.T) {
	url, redisCtl := ownRedis(t)
	var log syncBuffer
	a := open(t, url, slog.New(slog.NewTextHandler(&log, nil)))
	b := open(t, url, nil)
	var inb inbox
	b.Subscribe(cluster.TopicInvalidate, inb.add)
	var rejoined sync.WaitGroup
	rejoined.Add(1)
	var once sync.Once
	a.OnRejoin(func() { once.Do(rejoined.Done) })
	published(t, a, cluster.TopicInvalidate, "before", func() bool { return len(inb.all()) > 0 })

	redisCtl("stop")
	start := time.Now()
	failures := 0
	for range 20 {
		if err := a.Publish(context.Background(), cluster.TopicInvalidate, []byte("during")); err != nil {
			failures++
		}
		if _, _, err := a.Incr(context.Background(), "test:outage", time.Minute); err == nil {
			t.Fatal("Incr succeeded with Redis stopped")
		}
	}
	if failures != 20 {
		t.Fatalf("%d of 20 publishes failed with Redis stopped", failures)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("40 calls against a stopped Redis took %s: an outage must fail fast", d)
	}
	if a.Shared() {
		t.Fatal("Shared() during the outage")
	}
	waitFor(t, 5*time.Second, "the subscription to notice", func() bool { return strings.Contains(log.String(), "unreachable") })
	time.Sleep(3 * time.Second) // reconnect attempts meanwhile
	if n := strings.Count(log.String(), "unreachable"); n != 1 {
		t.Fatalf("%d outage warnings, want one per outage:\n%s", n, log.String())
	}

	redisCtl("start")
	done := make(chan struct{})
	go func() { rejoined.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("no rejoin 10 s after Redis came back:\n%s", log.String())
	}
	if !a.Shared() {
		t.Fatal("not Shared() after the rejoin")
	}
	if !strings.Contains(log.String(), "reachable again") {
		t.Fatalf("no recovery line in the log:\n%s", log.String())
	}
	before := len(inb.all())
	published(t, a, cluster.TopicInvalidate, "after", func() bool { return len(inb.all()) > before })
	for _, m := range inb.all() {
		if m == "during" {
			t.Fatal("a message published during the outage arrived")
		}
	}
}

// Close ends the subscription's wait at once: a replica's shutdown does
// not wait on Redis.
func TestRedisCloseIsPrompt(t *testing.T) {
	r, err := cluster.NewRedis(redisURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // subscribed and waiting
	start := time.Now()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("Close took %s", d)
	}
}

// A stall rather than an outage: Redis holds writes (CLIENT PAUSE WRITE,
// as a failover or a busy server does) longer than a publish waits, while
// the subscription stays up. The publish fails fast and marks the outage;
// once the stall is over the replica shares again by itself — no other
// call has to succeed first, since callers skip publishing while cut off.
func TestRedisStallEndsByItself(t *testing.T) {
	url, _ := ownRedis(t)
	var log syncBuffer
	a := open(t, url, slog.New(slog.NewTextHandler(&log, nil)))
	b := open(t, url, nil)
	var inb inbox
	b.Subscribe(cluster.TopicSamples, inb.add)
	published(t, a, cluster.TopicSamples, "before", func() bool { return len(inb.all()) > 0 })

	o, err := cluster.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(o)
	defer admin.Close()
	const stall = 1500 * time.Millisecond
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", stall.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := a.Publish(context.Background(), cluster.TopicSamples, []byte("stalled")); err == nil {
		t.Fatal("a publish went through while Redis held writes")
	}
	if d := time.Since(began); d > stall {
		t.Fatalf("a stalled publish took %s: it must give up before the stall ends", d)
	}
	if a.Shared() {
		t.Fatal("Shared() after a publish failed")
	}
	// Callers publish only while Shared(): the replica must find out itself.
	waitFor(t, stall+5*time.Second, "the replica to share again after the stall", a.Shared)
	t.Logf("shared again %s after the stall began (it lasted %s)", time.Since(began).Round(10*time.Millisecond), stall)
	before := len(inb.all())
	published(t, a, cluster.TopicSamples, "after", func() bool { return len(inb.all()) > before })
	if n := strings.Count(log.String(), "unreachable"); n != 1 {
		t.Fatalf("%d outage warnings for one stall, want 1:\n%s", n, log.String())
	}
	if n := strings.Count(log.String(), "reachable again"); n != 1 {
		t.Fatalf("%d rejoin lines for one stall, want 1:\n%s", n, log.String())
	}
}
