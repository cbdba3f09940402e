package telemetry

import (
	"os"
	"os/user"
	"runtime"
	"strconv"
	"testing"
)

// The real /proc and the system's user database name this test's own
// process.
func TestProcessUserFromTheRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/status is Linux's")
	}
	uid, ok := processUID("/proc", os.Getpid())
	if !ok || uid != strconv.Itoa(os.Getuid()) {
		t.Fatalf("uid %q %v, want %d", uid, ok, os.Getuid())
	}
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	a := &Agent{cfg: AgentConfig{LookupUser: lookupUser}, users: map[string]string{}}
	if got := a.userName(uid); got != me.Username {
		t.Errorf("user %q, want %q", got, me.Username)
	}
	// A uid the database cannot name is reported as the number.
	a.cfg.LookupUser = func(string) (string, error) { return "", os.ErrNotExist }
	if got := a.userName("4242"); got != "4242" {
		t.Errorf("unnamed uid: %q", got)
	}
	if _, ok := processUID("/proc", -1); ok {
		t.Error("a missing process has a uid")
	}
}
