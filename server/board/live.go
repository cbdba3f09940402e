package board

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"time"

	"cardhour/cluster"
	"cardhour/errs"
	"cardhour/server/area"
	"cardhour/store"
	"cardhour/telemetry"

	"github.com/prometheus/client_golang/prometheus"
)

// live is the running side of the board: the fleet state, the websocket
// hub, and the loops that keep the state in step with the database (cards,
// bookings), write the rollups, raise alerts, park unknown cards, scrape
// DCGM endpoints and drive the simulator.
type live struct {
	a       *Area
	fleet   *telemetry.Fleet
	hub     *hub
	metrics *boardMetrics

	// inventory and holds load the cards and the bookings holding them
	// into the fleet, one load at a time for all who ask (reload.go).
	inventory, holds *reloader

	alertsMu sync.Mutex
	alerts   []telemetry.AlertView

	rollMu     sync.Mutex
	unsaved    []store.Rollup // rollups a failed write left behind
	unsavedUse []store.UsageDelta

	warned map[int64]time.Time // bookings the auto-release policy warned, and when (loop-owned)

	// The alerts loop's own: whether its first round as the lease holder
	// has passed; the episodes open before staleBefore (this process's
	// start; zero: none to look at) that it closes at staleUntil unless its
	// fleet raises them then; and when a replica without the lease last
	// read the alerts.
	staleChecked bool
	staleBefore  time.Time
	staleUntil   time.Time
	alertsReadAt time.Time
	tokens       tokenCache // agent tokens recently found valid

	// cluster shares each batch this replica receives with the others and
	// brings theirs (shared.go); reload asks the inventory loop for a
	// reload now (another replica changed the inventory), reloadUnknown
	// for one unless the last is recent (another replica's batch carried
	// cards this one does not know).
	cluster       cluster.Cluster
	reload        chan struct{}
	reloadUnknown chan struct{}

	// recheck wakes the socket guard (guard.go): a token or user changed;
	// credEvery is how often it asks unprompted.
	recheck   chan struct{}
	credEvery time.Duration
}

// reloadGap is the least time between two loads of the inventory (or of
// the holds): with 10,000 cards each is a read of 10,000 rows, and a burst
// of changes (an import through the API) asks for one per change.
const reloadGap = time.Second

// unknownReloadAge is how recent a load of the inventory must be for a
// push of cards it lacks: an admin's new card is registered within
// seconds, and a stranger that keeps reporting costs a load every few.
const unknownReloadAge = 5 * time.Second

// maxUnsaved bounds the rollups kept while the database is unreachable.
const maxUnsaved = 200000

func newLive(a *Area, reg *prometheus.Registry) *live {
	l := &live{a: a, warned: map[int64]time.Time{}, cluster: a.Cluster, reload: make(chan struct{}, 1),
		reloadUnknown: make(chan struct{}, 1), recheck: make(chan struct{}, 1), credEvery: credCheckEvery}
	if l.cluster == nil {
		l.cluster = cluster.NewLocal()
	}
	// Until a card shows its own rhythm, a sample vouches for a few of its
	// source's intervals: the agent's second, the DCGM scrape's interval.
	l.fleet = telemetry.NewFleet(telemetry.Options{Thresholds: a.Config.Thresholds, Location: a.Config.TZ,
		Intervals: map[telemetry.Source]time.Duration{telemetry.SourceAgent: time.Second, telemetry.SourceDCGM: a.Config.DCGMInterval,
			telemetry.SourceSimulator: time.Second}})
	l.metrics = newBoardMetrics(reg, l.fleet)
	l.inventory = &reloader{load: l.loadInventory, gap: reloadGap}
	l.holds = &reloader{load: l.loadHolds, gap: reloadGap}
	l.hub = newHub(l.fleet, l.openAlerts, l.metrics, defaultHubOptions())
	l.cluster.Subscribe(cluster.TopicSamples, l.applyShared)
	return l
}

// openAlerts is what the board lists; the hub reads it for every frame.
func (l *live) openAlerts() []telemetry.AlertView {
	l.alertsMu.Lock()
	defer l.alertsMu.Unlock()
	return l.alerts
}

