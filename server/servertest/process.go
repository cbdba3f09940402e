package servertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// BuildBinary builds the cardhour command from the module root root into a
// temporary directory, for tests that run real server processes.
func BuildBinary(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cardhour")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Process is one running cardhour binary.
type Process struct {
	name string
	URL  string
	cmd  *exec.Cmd
	log  *LockedBuffer
	done chan error
	once sync.Once
}

// StartProcess runs `cardhour serve` on a free port and waits until it
// answers /readyz.
func StartProcess(t *testing.T, bin, name string, vars map[string]string) *Process {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = processEnv(t, vars)
	p := &Process{name: name, cmd: cmd, log: &LockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.log, line)
			if _, u, ok := strings.Cut(line, " listening on "); ok && !sent {
				addr <- strings.TrimSpace(u)
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			t.Logf("process %s log (last 4 KiB):\n%s", name, p.log.Tail(4096))
		}
	})
	select {
	case p.URL = <-addr:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("process %s exited at start: %v\n%s", name, err, p.log.Tail(4096))
	case <-time.After(90 * time.Second):
		t.Fatalf("process %s printed no address in 90 s:\n%s", name, p.log.Tail(4096))
	}
	// Waits for readiness, it does not time it.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(p.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s not ready after 60 s: %v\n%s", name, err, p.log.Tail(4096))
		}
	}
}

// Stop ends the process with SIGINT, as a terminal would; it is idempotent.
func (p *Process) Stop(t *testing.T) {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-p.done:
			p.done <- err
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Errorf("process %s did not stop on SIGINT within 20 s", p.name)
		}
	})
}

// Kill ends the process with SIGKILL, as a crash would: nothing it holds is
// given up. Stop after it does nothing.
func (p *Process) Kill(t *testing.T) {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		err := <-p.done
		p.done <- err
	})
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output is everything the process logged so far (stderr and stdout).
func (p *Process) Output() string { return p.log.String() }

// processEnv is the environment without the developer's own CARDHOUR_* settings.
func processEnv(t *testing.T, vars map[string]string) []string {
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CARDHOUR_") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, "CARDHOUR_ADDR=127.0.0.1:0", "CARDHOUR_DATA="+t.TempDir())
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	return environ
}

// CLIToken issues an API token with `cardhour token --user NAME`.
func CLIToken(t *testing.T, bin string, vars map[string]string, user string) string {
	t.Helper()
	cmd := exec.Command(bin, "token", "--user", user)
	cmd.Env = processEnv(t, vars)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cardhour token --user %s: %v\n%s", user, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// CallJSON sends a JSON request and decodes the answer into out.
func CallJSON(t *testing.T, base, token, method, path string, body, out any) (int, string) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0, ""
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if out != nil {
		_ = json.Unmarshal(raw, out)
	}
	return res.StatusCode, string(raw)
}

// MustCallJSON is CallJSON that fails t unless the answer has status want;
// it returns the decoded object.
func MustCallJSON(t *testing.T, base, token, method, path string, body any, want int) map[string]any {
	t.Helper()
	var out map[string]any
	status, raw := CallJSON(t, base, token, method, path, body, &out)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	return out
}

// ID is the "id" of a decoded JSON object.
func ID(m map[string]any) int64 { return int64(m["id"].(float64)) }
