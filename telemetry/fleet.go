package telemetry

import (
	"slices"
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
	// Fault is why the inventory marks the card faulty ("" when it does
	// not): it stays faulty, and out of new bookings, until an admin
	// clears it, whatever it reports meanwhile.
	Fault string
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
	UUID        string   `json:"uuid"`
	CardID      int64    `json:"card_id,omitempty"`
	Host        string   `json:"host"`
	Index       int      `json:"index"`
	Type        string   `json:"card_type"`
	Model       string   `json:"model,omitempty"`
	Registered  bool     `json:"registered"`
	State       State    `json:"state"`
	Figure      string   `json:"figure"` // the metric its tile shows large (Figure)
	Util        *float64 `json:"util"`
	MemUsedMiB  *float64 `json:"mem_used_mib"`
	MemTotalMiB *float64 `json:"mem_total_mib"`
	TempC       *float64 `json:"temp_c"`
	PowerW      *float64 `json:"power_w"`
	Processes   int      `json:"processes"`
	// SMActive is engine activity (DCGM's GR_ENGINE_ACTIVE), a different
	// measure from Util: on a MIG card, the busiest instance's.
	SMActive    *float64   `json:"sm_active"`
	MIG         bool       `json:"mig"`
	Instances   []Instance `json:"instances,omitempty"`
	ProcessList []Process  `json:"process_list,omitempty"`
	Fault       string     `json:"fault,omitempty"` // the fault reading, or the inventory's reason
	LastSample  time.Time  `json:"last_sample"`
	LowSince    time.Time  `json:"low_since"`
	Hold        *Hold      `json:"booking"`
	Source      Source     `json:"source,omitempty"`
	Arrival     time.Time  `json:"-"`
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
	// Waiting is, per card type, the requests queued for cards
	// (盯住占用与等待); the board refreshes it from the bookings.
	Waiting []Waiting `json:"waiting"`
}

// Waiting is the queue of one card type.
type Waiting struct {
	CardType    string    `json:"card_type"`
	Requests    int       `json:"requests"`
	OldestSince time.Time `json:"oldest_since"`
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
	// EventFault: the card reported a reading that means it is unhealthy.
	EventFault EventKind = "fault"
	// EventUnbooked: a registered card is in use and no booking holds it.
	EventUnbooked EventKind = "unbooked"
	// EventForeign: a booked card runs processes of OS accounts that belong
	// to no member of the booking's team.
	EventForeign EventKind = "foreign"
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
	// Reason and Processes say what was seen: the fault reading, and the
	// processes on an unbooked card or the foreign ones on a booked card.
	Reason    string
	Processes []Process
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
	// so a misbehaving agent cannot grow the state without end; the same
	// per host and per origin (the token that pushed), so one cannot crowd
	// out the others' new cards.
	MaxUnregistered          int
	MaxUnregisteredPerHost   int
	MaxUnregisteredPerOrigin int
	// Intervals are the sources' nominal intervals between samples (the
	// agent's 1 s, the DCGM scrape interval): until a card has shown its
	// own, a sample vouches for at most GapFactor of its source's interval.
	Intervals map[Source]time.Duration
}

// GapFactor is how many of a card's intervals one sample may vouch for: a
// late or dropped sample or two is covered, a silence is not.
const GapFactor = 3

