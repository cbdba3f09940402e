package telemetry

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// GPUQuery is the nvidia-smi query the push endpoint documents:
// nvidia-smi --query-gpu=<GPUQuery> --format=csv[,noheader][,nounits].
// Without a header line the columns are taken in this order.
const GPUQuery = "index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw"

// AgentGPUQuery is what the agent asks for: GPUQuery plus the bus id (to
// place nvidia-smi's per-GPU error lines) and the MIG mode. The agent reads
// it with its header, by name, so a driver that lacks a column still works.
const AgentGPUQuery = GPUQuery + ",pci.bus_id,mig.mode.current"

// AppsQuery is the compute-apps query; it has no index column, so processes
// are joined to cards by uuid.
const AppsQuery = "gpu_uuid,pid,process_name,used_gpu_memory"

// maxLine bounds one line. A recorded 212-column --query-gpu row is 6.5 KB.
const maxLine = 64 << 10

// maxInput bounds what one parse reads.
const maxInput = 16 << 20

// GPUError is a line nvidia-smi prints instead of a GPU's row when it
// cannot reach the GPU ("Unable to determine the device handle for GPU
// 0000:09:00.0: Unknown Error"). The card with that bus id is faulty.
type GPUError struct {
	Line   int
	BusID  string // normalised, see NormalizeBusID
	Reason string // "Unknown Error", "GPU is lost.  Reboot the system to recover this GPU"
}

func (e GPUError) Error() string {
	return "line " + itoa(e.Line) + ": GPU " + e.BusID + ": " + e.Reason
}

// GPUParse is what a --query-gpu output (or a push body, see ParsePush)
// held.
type GPUParse struct {
	// Samples are the GPUs' rows; in a push body, with their processes
	// attached.
	Samples []Sample
	// GPUErrors are the GPUs nvidia-smi could not reach, by bus id: the
	// caller marks those cards faulty.
	GPUErrors []GPUError
	// Skipped are the lines not used and why; line numbers count from the
	// input's first line.
	Skipped []LineError
}

// ParseGPUCSV reads --query-gpu output. With a header line the columns are
// mapped by name, in any order, with or without units in the header;
// unknown columns are ignored and a missing uuid column refuses the header
// by name. Without one, the columns are GPUQuery's, in its order. Missing
// readings ([N/A], [Not Supported], N/A) stay missing; fault markers
// ([GPU requires reset], [Unknown Error], [GPU is lost], ERR!) in any field
// set the sample's Fault.
func ParseGPUCSV(r io.Reader, host string, at time.Time) GPUParse {
	text, bad := readText(r)
	p := newCSVParser(host, at)
	p.run(text, false)
	p.out.Skipped = append(p.out.Skipped, bad...)
	return p.out
}

// AppsRow is one line of the compute-apps query.
type AppsRow struct {
	UUID string
	Process
}

// ParseComputeApps reads --query-compute-apps output. With a header line
// the columns are mapped by name (gpu_uuid, pid, process_name or name,
// used_gpu_memory or used_memory, gpu_instance_id); without one they are
// AppsQuery's. A process name may contain commas; the fields around it may
// not.
func ParseComputeApps(r io.Reader) ([]AppsRow, []LineError) {
	text, bad := readText(r)
	p := newCSVParser("", time.Time{})
	p.inApps, p.appsOnly = true, true
	p.run(text, false)
	return p.apps, append(p.out.Skipped, bad...)
}

// AttachProcesses joins compute-apps rows to their samples by uuid.
func AttachProcesses(samples []Sample, apps []AppsRow) {
	if len(apps) == 0 {
		return
	}
	idx := make(map[string]int, len(samples))
	for i, s := range samples {
		idx[s.UUID] = i
	}
	for _, a := range apps {
		if i, ok := idx[a.UUID]; ok {
			samples[i].Processes = append(samples[i].Processes, a.Process)
		}
	}
}

// readText reads a whole input into one string, so that fields are
// substrings of it and only what a sample keeps is copied. Past maxInput it
// is cut, and a LineError says so.
//
// readAll is its []byte twin for the DCGM parser, which reads bytes and
// refuses an input over maxInput whole instead of cutting it. Each reads
// the input in the one copy its parser works on; one written in terms of
// the other would copy the input twice.
func readText(r io.Reader) (string, []LineError) {
	var sb strings.Builder
	src := io.LimitReader(r, maxInput+1)
	if l, ok := r.(interface{ Len() int }); ok && l.Len() <= maxInput {
		// bytes.Reader and the like write themselves out in one copy.
		sb.Grow(l.Len())
		src = r
	}
	_, err := io.Copy(&sb, src)
	var bad []LineError
	if err != nil {
		bad = append(bad, LineError{0, "reading: " + err.Error()})
	}
	text, tooLarge := cutInput(sb.String(), "input")
	return text, append(bad, tooLarge...)
}

