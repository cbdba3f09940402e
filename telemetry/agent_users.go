package telemetry

import (
	"bufio"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// maxUsers bounds the agent's uid → name cache.
const maxUsers = 4096

func lookupUser(uid string) (string, error) {
	u, err := user.LookupId(uid)
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// attachUsers names each process's OS user: the real uid of
// /proc/PID/status, named by the system's user database. A process gone
// since nvidia-smi listed it keeps no user.
func (a *Agent) attachUsers(samples []Sample) {
	for i := range samples {
		for k := range samples[i].Processes {
			p := &samples[i].Processes[k]
			if p.User != "" || p.PID <= 0 {
				continue
			}
			uid, ok := processUID(a.cfg.ProcRoot, p.PID)
			if !ok {
				continue
			}
			p.User = a.userName(uid)
		}
	}
}

func (a *Agent) userName(uid string) string {
	if name, ok := a.users[uid]; ok {
		return name
	}
	name, err := a.cfg.LookupUser(uid)
	if err != nil || name == "" {
		name = uid
	}
	if len(a.users) >= maxUsers {
		clear(a.users)
	}
	a.users[uid] = name
	return name
}

// processUID reads the real uid, the first number of the Uid: line.
func processUID(root string, pid int) (string, bool) {
	f, err := os.Open(filepath.Join(root, strconv.Itoa(pid), "status"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Uid:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return "", false
		}
		if _, err := strconv.ParseUint(fields[0], 10, 32); err != nil {
			return "", false
		}
		return fields[0], true
	}
	return "", false
}
