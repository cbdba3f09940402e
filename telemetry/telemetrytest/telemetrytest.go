// Package telemetrytest gives tests the recorded output of real GPU tools
// (telemetry/testdata/real, each file's source in its SOURCES.md) and a
// fake nvidia-smi that prints it, for the agent's tests in telemetry and
// the portal's in server/board alike.
package telemetrytest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// RecordingPath is the absolute path of a recording in testdata/real.
func RecordingPath(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "real", name)
}

// Recording reads a recording.
func Recording(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(RecordingPath(name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FakeNvidiaSmi puts an nvidia-smi on PATH that prints recordings by its
// arguments — outputs maps a case pattern of sh (matched against all the
// arguments) to a file to print, or to "exit N: message" — and logs each
// call's arguments to the returned file. It sets PATH with t.Setenv, so
// the test cannot run in parallel.
func FakeNvidiaSmi(t *testing.T, outputs [][2]string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake nvidia-smi is a shell script")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	var sh strings.Builder
	fmt.Fprintf(&sh, "#!/bin/sh\necho \"$*\" >> '%s'\ncase \"$*\" in\n", calls)
	for _, o := range outputs {
		if code, msg, ok := strings.Cut(o[1], ": "); ok && strings.HasPrefix(code, "exit ") {
			fmt.Fprintf(&sh, "%s) echo '%s'; exit %s ;;\n", o[0], msg, strings.TrimPrefix(code, "exit "))
			continue
		}
		path, err := filepath.Abs(o[1])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sh, "%s) cat '%s' ;;\n", o[0], path)
	}
	sh.WriteString("*) echo \"unexpected arguments: $*\" >&2; exit 9 ;;\nesac\n")
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// Calls lists the arguments of each call FakeNvidiaSmi logged.
func Calls(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// FakeProc writes status files for pids: a stand-in for /proc whose Uid:
// lines name the processes' real uids (the first number; the others are
// effective, saved and filesystem uids).
func FakeProc(t *testing.T, uids map[int]string) string {
	t.Helper()
	root := t.TempDir()
	for pid, uid := range uids {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		status := fmt.Sprintf("Name:\tproc\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nUid:\t%s\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n", pid, pid, uid)
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Users is an AgentConfig.LookupUser naming the uids of users (uid →
// name), and no other.
func Users(users map[string]string) func(uid string) (string, error) {
	return func(uid string) (string, error) {
		if n, ok := users[uid]; ok {
			return n, nil
		}
		return "", fmt.Errorf("unknown uid %s", uid)
	}
}