// cutInput cuts b to maxInput bytes; the LineError says so (what names the
// input: "input", "body") when it was longer. It slices b and copies
// nothing.
func cutInput[T string | []byte](b T, what string) (T, []LineError) {
	if len(b) <= maxInput {
		return b, nil
	}
	return b[:maxInput], []LineError{{0, what + " larger than 16 MiB: the rest was not read"}}
}

// readAll reads up to maxInput+1 bytes, in one allocation when the reader
// says its length (bytes.Reader, strings.Reader, bytes.Buffer).
func readAll(r io.Reader) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok {
		b := make([]byte, min(l.Len(), maxInput+1))
		n, err := io.ReadFull(r, b)
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = nil
		}
		return b[:n], err
	}
	return io.ReadAll(io.LimitReader(r, maxInput+1))
}

// Column roles of a --query-gpu header.
const (
	colIndex = iota
	colUUID
	colName
	colUtil
	colUsed
	colTotal
	colTemp
	colPower
	colPowerInstant
	colPowerAverage
	colMIG
	colBus
	gpuRoles
)

var gpuColumnNames = map[string]int{
	"index":              colIndex,
	"uuid":               colUUID,
	"gpu_uuid":           colUUID,
	"name":               colName,
	"gpu_name":           colName,
	"utilization.gpu":    colUtil,
	"memory.used":        colUsed,
	"memory.total":       colTotal,
	"temperature.gpu":    colTemp,
	"power.draw":         colPower,
	"power.draw.instant": colPowerInstant,
	"power.draw.average": colPowerAverage,
	"mig.mode.current":   colMIG,
	"pci.bus_id":         colBus,
	"gpu_bus_id":         colBus,
}

// Column roles of a --query-compute-apps header.
const (
	appUUID = iota
	appPID
	appName
	appMem
	appGI
	appRoles
)

var appColumnNames = map[string]int{
	"gpu_uuid":        appUUID,
	"pid":             appPID,
	"process_name":    appName,
	"name":            appName,
	"used_gpu_memory": appMem,
	"used_memory":     appMem,
	"gpu_instance_id": appGI,
}

// maxRoles is the most roles a layout has: a GPU header's. The array
// below fails to compile should the compute-apps header ever have more.
const maxRoles = gpuRoles

var _ [maxRoles - appRoles]struct{}

// layout says where each role's column is: -1 when absent (a compute-apps
// layout uses the first appRoles). n is the number of columns a row must
// have; free is the column that absorbs extra commas (a GPU or process
// name). It is a value, held in the parser: col is an array, so a layout
// costs no allocation.
type layout struct {
	n, free int
	col     [maxRoles]int
	header  int // line of the header; 0 when positional
	refused string
}

// noColumns is a layout's col with every role absent.
func noColumns() [maxRoles]int {
	var col [maxRoles]int
	for i := range col {
		col[i] = -1
	}
	return col
}

func positionalGPU() layout {
	return layout{n: 8, free: colName, col: [maxRoles]int{colIndex: 0, colUUID: 1, colName: 2, colUtil: 3, colUsed: 4, colTotal: 5,
		colTemp: 6, colPower: 7, colPowerInstant: -1, colPowerAverage: -1, colMIG: -1, colBus: -1}}
}

func positionalApps() layout {
	l := layout{n: 4, free: appName, col: noColumns()}
	l.col[appUUID], l.col[appPID], l.col[appName], l.col[appMem] = 0, 1, 2, 3
	return l
}

// csvParser reads nvidia-smi CSV: the GPU part and, in a push body, the
// compute-apps part after it.
type csvParser struct {
	host   string
	at     time.Time
	gpu    layout
	app    layout
	inApps bool

	fields []string
	starts []int
	// What fields and starts hold at first: room for a row of GPUQuery's
	// or AgentGPUQuery's columns without an allocation of its own; a
	// longer row or header grows them.
	fieldBuf [16]string
	startBuf [17]int
	out      GPUParse
	apps     []AppsRow

	// Arenas for what samples keep, so that a row costs no allocation of
	// its own: the uuids (a copy, never the body, which may be large) and
	// the readings.
	kept strings.Builder
	vals []float64

	stripped    int    // first line that held several rows, 0 if none
	lastName    string // GPU names repeat: keep one copy
	lastErr     int    // index in out.GPUErrors of the error on the line before, or -1
	gpuSeen     bool   // the GPU part has had a non-blank line
	switchOnGap bool   // a push body: a blank line after the GPU part starts the apps part
	appsOnly    bool   // ParseComputeApps: there is no GPU part, and a header without pid is refused
}

