package server_test

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"cardhour/server/servertest"
	"cardhour/store/storetest"
)

// onceLeases are the leases of the work done once across replicas.
var onceLeases = []string{"board alerts", "board retention", "booking tick", "ledger pass", "plan sync", "reminder scan"}

// TestThreeReplicasDoEachJobOnce: three `serve` processes started together
// on one empty MariaDB all come up (one migrates and creates the admin at a
// time); each job's lease is held by one of them; a holder killed outright
// is replaced within 15 s, one stopped gives its leases up at once; a
// new task gets one plan version, not one per replica.
func TestThreeReplicasDoEachJobOnce(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvMySQL) == "" {
		t.Skip("three-replica test skipped: " + storetest.EnvMySQL + " is not set; run it with `scripts/testenv.sh go test -count=1 -run TestThreeReplicas ./server/`")
	}
	bin := servertest.BuildBinary(t, "..")
	dsn, _ := storetest.MySQLDSN(t)
	vars := map[string]string{
		"CARDHOUR_DB":             "mysql://" + dsn,
		"CARDHOUR_DEMO":           "false",
		"CARDHOUR_ADMIN_PASSWORD": servertest.AdminPassword,
		"CARDHOUR_LOG_LEVEL":      "warn",
	}
	procs := make([]*servertest.Process, 3)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[i] = servertest.StartProcess(t, bin, fmt.Sprintf("r%d", i), vars)
		}()
	}
	wg.Wait()
	for _, p := range procs {
		if p == nil {
			t.Fatal("a replica did not start")
		}
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := countAdmins(t, db); n != 1 {
		t.Errorf("%d admin accounts after three replicas started together, want 1", n)
	}
	live := map[int]bool{procs[0].Pid(): true, procs[1].Pid(): true, procs[2].Pid(): true}
	byPid := map[int]*servertest.Process{}
	for _, p := range procs {
		byPid[p.Pid()] = p
	}
	holders := waitHeld(t, db, live, 15*time.Second)
	tick := holders["booking tick"]

	// A new task gets its card-hour plan once, not once per replica.
	admin := servertest.CLIToken(t, bin, vars, "admin")
	servertest.MustCallJSON(t, procs[0].URL, admin, "POST", "/api/v1/teams", map[string]any{"name": "rp-team"}, 201)
	task := servertest.MustCallJSON(t, procs[1].URL, admin, "POST", "/api/v1/tasks", map[string]any{"team": "rp-team", "name": "rp-plan",
		"priority": "normal", "estimate_card_hours": 40, "data_readiness": "ready"}, 201)
	versions := func() int {
		var out struct {
			Total int `json:"total"`
		}
		status, raw := servertest.CallJSON(t, procs[2].URL, admin, "GET", fmt.Sprintf("/api/v1/tasks/%d/versions/plan/card-hours.yaml", servertest.ID(task)), nil, &out)
		if status != 200 && status != 404 { // 404: no plan yet
			t.Fatalf("plan versions: %d %s", status, raw)
		}
		return out.Total
	}
	for deadline := time.Now().Add(30 * time.Second); versions() == 0; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no plan version 30 s after the task was created")
		}
	}
	// Every replica's sync has come round at least once more (every 10 s).
	time.Sleep(12 * time.Second)
	if n := versions(); n != 1 {
		t.Errorf("%d plan versions for one new task on three replicas, want 1", n)
	}

	// The holder of the tick dies: nothing is given up, the lease lapses.
	byPid[tick].Kill(t)
	delete(live, tick)
	killed := time.Now()
	holders = waitHeld(t, db, live, 15*time.Second)
	t.Logf("leases taken over %s after the holder was killed", time.Since(killed).Round(100*time.Millisecond))

	// The next holder stops: it gives its leases up, the last replica takes them.
	next := holders["booking tick"]
	byPid[next].Stop(t)
	delete(live, next)
	stopped := time.Now()
	waitHeld(t, db, live, 15*time.Second)
	t.Logf("leases taken over %s after the holder stopped", time.Since(stopped).Round(100*time.Millisecond))
}

func countAdmins(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM users WHERE username = 'admin'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitHeld waits until every once-lease is held, unexpired, by a live
// replica, and returns each lease's holder's pid.
func waitHeld(t *testing.T, db *sql.DB, live map[int]bool, within time.Duration) map[string]int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, problem := leaseHolders(t, db, live)
		if problem == "" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, problem)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func leaseHolders(t *testing.T, db *sql.DB, live map[int]bool) (map[string]int, string) {
	t.Helper()
	rows, err := db.Query("SELECT name, holder, expires_at > UTC_TIMESTAMP(6) FROM leases")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var name, holder string
		var current bool
		if err := rows.Scan(&name, &holder, &current); err != nil {
			t.Fatal(err)
		}
		// holder is host:pid:random.
		parts := strings.Split(holder, ":")
		var pid int
		if len(parts) >= 3 {
			_, _ = fmt.Sscanf(parts[len(parts)-2], "%d", &pid)
		}
		if current && live[pid] {
			got[name] = pid
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range onceLeases {
		if _, ok := got[name]; !ok {
			return got, fmt.Sprintf("lease %q is held by no live replica (held: %v)", name, got)
		}
	}
	return got, ""
}
