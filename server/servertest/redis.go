package servertest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Redis is a redis-server of one test's own (scripts/redis-ctl.sh in a
// temporary directory), which the test may kill and start again on the same
// port. The shared one of scripts/testenv.sh (CARDHOUR_TEST_REDIS) must
// never be stopped: other packages' tests use it at the same time.
type Redis struct {
	URL string // redis://127.0.0.1:PORT/0
	dir string
	ctl string
}

// StartRedis starts a private redis-server, stopped when t ends. It skips t
// outside scripts/testenv.sh (CARDHOUR_TEST_REDIS_CTL unset).
func StartRedis(t *testing.T) *Redis {
	t.Helper()
	ctl := os.Getenv("CARDHOUR_TEST_REDIS_CTL")
	if ctl == "" {
		t.Skip("needs redis-server: CARDHOUR_TEST_REDIS_CTL is not set; run under scripts/testenv.sh (make test)")
	}
	r := &Redis{dir: t.TempDir(), ctl: ctl}
	r.Start(t)
	t.Cleanup(func() { r.run(t, "stop") })
	port, err := os.ReadFile(filepath.Join(r.dir, "port"))
	if err != nil {
		t.Fatal(err)
	}
	r.URL = "redis://127.0.0.1:" + strings.TrimSpace(string(port)) + "/0"
	return r
}

// Start starts the server (again), on the port it had.
func (r *Redis) Start(t *testing.T) {
	t.Helper()
	r.run(t, "start")
}

// Kill ends the server with SIGKILL, as a crash or a failed-over node
// would: every client's connection breaks at once. It returns once the
// process is gone.
func (r *Redis) Kill(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "redis.pid"))
	if err != nil {
		t.Fatalf("redis pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("redis pid %q", b)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill redis-server %d: %v", pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// A zombie (exited, not yet reaped by its setsid parent) no longer listens.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %d still running 10 s after SIGKILL", pid)
		}
	}
	_ = os.Remove(filepath.Join(r.dir, "redis.pid"))
}

func (r *Redis) run(t *testing.T, action string) {
	t.Helper()
	cmd := exec.Command(r.ctl, action)
	cmd.Env = append(os.Environ(), "CARDHOUR_TEST_REDIS_DIR="+r.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("redis-ctl %s: %v\n%s", action, err, out)
	}
}
