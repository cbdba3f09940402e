package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DCGM exporter metric names cardhour reads.
const (
	dcgmUtil       = "DCGM_FI_DEV_GPU_UTIL"
	dcgmFBUsed     = "DCGM_FI_DEV_FB_USED"
	dcgmFBFree     = "DCGM_FI_DEV_FB_FREE"
	dcgmFBReserved = "DCGM_FI_DEV_FB_RESERVED"
	dcgmFBTotal    = "DCGM_FI_DEV_FB_TOTAL"
	dcgmTemp       = "DCGM_FI_DEV_GPU_TEMP"
	dcgmPower      = "DCGM_FI_DEV_POWER_USAGE"
	dcgmGRActive   = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
	dcgmXID        = "DCGM_FI_DEV_XID_ERRORS"
)

// The readings of one series, by family.
const (
	rUtil = iota
	rUsed
	rFree
	rReserved
	rTotal
	rTemp
	rPower
	rGR
	rXID
	readings
)

var dcgmFamilies = map[string]int{
	dcgmUtil: rUtil, dcgmFBUsed: rUsed, dcgmFBFree: rFree, dcgmFBReserved: rReserved, dcgmFBTotal: rTotal,
	dcgmTemp: rTemp, dcgmPower: rPower, dcgmGRActive: rGR, dcgmXID: rXID,
}

// dcgmBlank reports DCGM's "blank" markers: values from
// 0x7ffffffffffffff0 to 0x7ffffffffffffff3 mean "not supported / no data",
// never a number. In a float64 they all round to 2^63, so anything that
// large is treated as blank.
func dcgmBlank(v float64) bool {
	return math.IsNaN(v) || math.IsInf(v, 0) || v >= 9.2233720368547758e18
}

// SkippedFamily is a metric family of a scrape that did not parse.
type SkippedFamily struct {
	Name   string // "" when the line had no metric name at all
	Line   int
	Reason string
}

// DCGMScrape is what one scrape held.
type DCGMScrape struct {
	Samples []Sample
	// Skipped are the families that did not parse (real exporters print
	// "ERROR - FAILED TO CONVERT TO STRING" for some vGPU families); the
	// rest of the scrape is read without them.
	Skipped []SkippedFamily
}

// ParseDCGMScrape reads a DCGM exporter scrape (Prometheus text format)
// into one sample per GPU, keyed by the UUID label; host is used when the
// metrics carry no hostname label (older exporters spell it Hostname).
//
// The text is read family by family: a family with a line that does not
// parse is skipped and reported, and the others are read. expfmt's
// TextParser cannot do that (one bad line fails the whole input), and it
// reads a byte at a time with an allocation per label; the sample lines of
// this format are read here instead, and the tests hold the result against
// expfmt's reading of the same recordings.
//
// Series with GPU_I_ID are MIG instances of their card (same UUID): the
// card gets one Sample with its Instances, and its used VRAM is the sum of
// theirs. The error is for an unreadable body, one over 16 MiB, or one in
// which no family parsed at all.
func ParseDCGMScrape(r io.Reader, host string, at time.Time) (DCGMScrape, error) {
	b, err := readAll(r)
	if err != nil {
		return DCGMScrape{}, fmt.Errorf("reading the scrape: %w", err)
	}
	if len(b) > maxInput {
		return DCGMScrape{}, errors.New("scrape larger than 16 MiB")
	}
	d := dcgmParser{host: host, at: at}
	d.families(b)
	out := DCGMScrape{Samples: d.samples(), Skipped: d.skipped}
	if d.good == 0 && len(d.skipped) > 0 {
		first := d.skipped[0]
		return out, errors.New("no metric family parsed; line " + itoa(first.Line) + ": " + first.Reason)
	}
	return out, nil
}

type dcgmParser struct {
	host    string
	at      time.Time
	skipped []SkippedFamily
	good    int // families that parsed

	// The family being read.
	cur        []byte
	curLine    int
	curReading int // -1: a family cardhour does not read
	curSamples int
	curBad     string
	curBadLine int
	pending    []promSample

	cards map[string]*dcgmCard
	order []*dcgmCard
}

// dcgmSeries holds the readings of one series set: a card's own, or one
// MIG instance's.
type dcgmSeries struct {
	v   [readings]float64
	has [readings]bool
}

// floats is one scrape's room for the readings its samples point to, so
// that a reading costs no allocation of its own (as the CSV parser's
// readings). put copies v in; should the room run out, append moves on to a
// new array and the pointers already handed out stay valid.
type floats []float64

func (a *floats) put(v float64) *float64 {
	*a = append(*a, v)
	return &(*a)[len(*a)-1]
}

func (s *dcgmSeries) get(r int, a *floats) *float64 {
	if !s.has[r] {
		return nil
	}
	return a.put(s.v[r])
}

