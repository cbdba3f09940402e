package telemetry

import (
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// The board's wire format. A client first gets a snapshot,
//
//	{"type":"snapshot","at":MS,"cards":[{"uuid":…,"host":…,"index":…,"card_type":…,"state":…,"figure":…,"util":…,
//	  "sm_active":…,"mem_used_mib":…,"mem_total_mib":…,"temp_c":…,"power_w":…,"processes":…,"at":MS,
//	  "low_since":MS,"registered":…,"mig":…,"fault":…,"instances":[{"id":…,"profile":…,"mem_used_mib":…,
//	  "mem_total_mib":…,"sm_active":…,"processes":…},…],
//	  "booking":{"id":…,"team":…,"task":…,"user":…,"end":MS}|null},…],
//	 "fleet":{…},"alerts":[…]}
//
// then deltas that carry, per changed card, its uuid and only the fields
// that changed ("removed":true when it left the board), and the fleet
// figures and alerts only when they changed:
//
//	{"type":"delta","at":MS,"since":MS,"cards":[{"uuid":…,"util":…}],"fleet":{…}}
//
// Numbers are rounded to what a tile shows (whole percent, MiB, °C, W), so
// noise below that precision sends nothing. Times are Unix milliseconds;
// "since" is when the oldest sample in the frame arrived at the server.

// AlertView is an open alert as the board lists it.
type AlertView struct {
	ID    int64     `json:"id"`
	Kind  EventKind `json:"kind"`
	UUID  string    `json:"uuid"`
	Host  string    `json:"host"`
	Index int       `json:"index"`
	Team  string    `json:"team,omitempty"`
	Task  string    `json:"task,omitempty"`
	Since time.Time `json:"since"`
	Value float64   `json:"value"`
	// Reason and Processes are what was seen: a fault reading; the
	// processes on an unbooked card, or the foreign ones on a booked card.
	Reason    string    `json:"reason,omitempty"`
	Processes []Process `json:"processes,omitempty"`
}

// missing marks an absent number in a wireCard.
const missing = math.MinInt32

// wireCard is a card as last sent, rounded as the tiles show it.
type wireCard struct {
	host, typ, model               string
	index                          int
	registered                     bool
	state                          State
	figure                         string
	util, used, total, temp, power int32
	smActive                       int32
	mig                            bool
	fault                          string
	instances                      string // the instances' JSON, compared as a whole
	procs                          int
	lowSince                       int64
	at                             int64
	bookingID                      int64
	team, task, user               string
	end                            int64
}

func round(v *float64) int32 {
	if v == nil {
		return missing
	}
	return int32(math.Round(*v))
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func toWire(v CardView) wireCard {
	w := wireCard{host: v.Host, typ: v.Type, model: v.Model, index: v.Index, registered: v.Registered, state: v.State, figure: v.Figure,
		util: round(v.Util), used: round(v.MemUsedMiB), total: round(v.MemTotalMiB), temp: round(v.TempC), power: round(v.PowerW),
		procs: v.Processes, lowSince: ms(v.LowSince), at: ms(v.LastSample),
		smActive: round(v.SMActive), mig: v.MIG, fault: v.Fault, instances: instancesJSON(v.Instances)}
	if h := v.Hold; h != nil {
		w.bookingID, w.team, w.task, w.user, w.end = h.BookingID, h.Team, h.Task, h.User, ms(h.End)
	}
	return w
}

// instancesJSON writes a MIG card's instances as a tile shows them.
func instancesJSON(in []Instance) string {
	if len(in) == 0 {
		return "[]"
	}
	b := []byte{'['}
	for i, x := range in {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(x.ID), 10)
		b = append(b, `,"profile":`...)
		b = appendString(b, x.Profile)
		b = appendNum(b, "mem_used_mib", round(x.MemUsedMiB))
		b = appendNum(b, "mem_total_mib", round(x.MemTotalMiB))
		b = appendNum(b, "sm_active", round(x.SMActivePct))
		b = append(b, `,"processes":`...)
		b = strconv.AppendInt(b, int64(x.Processes), 10)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

// FrameEncoder turns fleet changes into frames. It remembers what it last
// sent, which is both what deltas are computed against and what a newly
// connected client's snapshot holds — so a snapshot followed by the deltas
// after it always adds up to what every other client sees. It is not safe
// for concurrent use: the hub goroutine owns it.
type FrameEncoder struct {
	cards  map[string]wireCard
	order  []string
	sorted bool
	fleet  []byte
	alerts []byte
	lastAt int64
	snap   []byte
	buf    []byte
}

// NewFrameEncoder starts with an empty board.
func NewFrameEncoder() *FrameEncoder {
	return &FrameEncoder{cards: map[string]wireCard{}, fleet: []byte("{}"), alerts: []byte("[]")}
}

// Delta folds the changed cards, the fleet figures and the open alerts
// into the remembered state and returns the delta frame, or nil when no
// tile, figure or alert changed and heartbeat is false.
func (e *FrameEncoder) Delta(changed []CardView, sum Summary, alerts []AlertView, now, since time.Time, heartbeat bool) []byte {
	b := e.buf[:0]
	b = append(b, `{"type":"delta","at":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	if !since.IsZero() {
		b = append(b, `,"since":`...)
		b = strconv.AppendInt(b, since.UnixMilli(), 10)
	}
	n := 0
	sort.Slice(changed, func(i, j int) bool { return changed[i].UUID < changed[j].UUID })
	for _, v := range changed {
		prev, had := e.cards[v.UUID]
		if v.State == "" {
			if !had {
				continue
			}
			delete(e.cards, v.UUID)
			e.sorted = false
			b = e.sep(b, &n)
			b = append(b, `{"uuid":`...)
			b = appendString(b, v.UUID)
			b = append(b, `,"removed":true}`...)
			continue
		}
		w := toWire(v)
		if had && !differs(prev, w) {
			// Only the sample time moved; keep it for the next snapshot.
			e.cards[v.UUID] = w
			continue
		}
		e.cards[v.UUID] = w
		if !had {
			e.sorted = false
			b = e.sep(b, &n)
			b = appendCard(b, v.UUID, w)
			continue
		}
		b = e.sep(b, &n)
		b = appendCardDiff(b, v.UUID, prev, w)
	}
	if n > 0 {
		b = append(b, ']')
	}
	changedAny := n > 0
	fleet := appendSummary(nil, sum)
	if string(fleet) != string(e.fleet) {
		e.fleet = fleet
		b = append(b, `,"fleet":`...)
		b = append(b, fleet...)
		changedAny = true
	}
	al := appendAlerts(nil, alerts)
	if string(al) != string(e.alerts) {
		e.alerts = al
		b = append(b, `,"alerts":`...)
		b = append(b, al...)
		changedAny = true
	}
	b = append(b, '}')
	e.buf = b
	if changedAny {
		e.snap = nil
	}
	e.lastAt = now.UnixMilli()
	if !changedAny && !heartbeat {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

func (e *FrameEncoder) sep(b []byte, n *int) []byte {
	if *n == 0 {
		b = append(b, `,"cards":[`...)
	} else {
		b = append(b, ',')
	}
	*n++
	return b
}

// Snapshot is the whole remembered board. It is cached until the next
// delta changes something, so a crowd of clients connecting at once costs
// one encoding.
func (e *FrameEncoder) Snapshot() []byte {
	if e.snap != nil {
		return e.snap
	}
	if !e.sorted {
		e.order = e.order[:0]
		for k := range e.cards {
			e.order = append(e.order, k)
		}
		sort.Slice(e.order, func(i, j int) bool {
			a, b := e.cards[e.order[i]], e.cards[e.order[j]]
			if a.host != b.host {
				return a.host < b.host
			}
			if a.index != b.index {
				return a.index < b.index
			}
			return e.order[i] < e.order[j]
		})
		e.sorted = true
	}
	b := make([]byte, 0, 64+300*len(e.order))
	b = append(b, `{"type":"snapshot","at":`...)
	b = strconv.AppendInt(b, e.lastAt, 10)
	b = append(b, `,"cards":[`...)
	for i, k := range e.order {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCard(b, k, e.cards[k])
	}
	b = append(b, `],"fleet":`...)
	b = append(b, e.fleet...)
	b = append(b, `,"alerts":`...)
	b = append(b, e.alerts...)
	b = append(b, '}')
	e.snap = b
	return b
}

func differs(a, b wireCard) bool {
	a.at, b.at = 0, 0
	return a != b
}

func appendCard(b []byte, uuid string, w wireCard) []byte {
	b = append(b, `{"uuid":`...)
	b = appendString(b, uuid)
	b = append(b, `,"host":`...)
	b = appendString(b, w.host)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(w.index), 10)
	b = append(b, `,"card_type":`...)
	b = appendString(b, w.typ)
	b = append(b, `,"model":`...)
	b = appendString(b, w.model)
	b = append(b, `,"registered":`...)
	b = strconv.AppendBool(b, w.registered)
	b = append(b, `,"state":`...)
	b = appendString(b, string(w.state))
	b = append(b, `,"figure":`...)
	b = appendString(b, w.figure)
	b = appendNum(b, "util", w.util)
	b = appendNum(b, "sm_active", w.smActive)
	b = appendNum(b, "mem_used_mib", w.used)
	b = appendNum(b, "mem_total_mib", w.total)
	b = appendNum(b, "temp_c", w.temp)
	b = appendNum(b, "power_w", w.power)
	b = append(b, `,"processes":`...)
	b = strconv.AppendInt(b, int64(w.procs), 10)
	b = append(b, `,"mig":`...)
	b = strconv.AppendBool(b, w.mig)
	b = append(b, `,"fault":`...)
	b = appendString(b, w.fault)
	b = append(b, `,"instances":`...)
	b = append(b, w.instances...)
	b = append(b, `,"at":`...)
	b = strconv.AppendInt(b, w.at, 10)
	b = append(b, `,"low_since":`...)
	b = strconv.AppendInt(b, w.lowSince, 10)
	b = appendBooking(b, w)
	return append(b, '}')
}

func appendCardDiff(b []byte, uuid string, p, w wireCard) []byte {
	b = append(b, `{"uuid":`...)
	b = appendString(b, uuid)
	if p.host != w.host {
		b = append(b, `,"host":`...)
		b = appendString(b, w.host)
	}
	if p.index != w.index {
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(w.index), 10)
	}
	if p.typ != w.typ {
		b = append(b, `,"card_type":`...)
		b = appendString(b, w.typ)
	}
	if p.model != w.model {
		b = append(b, `,"model":`...)
		b = appendString(b, w.model)
	}
	if p.registered != w.registered {
		b = append(b, `,"registered":`...)
		b = strconv.AppendBool(b, w.registered)
	}
	if p.state != w.state {
		b = append(b, `,"state":`...)
		b = appendString(b, string(w.state))
	}
	if p.figure != w.figure {
		b = append(b, `,"figure":`...)
		b = appendString(b, w.figure)
	}
	if p.util != w.util {
		b = appendNum(b, "util", w.util)
	}
	if p.smActive != w.smActive {
		b = appendNum(b, "sm_active", w.smActive)
	}
	if p.mig != w.mig {
		b = append(b, `,"mig":`...)
		b = strconv.AppendBool(b, w.mig)
	}
	if p.fault != w.fault {
		b = append(b, `,"fault":`...)
		b = appendString(b, w.fault)
	}
	if p.instances != w.instances {
		b = append(b, `,"instances":`...)
		b = append(b, w.instances...)
	}
	if p.used != w.used {
		b = appendNum(b, "mem_used_mib", w.used)
	}
	if p.total != w.total {
		b = appendNum(b, "mem_total_mib", w.total)
	}
	if p.temp != w.temp {
		b = appendNum(b, "temp_c", w.temp)
	}
	if p.power != w.power {
		b = appendNum(b, "power_w", w.power)
	}
	if p.procs != w.procs {
		b = append(b, `,"processes":`...)
		b = strconv.AppendInt(b, int64(w.procs), 10)
	}
	if p.lowSince != w.lowSince {
		b = append(b, `,"low_since":`...)
		b = strconv.AppendInt(b, w.lowSince, 10)
	}
	if p.bookingID != w.bookingID || p.team != w.team || p.task != w.task || p.user != w.user || p.end != w.end {
		b = appendBooking(b, w)
	}
	return append(b, '}')
}

func appendBooking(b []byte, w wireCard) []byte {
	if w.bookingID == 0 {
		return append(b, `,"booking":null`...)
	}
	b = append(b, `,"booking":{"id":`...)
	b = strconv.AppendInt(b, w.bookingID, 10)
	b = append(b, `,"team":`...)
	b = appendString(b, w.team)
	b = append(b, `,"task":`...)
	b = appendString(b, w.task)
	b = append(b, `,"user":`...)
	b = appendString(b, w.user)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, w.end, 10)
	return append(b, '}')
}

func appendNum(b []byte, key string, v int32) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	if v == missing {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(v), 10)
}

func appendSummary(b []byte, s Summary) []byte {
	b = append(b, `{"cards":`...)
	b = strconv.AppendInt(b, int64(s.Cards), 10)
	b = append(b, `,"booked":`...)
	b = strconv.AppendInt(b, int64(s.Booked), 10)
	b = append(b, `,"busy":`...)
	b = strconv.AppendInt(b, int64(s.Busy), 10)
	b = append(b, `,"reporting":`...)
	b = strconv.AppendInt(b, int64(s.Reporting), 10)
	b = append(b, `,"util_now":`...)
	b = strconv.AppendFloat(b, math.Round(s.UtilNow*10)/10, 'f', -1, 64)
	b = append(b, `,"held_idle_hours_today":`...)
	b = strconv.AppendFloat(b, math.Round(s.HeldIdleHoursToday*10)/10, 'f', -1, 64)
	b = append(b, `,"unregistered":`...)
	b = strconv.AppendInt(b, int64(s.Unregistered), 10)
	b = append(b, `,"waiting":[`...)
	for i, w := range s.Waiting {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"card_type":`...)
		b = appendString(b, w.CardType)
		b = append(b, `,"requests":`...)
		b = strconv.AppendInt(b, int64(w.Requests), 10)
		b = append(b, `,"oldest_since":`...)
		b = strconv.AppendInt(b, ms(w.OldestSince), 10)
		b = append(b, '}')
	}
	b = append(b, ']')
	b = append(b, `,"states":{`...)
	for i, st := range States {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, string(st))
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(s.States[st]), 10)
	}
	return append(b, '}', '}')
}

func appendAlerts(b []byte, as []AlertView) []byte {
	b = append(b, '[')
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, a.ID, 10)
		b = append(b, `,"kind":`...)
		b = appendString(b, string(a.Kind))
		b = append(b, `,"uuid":`...)
		b = appendString(b, a.UUID)
		b = append(b, `,"host":`...)
		b = appendString(b, a.Host)
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(a.Index), 10)
		b = append(b, `,"team":`...)
		b = appendString(b, a.Team)
		b = append(b, `,"task":`...)
		b = appendString(b, a.Task)
		b = append(b, `,"since":`...)
		b = strconv.AppendInt(b, ms(a.Since), 10)
		b = append(b, `,"value":`...)
		b = strconv.AppendFloat(b, math.Round(a.Value), 'f', -1, 64)
		b = append(b, `,"reason":`...)
		b = appendString(b, a.Reason)
		b = append(b, `,"processes":[`...)
		for j, p := range a.Processes {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"pid":`...)
			b = strconv.AppendInt(b, int64(p.PID), 10)
			b = append(b, `,"name":`...)
			b = appendString(b, p.Name)
			b = append(b, `,"user":`...)
			b = appendString(b, p.User)
			b = appendNum(b, "mem_mib", round(p.MemMiB))
			b = append(b, '}')
		}
		b = append(b, ']', '}')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Besides what JSON requires it
// escapes <, > and & (the frame may end up in HTML) and U+2028/2029, and
// replaces invalid UTF-8 with U+FFFD, as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