// ensureFresh reloads the inventory and the holds when they are older than
// maxAge, so a page or API call answers from current bookings even before
// (or without) the loops. Callers at once share the loads.
func (l *live) ensureFresh(ctx context.Context, maxAge time.Duration) error {
	if err := l.inventory.within(ctx, maxAge); err != nil {
		return err
	}
	return l.holds.within(ctx, maxAge)
}

// refreshInventory loads the inventory anew: a load that starts after the
// call, shared with whoever else asks meanwhile.
func (l *live) refreshInventory(ctx context.Context) error { return l.inventory.within(ctx, 0) }

// refreshHolds loads the holds anew, as refreshInventory the inventory.
func (l *live) refreshHolds(ctx context.Context) error { return l.holds.within(ctx, 0) }

// loadInventory loads every card into the fleet, and the OS accounts of
// each team (to tell a booking's processes from foreign ones).
func (l *live) loadInventory(ctx context.Context) error {
	l.metrics.loads.WithLabelValues("inventory").Inc()
	cards, err := l.a.Store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	metas := make([]telemetry.CardMeta, 0, len(cards))
	for _, c := range cards {
		m := telemetry.CardMeta{UUID: c.UUID, ID: c.ID, Host: c.HostName, Index: c.GPUIndex, Type: c.CardTypeName,
			MemTotalMiB: float64(c.VRAMGiB) * 1024, Maintenance: c.Status == store.CardMaintenance, Retired: c.Status == store.CardRetired}
		if c.Status == store.CardFault {
			m.Fault = c.FaultReason
			if m.Fault == "" {
				m.Fault = "fault"
			}
		}
		metas = append(metas, m)
	}
	// The OS accounts change with the users, as seldom as the inventory.
	accounts, err := l.a.Store.TeamOSAccounts(ctx)
	if err != nil {
		return err
	}
	l.fleet.SetInventory(metas)
	l.fleet.SetTeamAccounts(accounts)
	return nil
}

// loadHolds loads which booking holds which card now and the queues per
// card type.
func (l *live) loadHolds(ctx context.Context) error {
	now := time.Now()
	l.metrics.loads.WithLabelValues("holds").Inc()
	hs, err := l.a.Store.FindCardHolds(ctx, now)
	if err != nil {
		return err
	}
	holds := make(map[string]telemetry.Hold, len(hs))
	for _, h := range hs {
		holds[h.UUID] = telemetry.Hold{BookingID: h.BookingID, TeamID: h.TeamID, Team: h.TeamName, Task: h.TaskName,
			UserID: h.UserID, User: h.Username, Start: h.StartAt, End: h.EndAt}
	}
	waiting, err := l.a.Store.FindWaiting(ctx)
	if err != nil {
		return err
	}
	queues := make([]telemetry.Waiting, 0, len(waiting))
	for _, w := range waiting {
		q := telemetry.Waiting{CardType: w.CardType, Requests: w.Waiting}
		if w.OldestSince != nil {
			q.OldestSince = *w.OldestSince
		}
		queues = append(queues, q)
	}
	l.fleet.SetHolds(holds)
	l.fleet.SetWaiting(queues)
	return nil
}

// refreshAlerts reloads the open alerts the board lists.
func (l *live) refreshAlerts(ctx context.Context) error {
	open, err := l.a.Store.FindOpenAlerts(ctx)
	if err != nil {
		return err
	}
	out := make([]telemetry.AlertView, 0, len(open))
	for _, a := range open {
		if !boardAlertKinds[a.Kind] {
			continue
		}
		v := telemetry.AlertView{ID: a.ID, Kind: telemetry.EventKind(a.Kind), UUID: a.UUID, Host: a.HostName, Index: a.GPUIndex,
			Team: a.TeamName, Task: a.TaskName, Since: a.StartedAt, Value: a.Value}
		var d alertDetail
		if len(a.Detail) > 0 && json.Unmarshal(a.Detail, &d) == nil {
			v.Reason, v.Processes = d.Reason, d.Processes
			if a.Kind == store.AlertSpoof && v.Host == "" {
				v.Host = d.Host
			}
		}
		out = append(out, v)
	}
	l.alertsMu.Lock()
	l.alerts = out
	l.alertsMu.Unlock()
	return nil
}

