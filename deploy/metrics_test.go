package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMetricsEndpointPassesPromtool runs the built binary as the manifests
// do (run --log --mm2-config --listen), with two clusters whose bootstrap
// port refuses connections, waits until the log and cluster series exist,
// and lints the /metrics scrape with promtool check metrics. It also checks
// that every mm2_watchdog_* family of the scrape is among the names the
// rules and dashboard tests accept.
func TestMetricsEndpointPassesPromtool(t *testing.T) {
	promtool(t)
	bin := watchdogBinary(t)
	dir := t.TempDir()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	props := filepath.Join(dir, "mm2.properties")
	writeFile(t, props, fmt.Sprintf("clusters = a, b\na.bootstrap.servers = %s\nb.bootstrap.servers = %s\na->b.enabled = true\na->b.topics = orders\n", refused, refused))
	logFile := filepath.Join(dir, "connect.log")
	writeFile(t, logFile, "")

	var logs syncBuffer
	addr := startWatchdog(t, bin, dir, &logs, true, func(line string) (string, bool) {
		var rec struct{ Msg, Listen string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "mm2-watchdog started" {
			return rec.Listen, true
		}
		return "", false
	}, "run", "--log", logFile, "--mm2-config", props, "--listen", "127.0.0.1:0",
		"--cluster-timeout", "2s", "--check-interval", "1h")
	base := "http://" + addr
	waitFor(t, &logs, "/readyz to answer 200", func() bool {
		code, _ := httpGet(base + "/readyz")
		return code == http.StatusOK
	})
	// The follower is in place: a line written now is read.
	f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[%s] INFO Starting MirrorMaker (org.apache.kafka.connect.mirror.MirrorMaker:210)\n", time.Now().UTC().Format("2006-01-02 15:04:05,000"))
	f.Close()

	var body string
	waitFor(t, &logs, "the log and cluster series on /metrics", func() bool {
		code, b := httpGet(base + "/metrics")
		body = b
		return code == http.StatusOK && strings.Contains(b, "mm2_watchdog_log_lines_total{") &&
			strings.Contains(b, `mm2_watchdog_cluster_up{cluster="a"} 0`) && strings.Contains(b, "mm2_watchdog_check_duration_seconds_bucket{")
	})
	runPromtool(t, []byte(body), "check", "metrics")

	known := knownMetrics(t)
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (mm2_watchdog_\S+) `).FindAllStringSubmatch(body, -1) {
		if !known[m[1]] {
			t.Errorf("/metrics has %s, which the Go-source scan does not find; the rules and dashboard tests would reject it", m[1])
		}
	}
}

// startWatchdog runs the binary with args, copies its stderr (fromStderr)
// or stdout line by line into logs, and returns the first value find picks
// out of a line (an address to scrape). The process is stopped with SIGINT
// at the end of the test and must exit cleanly.
func startWatchdog(t *testing.T, bin, home string, logs *syncBuffer, fromStderr bool, find func(line string) (string, bool), args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + home}
	pipe := cmd.StdoutPipe
	if fromStderr {
		pipe = cmd.StderrPipe
	}
	r, err := pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			logs.WriteLine(sc.Text())
			if v, ok := find(sc.Text()); ok && !sent {
				found <- v
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	exited := make(chan error, 1)
	go func() { <-drained; exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s did not stop cleanly on SIGINT: %v\n%s", args[0], err, logs.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not stop within 30 s of SIGINT\n%s", args[0], logs.String())
		}
	})
	select {
	case v := <-found:
		return v
	case err := <-exited:
		t.Fatalf("%s exited early: %v\n%s", args[0], err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not say where it listens within 60 s\n%s", args[0], logs.String())
	}
	return ""
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func httpGet(url string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond until it holds, failing after 30 s with the daemon's log.
func waitFor(t *testing.T, logs *syncBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
		}
		time.Sleep(50 * time.Millisecond) // polling an HTTP endpoint, not synchronisation
	}
}

// syncBuffer collects the daemon's log lines for failure messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteLine(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s + "\n")
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