// total is FB_TOTAL where given, else used + free + reserved.
func (s *dcgmSeries) total(a *floats) *float64 {
	if s.has[rTotal] {
		return nonNegative(s.get(rTotal, a))
	}
	if !s.has[rUsed] || !s.has[rFree] {
		return nil
	}
	t := s.v[rUsed] + s.v[rFree]
	if s.has[rReserved] {
		t += s.v[rReserved]
	}
	return nonNegative(a.put(t))
}

func (s *dcgmSeries) smActive(a *floats) *float64 {
	if !s.has[rGR] {
		return nil
	}
	pct := s.v[rGR] * 100
	return percent(a.put(pct))
}

type dcgmCard struct {
	s   Sample
	own dcgmSeries
	// An instance series' temperature and power repeat the card's: the
	// first instance's stand in when the card has no series of its own.
	firstTemp, firstPow       float64
	hasFirstTemp, hasFirstPow bool
	xid                       float64
	inst                      map[int]*dcgmInstance
}

type dcgmInstance struct {
	profile string
	dcgmSeries
}

// families reads the text line by line, family by family: a family is a
// run of lines (HELP, TYPE, samples) of one metric name. A family with a
// line that does not parse is skipped whole and reported; the series of
// the others are kept.
func (d *dcgmParser) families(b []byte) {
	n := 0
	for off := 0; off < len(b); {
		end := bytes.IndexByte(b[off:], '\n')
		var line []byte
		if end < 0 {
			line, off = b[off:], len(b)
		} else {
			line, off = b[off:off+end], off+end+1
		}
		n++
		d.line(n, bytes.TrimRight(bytes.TrimLeft(line, " \t"), " \t\r"))
	}
	d.finish()
}

func (d *dcgmParser) line(n int, line []byte) {
	if len(line) == 0 {
		return
	}
	if line[0] == '#' {
		if name := commentFamily(line); name != nil && !bytes.Equal(name, d.cur) {
			d.start(name, n)
		}
		return
	}
	// Most lines continue the family before; only a new name is walked
	// byte by byte (see parseSample on why that matters).
	var name []byte
	if l := len(d.cur); d.curLine > 0 && l > 0 && len(line) > l && bytes.HasPrefix(line, d.cur) && !isMetricNameByte(line[l]) {
		name = line[:l]
	} else {
		name = line[:metricNameLen(line)]
		if !bytes.Equal(name, d.cur) || d.curLine == 0 {
			d.start(name, n)
		}
	}
	d.curSamples++
	if d.curBad != "" {
		return
	}
	var ps promSample
	if why := parseSample(line[len(name):], &ps); why != "" {
		d.curBad, d.curBadLine, d.pending = why, n, d.pending[:0]
		return
	}
	if d.curReading >= 0 {
		d.pending = append(d.pending, ps)
	}
}

// start ends the family before and begins the one named name at line n.
func (d *dcgmParser) start(name []byte, n int) {
	d.finish()
	d.cur, d.curLine, d.curBad, d.curSamples = name, n, "", 0
	d.curReading = -1
	if r, ok := dcgmFamilies[string(name)]; ok {
		d.curReading = r
	}
}

func (d *dcgmParser) finish() {
	if d.curSamples > 0 {
		if d.curBad != "" {
			d.skipped = append(d.skipped, SkippedFamily{Name: string(d.cur), Line: d.curBadLine, Reason: d.curBad})
		} else {
			d.good++
			for i := range d.pending {
				d.series(d.curReading, &d.pending[i])
			}
		}
	}
	d.pending = d.pending[:0]
	d.curSamples = 0
}

// commentFamily is the metric name of a "# HELP name …" or "# TYPE name …"
// line; nil for other comments.
func commentFamily(line []byte) []byte {
	rest := bytes.TrimLeft(line[1:], " \t")
	if !bytes.HasPrefix(rest, []byte("HELP")) && !bytes.HasPrefix(rest, []byte("TYPE")) {
		return nil
	}
	rest = rest[4:]
	if len(rest) == 0 || rest[0] != ' ' && rest[0] != '\t' {
		return nil
	}
	rest = bytes.TrimLeft(rest, " \t")
	name := rest[:metricNameLen(rest)]
	if len(name) == 0 {
		return nil
	}
	return name
}

func isMetricNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= '0' && c <= '9'
}

// metricNameLen is the length of the metric name b begins with: metric
// name bytes, the first not a digit.
func metricNameLen(b []byte) int {
	i := 0
	for i < len(b) && isMetricNameByte(b[i]) && (i > 0 || b[i] < '0' || b[i] > '9') {
		i++
	}
	return i
}

