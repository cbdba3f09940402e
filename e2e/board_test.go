package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"cardhour/telemetry"
)

// The wall board, in headless Chromium at 1920×1080, opened with a board
// token as a wall screen would: samples pushed through the API (the agent's
// JSON endpoint and the raw nvidia-smi CSV endpoint) change the tiles'
// states live, without a reload — a booked card through busy, full and
// idle, a card used without a booking (unbooked), a card that reports a
// fault, and a MIG card with its instances inside its tile. The
// screenshots are kept in e2e/artifacts/board-*.png.
func TestBoardTilesFollowPushedSamples(t *testing.T) {
	requireBrowser(t)
	data := t.TempDir()
	p := startPortal(t, "board", map[string]string{"CARDHOUR_DATA": data, "CARDHOUR_SIMULATOR": "false"})
	removeShots(t, "board")

	// An admin API token from the CLI, then a board and an agent token
	// through the API, as an operator would.
	admin := adminToken(t, data)
	boardTok := issueToken(t, p.URL, admin, "board-tokens")
	agentTok := issueToken(t, p.URL, admin, "agent-tokens")

	// The demo fleet, as the portal sees it.
	var fleet struct {
		Cards []telemetry.CardView `json:"cards"`
	}
	apiJSON(t, http.MethodGet, p.URL+"/api/v1/fleet", admin, nil, &fleet)
	if len(fleet.Cards) < 20 {
		t.Fatalf("the demo fleet has %d cards", len(fleet.Cards))
	}
	// Every card reports, shaped by the simulator's patterns from the real
	// bookings; the test's own cards are driven by hand: a booked H800, an
	// unbooked one, and two more unbooked cards for a fault and for MIG.
	var mine, loose, faulty, mig telemetry.CardView
	for _, c := range fleet.Cards {
		switch {
		case c.State == telemetry.StateMaintenance:
		case c.Hold != nil && c.Host == "gpu-bj-h800-01" && mine.UUID == "":
			mine = c
		case c.Hold == nil && c.Host == "gpu-bj-h800-02" && loose.UUID == "":
			loose = c
		case c.Hold == nil && c.Host == "gpu-bj-h800-02" && faulty.UUID == "":
			faulty = c
		case c.Hold == nil && strings.Contains(c.Type, "A800") && mig.UUID == "":
			mig = c
		}
	}
	if mine.UUID == "" || loose.UUID == "" || faulty.UUID == "" || mig.UUID == "" {
		t.Fatalf("the demo fleet lacks a booked H800, two unbooked H800 or an unbooked A800: %v %v %v %v", mine.UUID, loose.UUID, faulty.UUID, mig.UUID)
	}
	hand := map[string]bool{mine.UUID: true, loose.UUID: true, faulty.UUID: true, mig.UUID: true}
	now := time.Now()
	var batch telemetry.Batch
	for _, c := range fleet.Cards {
		if hand[c.UUID] || c.State == telemetry.StateMaintenance {
			continue
		}
		sc := telemetry.SimCard{UUID: c.UUID, Host: c.Host, Index: c.Index, Model: c.Type}
		if c.MemTotalMiB != nil {
			sc.MemTotalMiB = *c.MemTotalMiB
		}
		if c.Hold != nil {
			sc.BookingID = c.Hold.BookingID
		}
		batch.Samples = append(batch.Samples, telemetry.Simulate(sc, now))
	}
	// The whole fleet's batch comes with the admin's token: an agent token
	// reports only the hosts it is bound to.
	apiJSON(t, http.MethodPost, p.URL+telemetry.SamplesPath, admin, batch, nil)

	b := newBrowser(t, "board")
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(1920, 1080)); err != nil {
		t.Fatalf("viewport: %v", err)
	}
	// The wall's machine runs in another zone than the portal's: the board's
	// times are the portal's (Asia/Shanghai), not the browser's.
	if _, err := chromedp.Call(b.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"}); err != nil {
		t.Fatalf("time zone: %v", err)
	}
	tile := `[data-testid="hosts"] [data-uuid="` + mine.UUID + `"]`
	b.do("open the board with a board token", chromedp.Navigate(p.URL+"/board?token="+boardTok),
		chromedp.WaitVisible(chromedp.CSS(tile)), chromedp.WaitVisible(chromedp.CSS(`[data-conn="live"]`)))
	if st := boardAttr(t, b, tile, "data-state"); st != "offline" {
		t.Errorf("the test's card before any sample: %q, want offline", st)
	}
	// A mark that a reload would wipe.
	boardEval(t, b, `window.__noReload = 42; true`)

	csv := func(c telemetry.CardView, util, used int) string {
		return fmt.Sprintf("%d, %s, NVIDIA H800, %d, %d, 81559, 55, 420.5\n", c.Index, c.UUID, util, used)
	}
	// The big figure is the metric that makes the card full or busy: the
	// VRAM share (78,000 of 81,559 MiB: 96 %) for a card full by its VRAM.
	steps := []struct {
		util, used int
		state      string
		big, unit  string
	}{
		{60, 30000, "busy", "60", "%"},
		{99, 30000, "full", "99", "%"},
		{3, 2000, "idle", "3", "%"},
		{40, 78000, "full", "96", "% 显存"}, // ≥ 90 % VRAM
	}
	for i, s := range steps {
		pushCSV(t, p.URL, agentTok, mine.Host, csv(mine, s.util, s.used))
		waitAttr(t, b, tile, "data-state", s.state)
		if got, unit := boardText(t, b, tile+` [data-f="util"]`), boardText(t, b, tile+` [data-f="unit"]`); got != s.big || unit != s.unit {
			t.Errorf("step %d: the tile shows %s %s, want %s %s", i, got, unit, s.big, s.unit)
		}
		if i == 1 {
			t.Logf("fit: %s", boardAttr(t, b, "#board", "data-fit"))
			b.screenshot("1920x1080.zh-CN")
		}
	}
	// A card in use that no booking holds is abnormal (异常占用).
	looseTile := `[data-testid="hosts"] [data-uuid="` + loose.UUID + `"]`
	pushCSV(t, p.URL, admin, loose.Host, csv(loose, 60, 30000))
	waitAttr(t, b, looseTile, "data-state", "unbooked")
	// A card that reports a fault is red and says why.
	faultTile := `[data-testid="hosts"] [data-uuid="` + faulty.UUID + `"]`
	apiJSON(t, http.MethodPost, p.URL+telemetry.SamplesPath, admin, telemetry.Batch{Host: faulty.Host, Samples: []telemetry.Sample{
		{UUID: faulty.UUID, Index: faulty.Index, At: time.Now(), Fault: "GPU requires reset"}}}, nil)
	waitAttr(t, b, faultTile, "data-state", "fault")
	if got := boardText(t, b, faultTile+` [data-testid="tile-fault"]`); got != "GPU requires reset" {
		t.Errorf("the fault tile says %q", got)
	}
	// A card in MIG mode shows its instances inside its tile.
	migTile := `[data-testid="hosts"] [data-uuid="` + mig.UUID + `"]`
	one, two := 3, 5
	apiJSON(t, http.MethodPost, p.URL+telemetry.SamplesPath, admin, telemetry.Batch{Host: mig.Host, Samples: []telemetry.Sample{{
		UUID: mig.UUID, Index: mig.Index, At: time.Now(), MIG: true, MemUsedMiB: f64(20010), PowerW: f64(78.2), TempC: f64(33),
		Instances: []telemetry.Instance{
			{ID: one, Profile: "2g.20gb", MemUsedMiB: f64(20000), MemTotalMiB: f64(19968), SMActivePct: f64(92), Processes: 1},
			{ID: two, Profile: "2g.20gb", MemUsedMiB: f64(10), MemTotalMiB: f64(19968)},
			{ID: 6, Profile: "2g.20gb", MemUsedMiB: f64(0), MemTotalMiB: f64(19968)},
		},
		Processes: []telemetry.Process{{PID: 4711, Name: "python", GPUInstance: &one, MemMiB: f64(19990)}},
	}}}, nil)
	waitEval(t, b, "the MIG tile shows its three instances, one of them working",
		`document.querySelectorAll('`+migTile+` .inst').length === 3 && document.querySelectorAll('`+migTile+` .inst-on').length === 1`)
	b.screenshot("1920x1080.abnormal.zh-CN")
	if v := boardEval(t, b, `window.__noReload === 42`); !v {
		t.Error("the page was reloaded; tiles must change in place")
	}
	// The figures follow too: every non-maintenance card reports now.
	if n := boardText(t, b, `[data-fig="busy"]`); n == "0" || n == "" {
		t.Errorf("busy cards figure %q", n)
	}
	// Nothing scrolls at 1920×1080: the whole fleet fits the screen.
	if scrolls := boardEval(t, b, `document.documentElement.scrollHeight > innerHeight + 1 ||
		document.querySelector('[data-testid="hosts"]').scrollHeight > document.querySelector('[data-testid="hosts"]').clientHeight + 1`); scrolls {
		t.Error("the board scrolls at 1920×1080")
	}
	// Readable at 3 m: no text on the board under 16 px at 1920×1080.
	small, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#board *')].filter(el =>
		[...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== '') && el.getClientRects().length > 0 &&
		parseFloat(getComputedStyle(el).fontSize) < 16).map(el => el.className + ' "' + el.textContent.trim().slice(0, 20) + '" ' + getComputedStyle(el).fontSize).slice(0, 10)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(small) > 0 {
		t.Errorf("text under 16 px at 1920×1080: %v", small)
	}
	// Host labels break only after a separator, never inside a word.
	broken, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.host:not([hidden]) .host-name')].flatMap(h => {
		const chars = [];
		for (const n of h.childNodes) if (n.nodeType === 3) for (let i = 0; i < n.length; i++) chars.push([n, i]);
		const out = [];
		let prevTop = null, prev = '';
		for (const [n, i] of chars) {
			const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
			const top = r.getBoundingClientRect().top;
			if (prevTop !== null && top > prevTop + 2 && !'-._'.includes(prev)) out.push(h.title + ' after ' + JSON.stringify(prev));
			prevTop = top; prev = n.data[i];
		}
		return out;
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("host labels broken inside a word: %v", broken)
	}
	// The clock is the portal's zone, the browser's is New York.
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	if got, now := boardText(t, b, `[data-clock]`), time.Now().In(shanghai); len(got) < 5 ||
		(got[:5] != now.Format("15:04") && got[:5] != now.Add(-time.Minute).Format("15:04")) {
		t.Errorf("the clock shows %q, want Shanghai's %s", got, now.Format("15:04:05"))
	}
	// Every card is on screen at 1920×1080 — all at once, or, where tiles
	// with 16 px text cannot hold the fleet, on one of the pages the board
	// turns through (each page shown here in turn, as the board would).
	offscreen := `[...document.querySelectorAll('[data-testid="hosts"] .tile')].filter(t => !t.closest('.host').hidden).some(t => {
		const r = t.getBoundingClientRect(); return r.bottom > innerHeight || r.right > innerWidth })`
	pages, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`new Set([...document.querySelectorAll('.host')].map(h => h.getAttribute('data-page'))).size`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the demo fleet at 1920×1080: %d page(s); fit %s", pages, boardAttr(t, b, "#board", "data-fit"))
	for pg := 0; pg < max(pages, 1); pg++ {
		if pages > 1 {
			boardEval(t, b, fmt.Sprintf(`document.querySelectorAll('.host').forEach(h => h.hidden = h.getAttribute('data-page') !== '%d'); true`, pg))
		}
		if boardEval(t, b, offscreen) {
			t.Errorf("page %d: a tile is off screen at 1920×1080", pg)
		}
	}
	if pages > 1 && !boardEval(t, b, `[...document.querySelectorAll('.host')].every(h => h.hasAttribute('data-page'))`) {
		t.Error("a host is on no page")
	}

	// English, as a second wall would show it.
	b.do("the board in English", chromedp.Navigate(p.URL+"/board?lang=en&token="+boardTok), chromedp.WaitVisible(chromedp.CSS(`[data-conn="live"]`)))
	if got := boardText(t, b, tile+` [data-testid="tile-state"]`); got != "Full" {
		t.Errorf("English tile state %q, want Full", got)
	}
	b.screenshot("1920x1080.en")
	// A laptop and a phone, in both languages: nothing wider than the screen.
	for _, vp := range []struct{ w, h int64 }{{1366, 768}, {390, 844}, {3840, 2160}} {
		for _, lang := range []string{"zh-CN", "en"} {
			b.do(fmt.Sprintf("the board at %d px in %s", vp.w, lang), chromedp.EmulateViewport(vp.w, vp.h),
				chromedp.Navigate(p.URL+"/board?lang="+lang+"&token="+boardTok), chromedp.WaitVisible(chromedp.CSS(`[data-conn="live"]`)))
			if boardEval(t, b, `document.documentElement.scrollWidth > innerWidth + 1`) {
				t.Errorf("the board at %d px (%s) is wider than the screen", vp.w, lang)
			}
			b.screenshot(fmt.Sprintf("%dx%d.%s", vp.w, vp.h, lang))
		}
	}

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}

