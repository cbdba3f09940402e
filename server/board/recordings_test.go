package board_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/telemetry"
	"cardhour/telemetry/telemetrytest"
)

// The recorded output of real nvidia-smi and dcgm-exporter
// (telemetry/testdata/real, each file's source in its SOURCES.md) goes
// through the portal the ways a fleet sends it — the push endpoint, the
// agent running a fake nvidia-smi that prints the recording, a real HTTP
// scrape of a DCGM endpoint — and comes out in the fleet JSON, /metrics,
// the board page and the booking's usage with the values recorded.

const (
	recH200LoadGPU  = "nvidia-smi_h200-mig_590.48.01_load_query-gpu.csv"
	recH200LoadApps = "nvidia-smi_h200-mig_590.48.01_load_query-compute-apps.csv"
	recH200IdleGPU  = "nvidia-smi_h200-mig_590.48.01_idle_query-gpu.csv"
	recH200IdleApps = "nvidia-smi_h200-mig_590.48.01_idle_query-compute-apps.csv"
	recH200List     = "nvidia-smi_h200-mig_590.48.01_list-gpus.txt"
	recH200Query    = "nvidia-smi_h200-mig_590.48.01_load_query.txt"
	recH100LoadGPU  = "nvidia-smi_h100-80gb-hbm3_590.48.01_load_query-gpu.csv"
	recH100LoadApps = "nvidia-smi_h100-80gb-hbm3_590.48.01_load_query-compute-apps.csv"
	recH100IdleGPU  = "nvidia-smi_h100-80gb-hbm3_590.48.01_idle_query-gpu.csv"
	recL40SIdleGPU  = "nvidia-smi_l40s_595.80_idle_query-gpu.csv"
	recGTX770       = "nvidia-smi_not-supported_gtx770_noheader_megaminer-235.csv"
	recUnknownError = "nvidia-smi_error_unknown-error_nvidia-docker-1553.txt"
	recDCGMA800     = "dcgm-exporter_a800x8_mig-2g.20gb_vgpu-convert-error.prom"
	recDCGML4       = "dcgm-exporter_l4_single-gpu.prom"
	recDCGMRTX4000  = "dcgm-exporter_rtx4000-ada_k8s-pod-labels.prom"
	recDmesgXid79   = "dmesg_xid79_fallen-off-bus_machine-shop-maintenance-80.txt"

	// The nvidia_gpu_exporter captures masked their UUIDs.
	maskedUUID = "GPU-00000000-0000-0000-0000-000000000000"
	a800GPU0   = "GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418" // in MIG mode: three 2g.20gb instances
	a800GPU1   = "GPU-9e5b8fec-61bf-5124-a0a9-079af1b65cc6"
	l4GPU      = "GPU-c2f76b33-7953-256e-8f33-1343419b1a1c"
	rtx4000GPU = "GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c"
	rtxHost    = "lke529760-766837-0a634ab30000"
)

func rec(t testing.TB, name string) string { return string(telemetrytest.Recording(t, name)) }

// recordedCard is a card of a recording, as the inventory registers it.
type recordedCard struct {
	UUID    string
	Index   int
	Type    string
	VRAMGiB int
	Host    string // "" for the world's host
}

// recordedWorld is a portal whose inventory holds the recorded cards on
// their host, with bookings of team llm's member holding every one of
// them since a minute ago, and an agent token bound to the host.
type recordedWorld struct {
	*servertest.Env
	Host     string
	Cards    map[string]*store.Card // by UUID
	Bookings map[string]int64       // the booking holding each card, by UUID in upper case
	AgentTok string
	Team     *store.Team
	hostOf   map[string]string // each card's host, by UUID
}