// isLabelNameStart: a label name begins with a letter or _.
func isLabelNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// promSample is one sample line: the labels cardhour reads, and the value.
// The byte slices point into the scrape.
type promSample struct {
	v                                                         float64
	uuid, gi, profile, gpu, model, hostname, oldHostname, bus []byte
}

// parseSample reads what follows a sample line's metric name: an optional
// label set, a value, an optional timestamp — the text format as expfmt
// reads it for gauges, counters and untyped samples. It returns why the
// line does not parse, or "". It jumps between quotes and braces with
// bytes.IndexByte rather than walking the line byte by byte. That is
// faster, and it keeps the fuzzer productive: every loop of Go code counts
// its rounds in an 8-bit coverage counter that wraps, so a loop over every
// byte of a scrape makes the exact byte count part of the coverage, and an
// input found that way cannot be minimised (expfmt's byte-at-a-time parser
// kept FuzzParseDCGM minimising such inputs instead of fuzzing).
func parseSample(rest []byte, ps *promSample) string {
	if len(rest) == 0 {
		return "no value"
	}
	rest = bytes.TrimLeft(rest, " \t")
	if len(rest) > 0 && rest[0] == '{' {
		p := 1
		for {
			p += blanks(rest[p:])
			if p < len(rest) && rest[p] == '}' {
				p++
				break
			}
			// The label name runs to the '='. Its characters are not walked
			// one by one: cardhour matches the names it reads exactly, and
			// checks the others only for what would end a label early.
			eq := bytes.IndexByte(rest[p:], '=')
			if eq < 0 {
				return "a label name or } expected"
			}
			name := bytes.TrimRight(rest[p:p+eq], " \t")
			if len(name) == 0 || !isLabelNameStart(name[0]) || bytes.IndexByte(name, '"') >= 0 || bytes.IndexByte(name, ',') >= 0 ||
				bytes.IndexByte(name, '}') >= 0 || bytes.IndexByte(name, ' ') >= 0 {
				return "a label name or } expected"
			}
			p += eq + 1
			p += blanks(rest[p:])
			if p >= len(rest) || rest[p] != '"' {
				return "a quoted value expected for label " + strconv.Quote(string(name))
			}
			p++
			val, n, why := labelValue(rest[p:])
			if why != "" {
				return why + " in label " + strconv.Quote(string(name))
			}
			p += n
			ps.label(name, val)
			p += blanks(rest[p:])
			if p < len(rest) && rest[p] == ',' {
				p++
				continue
			}
			if p < len(rest) && rest[p] == '}' {
				p++
				break
			}
			return ", or } expected after label " + strconv.Quote(string(name))
		}
		rest = rest[p:]
	}
	if len(rest) == 0 || rest[0] != ' ' && rest[0] != '\t' {
		return "a blank and a value expected"
	}
	rest = bytes.TrimLeft(rest, " \t")
	val := rest
	if j := bytes.IndexAny(rest, " \t"); j >= 0 {
		val, rest = rest[:j], bytes.TrimLeft(rest[j:], " \t")
	} else {
		rest = nil
	}
	// strconv.ParseFloat also reads hex floats (0x1p-2) and digits with
	// underscores (1_000), which the Prometheus text format refuses:
	// expfmt turns away any value with a p, P or _ the same way.
	if len(val) == 0 || bytes.ContainsAny(val, "pP_") {
		return "value is not a number: " + strconv.Quote(clip(string(val)+" "+string(rest), 80))
	}
	v, err := strconv.ParseFloat(string(val), 64)
	if err != nil {
		return "value is not a number: " + strconv.Quote(clip(strings.TrimSpace(string(val)+" "+string(rest)), 80))
	}
	if len(rest) > 0 {
		if _, err := strconv.ParseInt(string(rest), 10, 64); err != nil {
			return "text after the value: " + strconv.Quote(clip(string(rest), 80))
		}
	}
	ps.v = v
	return ""
}

func blanks(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// labelValue reads a quoted label value, b starting after its opening
// quote: the value (unescaped), the bytes read including the closing
// quote, and why it does not parse.
func labelValue(b []byte) ([]byte, int, string) {
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		return nil, 0, "value not closed"
	}
	if bytes.IndexByte(b[:q], '\\') < 0 {
		if bytes.IndexByte(b[:q], '\n') >= 0 {
			return nil, 0, "value not closed"
		}
		return b[:q], q + 1, ""
	}
	// Escapes: \\, \" and \n.
	var out []byte
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			return out, i + 1, ""
		case '\\':
			if i+1 >= len(b) {
				return nil, 0, "value not closed"
			}
			i++
			switch b[i] {
			case '\\', '"':
				out = append(out, b[i])
			case 'n':
				out = append(out, '\n')
			default:
				return nil, 0, "invalid escape \\" + string(b[i:i+1])
			}
		default:
			out = append(out, c)
		}
	}
	return nil, 0, "value not closed"
}

