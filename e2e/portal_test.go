// Package e2e drives the real cardhour binary with headless Chromium. The
// binary is built once by TestMain and started per test as a child process
// on a free port, with its own data directory or MariaDB database, exactly
// as an operator would run it.
package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const adminPassword = "e2e-admin-pw"

var (
	chromePath string // "" when no browser: the tests skip
	binPath    string
	buildErr   error
)

func TestMain(m *testing.M) {
	chromePath = findChrome()
	if chromePath == "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cardhour-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "cardhour")
	// The module root is the parent of this package's directory.
	cmd := exec.Command("go", "build", "-o", binPath, ".")
	cmd.Dir = ".."
	// The default cgo setting reuses the build cache of the other packages' tests.
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build: %v\n%s", err, out)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// findChrome is CARDHOUR_TEST_CHROME when set, else chromium on PATH.
func findChrome() string {
	if p := os.Getenv("CARDHOUR_TEST_CHROME"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		return ""
	}
	p, _ := exec.LookPath("chromium")
	return p
}

// requireBrowser skips when there is no Chromium and fails when the binary
// did not build.
func requireBrowser(t *testing.T) {
	t.Helper()
	if chromePath == "" {
		if p := os.Getenv("CARDHOUR_TEST_CHROME"); p != "" {
			t.Skipf("e2e skipped: CARDHOUR_TEST_CHROME=%s is not a file", p)
		}
		t.Skip("e2e skipped: no Chromium (set CARDHOUR_TEST_CHROME or put chromium on PATH; make test installs it)")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// portal is a running cardhour process.
type portal struct {
	URL  string
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

// startPortal runs the binary with CARDHOUR_* vars over a fresh data
// directory and an admin password, and returns once it reports its address
// and /healthz answers. Its output goes to artifacts/<name>.log.
func startPortal(t *testing.T, name string, vars map[string]string) *portal {
	t.Helper()
	logf, err := os.Create(filepath.Join(artifactDir(t), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{}
	for _, kv := range os.Environ() {
		// The developer's own settings must not leak into the portal under test.
		if !strings.HasPrefix(kv, "CARDHOUR_") {
			env = append(env, kv)
		}
	}
	all := map[string]string{
		"CARDHOUR_ADDR":           "127.0.0.1:0", // the kernel picks a free port; the binary prints it
		"CARDHOUR_DATA":           t.TempDir(),
		"CARDHOUR_ADMIN_PASSWORD": adminPassword,
	}
	for k, v := range vars {
		all[k] = v
	}
	for k, v := range all {
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(binPath, "serve")
	cmd.Env = env
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &portal{cmd: cmd, done: make(chan error, 1), log: logf}

	addr := make(chan string, 1)
	var copyDone sync.WaitGroup
	copyDone.Add(1)
	go func() {
		defer copyDone.Done()
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if _, u, ok := strings.Cut(line, " listening on "); ok && !sent {
				addr <- strings.TrimSpace(u)
				sent = true
			}
		}
		_, _ = io.Copy(logf, stdout)
		if !sent {
			close(addr)
		}
	}()
	go func() {
		copyDone.Wait()
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { p.stop(t) })

	// Bounded waits: a portal that never comes up fails the test instead of
	// hanging it. Start-up on MariaDB retries the connection for up to 60 s.
	select {
	case u, ok := <-addr:
		if !ok {
			t.Fatalf("%s exited before listening; see %s", name, logf.Name())
		}
		p.URL = u
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not report its address; see %s", name, logf.Name())
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(p.URL + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: /healthz never answered 200 (%v)", name, err)
		}
	}
	return p
}

// stop ends the process as a service manager would (SIGTERM) and expects
// a clean exit after the graceful shutdown.
func (p *portal) stop(t *testing.T) {
	if p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("cardhour exited with %v after SIGTERM, want a clean exit; see %s", err, p.log.Name())
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("cardhour ignored SIGTERM for 30 s; killed")
	}
	_ = p.log.Close()
}

// artifactDir is e2e/artifacts, kept after the run (and ignored by git).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("artifacts")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