func newRecordedWorld(t *testing.T, vars map[string]string, host string, cards ...recordedCard) *recordedWorld {
	t.Helper()
	o := servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}}
	for k, v := range vars {
		o.Vars[k] = v
	}
	e := servertest.New(t, o)
	w := &recordedWorld{Env: e, Host: host, Cards: map[string]*store.Card{}, Bookings: map[string]int64{}, hostOf: map[string]string{}}
	ctx, st := e.AdminCtx(), e.St
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	w.Team, err = st.CreateTeam(ctx, store.TeamInput{Name: "llm"})
	must(err)
	member := e.Users[store.RoleMember]
	_, err = st.SetMembership(ctx, w.Team.ID, member.ID, store.TeamRoleMember)
	must(err)
	_, err = st.SetMembership(ctx, w.Team.ID, e.Users[store.RoleManager].ID, store.TeamRoleManager)
	must(err)
	hosts := map[string]*store.Host{}
	hostOf := func(c recordedCard) string {
		if c.Host == "" {
			return host
		}
		return c.Host
	}
	now := time.Now().UTC()
	types := map[string]*store.CardType{}
	var order []string
	for _, c := range cards {
		ct := types[c.Type]
		if ct == nil {
			ct, err = st.CreateCardType(ctx, store.CardTypeInput{Name: c.Type, VRAMGiB: c.VRAMGiB, TFLOPSBF16: 312, PriceFen: 1800})
			must(err)
			_, err = st.CreateQuota(ctx, store.QuotaInput{TeamID: w.Team.ID, CardTypeID: ct.ID, CardHours: 1000,
				ValidFrom: now.Add(-24 * time.Hour), ExpiresAt: now.Add(30 * 24 * time.Hour)})
			must(err)
			types[c.Type] = ct
			order = append(order, c.Type)
		}
		h := hosts[hostOf(c)]
		if h == nil {
			h, err = st.CreateHost(ctx, store.HostInput{Name: hostOf(c)})
			must(err)
			hosts[hostOf(c)] = h
		}
		cd, err := st.CreateCard(ctx, store.CardInput{UUID: c.UUID, GPUIndex: c.Index, HostID: h.ID, CardTypeID: ct.ID})
		must(err)
		w.Cards[c.UUID] = cd
		w.hostOf[c.UUID] = hostOf(c)
	}
	mctx := store.WithActor(context.Background(), store.Actor{UserID: member.ID, Username: member.Username})
	task, err := st.CreateTask(mctx, store.TaskInput{TeamID: w.Team.ID, Name: "replay", Priority: "normal", EstimateCardHours: 10,
		DataReadiness: "ready", VRAMGiB: 16, Precision: "bf16"})
	must(err)
	start := now.Truncate(time.Second).Add(-time.Minute)
	for _, name := range order {
		n := 0
		for _, c := range cards {
			if c.Type == name {
				n++
			}
		}
		b := servertest.Decode[servertest.Booking](t, e.Client().APICall(http.MethodPost, "/api/v1/bookings", member.Token,
			fmt.Sprintf(`{"task_id":%d,"card_type":%q,"count":%d,"start":%q,"end":%q}`, task.ID, name, n,
				now.Format(time.RFC3339), now.Add(2*time.Hour).Format(time.RFC3339))), http.StatusCreated)
		for _, u := range b.Cards {
			w.Bookings[strings.ToUpper(u)] = b.ID
		}
		// The booking began a minute ago, as time would have it.
		for _, q := range []string{"UPDATE bookings SET start_at = ?, state = 'active' WHERE id = ?", "UPDATE booking_cards SET start_at = ? WHERE booking_id = ?"} {
			_, err := st.DB().Exec(q, start, b.ID)
			must(err)
		}
	}
	if len(w.Bookings) != len(cards) {
		t.Fatalf("the bookings hold %v, want every recorded card", w.Bookings)
	}
	_, w.AgentTok, err = st.CreateTelemetryToken(ctx, store.TokenAgent, "recorded", host)
	must(err)
	must(e.Srv.Board().RefreshNow(context.Background()))
	return w
}

func (w *recordedWorld) push(t *testing.T, body string) servertest.Response {
	t.Helper()
	h := http.Header{"Content-Type": {"text/csv"}, "Authorization": {"Bearer " + w.AgentTok}}
	return w.Client().Do(http.MethodPost, "/api/v1/telemetry/nvidia-smi?lang=en&host="+w.Host, strings.NewReader(body), h)
}

// recorded is what the portal shows of a card, each value as the tool
// reported it ("-" where it reported none).
type recorded struct {
	state                                    telemetry.State
	util, memUsed, memTotal, temp, power, sm string
	mig                                      bool
	procs                                    string // "pid name MiB user", "; "-joined
	instances                                string // "id profile used/total procs n", "; "-joined
	fault                                    string
}

func show(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func procsText(ps []telemetry.Process) string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%d %s %s %s", p.PID, p.Name, show(p.MemMiB), p.User)))
	}
	return strings.Join(out, "; ")
}

func instancesText(in []telemetry.Instance) string {
	var out []string
	for _, i := range in {
		out = append(out, fmt.Sprintf("%d %s %s/%s procs %d", i.ID, i.Profile, show(i.MemUsedMiB), show(i.MemTotalMiB), i.Processes))
	}
	return strings.Join(out, "; ")
}

