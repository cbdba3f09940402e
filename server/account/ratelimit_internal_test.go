package account

import (
	"context"
	"os"
	"testing"
	"time"

	"cardhour/cluster"
)

// With Redis, failed logins spread over three replicas count together: the
// tenth failure on any of them blocks the key on all; a success on one
// clears it on all. Without Redis each process counts its own.
func TestLoginLimitCountsAcrossReplicas(t *testing.T) {
	url := os.Getenv("CARDHOUR_TEST_REDIS")
	if url == "" {
		t.Skip("CARDHOUR_TEST_REDIS not set: run under scripts/testenv.sh (it starts a throwaway redis-server)")
	}
	ctx := context.Background()
	limiters := make([]*loginLimiter, 3)
	for i := range limiters {
		r, err := cluster.NewRedis(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		limiters[i] = newLoginLimiter(10, time.Minute)
		limiters[i].shared = r
	}
	key := "mallory|203.0.113.9|" + time.Now().Format(time.RFC3339Nano)
	blocked := func(l *loginLimiter) bool { return max(l.blocked(key), l.blockedShared(ctx, key)) > 0 }
	for i := range 9 {
		l := limiters[i%3]
		l.fail(key)
		l.failShared(ctx, key)
	}
	for i, l := range limiters {
		if blocked(l) {
			t.Fatalf("replica %d blocks after 9 failures", i)
		}
	}
	limiters[0].fail(key)
	limiters[0].failShared(ctx, key)
	for i, l := range limiters {
		if !blocked(l) {
			t.Errorf("replica %d lets the key try after 10 failures spread over the replicas (3–4 each)", i)
		}
	}
	limiters[2].reset(key)
	limiters[2].resetShared(ctx, key)
	if blocked(limiters[1]) {
		t.Error("a success on one replica did not clear the shared count")
	}
}
