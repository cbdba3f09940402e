package board_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/telemetry"
)

// fleetEnv is a portal with a small inventory, its live side running, an
// agent token and a board token.
type fleetEnv struct {
	*servertest.Env
	cards              []*store.Card
	host               *store.Host
	agentTok, boardTok string
}

const (
	uuid0 = "GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a"
	uuid1 = "GPU-896386b1-a55f-a29a-fa34-53ff0052044a"
)

func newFleetEnv(t *testing.T, live bool) *fleetEnv {
	t.Helper()
	e := servertest.New(t, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}})
	ctx := e.AdminCtx()
	fe := &fleetEnv{Env: e}
	ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: "NVIDIA H800 80GB", VRAMGiB: 80, TFLOPSBF16: 989.4, PriceFen: 2200})
	if err != nil {
		t.Fatal(err)
	}
	fe.host, err = e.St.CreateHost(ctx, store.HostInput{Name: "gpu-bj-h800-01"})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{uuid0, uuid1} {
		c, err := e.St.CreateCard(ctx, store.CardInput{UUID: u, GPUIndex: i, HostID: fe.host.ID, CardTypeID: ct.ID})
		if err != nil {
			t.Fatal(err)
		}
		fe.cards = append(fe.cards, c)
	}
	if _, fe.agentTok, err = e.St.CreateTelemetryToken(ctx, store.TokenAgent, "gpu-bj-h800-01"); err != nil {
		t.Fatal(err)
	}
	if _, fe.boardTok, err = e.St.CreateTelemetryToken(ctx, store.TokenBoard, "wall"); err != nil {
		t.Fatal(err)
	}
	if live {
		stop := e.Srv.Board().Start(context.Background())
		t.Cleanup(stop)
	}
	return fe
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../telemetry/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// push posts raw nvidia-smi output as a cron line would.
func (fe *fleetEnv) push(token, host, body string) servertest.Response {
	fe.T.Helper()
	h := http.Header{"Content-Type": {"text/csv"}}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return fe.Client().Do(http.MethodPost, "/api/v1/telemetry/nvidia-smi?host="+url.QueryEscape(host), strings.NewReader(body), h)
}

func (fe *fleetEnv) dial(t *testing.T, query string, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(fe.TS.URL, "http") + "/ws/board" + query
	return websocket.DefaultDialer.Dial(u, header)
}

type frameMsg struct {
	Type  string           `json:"type"`
	At    int64            `json:"at"`
	Since int64            `json:"since"`
	Cards []map[string]any `json:"cards"`
	Fleet map[string]any   `json:"fleet"`
}

func readFrame(t *testing.T, c *websocket.Conn) frameMsg {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read frame: %v", err)
	}
	var m frameMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("frame is not JSON: %v\n%s", err, b)
	}
	return m
}

func TestBoardSocketSendsSnapshotThenDeltas(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, true)
	c, res, err := fe.dial(t, "?token="+fe.boardTok, nil)
	if err != nil {
		t.Fatalf("dial with a board token: %v (%v)", err, res)
	}
	defer c.Close()
	snap := readFrame(t, c)
	if snap.Type != "snapshot" || len(snap.Cards) != 2 {
		t.Fatalf("first frame: %s with %d cards, want a snapshot of both", snap.Type, len(snap.Cards))
	}
	for _, card := range snap.Cards {
		if card["state"] != "offline" || card["host"] != "gpu-bj-h800-01" || card["card_type"] != "NVIDIA H800 80GB" {
			t.Errorf("snapshot card %v: want offline before any sample", card)
		}
	}
	// Recorded nvidia-smi output: card 0 at 100 % (full), card 1 idle; two
	// more cards the inventory lacks.
	r := fe.push(fe.agentTok, "gpu-bj-h800-01", fixture(t, "nvidia-smi-nounits.csv"))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("push: %d %s", r.StatusCode, r)
	}
	var pr struct{ Accepted, Unknown int }
	_ = json.Unmarshal(r.Body, &pr)
	if pr.Accepted != 2 || pr.Unknown != 2 {
		t.Errorf("push result %s", r)
	}
	got := map[string]map[string]any{}
	for len(got) < 4 {
		m := readFrame(t, c)
		if m.Type != "delta" {
			t.Fatalf("frame after the snapshot is %q, want delta", m.Type)
		}
		for _, card := range m.Cards {
			got[card["uuid"].(string)] = card
		}
		if len(m.Cards) > 0 && m.Since == 0 {
			t.Errorf("a delta carrying samples has no arrival time")
		}
	}
	// At 100 % with no booking holding it, the card is in use unbooked.
	if c0 := got[uuid0]; c0["state"] != "unbooked" || c0["util"] != 100.0 || c0["mem_used_mib"] != 19818.0 {
		t.Errorf("card 0 delta %v", c0)
	}
	if c1 := got[uuid1]; c1["state"] != "idle" || c1["util"] != 0.0 || c1["host"] != nil {
		t.Errorf("card 1 delta %v: want only what changed", c1)
	}
	if u := got["GPU-e9ba2ba0-37e1-cb87-2355-a52c1d36619e"]; u["registered"] != false || u["card_type"] != "" {
		t.Errorf("an unknown card's first delta %v: want the whole card, unregistered", u)
	}
	// Nothing changes: a heartbeat still comes, so the board can tell quiet
	// from dead.
	hb := readFrame(t, c)
	if hb.Type != "delta" || hb.At == 0 {
		t.Errorf("heartbeat %+v", hb)
	}
}