// shown reads a card from the fleet JSON as a member of the team sees it.
func (w *recordedWorld) shown(t *testing.T, uuid string) telemetry.CardView {
	t.Helper()
	fl := servertest.Decode[struct {
		Cards []telemetry.CardView `json:"cards"`
	}](t, w.Client().APICall(http.MethodGet, "/api/v1/fleet", w.Users[store.RoleMember].Token, ""), http.StatusOK)
	for _, c := range fl.Cards {
		if strings.EqualFold(c.UUID, uuid) {
			return c
		}
	}
	t.Fatalf("the fleet JSON has no card %s", uuid)
	return telemetry.CardView{}
}

// checkShown holds the fleet JSON, /metrics and the board page to want.
func (w *recordedWorld) checkShown(t *testing.T, uuid string, want recorded) {
	t.Helper()
	v := w.shown(t, uuid)
	got := recorded{v.State, show(v.Util), show(v.MemUsedMiB), show(v.MemTotalMiB), show(v.TempC), show(v.PowerW), show(v.SMActive),
		v.MIG, procsText(v.ProcessList), instancesText(v.Instances), v.Fault}
	if got != want {
		t.Errorf("fleet JSON of %s\n got %+v\nwant %+v", uuid, got, want)
	}
	if !v.Registered || v.Host != w.hostOf[uuid] || v.Index != w.Cards[uuid].GPUIndex || v.Hold == nil || v.Hold.BookingID != w.Bookings[strings.ToUpper(uuid)] {
		t.Errorf("fleet JSON of %s: registered %v host %s index %d booking %+v", uuid, v.Registered, v.Host, v.Index, v.Hold)
	}

	m := w.Client().Get("/metrics").String()
	for name, val := range map[string]string{
		"cardhour_gpu_utilization_percent": want.util, "cardhour_gpu_memory_used_mib": want.memUsed,
		"cardhour_gpu_memory_total_mib": want.memTotal, "cardhour_gpu_temperature_celsius": want.temp,
		"cardhour_gpu_power_watts": want.power, "cardhour_gpu_sm_active_percent": want.sm,
	} {
		if got := metricValues(m, name, uuid, ""); strings.Join(got, " ") != strings.Trim(val, "-") {
			t.Errorf("/metrics %s of %s: %v, want %s", name, uuid, got, val)
		}
	}
	if got := metricValues(m, "cardhour_gpu_state", uuid, `state="`+string(want.state)+`"`); strings.Join(got, " ") != "1" {
		t.Errorf("/metrics: %s is not in state %s: %v\n%s", uuid, want.state, got, grepLines(m, "cardhour_gpu_state"))
	}
	var inst []string
	for _, in := range v.Instances {
		l := `gpu_instance="` + strconv.Itoa(in.ID) + `"`
		inst = append(inst, fmt.Sprintf("%d %s %s/%s procs %s", in.ID, in.Profile, strings.Join(metricValues(m, "cardhour_gpu_instance_memory_used_mib", uuid, l), ""),
			strings.Join(metricValues(m, "cardhour_gpu_instance_memory_total_mib", uuid, l), ""), strings.Join(metricValues(m, "cardhour_gpu_instance_processes", uuid, l), "")))
	}
	if got := strings.Join(inst, "; "); got != want.instances {
		t.Errorf("/metrics instances of %s\n got %s\nwant %s", uuid, got, want.instances)
	}

	doc := w.LoggedIn(store.RoleMember).Get("/board?lang=en").Doc(t)
	tile := doc.Find(`[data-testid=tile][data-uuid="` + v.UUID + `"]`)
	if tile.Length() != 1 {
		t.Fatalf("the board has %d tiles for %s", tile.Length(), uuid)
	}
	if s, _ := tile.Attr("data-state"); s != string(want.state) {
		t.Errorf("board tile of %s is %s, want %s", uuid, s, want.state)
	}
	var chips []string
	tile.Find("[data-testid=tile-mig] .inst").Each(func(_ int, s *goquery.Selection) { chips = append(chips, s.Text()) })
	var profiles []string
	for _, in := range v.Instances {
		profiles = append(profiles, in.Profile)
	}
	if strings.Join(chips, " ") != strings.Join(profiles, " ") {
		t.Errorf("board tile of %s shows instances %v, want %v", uuid, chips, profiles)
	}
	if f := strings.TrimSpace(tile.Find("[data-testid=tile-fault]").Text()); f != want.fault {
		t.Errorf("board tile of %s shows fault %q, want %q", uuid, f, want.fault)
	}
}

