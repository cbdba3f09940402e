package servertest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartReplicas runs n `cardhour serve` processes on one database (vars):
// the first alone, so that it migrates an empty database, then the others
// together. They are named r0, r1, ….
func StartReplicas(t *testing.T, bin string, n int, vars map[string]string) []*Process {
	t.Helper()
	procs := make([]*Process, n)
	procs[0] = StartProcess(t, bin, "r0", vars)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[i] = StartProcess(t, bin, fmt.Sprintf("r%d", i), vars)
		}()
	}
	wg.Wait()
	for i, p := range procs {
		if p == nil {
			t.Fatalf("replica r%d did not start", i)
		}
	}
	return procs
}

// NvidiaSMIPush is a push body made of a recorded `nvidia-smi --query-gpu
// … --format=csv` (its header and first card): the recorded card once per
// uuid, as one host's GPUs 0, 1, … — the real format, with only the
// identities changed.
func NvidiaSMIPush(t *testing.T, fixture string, uuids []string) []byte {
	t.Helper()
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(strings.TrimRight(string(raw), "\n"), "\n", 3)
	if len(lines) < 2 {
		t.Fatalf("%s: want a header and a card", fixture)
	}
	const uuid = "GPU-00000000-0000-0000-0000-000000000000"
	const index = ", 16, 16, 0, [Requested" // the link widths, then the index
	if !strings.Contains(lines[1], uuid) || !strings.Contains(lines[1], index) {
		t.Fatalf("%s: its card's uuid or index is not where NvidiaSMIPush expects them", fixture)
	}
	var body bytes.Buffer
	body.WriteString(lines[0] + "\n")
	for i, u := range uuids {
		row := strings.Replace(lines[1], uuid, u, 1)
		row = strings.Replace(row, index, fmt.Sprintf(", 16, 16, %d, [Requested", i), 1)
		body.WriteString(row + "\n")
	}
	return body.Bytes()
}

// Push sends body to base's nvidia-smi push endpoint for host with an
// agent token, as cron + curl --data-binary does, and returns the status
// and the answer.
func Push(t *testing.T, base, token, host string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/telemetry/nvidia-smi?host="+host, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("push to %s: %v", base, err)
		return 0, ""
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// FleetCard is a card as /api/v1/fleet shows it.
type FleetCard struct {
	UUID       string    `json:"uuid"`
	State      string    `json:"state"`
	LastSample time.Time `json:"last_sample"`
	Registered bool      `json:"registered"`
}

// FleetCards is base's live fleet by uuid.
func FleetCards(t *testing.T, base, token string) map[string]FleetCard {
	t.Helper()
	var f struct {
		Cards []FleetCard `json:"cards"`
	}
	if status, raw := CallJSON(t, base, token, http.MethodGet, "/api/v1/fleet", nil, &f); status != http.StatusOK {
		t.Fatalf("%s fleet: %d %s", base, status, raw)
	}
	out := make(map[string]FleetCard, len(f.Cards))
	for _, c := range f.Cards {
		out[c.UUID] = c
	}
	return out
}