func newCSVParser(host string, at time.Time) *csvParser {
	p := &csvParser{host: host, at: at, gpu: positionalGPU(), app: positionalApps(), lastErr: -1}
	p.fields, p.starts = p.fieldBuf[:0], p.startBuf[:0]
	return p
}

// run parses text line by line. body: the text is a push body, whose GPU
// part may be followed by a blank line and the compute-apps part.
func (p *csvParser) run(text string, body bool) {
	p.switchOnGap = body
	if !p.appsOnly {
		// One sample a line, mostly: grow once (bounded: a body of blank
		// lines must not reserve a sample for each).
		p.out.Samples = make([]Sample, 0, min(strings.Count(text, "\n")+1, 256))
	}
	n := 0
	for len(text) > 0 {
		var raw string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			raw, text = text[:i], text[i+1:]
		} else {
			raw, text = text, ""
		}
		n++
		p.line(n, raw)
	}
}

func (p *csvParser) skip(n int, reason string) {
	p.out.Skipped = append(p.out.Skipped, LineError{n, reason})
}

func (p *csvParser) line(n int, raw string) {
	line := strings.TrimSpace(raw)
	prevErr := p.lastErr
	p.lastErr = -1
	if line == "" {
		if p.switchOnGap && p.gpuSeen && !p.inApps {
			p.inApps = true
		}
		return
	}
	if len(line) > maxLine {
		p.skip(n, "line longer than 64 KiB")
		return
	}
	// A console may wrap nvidia-smi's error line; the rest comes indented.
	if prevErr >= 0 && raw[0] == ' ' && strings.IndexByte(line, ',') < 0 {
		e := &p.out.GPUErrors[prevErr]
		e.Reason = clip(e.Reason+" "+line, 200)
		p.lastErr = prevErr
		return
	}
	if !p.inApps {
		p.gpuSeen = true
	}
	if e, ok := parseGPUErrorLine(line); ok {
		e.Line = n
		p.out.GPUErrors = append(p.out.GPUErrors, e)
		p.lastErr = len(p.out.GPUErrors) - 1
		return
	}
	if strings.HasPrefix(line, "No running") {
		return
	}
	if uuids(line) > 1 {
		if p.stripped == 0 {
			p.stripped = n
		}
		p.skip(n, "several GPUs' rows on one line: its newlines were stripped (curl -d does that; send with curl --data-binary @file)")
		return
	}
	p.split(line)
	if looksLikeHeader(p.fields) {
		p.header(n)
		return
	}
	if strings.Contains(line, "GPU-") && startsLikeHeader(p.fields) {
		// A header and a row on one line: the newline between was stripped.
		if p.stripped == 0 {
			p.stripped = n
		}
		p.skip(n, "header and rows on one line: its newlines were stripped (curl -d does that; send with curl --data-binary @file)")
		return
	}
	if p.inApps {
		p.appRow(n, line)
	} else {
		p.gpuRow(n, line)
	}
}

// keep copies s into the parse's arena of kept strings.
func (p *csvParser) keep(s string) string {
	if p.kept.Cap()-p.kept.Len() < len(s) {
		// A new block; strings taken from the old one stay valid.
		p.kept = strings.Builder{}
		p.kept.Grow(max(len(s), 1024))
	}
	start := p.kept.Len()
	p.kept.WriteString(s)
	return p.kept.String()[start:]
}

// readings returns room for a sample's five readings.
func (p *csvParser) readings() *[5]float64 {
	if len(p.vals) < 5 {
		p.vals = make([]float64, 5*max(1, min(cap(p.out.Samples)-len(p.out.Samples), 64)))
	}
	v := (*[5]float64)(p.vals[:5])
	p.vals = p.vals[5:]
	return v
}

// split cuts line at its commas into p.fields (trimmed) and p.starts (the
// offset of each field, and one past the end).
func (p *csvParser) split(line string) {
	p.fields, p.starts = p.fields[:0], p.starts[:0]
	start := 0
	for {
		i := strings.IndexByte(line[start:], ',')
		p.starts = append(p.starts, start)
		if i < 0 {
			p.fields = append(p.fields, strings.TrimSpace(line[start:]))
			break
		}
		p.fields = append(p.fields, strings.TrimSpace(line[start:start+i]))
		start += i + 1
	}
	p.starts = append(p.starts, len(line)+1)
}

