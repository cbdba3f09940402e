package board

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/telemetry"
	"cardhour/web"
)

// boardViewer is who watches the board: a board token, or a user.
type boardViewer struct {
	token string      // the board token, when that is how they came
	user  *store.User // else the logged-in user
}

// boardAuth admits a board token (?token=), a session or an API token.
// The routes are Public in the table because a board token is no user;
// this is their gate, and it refuses everyone else with 401.
func (a *Area) boardAuth(c echo.Context) (boardViewer, error) {
	const op = "server.boardAuth"
	if tok := c.QueryParam("token"); tok != "" {
		if _, err := a.Store.FindTelemetryToken(c.Request().Context(), store.TokenBoard, tok); err != nil {
			return boardViewer{}, err
		}
		return boardViewer{token: tok}, nil
	}
	u, err := request.CurrentUser(c)
	if err != nil {
		return boardViewer{}, err
	}
	if u == nil {
		return boardViewer{}, errs.E(errs.Unauthorized, op, "auth.required")
	}
	return boardViewer{user: u}, nil
}

// boardPage is the wall board.
func (a *Area) boardPage(c echo.Context) error {
	v, err := a.boardAuth(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := a.live.ensureFresh(ctx, 5*time.Second); err != nil {
		return err
	}
	p := a.Pages.Base(c)
	p.Title = p.T("board.title")
	p.Nav = "board"
	p.User = response.Viewer(v.user)
	now := time.Now()
	sum := a.live.fleet.Summary(now)
	th := a.Config.Thresholds
	b := web.BoardProps{
		WSURL:        "/ws/board",
		Figures:      web.BoardFigures{Cards: sum.Cards, Booked: sum.Booked, Busy: sum.Busy, HeldIdleHoursToday: sum.HeldIdleHoursToday, UtilNow: sum.UtilNow},
		Counts:       map[string]int{},
		LoggedIn:     v.user != nil,
		IsAdmin:      v.user != nil && v.user.Role == store.RoleAdmin,
		Unregistered: sum.Unregistered,
		HeldIdleMin:  int(th.HeldIdleAfter.Minutes()),
		FullMemPct:   th.FullMemPct, FullUtilPct: th.FullUtilPct, IdleUtilPct: th.IdleUtilPct,
		Now: now,
	}
	if v.token != "" {
		b.WSURL += "?token=" + url.QueryEscape(v.token)
	}
	for st, n := range sum.States {
		b.Counts[string(st)] = n
	}
	for _, cv := range a.live.fleet.Snapshot() {
		if len(b.Hosts) == 0 || b.Hosts[len(b.Hosts)-1].Name != cv.Host {
			b.Hosts = append(b.Hosts, web.BoardHost{Name: cv.Host})
		}
		h := &b.Hosts[len(b.Hosts)-1]
		h.Cards = append(h.Cards, boardTile(cv))
	}
	for _, al := range a.live.openAlerts() {
		b.Alerts = append(b.Alerts, boardAlert(al))
	}
	for _, w := range sum.Waiting {
		b.Waiting = append(b.Waiting, web.BoardWaiting{CardType: w.CardType, Requests: w.Requests, OldestSince: w.OldestSince})
	}
	return response.Render(c, http.StatusOK, web.BoardPage(p, b))
}

// boardAlert is an open alert as the board's page lists it.
func boardAlert(al telemetry.AlertView) web.BoardAlert {
	out := web.BoardAlert{Kind: string(al.Kind), Host: al.Host, Index: al.Index, Team: al.Team, Task: al.Task, Since: al.Since,
		Value: al.Value, Reason: al.Reason}
	for _, p := range al.Processes {
		out.Processes = append(out.Processes, web.BoardProcess{PID: p.PID, Name: p.Name, User: p.User, MemMiB: reading(p.MemMiB)})
	}
	return out
}

func reading(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

func boardTile(cv telemetry.CardView) web.BoardTile {
	t := web.BoardTile{UUID: cv.UUID, Index: cv.Index, Type: cv.Type, Model: cv.Model, Registered: cv.Registered, State: string(cv.State),
		Figure: cv.Figure, Util: reading(cv.Util), MemUsedMiB: reading(cv.MemUsedMiB), MemTotalMiB: reading(cv.MemTotalMiB), TempC: reading(cv.TempC),
		PowerW: reading(cv.PowerW), LowSince: cv.LowSince, SMActive: reading(cv.SMActive), Fault: cv.Fault}
	for _, in := range cv.Instances {
		t.Instances = append(t.Instances, web.BoardInstance{ID: in.ID, Profile: in.Profile, MemUsedMiB: reading(in.MemUsedMiB),
			MemTotalMiB: reading(in.MemTotalMiB), SMActive: reading(in.SMActivePct), Processes: in.Processes})
	}
	if h := cv.Hold; h != nil {
		t.Booking = &web.BoardBooking{ID: h.BookingID, Team: h.Team, Task: h.Task, User: h.User, End: h.End}
	}
	return t
}

// boardSocket upgrades to the board's websocket: a snapshot first, then
// deltas, pings every pingPeriod. Refused with 401 before the upgrade when
// the caller is not allowed, 400 when it is not a websocket request; closed
// (4401) once its credential no longer admits the caller (guard.go).
func (a *Area) boardSocket(c echo.Context) error {
	v, err := a.boardAuth(c)
	if err != nil {
		return err
	}
	if !websocket.IsWebSocketUpgrade(c.Request()) {
		return errs.E(errs.Invalid, "server.boardSocket", "board.ws_only")
	}
	h := a.live.hub
	if !h.isRunning() {
		return errs.E(errs.Unavailable, "server.boardSocket", "board.ws_down")
	}
	if !a.sameOrigin(c.Request()) {
		return errs.E(errs.Forbidden, "server.boardSocket", "board.ws_origin")
	}
	conn, err := a.upgrader().Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		// The upgrader has answered the client already.
		return nil
	}
	cl := &client{hub: h, conn: conn, send: make(chan frame, h.opts.sendBuffer), cred: a.socketCredential(c, v)}
	h.pumps.Add(2)
	go cl.writePump()
	go cl.readPump()
	if !h.join(cl) {
		close(cl.send)
	}
	return nil
}

// heatmapPage shows cards × hours for one day or seven.
func (a *Area) heatmapPage(c echo.Context) error {
	ctx := c.Request().Context()
	loc := a.Config.TZ
	now := time.Now().In(loc)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	if q := c.QueryParam("day"); q != "" {
		// In the portal's range: a week from 9999-12-31 is a year MariaDB
		// refuses (500).
		d, err := time.ParseInLocation(time.DateOnly, q, loc)
		if err != nil || !request.InRange(d) {
			return errs.E(errs.Invalid, "server.heatmapPage", "heatmap.bad_day")
		}
		day = d
	}
	days := 1
	if c.QueryParam("days") == "7" {
		days = 7
	}
	from, to := day, day.AddDate(0, 0, days)
	rollups, err := a.Store.FindHourRollups(ctx, from, to)
	if err != nil {
		return err
	}
	cards, err := a.Store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	p := a.Pages.Page(c, "heatmap.title", "board")
	props := buildHeatmap(p, cards, rollups, from, days, a.Config.Thresholds)
	props.Prev = day.AddDate(0, 0, -days).Format(time.DateOnly)
	props.Next = day.AddDate(0, 0, days).Format(time.DateOnly)
	return response.Render(c, http.StatusOK, web.HeatmapPage(p, props))
}

// longHours is how much of a day a card must idle, or be full, to be listed.
const longHours = 20

// longStatesPage lists the day's cards idle or full most of it.
func (a *Area) longStatesPage(c echo.Context) error {
	loc := a.Config.TZ
	now := time.Now().In(loc)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	if q := c.QueryParam("day"); q != "" {
		// In the portal's range: a week from 9999-12-31 is a year MariaDB
		// refuses (500).
		d, err := time.ParseInLocation(time.DateOnly, q, loc)
		if err != nil || !request.InRange(d) {
			return errs.E(errs.Invalid, "server.longStatesPage", "heatmap.bad_day")
		}
		day = d
	}
	rows, err := a.Store.FindLongStates(c.Request().Context(), day, day.AddDate(0, 0, 1), longHours)
	if err != nil {
		return err
	}
	props := web.LongStatesProps{Day: day.Format(time.DateOnly), Prev: day.AddDate(0, 0, -1).Format(time.DateOnly),
		Next: day.AddDate(0, 0, 1).Format(time.DateOnly), MinHours: longHours}
	for _, r := range rows {
		props.Rows = append(props.Rows, web.LongStateRow{Host: r.HostName, Index: r.GPUIndex, Type: r.CardTypeName, UUID: r.UUID,
			Sampled: r.SampledHours, Busy: r.BusyHours, Full: r.FullHours, Idle: r.IdleHours, LongIdle: r.LongIdle, LongFull: r.LongFull})
	}
	return response.Render(c, http.StatusOK, web.LongStatesPage(a.Pages.Page(c, "long.title", "board"), props))
}

// buildHeatmap lays the hour rollups out as rows of cells. Hours are the
// viewer's; a zone with a half-hour offset shows UTC hours shifted, which
// the hourly grid cannot avoid.
func buildHeatmap(p web.Page, cards []store.CardView, rollups []store.Rollup, from time.Time, days int, th telemetry.Thresholds) web.HeatmapProps {
	hours := 24 * days
	out := web.HeatmapProps{Day: from.Format(time.DateOnly), Days: days}
	for i := 0; i < hours; i++ {
		t := from.Add(time.Duration(i) * time.Hour)
		out.Columns = append(out.Columns, web.HeatColumn{Label: t.Format("15"), DayStart: t.Hour() == 0 && (i > 0 || days > 1),
			DayLabel: t.Format("01-02") + " " + p.T(weekdayKey(t.Weekday()))})
	}
	by := map[int64]map[int]store.Rollup{}
	for _, r := range rollups {
		i := int(r.At.Sub(from.UTC()) / time.Hour)
		if i < 0 || i >= hours {
			continue
		}
		if by[r.CardID] == nil {
			by[r.CardID] = map[int]store.Rollup{}
		}
		by[r.CardID][i] = r
		out.Sampled = true
	}
	sort.SliceStable(cards, func(i, j int) bool {
		if cards[i].HostName != cards[j].HostName {
			return cards[i].HostName < cards[j].HostName
		}
		return cards[i].GPUIndex < cards[j].GPUIndex
	})
	for _, cd := range cards {
		if cd.Status == store.CardRetired && by[cd.ID] == nil {
			continue
		}
		row := web.HeatRow{Host: cd.HostName, Index: cd.GPUIndex, Type: cd.CardTypeName, UUID: cd.UUID, AvgUtil: -1}
		var utilSum float64
		var utilN, sampledHours int
		var sampled, busy, full, heldIdle float64
		for i := 0; i < hours; i++ {
			r, ok := by[cd.ID][i]
			if !ok || r.Samples == 0 {
				row.Cells = append(row.Cells, web.HeatCell{Util: -1, Title: out.Columns[i].DayLabel + " " + out.Columns[i].Label + ":00 —"})
				continue
			}
			sampledHours++
			avg := r.UtilAvg()
			if r.UtilSamples > 0 {
				utilSum += r.UtilSum
				utilN += r.UtilSamples
			} else {
				avg = -1
			}
			sampled += r.SampledSeconds
			busy += r.BusySeconds
			full += r.FullSeconds
			heldIdle += r.HeldIdleSeconds
			cell := web.HeatCell{Util: avg,
				Full:     r.SampledSeconds > 0 && r.FullSeconds*2 > r.SampledSeconds,
				HeldIdle: r.SampledSeconds > 0 && r.HeldIdleSeconds*2 > r.SampledSeconds}
			memPct := 0.0
			if r.MemTotalMiB > 0 {
				memPct = r.MemMaxMiB / r.MemTotalMiB * 100
			}
			cell.Title = p.T("heatmap.cell", out.Columns[i].DayLabel+" "+out.Columns[i].Label+":00", fmt.Sprintf("%.0f", math.Max(avg, 0)),
				fmt.Sprintf("%.0f", r.UtilMax), fmt.Sprintf("%.0f", memPct), fmt.Sprintf("%.0f", r.HeldIdleSeconds/60))
			row.Cells = append(row.Cells, cell)
		}
		if utilN > 0 {
			row.AvgUtil = utilSum / float64(utilN)
		}
		if sampled > 0 {
			row.BusyPct = busy / sampled * 100
		}
		row.HeldIdleH = schedule.Hours(heldIdle)
		// A card stands out when it reported for most of the period and was
		// (nearly) never busy, or full most of the time.
		if sampledHours*2 >= hours && sampled > 0 {
			switch {
			case full/sampled >= 0.8:
				row.Flag = "full_all"
			case busy/sampled < 0.05 && row.AvgUtil < th.IdleUtilPct:
				row.Flag = "idle_all"
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// weekdayKey is the message of a weekday's short name.
func weekdayKey(d time.Weekday) string { return "heatmap.weekday." + strings.ToLower(d.String()[:3]) }

// telemetryAdminPage lists pending cards and telemetry tokens.
func (a *Area) telemetryAdminPage(c echo.Context) error {
	return a.renderTelemetryAdmin(c, http.StatusOK, web.NewForm(), "", "")
}

func (a *Area) renderTelemetryAdmin(c echo.Context, status int, f web.Form, newToken, newKind string) error {
	ctx := c.Request().Context()
	page := max(1, int(request.ID(c.QueryParam("page"))))
	pending, total, err := a.Store.FindPendingCardsPage(ctx, pendingPerPage, (page-1)*pendingPerPage)
	if err != nil {
		return err
	}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	tokens, err := a.Store.FindTelemetryTokens(ctx)
	if err != nil {
		return err
	}
	p := a.Pages.Page(c, "telemetry.admin_title", "admin")
	props := web.TelemetryAdminProps{NewToken: newToken, NewKind: newKind, PortalURL: a.portalURL(), PendingTotal: total}
	if page > 1 {
		props.PendingPrev = "/admin/telemetry?page=" + strconv.Itoa(page-1)
	}
	if int64(page*pendingPerPage) < total {
		props.PendingNext = "/admin/telemetry?page=" + strconv.Itoa(page+1)
	}
	if newKind == store.TokenBoard && newToken != "" {
		props.BoardURL = props.PortalURL + "/board?token=" + url.QueryEscape(newToken)
	}
	for _, t := range types {
		props.Types = append(props.Types, web.Option{Value: strconv.Itoa(int(t.ID)), Label: t.Name})
	}
	for _, pc := range pending {
		props.Pending = append(props.Pending, web.PendingCardRow{ID: pc.ID, UUID: pc.UUID, Host: pc.HostName, Index: pc.GPUIndex, Name: pc.GPUName,
			MemTotalMiB: pc.MemTotalMiB, FirstSeen: pc.FirstSeenAt, LastSeen: pc.LastSeenAt, SuggestType: suggestType(pc, types)})
	}
	for _, t := range tokens {
		props.Tokens = append(props.Tokens, web.TelemetryTokenRow{ID: t.ID, Kind: t.Kind, Name: t.Name, Prefix: t.Prefix, CreatedBy: t.CreatedBy,
			CreatedAt: t.CreatedAt, LastUsed: t.LastUsedAt, Revoked: t.RevokedAt != nil, Hosts: t.Hosts})
	}
	return response.Render(c, status, web.TelemetryAdminPage(p, props, response.Limited(f, store.TokenLimits)))
}

// pendingPerPage is how many unregistered cards the admin page lists at once.
const pendingPerPage = 50

// suggestType picks the card type a reported GPU most likely is: the one
// whose model number appears in the reported name, nearest in VRAM.
func suggestType(pc store.PendingCard, types []store.CardType) string {
	name := strings.ToUpper(pc.GPUName)
	best, bestScore := "", 0.0
	for _, t := range types {
		score := 0.0
		for _, word := range strings.Fields(strings.ToUpper(t.Name)) {
			if word != "NVIDIA" && word != "GEFORCE" && len(word) >= 3 && strings.Contains(name, strings.TrimSuffix(word, "GB")) {
				score += 2
			}
		}
		if pc.MemTotalMiB > 0 {
			gib := float64(pc.MemTotalMiB) / 1024
			score -= math.Abs(gib-float64(t.VRAMGiB)) / 40
		}
		if score > bestScore {
			best, bestScore = strconv.Itoa(int(t.ID)), score
		}
	}
	return best
}

// portalURL is where agents and wall screens reach the portal: the
// configured public URL, or "" when there is none. Never the request's
// Host header: that is the client's word (any proxy or crafted request can
// name another host), and a board URL or agent command built from it would
// hand a token to that host. Without a base URL the page gives the board's
// path and a placeholder, and says to set CARDHOUR_BASE_URL.
func (a *Area) portalURL() string { return a.Config.BaseURL }

func (a *Area) createTelemetryTokenForm(c echo.Context) error {
	f := request.Form(c, "kind", "name", "hosts")
	tok, secret, err := a.Store.CreateTelemetryToken(c.Request().Context(), f.Value("kind"), f.Value("name"), request.List(f.Value("hosts"))...)
	if err != nil {
		if response.FormFailed(request.Lang(c), err, &f) {
			return a.renderTelemetryAdmin(c, response.StatusOf(err), f, "", "")
		}
		return err
	}
	// The secret is shown on this response only: no redirect, so it never
	// sits in a cookie or a URL.
	return a.renderTelemetryAdmin(c, http.StatusCreated, web.NewForm(), secret, tok.Kind)
}

func (a *Area) revokeTelemetryTokenForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.RevokeTelemetryToken(c.Request().Context(), id); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/telemetry", web.T(request.Lang(c), "telemetry.revoked_flash"))
}

func (a *Area) registerPendingCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	typeID, _ := parseInt64(c.FormValue("card_type_id"))
	card, err := a.Store.RegisterPendingCard(c.Request().Context(), id, typeID)
	if err != nil {
		if e, ok := errs.As(err); ok && (e.Code == errs.Invalid || e.Code == errs.Conflict) {
			_, _, msg, _ := response.Describe(err, request.Lang(c))
			return a.Pages.RedirectWithFlash(c, "/admin/telemetry", msg)
		}
		return err
	}
	a.live.refreshAfterChange(c.Request().Context())
	return a.Pages.RedirectWithFlash(c, "/admin/telemetry", web.T(request.Lang(c), "telemetry.registered", card.UUID))
}

func (a *Area) deletePendingCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeletePendingCard(c.Request().Context(), id); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/telemetry", web.T(request.Lang(c), "telemetry.dismissed"))
}

// refreshAfterChange reloads the inventory now (a card was registered), so
// the board shows it without waiting for the next refresh.
func (l *live) refreshAfterChange(ctx context.Context) {
	if err := l.refreshInventory(ctx); err != nil {
		l.a.Log.Warn("board inventory not refreshed", "err", err)
	}
}

func parseInt64(s string) (int64, error) {
	var n int64
	_, err := fmt.Sscan(strings.TrimSpace(s), &n)
	return n, err
}
