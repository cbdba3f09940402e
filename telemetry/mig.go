package telemetry

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// ListedGPU is one GPU of nvidia-smi -L, with its MIG devices.
type ListedGPU struct {
	Index int
	Name  string
	UUID  string
	MIG   []ListedMIG
}

// ListedMIG is one MIG device line of nvidia-smi -L:
// "MIG 1c.3g.71gb Device 0: (UUID: MIG-…)".
type ListedMIG struct {
	Device int // nvidia-smi -q's MIG Device Index
	// Profile is as printed: 1c.3g.71gb is compute instance profile 1c of a
	// 3g.71gb GPU instance.
	Profile string
	// GPUProfile is the GPU instance's profile: Profile without the
	// compute-instance prefix (3g.71gb).
	GPUProfile string
	UUID       string
	// GPUInstance and ComputeInstance are known only from the old UUID form
	// MIG-GPU-<uuid>/<gi>/<ci> (drivers before 470).
	GPUInstance, ComputeInstance *int
}

// ParseMIGList reads nvidia-smi -L.
func ParseMIGList(r io.Reader) ([]ListedGPU, []LineError) {
	var out []ListedGPU
	var bad []LineError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "GPU "):
			g, ok := parseListedGPU(line)
			if !ok {
				bad = append(bad, LineError{n, "want GPU <index>: <name> (UUID: GPU-…)"})
				continue
			}
			out = append(out, g)
		case strings.HasPrefix(line, "MIG "):
			m, ok := parseListedMIG(line)
			if !ok {
				bad = append(bad, LineError{n, "want MIG <profile> Device <n>: (UUID: MIG-…)"})
				continue
			}
			if len(out) == 0 {
				bad = append(bad, LineError{n, "a MIG device before any GPU"})
				continue
			}
			g := &out[len(out)-1]
			if len(g.MIG) < 64 {
				g.MIG = append(g.MIG, m)
			}
		default:
			bad = append(bad, LineError{n, "not a GPU or MIG device line"})
		}
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, LineError{n + 1, err.Error()})
	}
	return out, bad
}

// listedUUID splits "… (UUID: X)" into what comes before and X.
func listedUUID(line string) (string, string, bool) {
	i := strings.LastIndex(line, "(UUID: ")
	if i < 0 || !strings.HasSuffix(line, ")") || i+7 > len(line)-1 {
		return "", "", false
	}
	uuid := strings.TrimSpace(line[i+7 : len(line)-1])
	return strings.TrimSpace(line[:i]), uuid, validUUID(uuid)
}

func parseListedGPU(line string) (ListedGPU, bool) {
	head, uuid, ok := listedUUID(line)
	if !ok || !strings.HasPrefix(uuid, "GPU-") {
		return ListedGPU{}, false
	}
	rest := strings.TrimPrefix(head, "GPU ")
	colon := strings.IndexByte(rest, ':')
	if colon < 0 {
		return ListedGPU{}, false
	}
	idx, ok := cardIndex(strings.TrimSpace(rest[:colon]))
	if !ok {
		return ListedGPU{}, false
	}
	return ListedGPU{Index: idx, Name: clip(strings.TrimSpace(rest[colon+1:]), 100), UUID: uuid}, true
}

func parseListedMIG(line string) (ListedMIG, bool) {
	head, uuid, ok := listedUUID(line)
	if !ok || !strings.HasPrefix(uuid, "MIG-") {
		return ListedMIG{}, false
	}
	f := strings.Fields(strings.TrimSuffix(head, ":"))
	// MIG <profile> Device <n>
	if len(f) != 4 || f[0] != "MIG" || f[2] != "Device" {
		return ListedMIG{}, false
	}
	dev, err := strconv.Atoi(f[3])
	if err != nil || dev < 0 || dev >= 1024 {
		return ListedMIG{}, false
	}
	m := ListedMIG{Device: dev, Profile: clip(f[1], 32), GPUProfile: clip(gpuInstanceProfile(f[1]), 32), UUID: uuid}
	// Old form: MIG-GPU-<uuid>/<gi>/<ci>.
	if p := strings.Split(uuid, "/"); len(p) == 3 && strings.HasPrefix(uuid, "MIG-GPU-") {
		gi, err1 := strconv.Atoi(p[1])
		ci, err2 := strconv.Atoi(p[2])
		if err1 == nil && err2 == nil && gi >= 0 && ci >= 0 {
			m.GPUInstance, m.ComputeInstance = &gi, &ci
		}
	}
	return m, true
}

// gpuInstanceProfile strips a compute-instance prefix: 1c.3g.71gb → 3g.71gb.
func gpuInstanceProfile(p string) string {
	i := strings.IndexByte(p, '.')
	if i < 2 || p[i-1] != 'c' || i == len(p)-1 {
		return p
	}
	if _, err := strconv.Atoi(p[:i-1]); err != nil {
		return p
	}
	return p[i+1:]
}