// row fits the fields to a layout: nil, and a reason, when they do not.
// Extra fields are taken to belong to the free-text column.
func (p *csvParser) row(line string, l *layout, what string) ([]string, string) {
	f := p.fields
	if len(f) == l.n {
		return f, ""
	}
	if len(f) == 1 {
		return nil, "not a CSV row: " + strconv.Quote(clip(line, 80))
	}
	if len(f) < l.n || l.free < 0 {
		if l.header > 0 {
			return nil, "want " + itoa(l.n) + " fields as in the header on line " + itoa(l.header) + ", got " + itoa(len(f))
		}
		return nil, "want " + itoa(l.n) + " comma-separated fields (" + what + "), got " + itoa(len(f))
	}
	extra := len(f) - l.n
	free := l.col[l.free]
	merged := strings.TrimSpace(line[p.starts[free] : p.starts[free+extra+1]-1])
	f[free] = merged
	copy(f[free+1:], f[free+extra+1:])
	return f[:l.n], ""
}

func (p *csvParser) header(n int) {
	names := p.fields // a header's fields become its column names, in place
	apps := false
	for i, f := range names {
		names[i] = stripUnit(f)
		apps = apps || len(names[i]) == 3 && strings.EqualFold(names[i], "pid")
	}
	if apps {
		p.inApps = true
		p.app = mapHeader(names, appColumnNames, appName, n, []int{appUUID, appPID}, []string{"gpu_uuid", "pid"})
		if p.app.refused != "" {
			p.skip(n, p.app.refused)
		}
		return
	}
	if p.appsOnly {
		// ParseComputeApps given a header without pid.
		p.app = layout{col: noColumns(), refused: `header has no "pid" column`, header: n}
		p.skip(n, p.app.refused)
		return
	}
	p.inApps = false
	p.gpu = mapHeader(names, gpuColumnNames, colName, n, []int{colUUID}, []string{"uuid"})
	if p.gpu.refused != "" {
		p.skip(n, p.gpu.refused)
	}
}

func mapHeader(names []string, roles map[string]int, free, line int, required []int, requiredNames []string) layout {
	l := layout{n: len(names), col: noColumns(), header: line, free: -1}
	for i, name := range names {
		if role, ok := lookupColumn(roles, name); ok && l.col[role] < 0 {
			l.col[role] = i
		}
	}
	for i, role := range required {
		if l.col[role] < 0 {
			l.refused = `header has no "` + requiredNames[i] + `" column`
			return l
		}
	}
	if l.col[free] >= 0 {
		l.free = free
	}
	return l
}

// maxColumnName is the longest name in gpuColumnNames and appColumnNames.
const maxColumnName = len("power.draw.instant")

// lookupColumn finds a column name in any case; nvidia-smi prints them in
// lower case (a few with capitals inside: encoder.stats.sessionCount).
func lookupColumn(roles map[string]int, name string) (int, bool) {
	if len(name) > maxColumnName {
		return 0, false
	}
	if r, ok := roles[name]; ok {
		return r, true
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			r, ok := roles[strings.ToLower(name)]
			return r, ok
		}
	}
	return 0, false
}

func stripUnit(f string) string {
	if i := strings.IndexByte(f, '['); i >= 0 {
		f = strings.TrimSpace(f[:i])
	}
	return f
}

// looksLikeHeader: every field is a field name, optionally with a unit,
// and one of them is a column nvidia-smi's GPU or process queries have.
func looksLikeHeader(fields []string) bool {
	known := false
	for _, f := range fields {
		f = stripUnit(f)
		if !isFieldName(f) {
			return false
		}
		if !known {
			_, gpu := lookupColumn(gpuColumnNames, f)
			_, app := lookupColumn(appColumnNames, f)
			known = gpu || app
		}
	}
	return known
}

// startsLikeHeader: the first two fields are names nvidia-smi's headers
// begin with.
func startsLikeHeader(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	if f := fields[0]; f == "" || !(f[0] >= 'a' && f[0] <= 'z' || f[0] >= 'A' && f[0] <= 'Z') {
		return false
	}
	first := stripUnit(fields[0])
	_, gpu := lookupColumn(gpuColumnNames, first)
	_, app := lookupColumn(appColumnNames, first)
	return (gpu || app || strings.EqualFold(first, "timestamp")) && isFieldName(stripUnit(fields[1]))
}

