package telemetry

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// GPUQuery is the nvidia-smi query the agent runs and the push endpoint
// accepts: nvidia-smi --query-gpu=<GPUQuery> --format=csv,noheader[,nounits].
const GPUQuery = "index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw"

// AppsQuery is the compute-apps query; it has no index column, so processes
// are joined to cards by uuid.
const AppsQuery = "gpu_uuid,pid,process_name,used_gpu_memory"

// maxLine bounds one line, so a pushed body without newlines cannot make the
// scanner buffer grow without end.
const maxLine = 4096

// ParseGPUQuery reads the output of the GPUQuery, with or without units and
// with or without the header line. Lines it cannot use are returned as
// LineErrors next to the samples it could.
func ParseGPUQuery(r io.Reader, host string, at time.Time) ([]Sample, []LineError) {
	var out []Sample
	var bad []LineError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "index,") || strings.HasPrefix(line, "index, ") {
			continue
		}
		f := splitFields(line, 8, 2)
		if f == nil {
			bad = append(bad, LineError{n, "want 8 comma-separated fields"})
			continue
		}
		uuid := f[1]
		if !validUUID(uuid) {
			bad = append(bad, LineError{n, "no GPU uuid in the second field"})
			continue
		}
		s := Sample{UUID: uuid, Index: -1, Name: f[2], Host: host, At: at}
		if idx, err := strconv.Atoi(f[0]); err == nil && idx >= 0 && idx < 1024 {
			s.Index = idx
		}
		s.UtilPct = percent(value(f[3], "%"))
		s.MemUsedMiB = nonNegative(value(f[4], "MiB"))
		s.MemTotalMiB = nonNegative(value(f[5], "MiB"))
		s.TempC = value(f[6], "C")
		s.PowerW = nonNegative(value(f[7], "W"))
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, LineError{n + 1, err.Error()})
	}
	return out, bad
}

// AppsRow is one line of the compute-apps query.
type AppsRow struct {
	UUID string
	Process
}

// ParseComputeApps reads the output of the AppsQuery. A process name may
// contain commas; the uuid, pid and memory fields around it may not.
func ParseComputeApps(r io.Reader) ([]AppsRow, []LineError) {
	var out []AppsRow
	var bad []LineError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "gpu_uuid") || strings.HasPrefix(line, "No running") {
			continue
		}
		f := splitFields(line, 4, 2)
		if f == nil || !validUUID(f[0]) {
			bad = append(bad, LineError{n, "want gpu_uuid, pid, process_name, used_gpu_memory"})
			continue
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil || pid < 0 {
			bad = append(bad, LineError{n, "pid is not a number"})
			continue
		}
		out = append(out, AppsRow{UUID: f[0], Process: Process{PID: pid, Name: f[2], MemMiB: nonNegative(value(f[3], "MiB"))}})
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, LineError{n + 1, err.Error()})
	}
	return out, bad
}

// AttachProcesses joins compute-apps rows to their samples by uuid.
func AttachProcesses(samples []Sample, apps []AppsRow) {
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

// splitFields splits a line on commas into want fields. Extra commas are
// taken to belong to the free-text field at position free (a GPU or process
// name), so "a, b, c, d" with want 3 and free 1 gives "a", "b, c", "d".
func splitFields(line string, want, free int) []string {
	parts := strings.Split(line, ",")
	if len(parts) < want {
		return nil
	}
	if extra := len(parts) - want; extra > 0 {
		merged := strings.Join(parts[free:free+extra+1], ",")
		parts = append(append(append([]string{}, parts[:free]...), merged), parts[free+extra+1:]...)
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// value parses a number with an optional unit suffix. nvidia-smi marks what
// it cannot read as [N/A], [Not Supported], [Unknown Error] and the like:
// those are missing, never zero.
func value(field, unit string) *float64 {
	field = strings.TrimSpace(field)
	if field == "" || strings.HasPrefix(field, "[") || strings.EqualFold(field, "N/A") {
		return nil
	}
	field = strings.TrimSpace(strings.TrimSuffix(field, unit))
	v, err := strconv.ParseFloat(field, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
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

// validUUID accepts nvidia-smi's GPU-… and MIG-… identifiers.
func validUUID(s string) bool {
	if len(s) < 12 || len(s) > 64 || !(strings.HasPrefix(s, "GPU-") || strings.HasPrefix(s, "MIG-")) {
		return false
	}
	for _, r := range s[4:] {
		if !(r == '-' || r == '/' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return false
		}
	}
	return true
}
