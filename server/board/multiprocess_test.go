package board_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store/storetest"
)

// TestThreeReplicasShareOneLiveFleet is the acceptance for live
// state across replicas: three `serve` processes on one MariaDB sharing
// CARDHOUR_REDIS, every nvidia-smi push (the recorded H100 under load,
// four cards of one host) sent to a random replica. Every replica's fleet
// API sees every card live; the booking holding them is credited no more
// card-seconds than it has lasted (each push is accounted once, from the
// previous sample whichever replica took it); and an agent token revoked
// on one replica is refused by all three within a second.
func TestThreeReplicasShareOneLiveFleet(t *testing.T) {
	if os.Getenv(storetest.EnvMySQL) == "" {
		t.Skip("three-replica test skipped: " + storetest.EnvMySQL + " is not set; run it with `scripts/testenv.sh go test -count=1 -run TestThreeReplicas ./server/board/`")
	}
	redis := os.Getenv("CARDHOUR_TEST_REDIS")
	if redis == "" {
		t.Skip("three-replica test skipped: CARDHOUR_TEST_REDIS is not set; run it under scripts/testenv.sh (it starts a throwaway redis-server)")
	}
	fixture, err := os.ReadFile("../../telemetry/testdata/real/nvidia-smi_h100-80gb-hbm3_590.48.01_load_query-gpu.csv")
	if err != nil {
		t.Fatal(err)
	}
	bin := servertest.BuildBinary(t, "../..")
	dsn, _ := storetest.MySQLDSN(t)
	vars := map[string]string{
		"CARDHOUR_DB": "mysql://" + dsn, "CARDHOUR_DEMO": "false", "CARDHOUR_ADMIN_PASSWORD": servertest.AdminPassword,
		"CARDHOUR_LOG_LEVEL": "warn", "CARDHOUR_SIMULATOR": "false", "CARDHOUR_REDIS": redis,
	}
	// The first migrates the empty database; the others start on it after.
	replicas := []*servertest.Process{servertest.StartProcess(t, bin, "r0", vars)}
	replicas = append(replicas, servertest.StartProcess(t, bin, "r1", vars), servertest.StartProcess(t, bin, "r2", vars))
	url := func(i int) string { return replicas[i].URL }
	admin := servertest.CLIToken(t, bin, vars, "admin")
	api := func(base, token, method, path string, body any, want int) map[string]any {
		t.Helper()
		return servertest.MustCallJSON(t, base, token, method, path, body, want)
	}
	id := servertest.ID

	const cards = 4
	uuids := make([]string, cards)
	api(url(0), admin, http.MethodPost, "/api/v1/card-types", map[string]any{"name": "RL-H100", "vram_gib": 80, "tflops_bf16": 989, "price_fen": 1500}, http.StatusCreated)
	host := api(url(1), admin, http.MethodPost, "/api/v1/hosts", map[string]any{"name": "rl-01", "zone": "bj"}, http.StatusCreated)
	for i := range cards {
		uuids[i] = fmt.Sprintf("GPU-%08d-0000-0000-0000-0000000000%02d", i+1, i)
		api(url(2), admin, http.MethodPost, "/api/v1/cards", map[string]any{"uuid": uuids[i], "index": i, "host_id": id(host), "card_type": "RL-H100"}, http.StatusCreated)
	}
	team := api(url(0), admin, http.MethodPost, "/api/v1/teams", map[string]any{"name": "rl-team"}, http.StatusCreated)
	user := api(url(1), admin, http.MethodPost, "/api/v1/users", map[string]any{"username": "rl-member", "password": "rl-password-1", "role": "member"}, http.StatusCreated)
	api(url(2), admin, http.MethodPut, fmt.Sprintf("/api/v1/teams/%d/members/%d", id(team), id(user)), map[string]any{"role": "member"}, http.StatusOK)
	now := time.Now().UTC()
	api(url(0), admin, http.MethodPost, "/api/v1/quotas", map[string]any{"team": "rl-team", "card_type": "RL-H100", "card_hours": 1000, "max_cards": 0,
		"valid_from": now.Add(-time.Hour).Format(time.RFC3339), "expires_at": now.Add(30 * 24 * time.Hour).Format(time.RFC3339)}, http.StatusCreated)
	member := servertest.CLIToken(t, bin, vars, "rl-member")
	task := api(url(1), member, http.MethodPost, "/api/v1/tasks", map[string]any{"team": "rl-team", "name": "pretrain", "priority": "normal",
		"estimate_card_hours": 100, "data_readiness": "ready"}, http.StatusCreated)
	bookedAt := time.Now().UTC().Truncate(time.Second)
	booking := api(url(2), member, http.MethodPost, "/api/v1/bookings", map[string]any{"task_id": id(task), "card_type": "RL-H100", "count": cards,
		"start": bookedAt.Format(time.RFC3339), "end": bookedAt.Add(2 * time.Hour).Format(time.RFC3339)}, http.StatusCreated)
	agent := api(url(0), admin, http.MethodPost, "/api/v1/agent-tokens", map[string]any{"name": "rl-agent", "hosts": []string{"rl-01"}}, http.StatusCreated)
	secret := agent["token"].(string)

	// One push: the recorded card four times over, as the host's four GPUs.
	lines := strings.SplitN(strings.TrimRight(string(fixture), "\n"), "\n", 2)
	var body bytes.Buffer
	body.WriteString(lines[0] + "\n")
	for i := range cards {
		row := strings.Replace(lines[1], "GPU-00000000-0000-0000-0000-000000000000", uuids[i], 1)
		row = strings.Replace(row, ", 16, 16, 0, [Requested", fmt.Sprintf(", 16, 16, %d, [Requested", i), 1)
		body.WriteString(row + "\n")
	}
	push := func(i int) int {
		req, _ := http.NewRequest(http.MethodPost, url(i)+"/api/v1/telemetry/nvidia-smi?host=rl-01", bytes.NewReader(body.Bytes()))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "text/csv")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("push to r%d: %v", i, err)
		}
		res.Body.Close()
		return res.StatusCode
	}

	// Every replica has loaded the holds (every 5 s) before the first push.
	time.Sleep(6 * time.Second)
	const pushes = 24
	counts := make([]int, len(replicas))
	var last time.Time
	for range pushes {
		r := rand.IntN(len(replicas))
		counts[r]++
		if status := push(r); status != http.StatusOK {
			t.Fatalf("push to r%d: %d", r, status)
		}
		last = time.Now()
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("pushes per replica: %v", counts)

	// Every replica's board sees every card live, whichever replica took its last push.
	type fleet struct {
		Cards []struct {
			UUID       string    `json:"uuid"`
			State      string    `json:"state"`
			LastSample time.Time `json:"last_sample"`
			Registered bool      `json:"registered"`
		} `json:"cards"`
	}
	for i := range replicas {
		var f fleet
		if status, raw := servertest.CallJSON(t, url(i), admin, http.MethodGet, "/api/v1/fleet", nil, &f); status != http.StatusOK {
			t.Fatalf("r%d fleet: %d %s", i, status, raw)
		}
		live := 0
		for _, c := range f.Cards {
			if c.Registered && c.State != "offline" && last.Sub(c.LastSample) < 2*time.Second {
				live++
			}
		}
		if live != cards {
			t.Errorf("r%d sees %d of %d cards live (last push %s): %+v", i, live, cards, last.Format(time.StampMilli), f.Cards)
		}
	}

	// Revoked on one replica, the token is refused by every replica within a second.
	revoke, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/admin/telemetry/tokens/%d/revoke", url(1), id(agent)), nil)
	revoke.Header.Set("Authorization", "Bearer "+admin)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Do(revoke)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	revoked := time.Now()
	time.Sleep(time.Second)
	for i := range replicas {
		if status := push(i); status != http.StatusUnauthorized {
			t.Errorf("r%d still takes the token revoked on r1 %s ago: %d", i, time.Since(revoked).Round(time.Millisecond), status)
		}
	}

	// Each replica writes the rollups of the pushes it took when it stops;
	// a fresh one reads the booking's usage. Sampled card-seconds: the
	// pushes' span on four cards, once — never more than the booking lasted
	// up to the last push.
	for _, p := range replicas {
		p.Stop(t)
	}
	reader := servertest.StartProcess(t, bin, "reader", vars)
	var usage struct {
		Sampled float64 `json:"sampled_card_seconds"`
		Elapsed int64   `json:"elapsed_card_seconds"`
	}
	if status, raw := servertest.CallJSON(t, reader.URL, admin, http.MethodGet, fmt.Sprintf("/api/v1/bookings/%d/usage", id(booking)), nil, &usage); status != http.StatusOK {
		t.Fatalf("usage: %d %s", status, raw)
	}
	elapsed := last.Sub(bookedAt).Seconds() * cards
	span := float64(pushes-1) * 0.5 * cards
	t.Logf("booking usage: sampled %.1f card-s; elapsed up to the last push %.1f; pushes' span %.1f", usage.Sampled, elapsed, span)
	if usage.Sampled > elapsed {
		t.Errorf("sampled %.1f card-seconds, more than the booking lasted up to the last push (%.1f)", usage.Sampled, elapsed)
	}
	if usage.Sampled < 0.8*span {
		t.Errorf("sampled %.1f card-seconds, want about the pushes' span on %d cards (%.1f)", usage.Sampled, cards, span)
	}
}