// Start starts the board's hub and loops; the returned stop closes the
// websockets, ends the loops and writes the last rollups. The kernel's Run
// calls it; tests that need live websockets call it themselves.
func (a *Area) Start(ctx context.Context) (stop func()) {
	l := a.live
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	goJob := func(j area.Job) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			area.Loop(ctx, a.Deps, j)
		}()
	}
	goLoop := func(name string, every time.Duration, fn func(context.Context) error) {
		goJob(area.Job{Name: "board " + name, Every: every, Run: fn})
	}
	l.start(ctx)
	l.hub.markRunning()
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.hub.run(ctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.guardSockets(ctx, l.credEvery)
	}()
	goLoop("holds", 5*time.Second, l.refreshHolds)
	goLoop("inventory", 30*time.Second, l.refreshInventory)
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.reloadOnChange(ctx)
	}()
	// Each replica keeps a live fleet (shared through the cluster when
	// there are several). Alert episodes, retention and auto-release are
	// written by one replica, the holder of each lease; the others drop
	// their events and list the alerts it opened. Rollups and usage every
	// replica writes for the samples it received: each sample vouches for
	// the time since the card's previous sample, whichever replica got it,
	// and the saves add up, so together they count each card's time once
	// and nothing is lost when a replica stops or a lease moves.
	started := time.Now()
	goJob(area.Job{Name: "board alerts", Every: time.Second, Once: "board alerts",
		Run: func(ctx context.Context) error { return l.persistEvents(ctx, started) }, Else: l.dropEvents})
	goLoop("unregistered", 10*time.Second, l.parkUnknown)
	goLoop("rollups", 20*time.Second, func(ctx context.Context) error { return l.saveRollups(ctx, time.Now().Add(-5*time.Second)) })
	goJob(area.Job{Name: "board retention", Every: time.Hour, Run: l.prune, Once: "board retention"})
	if a.Config.Simulator {
		goLoop("simulator", time.Second, func(context.Context) error { l.fleet.SimulateStep(time.Now()); return nil })
	}
	if len(a.Config.DCGMTargets) > 0 {
		sc := &telemetry.Scraper{Targets: a.Config.DCGMTargets, Log: a.Log}
		goLoop("dcgm", a.Config.DCGMInterval, func(ctx context.Context) error { return l.scrape(ctx, sc) })
	}
	if a.Config.AutoRelease > 0 {
		goJob(area.Job{Name: "board auto-release", Every: 30 * time.Second, Run: l.autoRelease, Once: "board auto-release"})
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			// The last rollups, written with a context of their own: the
			// serving context is already over.
			fctx, done := context.WithTimeout(context.Background(), 10*time.Second)
			defer done()
			if err := l.saveRollups(fctx, time.Time{}); err != nil {
				a.Log.Warn("final telemetry rollups not written", "err", err)
			}
		})
	}
}

// start loads what the loops build on: cards, holds, alerts, today's
// held-idle total, and (for the simulator) a few minutes of history.
func (l *live) start(ctx context.Context) {
	a := l.a
	for _, step := range []struct {
		name string
		fn   func(context.Context) error
	}{{"inventory", l.refreshInventory}, {"holds", l.refreshHolds}} {
		if err := step.fn(ctx); err != nil {
			a.Log.Warn("board start: "+step.name+" not loaded", "err", err)
		}
	}
	now := time.Now()
	if err := l.refreshAlerts(ctx); err != nil {
		a.Log.Warn("board start: alerts not loaded", "err", err)
	}
	if a.Config.Simulator {
		// A few minutes of made-up history warm the live state (a booked card
		// idle on purpose shows as held idle at once). It only warms: its
		// rollups are dropped, as the last run may have stored those minutes.
		_ = l.fleet.SimulateSince(now.Add(-12*time.Minute), now, 15*time.Second)
		l.fleet.TakeRollups(time.Time{})
		a.Log.Info("telemetry simulator on (CARDHOUR_SIMULATOR): cards no agent reports are simulated")
	}
	local := now.In(a.Config.TZ)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, a.Config.TZ)
	if sec, err := a.Store.HeldIdleSecondsSince(ctx, midnight); err == nil {
		l.fleet.SetHeldIdleToday(sec)
	}
}