func (ps *promSample) label(name, val []byte) {
	switch string(name) {
	case "UUID":
		ps.uuid = val
	case "GPU_I_ID":
		ps.gi = val
	case "GPU_I_PROFILE":
		ps.profile = val
	case "gpu":
		ps.gpu = val
	case "modelName":
		ps.model = val
	case "hostname":
		ps.hostname = val
	case "Hostname":
		ps.oldHostname = val
	case "pci_bus_id":
		ps.bus = val
	}
}

func (d *dcgmParser) series(reading int, ps *promSample) {
	v := ps.v
	if dcgmBlank(v) {
		return
	}
	c := d.cards[string(ps.uuid)]
	if c == nil {
		if !validUUID(ps.uuid) {
			return
		}
		c = &dcgmCard{s: Sample{UUID: string(ps.uuid), Index: -1, Name: clip(string(ps.model), 100), Host: d.host, At: d.at}}
		if len(ps.hostname) > 0 {
			c.s.Host = clip(string(ps.hostname), 100)
		} else if len(ps.oldHostname) > 0 {
			c.s.Host = clip(string(ps.oldHostname), 100)
		}
		if idx, ok := cardIndex(string(ps.gpu)); ok {
			c.s.Index = idx
		}
		if len(ps.bus) > 0 {
			c.s.BusID = NormalizeBusID(string(ps.bus))
		}
		if d.cards == nil {
			d.cards = map[string]*dcgmCard{}
		}
		d.cards[c.s.UUID] = c
		d.order = append(d.order, c)
	}
	if reading == rXID {
		// The value is the last XID the GPU raised; 0 is none. It is the
		// card's, whichever instance's series carries it.
		if v > 0 {
			c.xid = v
		}
		return
	}
	target := &c.own
	if len(ps.gi) > 0 {
		id, err := strconv.Atoi(string(ps.gi))
		if err != nil || id < 0 || id > 1<<16 {
			return
		}
		in := c.inst[id]
		if in == nil {
			if len(c.inst) >= 64 {
				return
			}
			if c.inst == nil {
				c.inst = map[int]*dcgmInstance{}
			}
			in = &dcgmInstance{profile: clip(string(ps.profile), 32)}
			c.inst[id] = in
		}
		target = &in.dcgmSeries
		switch reading {
		case rTemp:
			if !c.hasFirstTemp {
				c.firstTemp, c.hasFirstTemp = v, true
			}
		case rPower:
			if !c.hasFirstPow {
				c.firstPow, c.hasFirstPow = v, true
			}
		}
	}
	target.v[reading], target.has[reading] = v, true
}

func (d *dcgmParser) samples() []Sample {
	out := make([]Sample, 0, len(d.order))
	// Room for every reading the samples point to: a card's (at most
	// eight: a refused power or used value is followed by the one that
	// stands in), and an instance's three.
	n := 0
	for _, c := range d.order {
		n += 8 + 3*len(c.inst)
	}
	a := make(floats, 0, n)
	for _, c := range d.order {
		s := c.s
		own := &c.own
		s.UtilPct = percent(own.get(rUtil, &a))
		s.SMActivePct = own.smActive(&a)
		s.MemUsedMiB = nonNegative(own.get(rUsed, &a))
		s.MemTotalMiB = own.total(&a)
		s.TempC = own.get(rTemp, &a)
		if s.TempC == nil && c.hasFirstTemp {
			s.TempC = a.put(c.firstTemp)
		}
		s.PowerW = nonNegative(own.get(rPower, &a))
		if s.PowerW == nil && c.hasFirstPow {
			s.PowerW = nonNegative(a.put(c.firstPow))
		}
		if c.xid > 0 && c.xid < 1e9 {
			s.Fault = "XID " + strconv.FormatFloat(c.xid, 'f', -1, 64)
		}
		if len(c.inst) > 0 {
			s.MIG = true
			ids := make([]int, 0, len(c.inst))
			for id := range c.inst {
				ids = append(ids, id)
			}
			sort.Ints(ids)
			var used float64
			usedSeen := false
			for _, id := range ids {
				in := c.inst[id]
				inst := Instance{ID: id, Profile: in.profile, MemUsedMiB: nonNegative(in.get(rUsed, &a)),
					MemTotalMiB: in.total(&a), SMActivePct: in.smActive(&a)}
				if inst.MemUsedMiB != nil {
					used += *inst.MemUsedMiB
					usedSeen = true
				}
				s.Instances = append(s.Instances, inst)
			}
			// The instances do not cover the whole card, so their totals do
			// not add up to its total: that comes from the inventory.
			if s.MemUsedMiB == nil && usedSeen {
				s.MemUsedMiB = a.put(used)
			}
		}
		out = append(out, s)
	}
	return out
}