// gapHistory is how many recent gaps a card's interval is learned from.
const gapHistory = 8

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
	accounts   map[int64]map[string]bool // OS accounts (lower case) of each team's members
	waiting    []Waiting
	// The unregistered cards counted against the caps: in all, per host
	// (lower case) and per origin (the pushing token).
	unregTotal    int
	unregByHost   map[string]int
	unregByOrigin map[string]int
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
	gaps       [gapHistory]time.Duration
	ngaps      int
	origin     string // who pushed an unregistered card first (for the per-origin cap)
	unregHost  string // the host an unregistered card was counted under
	counted    bool   // counted in the fleet's unregistered totals
	bucket     *Rollup
	vramAlert  bool
	idleAlert  bool
	idleFrom   time.Time // when the open held-idle episode's quiet began
	faultAlert bool
	unbooked   bool
	foreign    bool
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
	if o.MaxUnregisteredPerHost <= 0 {
		o.MaxUnregisteredPerHost = 64
	}
	if o.MaxUnregisteredPerOrigin <= 0 {
		o.MaxUnregisteredPerOrigin = 256
	}
	return &Fleet{
		opts:        o,
		cards:       map[string]*card{},
		retired:     map[string]bool{},
		dirty:       map[string]string{},
		buckets:     map[bucketKey]*Rollup{},
		usage:       map[int64]*Usage{},
		unknownNew:  map[string]struct{}{},
		changed:     make(chan struct{}, 1),
		accounts:    map[int64]map[string]bool{},
		unregByHost: map[string]int{}, unregByOrigin: map[string]int{},
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
		if !c.registered {
			f.dropUnreg(c)
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
				continue
			}
			c.unregHost = c.meta.Host
			f.addUnreg(c)
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

// reading is what Classify needs to know of a card at now.
func (c *card) reading(now time.Time) Reading {
	r := Reading{Now: now, LastSample: c.lastAt, Util: c.last.UtilPct, SMActive: c.smActive(), Processes: c.processes,
		MIG: c.last.MIG, MemUsedMiB: c.last.MemUsedMiB, MemTotalMiB: c.memTotal(), Maintenance: c.meta.Maintenance,
		Fault: c.last.Fault != "" || c.meta.Fault != "", Registered: c.registered, LowSince: c.lowSince}
	if c.hold.covers(now) {
		r.Held, r.HeldSince = true, c.hold.Start
	}
	return r
}

// smActive is the card's engine activity: its own, or on a MIG card the
// busiest instance's.
func (c *card) smActive() *float64 {
	if c.last.SMActivePct != nil {
		return c.last.SMActivePct
	}
	var best *float64
	for i := range c.last.Instances {
		if a := c.last.Instances[i].SMActivePct; a != nil && (best == nil || *a > *best) {
			best = a
		}
	}
	return best
}

// reclassify recomputes a card's state at now and records alert episodes;
// f.mu must be held.
func (f *Fleet) reclassify(key string, c *card, now time.Time) { f.classify(key, c, c.reading(now)) }

// classify is reclassify with the card's reading at hand.
func (f *Fleet) classify(key string, c *card, r Reading) {
	t := f.opts.Thresholds
	now := r.Now
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
	base := Event{UUID: c.meta.UUID, CardID: c.meta.ID, BookingID: bookingID, At: now}
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
		e := base
		e.Kind, e.Open, e.Value = EventHeldIdle, idle, now.Sub(c.idleFrom).Minutes()
		f.event(e)
	}
	// VRAM episodes follow the memory, with hysteresis; an offline,
	// maintenance or faulty card ends its episode.
	alerting := false
	if c.state != StateOffline && c.state != StateMaintenance && c.state != StateFault {
		alerting = VRAMAlerting(c.vramAlert, c.last.MemUsedMiB, c.memTotal(), t)
	}
	if alerting != c.vramAlert {
		c.vramAlert = alerting
		p, _ := MemPct(c.last.MemUsedMiB, c.memTotal())
		e := base
		e.Kind, e.Open, e.Value = EventVRAM, alerting, p
		f.event(e)
	}
	f.occupancyEvents(c, r, base)
}

// occupancyEvents opens and closes the episodes of a fault reading, of an
// unbooked card in use, and of foreign processes on a booked card — each
// once, carrying what was seen.
func (f *Fleet) occupancyEvents(c *card, r Reading, base Event) {
	if fault := c.last.Fault != "" && c.state != StateMaintenance; fault != c.faultAlert {
		c.faultAlert = fault
		e := base
		e.Kind, e.Open, e.Reason = EventFault, fault, c.last.Fault
		f.event(e)
	}
	if unbooked := c.state == StateUnbooked; unbooked != c.unbooked {
		c.unbooked = unbooked
		e := base
		e.Kind, e.Open = EventUnbooked, unbooked
		if unbooked {
			e.Processes = append([]Process(nil), c.last.Processes...)
		}
		f.event(e)
	}
	var foreign []Process
	if r.Held && c.state != StateOffline {
		foreign = f.foreignProcesses(c)
	}
	if is := len(foreign) > 0; is != c.foreign {
		c.foreign = is
		e := base
		e.Kind, e.Open, e.Processes = EventForeign, is, foreign
		f.event(e)
	}
}

// foreignProcesses are the processes on a held card whose OS account is
// no member's of the booking's team. Processes without a user (a source
// that cannot tell) and teams whose accounts are not known accuse nobody.
func (f *Fleet) foreignProcesses(c *card) []Process {
	accounts, ok := f.accounts[c.hold.TeamID]
	if !ok || len(accounts) == 0 {
		return nil
	}
	var out []Process
	for _, p := range c.last.Processes {
		if p.User != "" && !accounts[strings.ToLower(p.User)] {
			out = append(out, p)
		}
	}
	return out
}