// ingest feeds a batch into the fleet and counts it. The inventory is
// loaded first if it never was (a push right after start), so cards the
// portal knows are not mistaken for new ones.
func (l *live) ingest(ctx context.Context, samples []telemetry.Sample, src telemetry.Source, origin string) (telemetry.IngestResult, error) {
	if err := l.ensureFresh(ctx, time.Minute); err != nil {
		return telemetry.IngestResult{}, err
	}
	arrival := time.Now()
	res := l.fleet.IngestFrom(samples, src, origin, arrival)
	l.share(ctx, samples, src, origin, arrival)
	return res, l.counted(ctx, res, src)
}

// counted reloads the inventory when unknown cards reported and counts
// the batch.
func (l *live) counted(ctx context.Context, res telemetry.IngestResult, src telemetry.Source) error {
	if res.Unknown > 0 {
		// A card an admin just added reports before the next scheduled
		// reload: reload now (at most every few seconds, the pushes at
		// once sharing it), so it is not taken for a stranger.
		if err := l.inventory.within(ctx, unknownReloadAge); err != nil {
			return err
		}
	}
	m := l.metrics.samples
	m.WithLabelValues(string(src), "accepted").Add(float64(res.Accepted))
	m.WithLabelValues(string(src), "unknown").Add(float64(res.Unknown))
	m.WithLabelValues(string(src), "ignored").Add(float64(res.Ignored))
	return nil
}

func (l *live) scrape(ctx context.Context, sc *telemetry.Scraper) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	samples, failed := sc.Scrape(sctx, time.Now())
	for _, f := range failed {
		l.a.Log.Warn("DCGM endpoint not read", "target", f.Target, "err", f.Err)
	}
	_, err := l.ingest(ctx, samples, telemetry.SourceDCGM, "dcgm")
	return err
}

// alertKinds are the stored alert of each kind of episode the fleet sees.
var alertKinds = map[telemetry.EventKind]string{
	telemetry.EventVRAM:     store.AlertVRAM,
	telemetry.EventHeldIdle: store.AlertHeldIdle,
	telemetry.EventFault:    store.AlertFault,
	telemetry.EventUnbooked: store.AlertUnbooked,
	telemetry.EventForeign:  store.AlertForeign,
}

// boardAlertKinds are the alerts the board lists.
var boardAlertKinds = map[string]bool{store.AlertVRAM: true, store.AlertHeldIdle: true, store.AlertReleaseWarned: true,
	store.AlertFault: true, store.AlertUnbooked: true, store.AlertForeign: true, store.AlertSpoof: true}

// alertDetail is what an abnormal-occupancy alert keeps of what was seen:
// the card's processes (pid, name, OS user, VRAM) and a fault's reading;
// a spoofed push, the host and token it came with.
type alertDetail struct {
	Reason    string              `json:"reason,omitempty"`
	Processes []telemetry.Process `json:"processes,omitempty"`
	Host      string              `json:"host,omitempty"`
	Token     string              `json:"token,omitempty"`
	UUID      string              `json:"uuid,omitempty"`
	Known     string              `json:"registered_host,omitempty"`
}

// staleCloseWithin is how soon after start a replica that takes the board's
// alerts lease looks for the episodes the last run left open: a lease taken
// that soon was free at start (the whole portal restarted) or given up by a
// holder that stopped (this process is that holder, restarted) — and then
// the episodes open now may still be raised by the other replicas' fleets.
// One taken over later is another's, whose fleet already knows the live
// episodes.
const staleCloseWithin = 30 * time.Second

// staleGrace is how long past the offline window a fresh holder waits for
// its fleet to see the cards again before it closes the episodes it does
// not raise: a card that has not reported by then is offline, which ends
// its episodes anyway.
const staleGrace = 5 * time.Second