// QueriedGPU is what cardhour reads of one GPU in nvidia-smi -q.
type QueriedGPU struct {
	BusID     string // normalised, see NormalizeBusID
	UUID      string
	MIG       bool // MIG Mode Current: Enabled
	Devices   []QueriedMIGDevice
	Processes []QueriedProcess
}

// QueriedMIGDevice is one "MIG Device" section: one compute instance of a
// GPU instance. The memory is the GPU instance's, shared by its compute
// instances.
type QueriedMIGDevice struct {
	Index           int // -L's Device number; -1 when not given
	GPUInstance     int // -1 when not given
	ComputeInstance int // -1 when not given
	MemUsedMiB      *float64
	MemTotalMiB     *float64
}

// QueriedProcess is one entry of a GPU's "Processes" section.
type QueriedProcess struct {
	PID                          int
	Name                         string
	MemMiB                       *float64
	GPUInstance, ComputeInstance *int // nil when N/A (not in MIG mode)
}

// ParseQueryMIG reads the text of nvidia-smi -q for the MIG mode, the MIG
// devices with their memory, and the processes with their GPU instances.
// The text is indented by four spaces a level; everything else in it is
// passed over.
func ParseQueryMIG(r io.Reader) ([]QueriedGPU, []LineError) {
	var out []QueriedGPU
	var bad []LineError
	var path [8]string // the section names above the current line
	var dev *QueriedMIGDevice
	var proc *QueriedProcess
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		depth := indentDepth(raw)
		line := raw[4*depth:]
		if line == "" || line[0] == ' ' || depth >= len(path) {
			continue
		}
		key, val, kv := strings.Cut(line, " : ")
		if !kv && strings.HasSuffix(line, " :") {
			key, kv = strings.TrimSuffix(line, " :"), true
		}
		// Keys are padded to the colon's column: cut at the padding.
		if i := strings.Index(key, "  "); i >= 0 {
			key = key[:i]
		}
		key, val = strings.TrimRight(key, " "), strings.TrimLeft(val, " ")
		if depth == 0 {
			dev, proc = nil, nil
			if !kv && strings.HasPrefix(line, "GPU ") {
				bus := strings.TrimSpace(line[4:])
				if strings.IndexByte(bus, ':') < 0 {
					bad = append(bad, LineError{n, "want GPU <bus id>"})
					continue
				}
				if len(out) < 1024 {
					out = append(out, QueriedGPU{BusID: NormalizeBusID(bus)})
				}
			}
			path[0] = ""
			continue
		}
		if len(out) == 0 {
			continue
		}
		g := &out[len(out)-1]
		if !kv {
			// A section header.
			path[depth] = key
			for i := depth + 1; i < len(path); i++ {
				path[i] = ""
			}
			if depth == 1 {
				dev, proc = nil, nil
				if key == "MIG Device" && len(g.Devices) < 64 {
					g.Devices = append(g.Devices, QueriedMIGDevice{Index: -1, GPUInstance: -1, ComputeInstance: -1})
					dev = &g.Devices[len(g.Devices)-1]
				}
			}
			continue
		}
		if depth == 1 {
			// A value at the top of a GPU ends the section before it.
			dev, proc = nil, nil
			path[1] = ""
		}
		switch {
		case depth == 1 && key == "GPU UUID":
			if validUUID(val) {
				g.UUID = val
			}
		case depth == 2 && path[1] == "MIG Mode" && key == "Current":
			g.MIG = strings.EqualFold(val, "Enabled")
		case dev != nil && depth == 2:
			id := -1
			if v, err := strconv.Atoi(val); err == nil && v >= 0 {
				id = v
			}
			switch key {
			case "Index":
				dev.Index = id
			case "GPU Instance ID":
				dev.GPUInstance = id
			case "Compute Instance ID":
				dev.ComputeInstance = id
			}
		case dev != nil && depth == 3 && (path[2] == "Shared FB Memory Usage" || path[2] == "FB Memory Usage"):
			switch key {
			case "Total":
				dev.MemTotalMiB = nonNegative(value(val, "MiB"))
			case "Used":
				dev.MemUsedMiB = nonNegative(value(val, "MiB"))
			}
		case path[1] == "Processes" && depth == 2:
			id := optionalID(val)
			switch key {
			case "GPU instance ID":
				// An entry begins with its instance ids, then its pid.
				proc = g.newProcess()
				proc.GPUInstance = id
			case "Compute instance ID":
				if proc == nil || proc.PID >= 0 {
					proc = g.newProcess()
				}
				proc.ComputeInstance = id
			case "Process ID":
				if proc == nil || proc.PID >= 0 {
					proc = g.newProcess()
				}
				if pid, err := strconv.Atoi(val); err == nil && pid >= 0 {
					proc.PID = pid
				}
			}
		case path[1] == "Processes" && depth == 3 && proc != nil:
			switch key {
			case "Name":
				proc.Name = clip(val, 200)
			case "Used GPU Memory":
				proc.MemMiB = nonNegative(value(val, "MiB"))
			}
		}
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, LineError{n + 1, err.Error()})
	}
	for i := range out {
		// Entries without a pid are of no use.
		ps := out[i].Processes[:0]
		for _, p := range out[i].Processes {
			if p.PID >= 0 {
				ps = append(ps, p)
			}
		}
		out[i].Processes = ps
	}
	return out, bad
}