// isFieldName: nvidia-smi's field names begin with a letter and are
// letters, digits, _ and . (some have capitals: encoder.stats.sessionCount).
// What tells a header from a row is checked with IndexByte rather than a
// walk over every character — a 212-column header is 4 KB, and a loop over
// it would make its exact length part of the fuzzer's coverage (see
// parseSample in dcgm.go).
func isFieldName(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, c := range [...]byte{' ', '-', '/', ':', '%', '"', '(', '[', '\t'} {
		if strings.IndexByte(s, c) >= 0 {
			return false
		}
	}
	return true
}

// uuids counts GPU uuids on a line (GPU-xxxxxxxx-, hex): a line with more
// than one holds several rows. Paths such as /opt/GPU-burn do not count.
func uuids(line string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(line[i:], "GPU-")
		if j < 0 {
			return n
		}
		i += j + 4
		if len(line)-i >= 9 && line[i+8] == '-' && isHex(line[i:i+8]) {
			n++
		}
	}
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *csvParser) gpuRow(n int, line string) {
	l := &p.gpu
	if l.refused != "" {
		p.skip(n, "no usable header: the one on line "+itoa(l.header)+" was refused")
		return
	}
	f, why := p.row(line, l, "index, uuid, name, utilization.gpu, memory.used, memory.total, temperature.gpu, power.draw")
	if f == nil {
		p.skip(n, why)
		return
	}
	uuid := f[l.col[colUUID]]
	if !validUUID(uuid) {
		if l.header == 0 {
			p.skip(n, "no GPU uuid in the second field")
		} else {
			p.skip(n, "no GPU uuid in the uuid column")
		}
		return
	}
	s := Sample{UUID: p.keep(uuid), Index: -1, Host: p.host, At: p.at}
	get := func(role int) string {
		if c := l.col[role]; c >= 0 {
			return f[c]
		}
		return ""
	}
	if idx, ok := cardIndex(get(colIndex)); ok {
		s.Index = idx
	}
	if name := get(colName); name != "" && !noReading(name) {
		if name != p.lastName {
			p.lastName = p.keep(name)
		}
		s.Name = p.lastName
	}
	v := p.readings()
	s.UtilPct = percent(valueInto(&v[0], get(colUtil), "%"))
	s.MemUsedMiB = nonNegative(valueInto(&v[1], get(colUsed), "MiB"))
	s.MemTotalMiB = nonNegative(valueInto(&v[2], get(colTotal), "MiB"))
	s.TempC = valueInto(&v[3], get(colTemp), "C")
	for _, role := range [...]int{colPower, colPowerInstant, colPowerAverage} {
		if s.PowerW = nonNegative(valueInto(&v[4], get(role), "W")); s.PowerW != nil {
			break
		}
	}
	if c := l.col[colMIG]; c >= 0 && strings.EqualFold(f[c], "Enabled") {
		s.MIG = true
	}
	if b := get(colBus); b != "" && !noReading(b) {
		s.BusID = NormalizeBusID(b)
	}
	for _, field := range f {
		if m := faultMarker(field); m != "" {
			s.Fault = m
			break
		}
	}
	p.out.Samples = append(p.out.Samples, s)
}

func (p *csvParser) appRow(n int, line string) {
	l := &p.app
	if l.refused != "" {
		p.skip(n, "no usable header: the one on line "+itoa(l.header)+" was refused")
		return
	}
	f, why := p.row(line, l, "gpu_uuid, pid, process_name, used_gpu_memory")
	if f == nil {
		p.skip(n, why)
		return
	}
	uuid := f[l.col[appUUID]]
	if !validUUID(uuid) {
		p.skip(n, "want gpu_uuid, pid, process_name, used_gpu_memory: no GPU uuid")
		return
	}
	pid, err := strconv.Atoi(f[l.col[appPID]])
	if err != nil || pid < 0 {
		p.skip(n, "pid is not a number")
		return
	}
	a := AppsRow{UUID: strings.Clone(uuid), Process: Process{PID: pid}}
	if c := l.col[appName]; c >= 0 {
		a.Name = strings.Clone(f[c])
	}
	if c := l.col[appMem]; c >= 0 {
		a.MemMiB = nonNegative(value(f[c], "MiB"))
	}
	if c := l.col[appGI]; c >= 0 {
		a.GPUInstance = optionalID(f[c])
	}
	p.apps = append(p.apps, a)
}