// persistEvents is the alerts lease holder's round: it writes the episodes
// its fleet sees; on its first round right after start it notes the
// episodes already open, and once its fleet has had the offline window to
// see their cards, it closes those its fleet does not raise (left open by
// the last run: the live state opens them again if they persist). Closing
// them at once would close episodes the other replicas still see — the
// holder restarted, not the portal — until a sample opens them again.
func (l *live) persistEvents(ctx context.Context, started time.Time) error {
	if !l.staleChecked {
		l.staleChecked = true
		if time.Since(started) < staleCloseWithin {
			l.staleBefore = started
			l.staleUntil = time.Now().Add(l.a.Config.Thresholds.OfflineAfter + staleGrace)
		}
	}
	if err := l.processEvents(ctx); err != nil {
		return err
	}
	if l.staleBefore.IsZero() || time.Now().Before(l.staleUntil) {
		return nil
	}
	type episode struct {
		kind string
		card int64
	}
	raising := map[episode]bool{}
	for _, e := range l.fleet.Raising() {
		raising[episode{alertKinds[e.Kind], e.CardID}] = true
	}
	n, err := l.a.Store.CloseStaleAlertsExcept(ctx, l.staleBefore, func(a store.Alert) bool {
		return a.CardID != nil && raising[episode{a.Kind, *a.CardID}]
	})
	if err != nil {
		l.a.Log.Warn("board: stale alerts not closed", "err", err)
		return nil // the next round tries again
	}
	l.staleBefore = time.Time{}
	if n == 0 {
		return nil
	}
	l.a.Log.Info("closed alerts left open by the last run", "alerts", n)
	return l.refreshAlerts(ctx)
}

// dropEvents is the round of a replica without the alerts lease: the
// holder writes the episodes; this one forgets its own and lists the
// holder's every few seconds.
func (l *live) dropEvents(ctx context.Context) error {
	l.fleet.TakeEvents()
	if time.Since(l.alertsReadAt) < 5*time.Second {
		return nil
	}
	l.alertsReadAt = time.Now()
	return l.refreshAlerts(ctx)
}

// processEvents turns alert episodes into alerts (and notifications).
func (l *live) processEvents(ctx context.Context) error {
	events := l.fleet.TakeEvents()
	if len(events) == 0 {
		return nil
	}
	for _, e := range events {
		kind, ok := alertKinds[e.Kind]
		if !ok {
			continue
		}
		if e.Kind == telemetry.EventFault {
			if !e.Open {
				continue // the card stays faulty until an admin clears it; so does its alert
			}
			if err := l.markFaulty(ctx, e); err != nil {
				return err
			}
		}
		var err error
		switch {
		case e.Open:
			in := store.AlertInput{Kind: kind, CardID: e.CardID, BookingID: e.BookingID, Value: e.Value, At: e.At}
			if e.Reason != "" || len(e.Processes) > 0 {
				in.Detail = alertDetail{Reason: e.Reason, Processes: e.Processes}
			}
			_, _, err = l.a.Store.OpenAlert(ctx, in)
		default:
			err = l.a.Store.CloseAlert(ctx, kind, e.CardID, e.BookingID, e.Value, e.At)
		}
		if err != nil {
			return err
		}
	}
	return l.refreshAlerts(ctx)
}

// markFaulty takes a card that reported a fault out of new bookings (the
// inventory's status), until an admin clears it.
func (l *live) markFaulty(ctx context.Context, e telemetry.Event) error {
	changed, err := l.a.Store.MarkCardFault(ctx, e.CardID, e.Reason, e.At)
	if err != nil || !changed {
		return err
	}
	l.a.Log.Warn("card reported a fault: out of new bookings until an admin clears it", "uuid", e.UUID, "reason", e.Reason)
	return l.refreshInventory(ctx)
}

// parkUnknown records cards the inventory lacks for an admin to register.
func (l *live) parkUnknown(ctx context.Context) error {
	views := l.fleet.TakeUnregistered()
	if len(views) == 0 {
		return nil
	}
	in := make([]store.UnknownCard, 0, len(views))
	for _, v := range views {
		u := store.UnknownCard{UUID: v.UUID, Host: v.Host, Index: v.Index, Name: v.Model, SeenAt: v.LastSample}
		if v.MemTotalMiB != nil {
			u.MemTotalMiB = *v.MemTotalMiB
		}
		in = append(in, u)
	}
	return l.a.Store.RecordUnknownCards(ctx, in)
}

// saveRollups writes the minutes that ended before `before` (all of them
// when zero). A failed write keeps them for the next try, up to a bound.
func (l *live) saveRollups(ctx context.Context, before time.Time) error {
	rs, us := l.fleet.TakeRollups(before)
	l.rollMu.Lock()
	defer l.rollMu.Unlock()
	// One slice of the minutes, built in place: with 10,000 cards a save
	// is 10,000 rows, and every copy of them is a megabyte and more.
	minutes := appendStoreRollups(l.unsaved, rs)
	usage := append(l.unsavedUse, toStoreUsage(us)...)
	if err := l.a.Store.SaveRollups(ctx, minutes, usage); err != nil {
		if len(minutes) > maxUnsaved {
			minutes = minutes[len(minutes)-maxUnsaved:]
		}
		l.unsaved, l.unsavedUse = minutes, usage
		return err
	}
	l.unsaved, l.unsavedUse = nil, nil
	return nil
}

