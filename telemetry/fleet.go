package telemetry

import (
	"sort"
	"strings"
	"sync"
	"time"
)

// Source says where a batch of samples came from.
type Source string

// Sample sources. Simulated samples never hide real ones: the simulator
// leaves alone a card that reported for real in the last minute.
const (
	SourceAgent     Source = "agent"
	SourcePush      Source = "push"
	SourceDCGM      Source = "dcgm"
	SourceSimulator Source = "simulator"
)

// CardMeta is what the inventory says about a card.
type CardMeta struct {
	UUID        string
	ID          int64
	Host        string
	Index       int
	Type        string
	MemTotalMiB float64 // from the card type, until the card reports its own
	Maintenance bool
	// Retired cards are known but not shown, and their samples are dropped
	// rather than parked as unregistered.
	Retired bool
}

// Hold is the booking that holds a card now.
type Hold struct {
	BookingID int64     `json:"id"`
	TeamID    int64     `json:"team_id"`
	Team      string    `json:"team"`
	Task      string    `json:"task"`
	UserID    int64     `json:"user_id"`
	User      string    `json:"user"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
}

// covers tells whether the hold applies at t.
func (h *Hold) covers(t time.Time) bool {
	return h != nil && !t.Before(h.Start) && t.Before(h.End)
}

// CardView is one card as the board, the API and the metrics see it.
type CardView struct {
	UUID        string    `json:"uuid"`
	CardID      int64     `json:"card_id,omitempty"`
	Host        string    `json:"host"`
	Index       int       `json:"index"`
	Type        string    `json:"card_type"`
	Model       string    `json:"model,omitempty"`
	Registered  bool      `json:"registered"`
	State       State     `json:"state"`
	Util        *float64  `json:"util"`
	MemUsedMiB  *float64  `json:"mem_used_mib"`
	MemTotalMiB *float64  `json:"mem_total_mib"`
	TempC       *float64  `json:"temp_c"`
	PowerW      *float64  `json:"power_w"`
	Processes   int       `json:"processes"`
	LastSample  time.Time `json:"last_sample"`
	LowSince    time.Time `json:"low_since"`
	Hold        *Hold     `json:"booking"`
	Source      Source    `json:"source,omitempty"`
	Arrival     time.Time `json:"-"`
}

// Summary is the fleet's figures at a glance.
type Summary struct {
	At                 time.Time     `json:"at"`
	Cards              int           `json:"cards"`
	Booked             int           `json:"booked"`
	Busy               int           `json:"busy"`
	States             map[State]int `json:"states"`
	Reporting          int           `json:"reporting"`
	UtilNow            float64       `json:"util_now"`
	HeldIdleHoursToday float64       `json:"held_idle_hours_today"`
	Unregistered       int           `json:"unregistered"`
}

// Rollup is one card's minute (or hour) of samples, summed.
type Rollup struct {
	CardID          int64
	Start           time.Time
	Samples         int
	UtilSum         float64
	UtilSamples     int
	UtilMax         float64
	MemMaxMiB       float64
	MemTotalMiB     float64
	SampledSeconds  float64
	BusySeconds     float64
	FullSeconds     float64
	HeldSeconds     float64
	HeldIdleSeconds float64
	BookingID       int64 // the booking that last held the card in this minute
}

// Usage is what a booking's cards did, to be added to its running totals.
type Usage struct {
	BookingID       int64
	SampledSeconds  float64
	BusySeconds     float64
	HeldIdleSeconds float64
}

// EventKind names an alert condition.
type EventKind string

// Alert conditions.
const (
	EventVRAM     EventKind = "vram"
	EventHeldIdle EventKind = "held_idle"
)

// Event is the start or the end of an alert episode on one card.
type Event struct {
	Kind      EventKind
	Open      bool // true when the episode starts, false when it ends
	UUID      string
	CardID    int64
	BookingID int64
	At        time.Time
	Value     float64 // VRAM % for vram, idle minutes for held_idle
}

// IngestResult counts what one batch did.
type IngestResult struct {
	Accepted int // updated the live state
	Ignored  int // older than what the card already reported, or from a retired card
	Unknown  int // from cards not in the inventory (parked as unregistered)
}

// Options configures a Fleet.
type Options struct {
	Thresholds Thresholds
	// Location decides where "today" begins for the held-idle figure.
	Location *time.Location
	Now      func() time.Time
	// MaxGap is the longest stretch one sample accounts for in the rollups:
	// a card silent for an hour does not get an hour of busy time from the
	// sample it sends when it comes back.
	MaxGap time.Duration
	// MaxUnregistered bounds the cards kept for uuids the inventory lacks,
	// so a misbehaving agent cannot grow the state without end.
	MaxUnregistered int
}

// Fleet is the live state of every card, fed by samples from any source,
// and the minute rollups that have not been written yet. It is safe for
// concurrent use; one mutex guards everything, held for a batch at a time.
type Fleet struct {
	opts Options

	mu         sync.Mutex
	cards      map[string]*card
	retired    map[string]bool
	dirty      map[string]string // key → uuid as reported
	oldest     time.Time         // arrival of the oldest change not yet taken
	buckets    map[bucketKey]*Rollup
	usage      map[int64]*Usage
	events     []Event
	unknownNew map[string]struct{}
	day        string
	heldIdleS  float64 // held-idle card-seconds today
	changed    chan struct{}
}

type bucketKey struct {
	card   int64
	minute int64
}

type card struct {
	meta       CardMeta
	registered bool
	hold       *Hold
	last       Sample
	processes  int
	lastAt     time.Time
	arrival    time.Time
	realAt     time.Time // arrival of the last sample not from the simulator
	source     Source
	lowSince   time.Time
	state      State
	rollAt     time.Time // time of the last sample counted in the rollups
	bucket     *Rollup
	vramAlert  bool
	idleAlert  bool
	idleFrom   time.Time // when the open held-idle episode's quiet began
}

// maxEvents bounds the queue of alert events nobody took.
const maxEvents = 10000

// NewFleet starts an empty fleet.
func NewFleet(o Options) *Fleet {
	if o.Thresholds == (Thresholds{}) {
		o.Thresholds = DefaultThresholds()
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxGap <= 0 {
		o.MaxGap = time.Minute
	}
	if o.MaxUnregistered <= 0 {
		o.MaxUnregistered = 4096
	}
	return &Fleet{
		opts:       o,
		cards:      map[string]*card{},
		retired:    map[string]bool{},
		dirty:      map[string]string{},
		buckets:    map[bucketKey]*Rollup{},
		usage:      map[int64]*Usage{},
		unknownNew: map[string]struct{}{},
		changed:    make(chan struct{}, 1),
	}
}

// Thresholds returns the thresholds in force.
func (f *Fleet) Thresholds() Thresholds { return f.opts.Thresholds }

// Changed is signalled (without blocking, coalesced) whenever the state
// changes; the board's hub waits on it.
func (f *Fleet) Changed() <-chan struct{} { return f.changed }

func (f *Fleet) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// markDirty must be called with f.mu held.
func (f *Fleet) markDirty(key string, arrival time.Time) {
	if _, ok := f.dirty[key]; !ok {
		uuid := key
		if c, ok := f.cards[key]; ok {
			uuid = c.meta.UUID
		}
		f.dirty[key] = uuid
	}
	if !arrival.IsZero() && (f.oldest.IsZero() || arrival.Before(f.oldest)) {
		f.oldest = arrival
	}
}

// SetInventory replaces what the fleet knows about registered cards. Cards
// that reported but are not listed stay as unregistered ones.
func (f *Fleet) SetInventory(metas []CardMeta) {
	f.mu.Lock()
	defer f.mu.Unlock()
	listed := make(map[string]bool, len(metas))
	f.retired = map[string]bool{}
	now := f.opts.Now()
	for _, m := range metas {
		key := strings.ToUpper(m.UUID)
		if m.Retired {
			f.retired[key] = true
			if _, ok := f.cards[key]; ok {
				f.markDirty(key, time.Time{})
				delete(f.cards, key)
			}
			continue
		}
		listed[key] = true
		c := f.cards[key]
		if c == nil {
			c = &card{state: StateOffline}
			f.cards[key] = c
		}
		if c.meta != m || !c.registered {
			c.meta, c.registered = m, true
			f.reclassify(key, c, now)
			f.markDirty(key, time.Time{})
		}
	}
	for key, c := range f.cards {
		if c.registered && !listed[key] {
			// Deleted from the inventory: it goes back to unregistered if it
			// still reports, else it leaves the board.
			c.registered = false
			c.meta = CardMeta{UUID: c.meta.UUID, Host: c.meta.Host, Index: c.meta.Index}
			f.markDirty(key, time.Time{})
			if c.lastAt.IsZero() {
				delete(f.cards, key)
			}
		}
	}
	f.signal()
}

// SetHolds says which booking holds which card now (by uuid).
func (f *Fleet) SetHolds(holds map[string]Hold) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	upper := make(map[string]Hold, len(holds))
	for k, h := range holds {
		upper[strings.ToUpper(k)] = h
	}
	for key, c := range f.cards {
		h, ok := upper[key]
		switch {
		case ok && (c.hold == nil || *c.hold != h):
			hh := h
			c.hold = &hh
		case !ok && c.hold != nil:
			c.hold = nil
		default:
			continue
		}
		f.reclassify(key, c, now)
		f.markDirty(key, time.Time{})
	}
	f.signal()
}

// reclassify recomputes a card's state at now and records alert episodes;
// f.mu must be held.
func (f *Fleet) reclassify(key string, c *card, now time.Time) {
	t := f.opts.Thresholds
	r := Reading{Now: now, LastSample: c.lastAt, Util: c.last.UtilPct, MemUsedMiB: c.last.MemUsedMiB,
		MemTotalMiB: c.memTotal(), Maintenance: c.meta.Maintenance, LowSince: c.lowSince}
	if c.hold.covers(now) {
		r.Held, r.HeldSince = true, c.hold.Start
	}
	prev := c.state
	c.state = Classify(r, t)
	if prev != c.state {
		f.markDirty(key, time.Time{})
	}
	if !c.registered || c.meta.ID == 0 {
		return
	}
	var bookingID int64
	if r.Held {
		bookingID = c.hold.BookingID
	}
	// Held-idle episodes follow the state.
	if idle := c.state == StateHeldIdle; idle != c.idleAlert {
		c.idleAlert = idle
		if idle {
			c.idleFrom = c.lowSince
			if r.HeldSince.After(c.idleFrom) {
				c.idleFrom = r.HeldSince
			}
		}
		// Value: the idle minutes so far (at the start) or in all (at the end).
		f.event(Event{Kind: EventHeldIdle, Open: idle, UUID: c.meta.UUID, CardID: c.meta.ID, BookingID: bookingID,
			At: now, Value: now.Sub(c.idleFrom).Minutes()})
	}
	// VRAM episodes follow the memory, with hysteresis; an offline or
	// maintenance card ends its episode.
	alerting := false
	if c.state != StateOffline && c.state != StateMaintenance {
		alerting = VRAMAlerting(c.vramAlert, c.last.MemUsedMiB, c.memTotal(), t)
	}
	if alerting != c.vramAlert {
		c.vramAlert = alerting
		p, _ := MemPct(c.last.MemUsedMiB, c.memTotal())
		f.event(Event{Kind: EventVRAM, Open: alerting, UUID: c.meta.UUID, CardID: c.meta.ID, BookingID: bookingID, At: now, Value: p})
	}
}

func (f *Fleet) event(e Event) {
	if len(f.events) >= maxEvents {
		f.events = f.events[1:]
	}
	f.events = append(f.events, e)
}

func (c *card) memTotal() *float64 {
	if c.last.MemTotalMiB != nil {
		return c.last.MemTotalMiB
	}
	if c.meta.MemTotalMiB > 0 {
		v := c.meta.MemTotalMiB
		return &v
	}
	return nil
}

// Ingest takes a batch of samples into the live state and the rollups.
// Samples older than what a card already reported are ignored (a resent
// batch); samples from the future are taken as arriving now.
func (f *Fleet) Ingest(samples []Sample, src Source, arrival time.Time) IngestResult {
	var res IngestResult
	if len(samples) == 0 {
		return res
	}
	t := f.opts.Thresholds
	f.mu.Lock()
	defer f.mu.Unlock()
	unreg := -1 // counted once per batch, when first needed
	for i := range samples {
		s := &samples[i]
		if !validUUID(s.UUID) {
			res.Ignored++
			continue
		}
		s.Sanitize()
		key := strings.ToUpper(s.UUID)
		if f.retired[key] {
			res.Ignored++
			continue
		}
		at := s.At
		if at.IsZero() || at.After(arrival.Add(5*time.Second)) {
			at = arrival
		}
		c := f.cards[key]
		if c == nil {
			if unreg < 0 {
				unreg = f.unregistered()
			}
			if unreg >= f.opts.MaxUnregistered {
				res.Ignored++
				continue
			}
			unreg++
			c = &card{meta: CardMeta{UUID: s.UUID, Host: s.Host, Index: s.Index}}
			f.cards[key] = c
		}
		if !c.lastAt.IsZero() && !at.After(c.lastAt) {
			res.Ignored++
			continue
		}
		if !c.registered {
			res.Unknown++
			if s.Host != "" {
				c.meta.Host = s.Host
			}
			if s.Index >= 0 {
				c.meta.Index = s.Index
			}
			f.unknownNew[key] = struct{}{}
		} else {
			res.Accepted++
		}
		c.last = *s
		c.last.At = at
		c.processes = len(s.Processes)
		c.lastAt, c.arrival, c.source = at, arrival, src
		if src != SourceSimulator {
			c.realAt = arrival
		}
		c.lowSince = NextLowSince(c.lowSince, s.UtilPct, at, t)
		f.reclassify(key, c, at)
		f.account(c, at)
		f.markDirty(key, arrival)
	}
	f.signal()
	return res
}

func (f *Fleet) unregistered() int {
	n := 0
	for _, c := range f.cards {
		if !c.registered {
			n++
		}
	}
	return n
}

// account adds the sample just taken into the card's minute rollup, its
// booking's usage and today's held-idle total; f.mu must be held.
func (f *Fleet) account(c *card, at time.Time) {
	var dt float64
	if !c.rollAt.IsZero() && at.After(c.rollAt) {
		d := at.Sub(c.rollAt)
		if d > f.opts.MaxGap {
			d = f.opts.MaxGap
		}
		dt = d.Seconds()
	}
	c.rollAt = at
	if !c.registered || c.meta.ID == 0 {
		return
	}
	minute := at.UTC().Truncate(time.Minute)
	b := c.bucket
	if b == nil || !b.Start.Equal(minute) {
		k := bucketKey{c.meta.ID, minute.Unix()}
		b = f.buckets[k]
		if b == nil {
			b = &Rollup{CardID: c.meta.ID, Start: minute}
			f.buckets[k] = b
		}
		c.bucket = b
	}
	s := &c.last
	t := f.opts.Thresholds
	b.Samples++
	busy := false
	if s.UtilPct != nil {
		u := *s.UtilPct
		b.UtilSum += u
		b.UtilSamples++
		if u > b.UtilMax {
			b.UtilMax = u
		}
		busy = u >= t.IdleUtilPct
	}
	if s.MemUsedMiB != nil && *s.MemUsedMiB > b.MemMaxMiB {
		b.MemMaxMiB = *s.MemUsedMiB
	}
	if total := c.memTotal(); total != nil {
		b.MemTotalMiB = *total
	}
	b.SampledSeconds += dt
	if busy {
		b.BusySeconds += dt
	}
	if c.state == StateFull {
		b.FullSeconds += dt
	}
	if c.hold.covers(at) {
		b.HeldSeconds += dt
		b.BookingID = c.hold.BookingID
		u := f.usage[c.hold.BookingID]
		if u == nil {
			u = &Usage{BookingID: c.hold.BookingID}
			f.usage[c.hold.BookingID] = u
		}
		u.SampledSeconds += dt
		if busy {
			u.BusySeconds += dt
		}
		if c.state == StateHeldIdle {
			u.HeldIdleSeconds += dt
		}
	}
	if c.state == StateHeldIdle {
		b.HeldIdleSeconds += dt
		day := at.In(f.opts.Location).Format(time.DateOnly)
		if day != f.day {
			if day < f.day {
				return // a late sample from yesterday
			}
			f.day, f.heldIdleS = day, 0
		}
		f.heldIdleS += dt
	}
}

// SetHeldIdleToday seeds today's held-idle total (from the stored rollups,
// at start).
func (f *Fleet) SetHeldIdleToday(seconds float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.day = f.opts.Now().In(f.opts.Location).Format(time.DateOnly)
	f.heldIdleS = seconds
}

// Sweep reclassifies every card at now, which is how cards turn offline or
// held-idle without a new sample.
func (f *Fleet) Sweep(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if day := now.In(f.opts.Location).Format(time.DateOnly); day > f.day {
		f.day, f.heldIdleS = day, 0
	}
	for key, c := range f.cards {
		if !c.registered && !c.lastAt.IsZero() && now.Sub(c.lastAt) > time.Hour {
			// An unregistered card that stopped reporting leaves the board.
			f.markDirty(key, time.Time{})
			delete(f.cards, key)
			continue
		}
		f.reclassify(key, c, now)
	}
	if len(f.dirty) > 0 {
		f.signal()
	}
}

func (f *Fleet) view(c *card) CardView {
	v := CardView{
		UUID: c.meta.UUID, CardID: c.meta.ID, Host: c.meta.Host, Index: c.meta.Index, Type: c.meta.Type,
		Model: c.last.Name, Registered: c.registered, State: c.state,
		Util: c.last.UtilPct, MemUsedMiB: c.last.MemUsedMiB, MemTotalMiB: c.memTotal(), TempC: c.last.TempC, PowerW: c.last.PowerW,
		Processes: c.processes, LastSample: c.lastAt, LowSince: c.lowSince, Source: c.source, Arrival: c.arrival,
	}
	if c.hold != nil {
		h := *c.hold
		v.Hold = &h
	}
	return v
}

// sortViews orders cards by host, then index, then uuid.
func sortViews(vs []CardView) {
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.UUID < b.UUID
	})
}

// Snapshot returns every card on the board, by host and index.
func (f *Fleet) Snapshot() []CardView {
	f.mu.Lock()
	out := make([]CardView, 0, len(f.cards))
	for _, c := range f.cards {
		out = append(out, f.view(c))
	}
	f.mu.Unlock()
	sortViews(out)
	return out
}

// Card returns one card by uuid.
func (f *Fleet) Card(uuid string) (CardView, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.cards[strings.ToUpper(uuid)]
	if !ok {
		return CardView{}, false
	}
	return f.view(c), true
}

// TakeChanges returns the cards changed since the last call (removed cards
// as a view with only the uuid and State ""), and the arrival time of the
// oldest sample among them (zero when none came from a sample).
func (f *Fleet) TakeChanges() ([]CardView, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.dirty) == 0 {
		return nil, time.Time{}
	}
	out := make([]CardView, 0, len(f.dirty))
	for key, uuid := range f.dirty {
		if c, ok := f.cards[key]; ok {
			out = append(out, f.view(c))
		} else {
			out = append(out, CardView{UUID: uuid})
		}
	}
	oldest := f.oldest
	f.dirty = make(map[string]string, len(out))
	f.oldest = time.Time{}
	return out, oldest
}

// Summary computes the fleet figures at now.
func (f *Fleet) Summary(now time.Time) Summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Summary{At: now, States: make(map[State]int, len(States)), HeldIdleHoursToday: f.heldIdleS / 3600}
	var util float64
	for _, c := range f.cards {
		if !c.registered {
			s.Unregistered++
			continue
		}
		s.Cards++
		s.States[c.state]++
		if c.hold.covers(now) {
			s.Booked++
		}
		if c.state == StateBusy || c.state == StateFull {
			s.Busy++
		}
		if c.state != StateOffline && c.state != StateMaintenance && c.last.UtilPct != nil {
			s.Reporting++
			util += *c.last.UtilPct
		}
	}
	if s.Reporting > 0 {
		s.UtilNow = util / float64(s.Reporting)
	}
	return s
}

// TakeRollups hands over the minute rollups that ended before `before`
// (all of them when before is zero, at shutdown) and every booking's usage
// since the last call. Minutes taken are forgotten: a late sample for one
// starts a new partial minute, which the store adds to the first.
func (f *Fleet) TakeRollups(before time.Time) ([]Rollup, []Usage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rs []Rollup
	for k, b := range f.buckets {
		if !before.IsZero() && b.Start.Add(time.Minute).After(before) {
			continue
		}
		rs = append(rs, *b)
		delete(f.buckets, k)
	}
	if len(rs) > 0 {
		for _, c := range f.cards {
			if c.bucket != nil {
				if _, ok := f.buckets[bucketKey{c.bucket.CardID, c.bucket.Start.Unix()}]; !ok {
					c.bucket = nil
				}
			}
		}
	}
	us := make([]Usage, 0, len(f.usage))
	for id, u := range f.usage {
		us = append(us, *u)
		delete(f.usage, id)
	}
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].Start.Equal(rs[j].Start) {
			return rs[i].Start.Before(rs[j].Start)
		}
		return rs[i].CardID < rs[j].CardID
	})
	sort.Slice(us, func(i, j int) bool { return us[i].BookingID < us[j].BookingID })
	return rs, us
}

// TakeEvents hands over the alert episodes that started or ended.
func (f *Fleet) TakeEvents() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.events
	f.events = nil
	return out
}

// TakeUnregistered returns the cards the inventory lacks that reported
// since the last call, for the pending-registration list.
func (f *Fleet) TakeUnregistered() []CardView {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]CardView, 0, len(f.unknownNew))
	for key := range f.unknownNew {
		if c, ok := f.cards[key]; ok && !c.registered {
			out = append(out, f.view(c))
		}
		delete(f.unknownNew, key)
	}
	sortViews(out)
	return out
}

// IdleBooking is a booking all of whose reporting cards are quiet.
type IdleBooking struct {
	Hold    Hold
	IdleFor time.Duration // the shortest quiet stretch among its cards
	Cards   []string
}

// IdleBookings lists the bookings whose every card reports and is quiet at
// now, with how long the least quiet one has been. A booking with a card
// that is busy, silent or in maintenance is not idle: the policy that
// releases idle bookings must never act on missing data.
func (f *Fleet) IdleBookings(now time.Time) []IdleBooking {
	f.mu.Lock()
	defer f.mu.Unlock()
	type acc struct {
		ib     IdleBooking
		broken bool
	}
	by := map[int64]*acc{}
	for _, c := range f.cards {
		if !c.registered || !c.hold.covers(now) {
			continue
		}
		a := by[c.hold.BookingID]
		if a == nil {
			a = &acc{ib: IdleBooking{Hold: *c.hold, IdleFor: -1}}
			by[c.hold.BookingID] = a
		}
		a.ib.Cards = append(a.ib.Cards, c.meta.UUID)
		if c.lowSince.IsZero() || (c.state != StateIdle && c.state != StateHeldIdle) {
			a.broken = true
			continue
		}
		since := c.lowSince
		if c.hold.Start.After(since) {
			since = c.hold.Start
		}
		if d := now.Sub(since); a.ib.IdleFor < 0 || d < a.ib.IdleFor {
			a.ib.IdleFor = d
		}
	}
	var out []IdleBooking
	for _, a := range by {
		if !a.broken && a.ib.IdleFor >= 0 {
			sort.Strings(a.ib.Cards)
			out = append(out, a.ib)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hold.BookingID < out[j].Hold.BookingID })
	return out
}