func TestBoardSocketRefusesTheUnauthorised(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, true)
	for _, c := range []struct {
		name   string
		query  string
		header http.Header
		status int
	}{
		{"no credentials", "", nil, http.StatusUnauthorized},
		{"a wrong board token", "?token=chb_WRONG", nil, http.StatusUnauthorized},
		{"an agent token as a board token", "?token=" + fe.agentTok, nil, http.StatusUnauthorized},
		{"a board token as a bearer API token", "", http.Header{"Authorization": {"Bearer " + fe.boardTok}}, http.StatusUnauthorized},
		{"a session from another site", "", http.Header{"Cookie": {"cardhour_session=" + fe.Session("viewer")}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
	} {
		conn, res, err := fe.dial(t, c.query, c.header)
		if err == nil {
			conn.Close()
			t.Errorf("%s: connected", c.name)
			continue
		}
		if res == nil || res.StatusCode != c.status {
			t.Errorf("%s: %v %v, want status %d", c.name, err, res, c.status)
		}
	}
	// A logged-in viewer and an API token are welcome.
	for name, h := range map[string]http.Header{
		"session":   {"Cookie": {"cardhour_session=" + fe.Session("viewer")}, "Origin": {fe.TS.URL}},
		"API token": {"Authorization": {"Bearer " + fe.Users["viewer"].Token}},
	} {
		conn, _, err := fe.dial(t, "", h)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if m := readFrame(t, conn); m.Type != "snapshot" {
			t.Errorf("%s: first frame %q", name, m.Type)
		}
		conn.Close()
	}
}

func TestTelemetryPushChecksItsToken(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	body := fixture(t, "nvidia-smi-units.csv")
	_, revoked, _ := fe.St.CreateTelemetryToken(fe.AdminCtx(), store.TokenAgent, "old")
	list, _ := fe.St.FindTelemetryTokens(context.Background())
	if err := fe.St.RevokeTelemetryToken(fe.AdminCtx(), list[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"a wrong token", "cha_WRONG", http.StatusUnauthorized, "unauthorized"},
		{"a revoked agent token", revoked, http.StatusUnauthorized, "unauthorized"},
		{"a board token", fe.boardTok, http.StatusUnauthorized, "unauthorized"},
		{"a member's API token", fe.Users["member"].Token, http.StatusForbidden, "forbidden"},
		{"a manager's API token", fe.Users["manager"].Token, http.StatusForbidden, "forbidden"},
	} {
		r := fe.push(c.token, "gpu-bj-h800-01", body)
		servertest.MustAPIError(t, r, c.status, c.code)
	}
	// Without any credential: refused (401 at the gate, or 403 if the CSRF
	// check, which knows no bearer token here, stops it first).
	if r := fe.push("", "gpu-bj-h800-01", body); r.StatusCode != http.StatusUnauthorized && r.StatusCode != http.StatusForbidden {
		t.Errorf("no token: %d %s", r.StatusCode, r)
	}
	for name, tok := range map[string]string{"agent token": fe.agentTok, "admin's API token": fe.Users["admin"].Token} {
		if r := fe.push(tok, "gpu-bj-h800-01", body); r.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", name, r.StatusCode, r)
		}
	}
	// Bad input is 422 with a reason.
	servertest.MustAPIError(t, fe.push(fe.agentTok, "", body), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, fe.push(fe.agentTok, "bad host!", body), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, fe.push(fe.agentTok, "gpu-bj-h800-01", "not,nvidia-smi,output\n"), http.StatusUnprocessableEntity, "invalid")
	// The agent's JSON endpoint takes the same tokens.
	r := fe.Client().APICall(http.MethodPost, "/api/v1/telemetry/samples", fe.boardTok, `{"host":"h","samples":[]}`)
	servertest.MustAPIError(t, r, http.StatusUnauthorized, "unauthorized")
	r = fe.Client().APICall(http.MethodPost, "/api/v1/telemetry/samples", fe.agentTok, `{"host":"h","samples":[],"extra":1}`)
	servertest.MustAPIError(t, r, http.StatusUnprocessableEntity, "invalid")
}