// metricValues are the values of the series of name for the card uuid
// whose labels hold extra as well.
func metricValues(m, name, uuid, extra string) []string {
	var out []string
	for _, l := range strings.Split(m, "\n") {
		if !strings.HasPrefix(l, name+"{") || !strings.Contains(l, `uuid="`+uuid+`"`) || !strings.Contains(l, extra) {
			continue
		}
		v := l[strings.LastIndexByte(l, ' ')+1:]
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			v = strconv.FormatFloat(f, 'f', -1, 64)
		}
		out = append(out, v)
	}
	return out
}

// checkUsage holds the usage of the booking holding uuid to what the
// samples vouched for: sampled the time between its cards' samples, and
// all of it busy or all of it idle as the recording was.
func (w *recordedWorld) checkUsage(t *testing.T, uuid string, sampled float64, busy bool) {
	t.Helper()
	if err := w.Srv.Board().SaveRollupsNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	u := servertest.Decode[store.BookingUsage](t, w.Client().APICall(http.MethodGet, fmt.Sprintf("/api/v1/bookings/%d/usage", w.Bookings[strings.ToUpper(uuid)]),
		w.Users[store.RoleMember].Token, ""), http.StatusOK)
	wantBusy, wantIdle := sampled, 0.0
	if !busy {
		wantBusy, wantIdle = 0, sampled
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-3 }
	if !near(u.SampledSeconds, sampled) || !near(u.BusySeconds, wantBusy) || !near(u.IdleSeconds, wantIdle) || u.HeldIdleSeconds != 0 ||
		u.SampledSeconds > float64(u.ElapsedCardSeconds) {
		t.Errorf("usage of %s: sampled %v busy %v idle %v held idle %v (elapsed %d), want sampled %v busy %v idle %v held idle 0",
			uuid, u.SampledSeconds, u.BusySeconds, u.IdleSeconds, u.HeldIdleSeconds, u.ElapsedCardSeconds, sampled, wantBusy, wantIdle)
	}
}

// csvRows cuts a recorded --query-gpu CSV into its fields as recorded.
func csvRows(t *testing.T, b string) [][]string {
	t.Helper()
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(b, "\n"), "\n") {
		rows = append(rows, strings.Split(l, ", "))
		if len(rows[len(rows)-1]) != len(rows[0]) {
			t.Fatalf("line %d has %d fields, the header %d", len(rows), len(rows[len(rows)-1]), len(rows[0]))
		}
	}
	return rows
}

func joinRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, ", "))
		b.WriteByte('\n')
	}
	return b.String()
}

// reversed is the recording with its columns in the opposite order.
func reversed(t *testing.T, b string) string {
	rows := csvRows(t, b)
	for _, r := range rows {
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
	}
	return joinRows(rows)
}

// headerless is the recording cut to the fixed columns of
// telemetry.GPUQuery, in its order, without the header and the units: what
// the cron line of the README prints on that card.
func headerless(t *testing.T, b string) string {
	rows := csvRows(t, b)
	var out [][]string
	for _, r := range rows[1:] {
		var row []string
		for _, name := range strings.Split(telemetry.GPUQuery, ",") {
			i := -1
			for j, h := range rows[0] {
				if h == name || strings.HasPrefix(h, name+" [") {
					i = j
				}
			}
			if i < 0 {
				t.Fatalf("the recording has no %s column", name)
			}
			v := r[i]
			if k := strings.LastIndexByte(v, ' '); k > 0 && (strings.HasSuffix(v, " MiB") || strings.HasSuffix(v, " W") || strings.HasSuffix(v, " %") || strings.HasSuffix(v, " MHz")) {
				v = v[:k]
			}
			row = append(row, v)
		}
		out = append(out, row)
	}
	return joinRows(out)
}

// withoutColumn drops a column, header and rows.
func withoutColumn(t *testing.T, b, name string) string {
	rows := csvRows(t, b)
	i := -1
	for j, h := range rows[0] {
		if h == name {
			i = j
		}
	}
	if i < 0 {
		t.Fatalf("no column %s", name)
	}
	for k, r := range rows {
		rows[k] = append(r[:i:i], r[i+1:]...)
	}
	return joinRows(rows)
}

