package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"cardhour/cluster"
	"cardhour/server/servertest"
	"cardhour/store/storetest"
)

// Log lines of the cluster (cluster/redis.go) that the test counts.
const (
	redisDownLine = "Redis (CARDHOUR_REDIS) unreachable"
	redisUpLine   = "Redis (CARDHOUR_REDIS) reachable again"
)

// TestReplicasRideOutRedisOutage is the acceptance for a Redis
// outage under running replicas: three `serve` processes on one MariaDB
// share a redis-server of the test's own, and bookings are made and
// released on all three in a loop while it is killed. Booking never stops
// (no 5xx, no "busy"), /readyz stays ready, each replica warns once for the
// outage (not once per call), and a push still reaches the board of the
// replica that took it — only that one's. Started again on the same port,
// Redis is rejoined by every replica by itself: a push to one is seen live
// on another's board within seconds, each replica says so once, and an
// agent token revoked on one replica is refused by the others at once
// again (their caches would keep it 15 s).
func TestReplicasRideOutRedisOutage(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvMySQL) == "" {
		t.Skip("Redis outage test skipped: " + storetest.EnvMySQL + " is not set; run it with `scripts/testenv.sh go test -count=1 -run TestReplicasRideOutRedisOutage ./server/`")
	}
	redis := servertest.StartRedis(t)
	bin := servertest.BuildBinary(t, "..")
	dsn, _ := storetest.MySQLDSN(t)
	vars := map[string]string{
		"CARDHOUR_DB": "mysql://" + dsn, "CARDHOUR_DEMO": "false", "CARDHOUR_ADMIN_PASSWORD": servertest.AdminPassword,
		"CARDHOUR_LOG_LEVEL": "info", "CARDHOUR_SIMULATOR": "false", "CARDHOUR_REDIS": redis.URL,
	}
	replicas := servertest.StartReplicas(t, bin, 3, vars)
	url := func(i int) string { return replicas[i].URL }
	admin := servertest.CLIToken(t, bin, vars, "admin")
	api := func(i int, token, method, path string, body any, want int) map[string]any {
		t.Helper()
		return servertest.MustCallJSON(t, url(i), token, method, path, body, want)
	}
	id := servertest.ID

	// One host of four cards; the pushes report its first.
	const cards = 4
	uuids := make([]string, cards)
	api(0, admin, http.MethodPost, "/api/v1/card-types", map[string]any{"name": "RO-H100", "vram_gib": 80, "tflops_bf16": 989, "price_fen": 1500}, http.StatusCreated)
	host := api(1, admin, http.MethodPost, "/api/v1/hosts", map[string]any{"name": "ro-01", "zone": "bj"}, http.StatusCreated)
	for i := range cards {
		uuids[i] = fmt.Sprintf("GPU-0000ee%02d-0000-0000-0000-000000000000", i)
		api(2, admin, http.MethodPost, "/api/v1/cards", map[string]any{"uuid": uuids[i], "index": i, "host_id": id(host), "card_type": "RO-H100"}, http.StatusCreated)
	}
	team := api(0, admin, http.MethodPost, "/api/v1/teams", map[string]any{"name": "ro-team"}, http.StatusCreated)
	user := api(1, admin, http.MethodPost, "/api/v1/users", map[string]any{"username": "ro-member", "password": "ro-password-1", "role": "member"}, http.StatusCreated)
	api(2, admin, http.MethodPut, fmt.Sprintf("/api/v1/teams/%d/members/%d", id(team), id(user)), map[string]any{"role": "member"}, http.StatusOK)
	now := time.Now().UTC()
	api(0, admin, http.MethodPost, "/api/v1/quotas", map[string]any{"team": "ro-team", "card_type": "RO-H100", "card_hours": 10000, "max_cards": 0,
		"valid_from": now.Add(-time.Hour).Format(time.RFC3339), "expires_at": now.Add(30 * 24 * time.Hour).Format(time.RFC3339)}, http.StatusCreated)
	member := servertest.CLIToken(t, bin, vars, "ro-member")
	task := api(1, member, http.MethodPost, "/api/v1/tasks", map[string]any{"team": "ro-team", "name": "ro-train", "priority": "normal",
		"estimate_card_hours": 100, "data_readiness": "ready"}, http.StatusCreated)
	agent := api(0, admin, http.MethodPost, "/api/v1/agent-tokens", map[string]any{"name": "ro-agent", "hosts": []string{"ro-01"}}, http.StatusCreated)
	secret := agent["token"].(string)
	body := servertest.NvidiaSMIPush(t, "../telemetry/testdata/real/nvidia-smi_h100-80gb-hbm3_590.48.01_load_query-gpu.csv", uuids[:1])
	card := uuids[0]

	// push sends the card's sample to replica i and returns when it left.
	push := func(i int) time.Time {
		t.Helper()
		sent := time.Now()
		if status, raw := servertest.Push(t, url(i), secret, "ro-01", body); status != http.StatusOK {
			t.Fatalf("push to r%d: %d %s", i, status, raw)
		}
		return sent
	}
	// seen tells whether replica j's board has the card's sample of sent or later.
	seen := func(j int, sent time.Time) bool {
		c, ok := servertest.FleetCards(t, url(j), admin)[card]
		return ok && c.Registered && !c.LastSample.Before(sent)
	}
	// shared waits until a push to i is seen on j's board; it returns how long that took.
	shared := func(i, j int, within time.Duration) time.Duration {
		t.Helper()
		began := time.Now()
		for {
			sent := push(i)
			for range 5 {
				if seen(j, sent) {
					return time.Since(began)
				}
				time.Sleep(40 * time.Millisecond)
			}
			if time.Since(began) > within {
				t.Fatalf("a push to r%d not seen on r%d's board within %s; r%d's Redis lines:\n%s\nr%d's:\n%s", i, j, within,
					i, redisLines(replicas[i]), j, redisLines(replicas[j]))
			}
		}
	}
	// The inventory reached every replica (its change is shared too) and samples are shared.
	for i := range replicas {
		shared(i, (i+2)%3, 15*time.Second)
	}

	// Bookings on every replica in a loop, two at a time, each released at once.
	type failure struct {
		at     time.Time
		what   string
		status int
		body   string
	}
	var (
		mu       sync.Mutex
		failures []failure
		made     []time.Time
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	fail := func(what string, status int, body string) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, failure{time.Now(), what, status, body})
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				r := (w + n) % 3
				start := time.Now().UTC().Truncate(time.Second)
				var b servertest.Booking
				status, raw := servertest.CallJSON(t, url(r), member, http.MethodPost, "/api/v1/bookings", map[string]any{"task_id": id(task),
					"card_type": "RO-H100", "count": 1, "start": start.Format(time.RFC3339), "end": start.Add(time.Hour).Format(time.RFC3339)}, &b)
				if status != http.StatusCreated {
					fail(fmt.Sprintf("book on r%d", r), status, raw)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				rr := (r + 1) % 3
				if status, raw := servertest.CallJSON(t, url(rr), member, http.MethodPost, fmt.Sprintf("/api/v1/bookings/%d/release", b.ID), nil, nil); status != http.StatusOK {
					fail(fmt.Sprintf("release booking %d on r%d", b.ID, rr), status, raw)
				}
				mu.Lock()
				made = append(made, time.Now())
				mu.Unlock()
			}
		}()
	}
	stopBooking := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer stopBooking()
	time.Sleep(time.Second)

	redis.Kill(t)
	killed := time.Now()
	t.Logf("redis-server killed")
	// Every replica notices (its subscription breaks) and warns.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n := 0
		for _, p := range replicas {
			if strings.Contains(p.Output(), redisDownLine) {
				n++
			}
		}
		if n == len(replicas) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d replicas warned of the outage 10 s after Redis was killed", n, len(replicas))
		}
	}
	t.Logf("every replica warned %s after the kill", time.Since(killed).Round(10*time.Millisecond))
	// Alone, each replica's board still shows what it receives…
	for round := range 6 {
		for i := range replicas {
			sent := push(i)
			if !seen(i, sent) {
				t.Errorf("outage round %d: r%d's board does not show the push it took", round, i)
			}
			if status, raw := servertest.CallJSON(t, url(i), "", http.MethodGet, "/readyz", nil, nil); status != http.StatusOK {
				t.Errorf("r%d /readyz during the Redis outage: %d %s", i, status, raw)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	// …and only what it receives: r0's pushes do not reach r2 now.
	var first time.Time
	for k := range 3 {
		sent := push(0)
		if k == 0 {
			first = sent
		}
		time.Sleep(200 * time.Millisecond)
	}
	if seen(2, first) {
		t.Errorf("r2's board shows a push r0 took with Redis down: the outage is not one")
	}
	outage := time.Since(killed)

	redis.Start(t)
	restarted := time.Now()
	t.Logf("redis-server started again after %s down", outage.Round(100*time.Millisecond))
	recovery := shared(0, 2, 15*time.Second)
	t.Logf("a push to r0 seen live on r2's board %s after Redis was back", recovery.Round(10*time.Millisecond))
	for _, pair := range [][2]int{{1, 0}, {2, 1}} {
		shared(pair[0], pair[1], 15*time.Second)
	}
	t.Logf("every replica shares again %s after Redis was back", time.Since(restarted).Round(10*time.Millisecond))
	time.Sleep(time.Second) // bookings go on after the rejoin too
	stopBooking()

	mu.Lock()
	during := 0
	for _, at := range made {
		if at.After(killed) && at.Before(restarted) {
			during++
		}
	}
	t.Logf("%d bookings made and released (%d during the %s outage), %d failures", len(made), during, outage.Round(100*time.Millisecond), len(failures))
	for _, f := range failures {
		t.Errorf("%s at %s (%s after the kill): %d %s", f.what, f.at.Format(time.StampMilli), f.at.Sub(killed).Round(time.Millisecond), f.status, f.body)
	}
	if during == 0 {
		t.Errorf("no booking made during the outage")
	}
	mu.Unlock()

	// One warning per outage and one line for the rejoin, per replica.
	for i, p := range replicas {
		out := p.Output()
		if n := strings.Count(out, redisDownLine); n != 1 {
			t.Errorf("r%d logged the outage warning %d times, want once:\n%s", i, n, redisLines(p))
		}
		if n := strings.Count(out, redisUpLine); n != 1 {
			t.Errorf("r%d logged the rejoin %d times, want once:\n%s", i, n, redisLines(p))
		}
	}

	// A stall rather than an outage: Redis holds writes a while (as in a
	// failover) and r0's publish gives up, while every subscription stays
	// up. r0 goes on alone, warns, and shares again by itself once writes
	// pass — though it skips Redis meanwhile, so no call of its own finds out.
	o, err := cluster.ParseURL(redis.URL)
	if err != nil {
		t.Fatal(err)
	}
	rc := goredis.NewClient(o)
	defer rc.Close()
	const stall = 1500 * time.Millisecond
	if err := rc.Do(context.Background(), "CLIENT", "PAUSE", stall.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	stalled := time.Now()
	push(0)
	for deadline := time.Now().Add(5 * time.Second); strings.Count(replicas[0].Output(), redisDownLine) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("r0 did not warn of the stall its publish met:\n%s", redisLines(replicas[0]))
		}
	}
	shared(0, 2, 15*time.Second)
	t.Logf("after a %s write stall, a push to r0 seen live on r2's board %s after the stall began", stall, time.Since(stalled).Round(10*time.Millisecond))
	if n := strings.Count(replicas[0].Output(), redisUpLine); n != 2 {
		t.Errorf("r0 logged the rejoin %d times after two outages, want twice:\n%s", n, redisLines(replicas[0]))
	}

	// A token revoked on one replica is refused by the others within a
	// second again: each had it cached (a push each), for 15 s.
	fresh := api(0, admin, http.MethodPost, "/api/v1/agent-tokens", map[string]any{"name": "ro-agent-2", "hosts": []string{"ro-01"}}, http.StatusCreated)
	secret2 := fresh["token"].(string)
	for i := range replicas {
		if status, raw := servertest.Push(t, url(i), secret2, "ro-01", body); status != http.StatusOK {
			t.Fatalf("push with the new token to r%d: %d %s", i, status, raw)
		}
	}
	revoke, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/admin/telemetry/tokens/%d/revoke", url(1), id(fresh)), nil)
	revoke.Header.Set("Authorization", "Bearer "+admin)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Do(revoke)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusOK {
		t.Fatalf("revoke on r1: %d", res.StatusCode)
	}
	revoked := time.Now()
	time.Sleep(time.Second)
	for _, i := range []int{0, 2} {
		if status, _ := servertest.Push(t, url(i), secret2, "ro-01", body); status != http.StatusUnauthorized {
			t.Errorf("r%d still takes the token revoked on r1 %s ago (after the Redis outage): %d", i, time.Since(revoked).Round(time.Millisecond), status)
		}
	}
}

// redisLines are the lines of p's log about Redis (CARDHOUR_REDIS).
func redisLines(p *servertest.Process) string {
	var out []string
	for _, l := range strings.Split(p.Output(), "\n") {
		if strings.Contains(l, "CARDHOUR_REDIS") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