func TestPushedSamplesShowOnFleetAPIAndMetrics(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	body := fixture(t, "nvidia-smi-nounits.csv") + "\n" + fixture(t, "nvidia-smi-apps.csv")
	if r := fe.push(fe.agentTok, "gpu-bj-h800-01", body); r.StatusCode != http.StatusOK {
		t.Fatalf("push: %d %s", r.StatusCode, r)
	}
	r := fe.Client().APICall(http.MethodGet, "/api/v1/fleet", fe.Users["viewer"].Token, "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("fleet: %d %s", r.StatusCode, r)
	}
	var fl struct {
		Summary telemetry.Summary    `json:"summary"`
		Cards   []telemetry.CardView `json:"cards"`
	}
	if err := json.Unmarshal(r.Body, &fl); err != nil {
		t.Fatal(err)
	}
	if fl.Summary.Cards != 2 || fl.Summary.Unregistered != 2 || fl.Summary.Busy != 1 || len(fl.Cards) != 4 {
		t.Errorf("summary %+v, %d cards", fl.Summary, len(fl.Cards))
	}
	if c := fl.Cards[0]; c.UUID != uuid0 || c.State != telemetry.StateUnbooked || c.Processes != 1 || *c.PowerW != 631.95 {
		t.Errorf("card 0 %+v", c)
	}
	m := fe.Client().Get("/metrics").String()
	for _, want := range []string{
		`cardhour_gpu_utilization_percent{host="gpu-bj-h800-01",index="0",type="NVIDIA H800 80GB",uuid="` + uuid0 + `"} 100`,
		`cardhour_gpu_memory_used_mib{host="gpu-bj-h800-01",index="1",type="NVIDIA H800 80GB",uuid="` + uuid1 + `"} 4`,
		`cardhour_gpu_state{host="gpu-bj-h800-01",index="0",state="unbooked",type="NVIDIA H800 80GB",uuid="` + uuid0 + `"} 1`,
		`cardhour_fleet_unregistered_cards 2`,
		`cardhour_telemetry_samples_total{result="unknown",source="push"} 2`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s\n%s", want, grepLines(m, "cardhour_telemetry"))
		}
	}
}

func TestBoardPageWithATokenOrALogin(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	fe.push(fe.agentTok, "gpu-bj-h800-01", fixture(t, "nvidia-smi-nounits.csv"))
	r := fe.Client().Get("/board?token=" + url.QueryEscape(fe.boardTok))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("board with a token: %d", r.StatusCode)
	}
	doc := r.Doc(t)
	if n := doc.Find(`[data-testid=hosts] [data-testid=tile]`).Length(); n != 4 {
		t.Errorf("%d tiles, want 4 (2 registered, 2 waiting)", n)
	}
	if s, _ := doc.Find(`[data-uuid="` + uuid0 + `"]`).Attr("data-state"); s != "unbooked" {
		t.Errorf("card 0 tile state %q", s)
	}
	if ws, _ := doc.Find(`[data-testid=board]`).Attr("data-ws"); ws != "/ws/board?token="+url.QueryEscape(fe.boardTok) {
		t.Errorf("websocket URL %q", ws)
	}
	if doc.Find(`a[href="/"]`).Length() != 0 {
		t.Error("a board token's page links into the portal")
	}
	if doc.Find(`[data-testid=unregistered-notice]`).Length() != 1 {
		t.Error("no notice of the unregistered cards")
	}
	// Logged in: the same board, with the way back.
	c := fe.Client()
	c.MustLogin(fe.Users["viewer"].Username, fe.Users["viewer"].Password)
	r = c.Get("/board")
	if r.StatusCode != http.StatusOK || r.Doc(t).Find(`a[href="/"]`).Length() != 1 {
		t.Errorf("logged-in board: %d", r.StatusCode)
	}
	// Anyone else: the login error page.
	for _, path := range []string{"/board", "/board?token=chb_nope", "/board?token=" + fe.agentTok} {
		if r := fe.Client().Get(path); r.StatusCode != http.StatusUnauthorized || r.Doc(t).Find(`[data-testid=error-page]`).Length() != 1 {
			t.Errorf("%s: %d, want the 401 page", path, r.StatusCode)
		}
	}
}