func f64(v float64) *float64 { return &v }

// adminToken is an admin API token made by the CLI on the portal's data
// directory, as an operator would.
func adminToken(t *testing.T, data string) string {
	t.Helper()
	out, err := exec.Command(binPath, "token", "--user", "admin", "--data", data).CombinedOutput()
	if err != nil {
		t.Fatalf("cardhour token: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func issueToken(t *testing.T, base, admin, kind string) string {
	t.Helper()
	var out struct {
		Token string `json:"token"`
	}
	apiJSON(t, http.MethodPost, base+"/api/v1/"+kind, admin, map[string]string{"name": "e2e"}, &out)
	if out.Token == "" {
		t.Fatalf("no %s token issued", kind)
	}
	return out.Token
}

func apiJSON(t *testing.T, method, url, token string, in, out any) {
	t.Helper()
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, url, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(res.Body)
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s\n%s", method, url, res.Status, raw.String())
	}
	if out != nil {
		if err := json.Unmarshal(raw.Bytes(), out); err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
	}
}

// pushCSV sends nvidia-smi's raw output as the cron line does.
func pushCSV(t *testing.T, base, token, host, csv string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/telemetry/nvidia-smi?host="+host, strings.NewReader(csv))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("push: %s", res.Status)
	}
}

func boardEval(t *testing.T, b *browser, js string) bool {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		b.fail("evaluate "+js, err)
	}
	return v
}

func boardAttr(t *testing.T, b *browser, sel, attr string) string {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {getAttribute: () => ""}).getAttribute(%q) || ""`, sel, attr)))
	if err != nil {
		b.fail("read "+attr+" of "+sel, err)
	}
	return v
}

func boardText(t *testing.T, b *browser, sel string) string {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.trim()`, sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return v
}

// waitAttr polls until the element's attribute has the value: the change
// arrives over the websocket, so there is no navigation to wait for.
// waitEval waits until js is true in the page.
func waitEval(t *testing.T, b *browser, what, js string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !boardEval(t, b, js) {
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s: not so: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitAttr(t *testing.T, b *browser, sel, attr, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := boardAttr(t, b, sel, attr)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			name := filepath.Join(artifactDir(t), "board-FAILED.png")
			if png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)); err == nil {
				_ = os.WriteFile(name, png, 0o644)
			}
			t.Fatalf("%s %s is %q after 15 s, want %q (screenshot %s)", sel, attr, got, want, name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