// faultMarker returns the text of an nvidia-smi reading that means the GPU
// is unhealthy, or "".
func faultMarker(f string) string {
	if len(f) < 4 {
		return ""
	}
	if f[0] == 'E' {
		if f == "ERR!" {
			return "ERR!"
		}
		return ""
	}
	if f[0] != '[' || f[len(f)-1] != ']' {
		return ""
	}
	in := f[1 : len(f)-1]
	for _, m := range [...]string{"GPU requires reset", "Unknown Error", "GPU is lost"} {
		if strings.EqualFold(in, m) {
			return m
		}
	}
	return ""
}

// noReading: the field holds no reading ([N/A], [Not Supported], N/A, ERR!
// and the like).
func noReading(f string) bool {
	return f == "" || f[0] == '[' || len(f) == 3 && strings.EqualFold(f, "N/A") || f == "ERR!"
}

const gpuErrorPrefix = "Unable to determine the device handle for GPU"

// parseGPUErrorLine reads "Unable to determine the device handle for GPU
// 0000:09:00.0: Unknown Error" (newer drivers print no space after GPU).
func parseGPUErrorLine(line string) (GPUError, bool) {
	if !strings.HasPrefix(line, gpuErrorPrefix) {
		return GPUError{}, false
	}
	rest := strings.TrimLeft(line[len(gpuErrorPrefix):], " ")
	i := 0
	for i < len(rest) && (isHex(rest[i:i+1]) || rest[i] == ':' || rest[i] == '.') {
		i++
	}
	bus := strings.TrimRight(rest[:i], ":")
	if bus == "" || strings.IndexByte(bus, ':') < 0 {
		return GPUError{}, false
	}
	reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest[i:]), ":"))
	if reason == "" {
		reason = "device handle not found"
	}
	return GPUError{BusID: NormalizeBusID(bus), Reason: clip(reason, 200)}, true
}

// NormalizeBusID writes a PCI bus id one way: nvidia-smi's query prints
// 00000000:83:00.0, its error lines 0000:83:00.0, DCGM 00000000:1A:00.0.
// The result is lower case with a four-digit domain: 0000:83:00.0, 0000:1a:00.0.
func NormalizeBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexByte(s, ':'); i > 4 && strings.Trim(s[:i-4], "0") == "" {
		s = s[i-4:]
	}
	return clip(s, 32)
}

// value parses a number with an optional unit suffix. nvidia-smi marks what
// it cannot read as [N/A], [Not Supported], [Unknown Error] and the like:
// those are missing, never zero.
func value(field, unit string) *float64 {
	var v float64
	return valueInto(&v, field, unit)
}

// valueInto is value storing into dst, so a caller can place several
// readings in one allocation.
func valueInto(dst *float64, field, unit string) *float64 {
	field = strings.TrimSpace(field) // a no-op on the split fields, which are trimmed
	if noReading(field) {
		return nil
	}
	if f, ok := strings.CutSuffix(field, unit); ok {
		field = strings.TrimRight(f, " ")
	}
	if v, ok := smallInt(field); ok {
		*dst = v
		return dst
	}
	v, err := strconv.ParseFloat(field, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	*dst = v
	return dst
}

// smallInt reads the whole numbers most readings are (100, 19818, 59)
// without strconv's general float path; exact up to 15 digits.
func smallInt(f string) (float64, bool) {
	if len(f) == 0 || len(f) > 15 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return float64(n), true
}

func percent(v *float64) *float64 {
	if v == nil || *v < 0 || *v > 100 {
		return nil
	}
	return v
}

func nonNegative(v *float64) *float64 {
	if v == nil || *v < 0 {
		return nil
	}
	return v
}

// cardIndex reads a card's index (nvidia-smi's index, DCGM's gpu label,
// nvidia-smi -L's GPU n): 0 to 1023.
func cardIndex(s string) (int, bool) {
	idx, err := strconv.Atoi(s)
	return idx, err == nil && idx >= 0 && idx < 1024
}

// validUUID accepts nvidia-smi's GPU-… and MIG-… identifiers.
func validUUID[T string | []byte](s T) bool {
	if len(s) < 12 || len(s) > 64 || !(s[0] == 'G' && s[1] == 'P' && s[2] == 'U' || s[0] == 'M' && s[1] == 'I' && s[2] == 'G') || s[3] != '-' {
		return false
	}
	for i := 4; i < len(s); i++ {
		r := s[i]
		if !(r == '-' || r == '/' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return false
		}
	}
	return true
}