// TestRecordedNvidiaSmiThroughThePushEndpoint: each recording, pushed
// twice as cron would, shows on the fleet JSON, /metrics and the board as
// recorded, and its booking is credited with the time between the pushes,
// busy or idle as the card was.
func TestRecordedNvidiaSmiThroughThePushEndpoint(t *testing.T) {
	t.Parallel()
	h200 := recordedCard{maskedUUID, 0, "NVIDIA H200", 141, ""}
	h100 := recordedCard{maskedUUID, 0, "NVIDIA H100 80GB HBM3", 80, ""}
	l40s := recordedCard{maskedUUID, 0, "NVIDIA L40S", 48, ""}
	h100Load := recorded{telemetry.StateFull, "100", "19818", "81559", "59", "631.95", "-", false,
		"11327 /root/tools/memhog 2566; 11328 /root/tools/memhog 1542; 11345 ./gpu_burn 15690", "", ""}
	for _, c := range []struct {
		name string
		card recordedCard
		body func(t *testing.T) string
		want recorded
		busy bool
	}{
		// MIG: utilization.gpu is [N/A]; the processes tell it computes.
		{"h200-mig-load", h200, func(t *testing.T) string { return rec(t, recH200LoadGPU) + "\n" + rec(t, recH200LoadApps) },
			recorded{telemetry.StateBusy, "-", "16959", "143771", "36", "295.01", "-", true,
				"12249 /root/tools/memhog 2194; 12250 /root/tools/memhog 1170; 12267 ./gpu_burn 13526", "", ""}, true},
		{"h200-mig-idle", h200, func(t *testing.T) string { return rec(t, recH200IdleGPU) + "\n" + rec(t, recH200IdleApps) },
			recorded{telemetry.StateIdle, "-", "55", "143771", "28", "78.28", "-", true, "", "", ""}, false},
		{"h100-load", h100, func(t *testing.T) string { return rec(t, recH100LoadGPU) + "\n" + rec(t, recH100LoadApps) }, h100Load, true},
		{"h100-idle", h100, func(t *testing.T) string { return rec(t, recH100IdleGPU) },
			recorded{telemetry.StateIdle, "0", "0", "81559", "41", "69.85", "-", false, "", "", ""}, false},
		// The L40S capture's "idle" sample reads 100 % as recorded.
		{"l40s", l40s, func(t *testing.T) string { return rec(t, recL40SIdleGPU) },
			recorded{telemetry.StateFull, "100", "0", "46068", "63", "144.97", "-", false, "", "", ""}, true},
		// Columns by name: the H100's in the opposite order, header and all.
		{"h100-load-reordered", h100, func(t *testing.T) string { return reversed(t, rec(t, recH100LoadGPU)) + "\n" + rec(t, recH100LoadApps) }, h100Load, true},
		// No header: the fixed order of the README's cron line.
		{"h100-load-headerless", h100, func(t *testing.T) string {
			return headerless(t, rec(t, recH100LoadGPU)) + "\n" + rec(t, recH100LoadApps)
		}, h100Load, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newRecordedWorld(t, nil, "gpu-rec-01", c.card)
			body := c.body(t)
			var ats []time.Time
			for range 2 {
				r := w.push(t, body)
				res := servertest.Decode[struct {
					Accepted int `json:"accepted"`
				}](t, r, http.StatusOK)
				if res.Accepted != 1 {
					t.Fatalf("push accepted %d: %s", res.Accepted, r)
				}
				ats = append(ats, w.Srv.Board().LiveCard(c.card.UUID).LastSample)
				time.Sleep(20 * time.Millisecond)
			}
			w.checkShown(t, c.card.UUID, c.want)
			w.checkUsage(t, c.card.UUID, ats[1].Sub(ats[0]).Seconds(), c.busy)
		})
	}
}