// SetTeamAccounts says which OS accounts belong to each team's members, so
// processes of anyone else on a booked card can be told apart.
func (f *Fleet) SetTeamAccounts(accounts map[int64][]string) {
	sets := make(map[int64]map[string]bool, len(accounts))
	for team, names := range accounts {
		set := make(map[string]bool, len(names))
		for _, n := range names {
			set[strings.ToLower(n)] = true
		}
		sets[team] = set
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accounts = sets
}

// SetWaiting replaces the per-type queue figures the summary carries.
func (f *Fleet) SetWaiting(w []Waiting) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.waiting, w) {
		f.waiting = append([]Waiting(nil), w...)
		f.signal()
	}
}

// Misplaced finds the first sample that names a registered card under a
// host other than the one the inventory places it on (a sample without a
// host names none): a spoofed or misconfigured push. It holds the lock
// once for the whole batch.
func (f *Fleet) Misplaced(samples []Sample) (s Sample, registeredHost string, cardID int64, found bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range samples {
		if s.Host == "" {
			continue
		}
		c, ok := f.cards[strings.ToUpper(s.UUID)]
		if ok && c.registered && !strings.EqualFold(c.meta.Host, s.Host) {
			return s, c.meta.Host, c.meta.ID, true
		}
	}
	return Sample{}, "", 0, false
}

// CardOnBus finds the card a host last reported on a PCI bus id (as
// NormalizeBusID writes it), so that a GPU nvidia-smi can no longer reach,
// which it names only by bus id, can be marked faulty. It scans the cards:
// such lines are rare, and a map kept per sample would cost every ingest.
func (f *Fleet) CardOnBus(host, busID string) (Sample, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.cards {
		if c.last.BusID == busID && strings.EqualFold(c.meta.Host, host) {
			return Sample{UUID: c.meta.UUID, Index: c.meta.Index, Name: c.last.Name, Host: c.meta.Host, BusID: busID}, true
		}
	}
	return Sample{}, false
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
	return f.IngestFrom(samples, src, "", arrival)
}

// IngestFrom is Ingest for samples pushed by origin (the token that sent
// them), which the cap on unregistered cards counts separately.
func (f *Fleet) IngestFrom(samples []Sample, src Source, origin string, arrival time.Time) IngestResult {
	return f.ingest(samples, src, origin, arrival, true)
}

// IngestShared is IngestFrom for a batch another replica received (and
// accounts for): the live state, the card's rhythm, its alert episodes and
// the held-idle figure follow it, but its time goes into neither the
// rollups nor the bookings' usage, which the receiving replica writes. A
// sample still vouches only for the time since the card's previous sample,
// whichever replica got that one — so the replicas' rollups add up to the
// card's time once, however its samples were spread over them. arrival is
// the receiving replica's, so every replica places the samples alike.
func (f *Fleet) IngestShared(samples []Sample, src Source, origin string, arrival time.Time) IngestResult {
	return f.ingest(samples, src, origin, arrival, false)
}

func (f *Fleet) ingest(samples []Sample, src Source, origin string, arrival time.Time, own bool) IngestResult {
	var res IngestResult
	if len(samples) == 0 {
		return res
	}
	t := f.opts.Thresholds
	f.mu.Lock()
	defer f.mu.Unlock()
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
			if !f.roomForUnregistered(s.Host, origin) {
				res.Ignored++
				continue
			}
			c = &card{meta: CardMeta{UUID: s.UUID, Host: s.Host, Index: s.Index}, origin: origin, unregHost: s.Host}
			f.cards[key] = c
			f.addUnreg(c)
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
		c.processes = countProcesses(s)
		c.lastAt, c.arrival, c.source = at, arrival, src
		if src != SourceSimulator {
			c.realAt = arrival
		}
		// One reading serves the quiet spell, the state and the rollups.
		r := c.reading(at)
		c.lowSince = NextLowSince(c.lowSince, Quietness(r), at, t)
		r.LowSince = c.lowSince
		f.classify(key, c, r)
		f.account(c, r, src, own)
		f.markDirty(key, arrival)
	}
	f.signal()
	return res
}

// countProcesses is how many compute processes a sample reports: its list,
// or on a MIG card what its instances count when the list is not sent.
func countProcesses(s *Sample) int {
	if len(s.Processes) > 0 {
		return len(s.Processes)
	}
	n := 0
	for _, in := range s.Instances {
		n += in.Processes
	}
	return n
}