// indentDepth is the line's indentation in levels of four spaces, found
// by comparing prefixes rather than counting spaces one by one.
func indentDepth(raw string) int {
	const spaces = "                            " // 7 levels
	for d := 7; d > 0; d-- {
		if strings.HasPrefix(raw, spaces[:4*d]) {
			return d
		}
	}
	return 0
}

func (g *QueriedGPU) newProcess() *QueriedProcess {
	if len(g.Processes) >= 256 {
		return &QueriedProcess{PID: -1}
	}
	g.Processes = append(g.Processes, QueriedProcess{PID: -1})
	return &g.Processes[len(g.Processes)-1]
}

func optionalID(v string) *int {
	id, err := strconv.Atoi(v)
	if err != nil || id < 0 {
		return nil
	}
	return &id
}

// AttachMIG fills the MIG cards among samples (MIG set, from
// mig.mode.current) from nvidia-smi -L and -q:
// each card's Instances (one per GPU instance, however many compute
// instances it has: profile from -L, memory from -q), each process's
// GPUInstance, and the processes per instance. -q's devices are matched to
// -L's by their index; cards by UUID and bus id. Processes -q lists that
// the compute-apps query did not are added.
func AttachMIG(samples []Sample, list []ListedGPU, query []QueriedGPU) {
	for i := range samples {
		s := &samples[i]
		if !s.MIG {
			continue
		}
		var l *ListedGPU
		for j := range list {
			if list[j].UUID == s.UUID {
				l = &list[j]
				break
			}
		}
		var q *QueriedGPU
		for j := range query {
			qj := &query[j]
			sameBus := s.BusID == "" || qj.BusID == "" || qj.BusID == s.BusID
			if sameBus && (qj.UUID == s.UUID || qj.UUID == "" && s.BusID != "") {
				q = qj
				break
			}
		}
		byID := map[int]*Instance{}
		var order []int
		instance := func(id int) *Instance {
			in := byID[id]
			if in == nil {
				in = &Instance{ID: id}
				byID[id] = in
				order = append(order, id)
			}
			return in
		}
		listed := func(device int) *ListedMIG {
			if l == nil {
				return nil
			}
			for k := range l.MIG {
				if l.MIG[k].Device == device {
					return &l.MIG[k]
				}
			}
			return nil
		}
		if q != nil {
			for _, d := range q.Devices {
				if d.GPUInstance < 0 {
					continue
				}
				in := instance(d.GPUInstance)
				if m := listed(d.Index); m != nil {
					if in.Profile == "" {
						in.Profile = m.GPUProfile
					}
					if in.UUID == "" {
						in.UUID = m.UUID
					}
				}
				if in.MemUsedMiB == nil && in.MemTotalMiB == nil {
					in.MemUsedMiB, in.MemTotalMiB = d.MemUsedMiB, d.MemTotalMiB
				}
			}
		}
		if len(order) == 0 && l != nil {
			// No -q devices: old drivers name the GPU instance in -L's UUID.
			for _, m := range l.MIG {
				if m.GPUInstance != nil {
					in := instance(*m.GPUInstance)
					if in.Profile == "" {
						in.Profile, in.UUID = m.GPUProfile, m.UUID
					}
				}
			}
		}
		if q != nil {
			gi := make(map[int]*int, len(q.Processes))
			for _, p := range q.Processes {
				gi[p.PID] = p.GPUInstance
			}
			seen := make(map[int]bool, len(s.Processes))
			for k := range s.Processes {
				p := &s.Processes[k]
				seen[p.PID] = true
				if id, ok := gi[p.PID]; ok && id != nil && p.GPUInstance == nil {
					v := *id
					p.GPUInstance = &v
				}
			}
			for _, p := range q.Processes {
				if !seen[p.PID] && len(s.Processes) < 64 {
					seen[p.PID] = true
					s.Processes = append(s.Processes, Process{PID: p.PID, Name: p.Name, MemMiB: p.MemMiB, GPUInstance: p.GPUInstance})
				}
			}
		}
		for _, p := range s.Processes {
			if p.GPUInstance != nil {
				instance(*p.GPUInstance).Processes++
			}
		}
		sort.Ints(order)
		s.Instances = s.Instances[:0]
		for _, id := range order {
			s.Instances = append(s.Instances, *byID[id])
		}
	}
}