// TestRecordedFaultThroughThePushEndpoint: nvidia-smi's line for a GPU it
// cannot reach marks the card on that bus faulty — on the board, in
// /metrics, in the inventory — tells the holder and the admins, and the
// booking is credited neither busy nor held idle for it.
func TestRecordedFaultThroughThePushEndpoint(t *testing.T) {
	t.Parallel()
	w := newRecordedWorld(t, nil, "gpu-rec-01", recordedCard{maskedUUID, 0, "NVIDIA H100 80GB HBM3", 80, ""})
	if r := w.push(t, rec(t, recH100LoadGPU)); r.StatusCode != http.StatusOK {
		t.Fatalf("push: %d %s", r.StatusCode, r)
	}
	first := w.Srv.Board().LiveCard(maskedUUID).LastSample
	// The recorded error names GPU 0000:09:00.0; here it is the H100's bus,
	// 00000000:00:09.0 as --query-gpu wrote it.
	errLine := strings.Replace(rec(t, recUnknownError), "0000:09:00.0", "0000:00:09.0", 1)
	if !strings.Contains(errLine, "Unable to determine the device handle for GPU 0000:00:09.0: Unknown Error") {
		t.Fatalf("the recording changed: %q", errLine)
	}
	time.Sleep(20 * time.Millisecond)
	res := servertest.Decode[struct {
		Accepted int `json:"accepted"`
	}](t, w.push(t, errLine), http.StatusOK)
	if res.Accepted != 1 {
		t.Fatalf("the fault was not taken: %+v", res)
	}
	last := w.Srv.Board().LiveCard(maskedUUID).LastSample
	ctx := context.Background()
	if err := w.Srv.Board().ProcessEventsNow(ctx); err != nil {
		t.Fatal(err)
	}
	w.checkShown(t, maskedUUID, recorded{telemetry.StateFault, "-", "-", "81920", "-", "-", "-", false, "", "", "Unknown Error"})
	w.checkUsage(t, maskedUUID, last.Sub(first).Seconds(), false)
	if cd, err := w.St.FindCardByID(ctx, w.Cards[maskedUUID].ID); err != nil || cd.Status != store.CardFault {
		t.Errorf("inventory card %+v %v, want faulty", cd, err)
	}
	for _, role := range []string{store.RoleMember, store.RoleAdmin} {
		notes, err := w.St.FindNotifications(ctx, w.Users[role].ID, true, 20)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, note := range notes {
			if note.MessageKey == store.NotifyAlertFault {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the %s got %d fault notices, want one", role, n)
		}
	}
}

// TestPushRefusalsNameTheLinesAndWhy: a push the portal cannot use is
// refused with the lines it skipped and why, in the message and by line
// in the fields; one whose newlines were stripped names --data-binary.
func TestPushRefusalsNameTheLinesAndWhy(t *testing.T) {
	t.Parallel()
	w := newRecordedWorld(t, nil, "gpu-rec-01", recordedCard{maskedUUID, 0, "NVIDIA H100 80GB HBM3", 80, ""})
	for _, c := range []struct {
		name, body string
		message    []string // in the message
		line       string   // a field
	}{
		// Another query's fields, no header: not the fixed order.
		{"gtx770-other-query", rec(t, recGTX770), []string{"skipped lines: 1", "line 1:"}, "line 1"},
		// A header without uuid is refused by name.
		{"header-without-uuid", withoutColumn(t, rec(t, recH100LoadGPU), "uuid"), []string{"line 1:", "uuid"}, "line 1"},
		// A GPU nvidia-smi cannot reach on a bus no card was seen on.
		{"unknown-bus", rec(t, recUnknownError), []string{"line 1:", "0000:09:00.0", "Unknown Error"}, "line 1"},
		// curl -d: header and row on one line.
		{"newlines-stripped", strings.ReplaceAll(rec(t, recH100LoadGPU)+"\n"+rec(t, recH100LoadApps), "\n", ""), []string{"--data-binary"}, ""},
	} {
		before := w.Srv.Board().LiveCard(maskedUUID).LastSample
		e := servertest.MustAPIError(t, w.push(t, c.body), http.StatusUnprocessableEntity, "invalid")
		for _, s := range c.message {
			if !strings.Contains(e.Error.Message, s) {
				t.Errorf("%s: the message %q lacks %q", c.name, e.Error.Message, s)
			}
		}
		if c.line != "" && e.Error.Fields[c.line] == "" {
			t.Errorf("%s: no field for %s: %v", c.name, c.line, e.Error.Fields)
		}
		if after := w.Srv.Board().LiveCard(maskedUUID).LastSample; !after.Equal(before) {
			t.Errorf("%s: a refused push changed the card", c.name)
		}
	}
}

// TestRecordedNvidiaSmiThroughTheAgent: the agent runs a fake nvidia-smi
// that prints the H200 MIG recording (the query, -L, -q and the compute
// apps) and posts to the portal: the card shows its GPU instances, the
// processes with their OS users, and a process of someone outside the
// booking's team is abnormal occupancy, alerted once. Not parallel: the
// fake nvidia-smi is put on PATH.
func TestRecordedNvidiaSmiThroughTheAgent(t *testing.T) {
	telemetrytest.FakeNvidiaSmi(t, [][2]string{
		{"--query-gpu=*", telemetrytest.RecordingPath(recH200LoadGPU)},
		{"--query-compute-apps=*", telemetrytest.RecordingPath(recH200LoadApps)},
		{"-L", telemetrytest.RecordingPath(recH200List)},
		{"-q", telemetrytest.RecordingPath(recH200Query)},
	})
	w := newRecordedWorld(t, nil, "gpu-h200-01", recordedCard{maskedUUID, 0, "NVIDIA H200", 141, ""})
	ctx := context.Background()
	// The member runs as alice; bob is nobody on the team.
	alice := []string{"alice"}
	if _, err := w.St.UpdateUser(w.AdminCtx(), w.Users[store.RoleMember].ID, store.UserUpdate{OSAccounts: &alice}); err != nil {
		t.Fatal(err)
	}
	if err := w.Srv.Board().RefreshNow(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := telemetry.NewAgent(telemetry.AgentConfig{Server: w.TS.URL, Token: w.AgentTok, Host: w.Host, Run: telemetry.ExecRunner,
		ProcRoot:   telemetrytest.FakeProc(t, map[int]string{12249: "1000", 12250: "1000", 12267: "1001"}),
		LookupUser: telemetrytest.Users(map[string]string{"1000": "alice", "1001": "bob"})})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-2 * time.Second).Truncate(time.Millisecond)
	a.Step(ctx, at)
	a.Step(ctx, at.Add(time.Second))
	if st := a.Stats(); st.Sent != 2 || a.Buffered() != 0 {
		t.Fatalf("agent stats %+v, %d buffered", st, a.Buffered())
	}
	if err := w.Srv.Board().ProcessEventsNow(ctx); err != nil {
		t.Fatal(err)
	}
	w.checkShown(t, maskedUUID, recorded{telemetry.StateBusy, "-", "16959", "143771", "36", "295.01", "-", true,
		"12249 /root/tools/memhog 2194 alice; 12250 /root/tools/memhog 1170 alice; 12267 ./gpu_burn 13526 bob",
		"2 3g.71gb 16925/71424 procs 3; 3 2g.35gb 17/33280 procs 0; 9 1g.18gb 9/16384 procs 0; 10 1g.18gb 9/16384 procs 0", ""})
	w.checkUsage(t, maskedUUID, 1, true)
	foreign := openAlerts(t, w.St, store.AlertForeign)
	if len(foreign) != 1 {
		t.Fatalf("%d foreign-process alerts, want one", len(foreign))
	}
	if d := string(foreign[0].Detail); !strings.Contains(d, `"pid":12267`) || !strings.Contains(d, `"user":"bob"`) || strings.Contains(d, "alice") {
		t.Errorf("the alert names %s, want bob's gpu_burn only", d)
	}
	// The board names the card, host, team, the process and since when.
	alerts := w.LoggedIn(store.RoleMember).Get("/board?lang=en").Doc(t).Find("[data-testid=alerts] .a-foreign").Text()
	if want := "gpu-h200-01 #0 runs processes from outside llm / replay: 12267 ./gpu_burn (bob, 13.2 GiB) · since "; !strings.Contains(alerts, want) {
		t.Errorf("the board's alert reads %q, want %q…", alerts, want)
	}
}

// TestRecordedDCGMThroughARealScrape: the portal scrapes three recorded
// dcgm-exporter endpoints over HTTP — an A800×8 with one GPU split into
// MIG instances and a vGPU family that does not parse, an L4 with
// reserved VRAM, and an RTX 4000 Ada whose XID line holds the XID the
// recorded kernel log shows — and every card shows as recorded.
func TestRecordedDCGMThroughARealScrape(t *testing.T) {
	t.Parallel()
	xid := regexp.MustCompile(`Xid \(PCI:[0-9a-f:]+\): (\d+),`).FindStringSubmatch(rec(t, recDmesgXid79))
	if xid == nil {
		t.Fatal("no Xid in the kernel log")
	}
	endpoints := map[string]string{
		"a800": rec(t, recDCGMA800),
		"l4":   rec(t, recDCGML4),
		"rtx":  regexp.MustCompile(`(?m)^(DCGM_FI_DEV_XID_ERRORS\{.*\}) 0$`).ReplaceAllString(rec(t, recDCGMRTX4000), "${1} "+xid[1]),
	}
	if !strings.Contains(endpoints["rtx"], "} 79") {
		t.Fatal("the RTX 4000 scrape has no XID line to set")
	}
	var targets []string
	for _, body := range endpoints {
		ts := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = rw.Write([]byte(body))
		}))
		t.Cleanup(ts.Close)
		targets = append(targets, ts.URL+"/metrics")
	}
	// Each card on the host its exporter names.
	w := newRecordedWorld(t, map[string]string{"CARDHOUR_DCGM_TARGETS": strings.Join(targets, ","), "CARDHOUR_DCGM_INTERVAL": "1s"}, "msxf-hpc-64-35-ai",
		recordedCard{a800GPU0, 0, "NVIDIA A800-SXM4-80GB", 80, ""}, recordedCard{a800GPU1, 1, "NVIDIA A800-SXM4-80GB", 80, ""},
		recordedCard{l4GPU, 0, "NVIDIA L4", 24, "i-030791dc5a37cd257"}, recordedCard{rtx4000GPU, 0, "NVIDIA RTX 4000 Ada Generation", 20, rtxHost})
	stop := w.Srv.Board().Start(context.Background())
	// Three scrapes at least, so two gaps are credited.
	seen := map[string][]time.Time{}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (len(seen[a800GPU0]) < 3 || len(seen[l4GPU]) < 3) {
		for _, u := range []string{a800GPU0, l4GPU} {
			if at := w.Srv.Board().LiveCard(u).LastSample; !at.IsZero() && (len(seen[u]) == 0 || !at.Equal(seen[u][len(seen[u])-1])) {
				seen[u] = append(seen[u], at)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	for _, u := range []string{a800GPU0, l4GPU} {
		if at := w.Srv.Board().LiveCard(u).LastSample; len(seen[u]) > 0 && !at.Equal(seen[u][len(seen[u])-1]) {
			seen[u] = append(seen[u], at) // a scrape between the last look and the stop
		}
	}
	if len(seen[a800GPU0]) < 3 || len(seen[l4GPU]) < 3 {
		t.Fatalf("scrapes seen: %v", seen)
	}
	ctx := context.Background()
	if err := w.Srv.Board().ProcessEventsNow(ctx); err != nil {
		t.Fatal(err)
	}
	// GPU 0: used is its instances' sum, the total the inventory's (the
	// instances do not cover the card), no utilisation on a MIG card, SM
	// activity the busiest instance's.
	w.checkShown(t, a800GPU0, recorded{telemetry.StateIdle, "-", "30", "81920", "33", "78.174", "0", true, "",
		"3 2g.20gb 10/19967 procs 0; 5 2g.20gb 10/19967 procs 0; 6 2g.20gb 10/19967 procs 0", ""})
	a800GPU1Temp := metricLineValue(t, endpoints["a800"], "DCGM_FI_DEV_GPU_TEMP", `gpu="1"`)
	a800GPU1Power := metricLineValue(t, endpoints["a800"], "DCGM_FI_DEV_POWER_USAGE", `gpu="1"`)
	w.checkShown(t, a800GPU1, recorded{telemetry.StateIdle, "0", "2", "81228", a800GPU1Temp, a800GPU1Power, "0", false, "", "", ""})
	// Total = used + free + reserved: 0 + 22563 + 470.
	w.checkShown(t, l4GPU, recorded{telemetry.StateIdle, "0", "0", "23033", "31", "16.365", "0", false, "", "", ""})
	// SM activity 0.004656 is kept apart from GPU_UTIL's 0; XID 79 is a fault.
	w.checkShown(t, rtx4000GPU, recorded{telemetry.StateFault, "0", "1", "20473", "48", "40.979", "0.4656", false, "", "", "XID 79"})
	if a := openAlerts(t, w.St, store.AlertFault); len(a) != 1 || a[0].CardID == nil || *a[0].CardID != w.Cards[rtx4000GPU].ID {
		t.Errorf("fault alerts %+v, want one for the RTX 4000", a)
	}
	// Every scrape of the idle recordings is idle time of the bookings:
	// the A800s' holds both cards, scraped together.
	span := func(u string) float64 { s := seen[u]; return s[len(s)-1].Sub(s[0]).Seconds() }
	w.checkUsage(t, a800GPU0, 2*span(a800GPU0), false)
	w.checkUsage(t, l4GPU, span(l4GPU), false)
}

// metricLineValue is the value of a recorded exporter's series.
func metricLineValue(t *testing.T, scrape, name, label string) string {
	t.Helper()
	for _, l := range strings.Split(scrape, "\n") {
		if strings.HasPrefix(l, name+"{") && strings.Contains(l, label) {
			f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			if err != nil {
				t.Fatal(err)
			}
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	t.Fatalf("the recording has no %s{%s}", name, label)
	return ""
}