func TestAdminsIssueBoardTokensAndRegisterNewCards(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	r := fe.Client().APICall(http.MethodPost, "/api/v1/board-tokens", fe.Users["manager"].Token, `{"name":"lobby"}`)
	servertest.MustAPIError(t, r, http.StatusForbidden, "forbidden")
	r = fe.Client().APICall(http.MethodPost, "/api/v1/board-tokens", fe.Users["admin"].Token, `{"name":"lobby"}`)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("board token: %d %s", r.StatusCode, r)
	}
	var raw map[string]string
	_ = json.Unmarshal(r.Body, &raw)
	if raw["kind"] != "board" || !strings.HasPrefix(raw["token"], "chb_") || !strings.HasSuffix(raw["board_url"], "/board?token="+raw["token"]) {
		t.Errorf("board token answer %s", r)
	}
	if r := fe.Client().Get("/board?token=" + raw["token"]); r.StatusCode != http.StatusOK {
		t.Errorf("the new board token: %d", r.StatusCode)
	}
	// The new token opens nothing else.
	servertest.MustAPIError(t, fe.Client().APICall(http.MethodGet, "/api/v1/fleet", raw["token"], ""), http.StatusUnauthorized, "unauthorized")

	// Unknown cards wait for registration; an admin picks their type.
	fe.push(fe.agentTok, "gpu-new-02", "0, GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f, NVIDIA H800, 50, 1000, 81559, 40, 300\n")
	if err := fe.Srv.Board().ParkUnknownNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := fe.Client()
	c.MustLogin("admin", servertest.AdminPassword)
	page := c.Get("/admin/telemetry").Doc(t)
	row := page.Find(`[data-testid=pending-row][data-uuid="GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f"]`)
	if row.Length() != 1 {
		t.Fatalf("the new card is not listed for registration")
	}
	typeID, _ := row.Find(`option[selected]`).Attr("value")
	action, _ := row.Find(`form`).First().Attr("action")
	if typeID == "" {
		t.Error("no card type suggested for an H800")
	}
	if r := c.PostForm(action, url.Values{"card_type_id": {typeID}}, true); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("register: %d %s", r.StatusCode, r)
	}
	cards, _ := fe.St.FindCards(context.Background(), store.CardFilter{})
	found := false
	for _, cd := range cards {
		if cd.UUID == "GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f" {
			found = cd.HostName == "gpu-new-02"
		}
	}
	if !found {
		t.Error("the registered card is not in the inventory on its host")
	}
	if v := fe.Srv.Board().LiveCard("GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f"); !v.Registered || v.Type != "NVIDIA H800 80GB" {
		t.Errorf("the board still shows it unregistered: %+v", v)
	}
	// The form page issues tokens too, showing the secret once.
	doc := c.PostForm("/admin/telemetry/tokens", url.Values{"kind": {"agent"}, "name": {"gpu-new-02"}}, true).Doc(t)
	if s := doc.Find(`[data-testid=new-token-secret]`).Text(); !strings.HasPrefix(s, "cha_") {
		t.Errorf("issued secret %q", s)
	}
}