// appendStoreRollups appends the fleet's rollups to out as the store's,
// growing out once.
func appendStoreRollups(out []store.Rollup, rs []telemetry.Rollup) []store.Rollup {
	out = slices.Grow(out, len(rs))
	for _, r := range rs {
		out = append(out, store.Rollup{CardID: r.CardID, At: r.Start, Samples: r.Samples, UtilSum: r.UtilSum, UtilSamples: r.UtilSamples,
			UtilMax: r.UtilMax, MemMaxMiB: r.MemMaxMiB, MemTotalMiB: r.MemTotalMiB, SampledSeconds: r.SampledSeconds,
			BusySeconds: r.BusySeconds, FullSeconds: r.FullSeconds, HeldSeconds: r.HeldSeconds, HeldIdleSeconds: r.HeldIdleSeconds,
			BookingID: r.BookingID})
	}
	return out
}

func toStoreUsage(us []telemetry.Usage) []store.UsageDelta {
	out := make([]store.UsageDelta, len(us))
	for i, u := range us {
		out[i] = store.UsageDelta{BookingID: u.BookingID, SampledSeconds: u.SampledSeconds, BusySeconds: u.BusySeconds, HeldIdleSeconds: u.HeldIdleSeconds}
	}
	return out
}

func (l *live) prune(ctx context.Context) error {
	now := time.Now()
	n, err := l.a.Store.PruneRollups(ctx, now.Add(-l.a.Config.KeepMinutes), now.Add(-l.a.Config.KeepHours))
	if err == nil && n > 0 {
		l.a.Log.Info("pruned telemetry rollups past their retention", "rows", n)
	}
	return err
}

// autoReleaseWarnAt is when, before the release, its owner is warned.
func autoReleaseWarnAt(limit time.Duration) time.Duration {
	return max(limit/2, limit-15*time.Minute)
}

// autoRelease applies the optional policy: a booking whose every card has
// been quiet for the configured time is released — never without a warning
// first: its owner and team managers are warned at autoReleaseWarnAt, and a
// booking found idle past the limit (after a restart, say) is warned now
// and released only when the warning has stood as long as it would have.
// Any card busy, silent or in maintenance keeps the booking.
func (l *live) autoRelease(ctx context.Context) error {
	limit := l.a.Config.AutoRelease
	warnAt := autoReleaseWarnAt(limit)
	now := time.Now()
	idle := map[int64]bool{}
	for _, b := range l.fleet.IdleBookings(now) {
		id := b.Hold.BookingID
		idle[id] = true
		if b.IdleFor < warnAt {
			continue
		}
		warned, ok := l.warned[id]
		if !ok {
			left := max(limit-b.IdleFor, limit-warnAt)
			if _, _, err := l.a.Store.OpenAlert(ctx, store.AlertInput{Kind: store.AlertReleaseWarned, BookingID: id,
				Value: math.Max(1, math.Round(left.Minutes()))}); err != nil {
				return err
			}
			l.warned[id] = now
			continue
		}
		if b.IdleFor < limit || now.Sub(warned) < limit-warnAt {
			continue
		}
		mins := int(b.IdleFor.Minutes())
		res, err := l.a.Store.AutoReleaseBooking(ctx, id, mins)
		if err != nil {
			if errs.Is(err, errs.Conflict) { // ended meanwhile
				delete(l.warned, id)
				continue
			}
			return err
		}
		delete(l.warned, id)
		l.a.Log.Info("auto-released an idle booking", "booking", id, "idle_minutes", mins, "returned_card_seconds", res.ReturnedCardSeconds)
	}
	for id := range l.warned {
		if !idle[id] {
			delete(l.warned, id)
			if err := l.a.Store.CloseAlert(ctx, store.AlertReleaseWarned, 0, id, 0, now); err != nil {
				return err
			}
		}
	}
	if err := l.refreshHolds(ctx); err != nil {
		return err
	}
	return l.refreshAlerts(ctx)
}
