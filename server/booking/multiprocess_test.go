package booking_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"cardhour/server/servertest"
	"cardhour/store/storetest"
)

// TestTwoProcessesNeverDoubleBook is the "never a double booking"
// with two server processes sharing one MariaDB: the real binary, started
// twice on one fresh database, takes several hundred concurrent
// conflicting requests split across both; exactly the pool's capacity
// succeeds, every other answer is 409 conflict, and the database holds no
// two overlapping assignments of one card.
func TestTwoProcessesNeverDoubleBook(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.EnvMySQL) == "" {
		t.Skip("two-process booking test skipped: " + storetest.EnvMySQL + " is not set; run it with `bash scripts/testenv.sh go test -count=1 -run TestTwoProcesses ./server/booking/`")
	}
	bin := servertest.BuildBinary(t, "../..")
	dsn, _ := storetest.MySQLDSN(t)
	vars := map[string]string{
		"CARDHOUR_DB":             "mysql://" + dsn,
		"CARDHOUR_DEMO":           "false",
		"CARDHOUR_ADMIN_PASSWORD": servertest.AdminPassword,
		"CARDHOUR_LOG_LEVEL":      "warn",
	}
	// The first migrates the empty database; the second starts on it after.
	a := servertest.StartProcess(t, bin, "a", vars)
	b := servertest.StartProcess(t, bin, "b", vars)

	admin := servertest.CLIToken(t, bin, vars, "admin")
	api := func(base, token, method, path string, body any, want int) map[string]any {
		t.Helper()
		return servertest.MustCallJSON(t, base, token, method, path, body, want)
	}
	id := servertest.ID

	const cards, slots, requests = 4, 10, 300
	api(a.URL, admin, http.MethodPost, "/api/v1/card-types", map[string]any{"name": "MP-H800", "vram_gib": 80, "tflops_bf16": 989, "price_fen": 1500}, http.StatusCreated)
	host := api(b.URL, admin, http.MethodPost, "/api/v1/hosts", map[string]any{"name": "mp-01", "zone": "bj"}, http.StatusCreated)
	for i := 0; i < cards; i++ {
		api(a.URL, admin, http.MethodPost, "/api/v1/cards", map[string]any{"uuid": fmt.Sprintf("GPU-%08d-0000-0000-0000-00000000mp%02d", i, i),
			"index": i, "host_id": id(host), "card_type": "MP-H800"}, http.StatusCreated)
	}
	team := api(a.URL, admin, http.MethodPost, "/api/v1/teams", map[string]any{"name": "mp-team"}, http.StatusCreated)
	user := api(b.URL, admin, http.MethodPost, "/api/v1/users", map[string]any{"username": "mp-member", "password": "mp-password-1", "role": "member"}, http.StatusCreated)
	api(a.URL, admin, http.MethodPut, fmt.Sprintf("/api/v1/teams/%d/members/%d", id(team), id(user)), map[string]any{"role": "member"}, http.StatusOK)
	now := time.Now().UTC()
	api(b.URL, admin, http.MethodPost, "/api/v1/quotas", map[string]any{"team": "mp-team", "card_type": "MP-H800", "card_hours": 10000, "max_cards": 0,
		"valid_from": now.Add(-time.Hour).Format(time.RFC3339), "expires_at": now.Add(60 * 24 * time.Hour).Format(time.RFC3339)}, http.StatusCreated)
	member := servertest.CLIToken(t, bin, vars, "mp-member")
	task := api(a.URL, member, http.MethodPost, "/api/v1/tasks", map[string]any{"team": "mp-team", "name": "hammer", "priority": "normal",
		"estimate_card_hours": 100, "data_readiness": "ready", "vram_gib": 40, "precision": "bf16"}, http.StatusCreated)

	// Ten one-hour slots tomorrow; each request wants one card in one slot,
	// so each slot takes exactly four and 40 of 300 succeed.
	base := now.Truncate(time.Hour).Add(24 * time.Hour)
	type answer struct {
		status int
		code   string
		cards  []string
	}
	answers := make([]answer, requests)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < requests; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			server := a.URL
			if i%2 == 1 {
				server = b.URL
			}
			slot := base.Add(time.Duration(i%slots) * time.Hour)
			body := map[string]any{"task_id": id(task), "card_type": "MP-H800", "count": 1,
				"start": slot.Format(time.RFC3339), "end": slot.Add(time.Hour).Format(time.RFC3339)}
			<-start
			var out struct {
				Cards []string `json:"cards"`
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			status, _ := servertest.CallJSON(t, server, member, http.MethodPost, "/api/v1/bookings", body, &out)
			answers[i] = answer{status, out.Error.Code, out.Cards}
		}(i)
	}
	close(start)
	wg.Wait()

	ok := 0
	perServer := map[int]int{}
	for i, r := range answers {
		switch {
		case r.status == http.StatusCreated && len(r.cards) == 1:
			ok++
			perServer[i%2]++
		case r.status == http.StatusConflict && r.code == "conflict":
		default:
			t.Errorf("request %d: status %d code %q cards %v, want 201 with one card or 409 conflict", i, r.status, r.code, r.cards)
		}
	}
	if ok != cards*slots {
		t.Errorf("%d bookings succeeded, want exactly the capacity %d", ok, cards*slots)
	}
	t.Logf("%d of %d succeeded: %d through process a, %d through process b", ok, requests, perServer[0], perServer[1])

	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var overlaps, held int64
	if err := db.QueryRow(`SELECT COUNT(*) FROM booking_cards x JOIN booking_cards y ON x.card_id = y.card_id AND x.id < y.id
		AND x.held = 1 AND y.held = 1 AND x.start_at < y.end_at AND y.start_at < x.end_at`).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM booking_cards WHERE held = 1`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 {
		t.Errorf("%d overlapping held card assignments in MariaDB", overlaps)
	}
	if held != int64(cards*slots) {
		t.Errorf("%d held card assignments, want %d", held, cards*slots)
	}
	a.Stop(t)
	b.Stop(t)
}