// roomForUnregistered applies the caps on cards the inventory lacks:
// overall, per host and per origin; f.mu must be held.
func (f *Fleet) roomForUnregistered(host, origin string) bool {
	if f.unregTotal >= f.opts.MaxUnregistered || f.unregByHost[strings.ToLower(host)] >= f.opts.MaxUnregisteredPerHost {
		return false
	}
	return origin == "" || f.unregByOrigin[origin] < f.opts.MaxUnregisteredPerOrigin
}

// addUnreg counts an unregistered card against the caps, once.
func (f *Fleet) addUnreg(c *card) {
	if c.counted {
		return
	}
	c.counted = true
	f.unregTotal++
	f.unregByHost[strings.ToLower(c.unregHost)]++
	if c.origin != "" {
		f.unregByOrigin[c.origin]++
	}
}

// dropUnreg takes back what addUnreg counted (nothing for a card it never
// counted, such as one the inventory listed first).
func (f *Fleet) dropUnreg(c *card) {
	if !c.counted {
		return
	}
	c.counted = false
	f.unregTotal--
	decrement(f.unregByHost, strings.ToLower(c.unregHost))
	if c.origin != "" {
		decrement(f.unregByOrigin, c.origin)
	}
}

func decrement(m map[string]int, k string) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

// account adds the time the sample just taken vouches for into the card's
// minute rollups (r: its reading at the sample), its booking's usage and
// today's held-idle total; f.mu must be held. A sample vouches only for the time since the card's
// previous sample, at most GapFactor of the card's interval (learned from
// its recent gaps, else its source's), and a booking is credited only with
// the part after it began — so no minute holds more than a minute, and no
// booking more than it has lasted.
//
// own is false for a sample another replica received and accounts for:
// it moves the card's clock on (so the next sample vouches only for the
// time since this one) and counts in today's held idle, nothing more.
func (f *Fleet) account(c *card, r Reading, src Source, own bool) {
	at := r.Now
	prev := c.rollAt
	c.rollAt = at
	from := at // the first sample after a start vouches for nothing
	if !prev.IsZero() && at.After(prev) {
		gap := at.Sub(prev)
		limit := c.gapLimit(f.opts.Intervals[src], f.opts.MaxGap)
		c.noteGap(gap)
		from = at.Add(-min(gap, limit))
	}
	if !c.registered || c.meta.ID == 0 {
		return
	}
	t := f.opts.Thresholds
	// Full counts what the card was, booked or not; a faulty or maintained
	// card is neither full nor busy, whatever it says.
	healthy := c.state != StateFault && c.state != StateMaintenance
	w := credit{busy: healthy && Active(r, t), full: healthy && IsFull(r.Util, r.MemUsedMiB, r.MemTotalMiB, t),
		heldIdle: c.state == StateHeldIdle}
	if c.hold.covers(at) {
		w.held = c.hold
	}
	if !own {
		if w.heldIdle {
			f.creditHeldIdle(from, at)
		}
		return
	}
	minute := at.UTC().Truncate(time.Minute)
	if from.Before(minute) {
		// The part before this minute belongs to the previous one (a
		// minute already handed over starts again as a partial one, which
		// the store adds to the first).
		f.credit(f.bucket(c.meta.ID, minute.Add(-time.Minute)), c, from, minute, w)
		from = minute
	}
	b := c.bucket
	if b == nil || !b.Start.Equal(minute) {
		b = f.bucket(c.meta.ID, minute)
		c.bucket = b
	}
	s := &c.last
	b.Samples++
	if s.UtilPct != nil {
		u := *s.UtilPct
		b.UtilSum += u
		b.UtilSamples++
		if u > b.UtilMax {
			b.UtilMax = u
		}
	}
	if s.MemUsedMiB != nil && *s.MemUsedMiB > b.MemMaxMiB {
		b.MemMaxMiB = *s.MemUsedMiB
	}
	if total := c.memTotal(); total != nil {
		b.MemTotalMiB = *total
	}
	f.credit(b, c, from, at, w)
}

// bucket is the rollup of a card's minute, made when it is missing.
func (f *Fleet) bucket(cardID int64, minute time.Time) *Rollup {
	k := bucketKey{cardID, minute.Unix()}
	b := f.buckets[k]
	if b == nil {
		b = &Rollup{CardID: cardID, Start: minute}
		f.buckets[k] = b
	}
	return b
}

// credit is what one stretch of a card's time was.
type credit struct {
	busy, full, heldIdle bool
	held                 *Hold
}