func TestAgentFeedsTheBoardThroughTheAPI(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	gpus, apps := fixture(t, "nvidia-smi-nounits.csv"), fixture(t, "nvidia-smi-apps.csv")
	a, err := telemetry.NewAgent(telemetry.AgentConfig{Server: fe.TS.URL, Token: fe.agentTok, Host: "gpu-bj-h800-01",
		Run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
			if strings.HasPrefix(args[0], "--query-gpu=") {
				return []byte(gpus), nil
			}
			return []byte(apps), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-2 * time.Second)
	a.Step(context.Background(), at)
	if st := a.Stats(); st.Sent != 1 || a.Buffered() != 0 {
		t.Fatalf("agent stats %+v", st)
	}
	v := fe.Srv.Board().LiveCard(uuid0)
	if v.State != telemetry.StateUnbooked || !v.LastSample.Equal(at.Truncate(time.Nanosecond)) || v.Processes != 1 || v.Source != telemetry.SourceAgent {
		t.Errorf("card 0 after the agent's post: %+v", v)
	}
}

func TestHeatmapShowsRollupsAndFlagsIdleCards(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	loc := fe.Cfg.TZ
	now := time.Now().In(loc)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -1)
	var rs []store.Rollup
	for h := 0; h < 24; h++ {
		at := day.Add(time.Duration(h) * time.Hour)
		// Card 0 idle all day; card 1 full all day.
		rs = append(rs, store.Rollup{CardID: fe.cards[0].ID, At: at, Samples: 60, UtilSamples: 60, UtilSum: 60, SampledSeconds: 3600, MemTotalMiB: 81920})
		rs = append(rs, store.Rollup{CardID: fe.cards[1].ID, At: at, Samples: 60, UtilSamples: 60, UtilSum: 60 * 97, UtilMax: 99, MemMaxMiB: 80000,
			MemTotalMiB: 81920, SampledSeconds: 3600, BusySeconds: 3600, FullSeconds: 3600})
	}
	if err := fe.St.SaveRollups(context.Background(), rs, nil); err != nil {
		t.Fatal(err)
	}
	c := fe.Client()
	c.MustLogin(fe.Users["viewer"].Username, fe.Users["viewer"].Password)
	r := c.Get("/board/heatmap?day=" + day.Format(time.DateOnly))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("heatmap: %d", r.StatusCode)
	}
	doc := r.Doc(t)
	flags := map[string]string{}
	doc.Find(`[data-testid=heatmap-row]`).Each(func(_ int, s *goquery.Selection) {
		u, _ := s.Attr("data-uuid")
		f, _ := s.Attr("data-flag")
		flags[u] = f
	})
	if flags[uuid0] != "idle_all" || flags[uuid1] != "full_all" {
		t.Errorf("flags %v", flags)
	}
	if n := doc.Find(`[data-testid=heatmap] .hc.h9.hfull`).Length(); n != 24 {
		t.Errorf("%d full dark cells, want 24", n)
	}
	week := c.Get("/board/heatmap?days=7&day=" + day.AddDate(0, 0, -3).Format(time.DateOnly)).Doc(t)
	if n := week.Find(`[data-testid=heatmap] .hc`).Length(); n != 2*7*24 {
		t.Errorf("a week shows %d cells, want %d", n, 2*7*24)
	}
	if r := c.Get("/board/heatmap?day=yesterday"); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a bad day: %d", r.StatusCode)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestStoppingTheBoardWritesTheLastRollups(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	stop := fe.Srv.Board().Start(context.Background())
	c, _, err := fe.dial(t, "?token="+fe.boardTok, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	readFrame(t, c)
	for i := 0; i < 3; i++ {
		if r := fe.push(fe.agentTok, "gpu-bj-h800-01", fixture(t, "nvidia-smi-nounits.csv")); r.StatusCode != http.StatusOK {
			t.Fatalf("push: %d", r.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	// The websocket is told the server is going away.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
				t.Errorf("board connection ended with %v, want a going-away close", err)
			}
			break
		}
	}
	// The open minute was written, not lost.
	now := time.Now()
	rs, err := fe.St.FindMinuteRollups(context.Background(), fe.cards[0].ID, now.Add(-2*time.Minute), now.Add(time.Minute))
	if err != nil || len(rs) == 0 {
		t.Fatalf("minute rollups after stop: %+v %v", rs, err)
	}
	total := 0
	for _, r := range rs {
		total += r.Samples
	}
	if total != 3 {
		t.Errorf("%d samples rolled up, want the 3 pushed", total)
	}
}

// A token revoked while this process remembers it as valid is refused at
// once, not when the cache entry expires (the revocation clears it).
func TestRevokedAgentTokenRefusedAtOnce(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	body := fixture(t, "nvidia-smi-units.csv")
	tok, secret, err := fe.St.CreateTelemetryToken(fe.AdminCtx(), store.TokenAgent, "soon-revoked", "gpu-bj-h800-01")
	if err != nil {
		t.Fatal(err)
	}
	if r := fe.push(secret, "gpu-bj-h800-01", body); r.StatusCode != http.StatusOK {
		t.Fatalf("before the revocation: %d %s", r.StatusCode, r)
	}
	if err := fe.St.RevokeTelemetryToken(fe.AdminCtx(), tok.ID); err != nil {
		t.Fatal(err)
	}
	servertest.MustAPIError(t, fe.push(secret, "gpu-bj-h800-01", body), http.StatusUnauthorized, "unauthorized")
}