// credit adds [from, to) of a card's time to rollup b, its booking's
// usage (only the part after the booking began) and today's held idle.
func (f *Fleet) credit(b *Rollup, c *card, from, to time.Time, w credit) {
	dt := to.Sub(from).Seconds()
	if dt <= 0 {
		return
	}
	b.SampledSeconds += dt
	if w.busy {
		b.BusySeconds += dt
	}
	if w.full {
		b.FullSeconds += dt
	}
	if w.heldIdle {
		b.HeldIdleSeconds += dt
		f.creditHeldIdle(from, to)
	}
	h := w.held
	if h == nil {
		return
	}
	if h.Start.After(from) {
		from = h.Start
	}
	dh := to.Sub(from).Seconds()
	if dh <= 0 {
		return
	}
	b.HeldSeconds += dh
	b.BookingID = h.BookingID
	u := f.usage[h.BookingID]
	if u == nil {
		u = &Usage{BookingID: h.BookingID}
		f.usage[h.BookingID] = u
	}
	u.SampledSeconds += dh
	if w.busy {
		u.BusySeconds += dh
	}
	if w.heldIdle {
		u.HeldIdleSeconds += dh
	}
}

// creditHeldIdle adds [from, to) to today's held-idle figure.
func (f *Fleet) creditHeldIdle(from, to time.Time) {
	dt := to.Sub(from).Seconds()
	if dt <= 0 {
		return
	}
	day := to.In(f.opts.Location).Format(time.DateOnly)
	switch {
	case day > f.day:
		f.day, f.heldIdleS = day, dt
	case day == f.day:
		f.heldIdleS += dt
	}
}

// gapLimit is the longest stretch one sample may vouch for.
func (c *card) gapLimit(sourceInterval, maxGap time.Duration) time.Duration {
	interval := sourceInterval
	if c.ngaps > 0 {
		interval = c.gaps[0]
		for _, g := range c.gaps[1:min(c.ngaps, gapHistory)] {
			interval = min(interval, g)
		}
	}
	if interval <= 0 {
		return maxGap
	}
	return min(max(GapFactor*interval, 2*time.Second), maxGap)
}

func (c *card) noteGap(g time.Duration) {
	c.gaps[c.ngaps%gapHistory] = g
	c.ngaps++
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
			f.dropUnreg(c)
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
		SMActive: c.smActive(), MIG: c.last.MIG, Fault: c.last.Fault,
	}
	if v.Fault == "" {
		v.Fault = c.meta.Fault
	}
	v.Figure = Figure(v.State, v.Util, v.SMActive, v.MemUsedMiB, v.MemTotalMiB, f.opts.Thresholds)
	if len(c.last.Instances) > 0 {
		v.Instances = append([]Instance(nil), c.last.Instances...)
	}
	if len(c.last.Processes) > 0 {
		v.ProcessList = append([]Process(nil), c.last.Processes...)
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
	s := Summary{At: now, States: make(map[State]int, len(States)), HeldIdleHoursToday: f.heldIdleS / 3600,
		Waiting: append([]Waiting{}, f.waiting...)}
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
		if c.state == StateBusy || c.state == StateFull || (c.state == StateUnbooked && Active(c.reading(now), f.opts.Thresholds)) {
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
	due := func(b *Rollup) bool { return before.IsZero() || !b.Start.Add(time.Minute).After(before) }
	// Counted first: 10,000 cards' minutes grown by appending would be
	// copied a dozen times over.
	n := 0
	for _, b := range f.buckets {
		if due(b) {
			n++
		}
	}
	var rs []Rollup
	if n > 0 {
		rs = make([]Rollup, 0, n)
	}
	for k, b := range f.buckets {
		if !due(b) {
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

// Raising lists the alert episodes open in the live state now, one opening
// event each (At: now): what a replica that begins to write the episodes
// compares with those the database holds open.
func (f *Fleet) Raising() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	var out []Event
	for _, c := range f.cards {
		if !c.registered || c.meta.ID == 0 {
			continue
		}
		base := Event{UUID: c.meta.UUID, CardID: c.meta.ID, Open: true, At: now}
		if c.hold.covers(now) {
			base.BookingID = c.hold.BookingID
		}
		for _, k := range [...]struct {
			on   bool
			kind EventKind
		}{{c.vramAlert, EventVRAM}, {c.idleAlert, EventHeldIdle}, {c.faultAlert, EventFault}, {c.unbooked, EventUnbooked}, {c.foreign, EventForeign}} {
			if k.on {
				e := base
				e.Kind = k.kind
				out = append(out, e)
			}
		}
	}
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
