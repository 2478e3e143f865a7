package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// slackRecorder is an httptest incoming-webhook endpoint that keeps every
// message body it receives.
type slackRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (s *slackRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
}

func (s *slackRecorder) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.bodies {
		if strings.Contains(b, substr) {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := fmt.Fprintln(f, l); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunFollowsRotatingLog runs the daemon in-process: a task failure is
// appended to a followed log, reaches /metrics and Slack, the log is rotated
// the way log4j 3.9 does, and the task restart in the new file resolves it.
func TestRunFollowsRotatingLog(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "connect.log")
	appendLines(t, logPath, "[2026-10-30 18:00:00,000] INFO Kafka MirrorMaker starting with 2 herders. (org.apache.kafka.connect.mirror.MirrorMaker:178)")

	slack := &slackRecorder{}
	srv := httptest.NewServer(slack)
	defer srv.Close()
	webhook := srv.URL + "/services/T0001/B0001/canarysecretvalue"

	var logBuf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := runOptions{
		logs:            []string{logPath},
		flushAfter:      100 * time.Millisecond,
		log:             logFlags{timezone: "UTC"},
		listen:          "127.0.0.1:0",
		slackWebhookURL: webhook,
		checkInterval:   time.Second,
	}
	o.alerts.GroupWait = 50 * time.Millisecond
	o.alerts.GroupInterval = 100 * time.Millisecond
	o.alerts.QuietPeriod = time.Hour
	d, err := newDaemon(o, noEnv, logger, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx) }()
	base := "http://" + <-d.addr

	waitFor(t, "/readyz", func() bool { c, _ := httpGet(t, base+"/readyz"); return c == 200 })
	if c, _ := httpGet(t, base+"/healthz"); c != 200 {
		t.Fatalf("/healthz %d", c)
	}

	appendLines(t, logPath,
		"[2026-10-30 18:18:56,123] ERROR [MirrorSourceConnector|task-0] WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted (org.apache.kafka.connect.runtime.WorkerTask:234)",
		"java.lang.IllegalStateException: boom",
		"\tat org.apache.kafka.connect.mirror.MirrorSourceTask.poll(MirrorSourceTask.java:145)",
	)
	firing := `mm2_watchdog_alerts_firing{rule="task-failed",severity="critical"} 1`
	waitFor(t, "task-failed on /metrics", func() bool { _, b := httpGet(t, base+"/metrics"); return strings.Contains(b, firing) })
	waitFor(t, "task-failed in Slack", func() bool { return slack.count("task-failed") >= 1 })
	if _, b := httpGet(t, base+"/api/findings"); !strings.Contains(b, `"rule":"task-failed"`) {
		t.Errorf("/api/findings lacks the alert: %s", b)
	}
	if resp, err := http.Post(base+"/api/findings", "application/json", strings.NewReader("{}")); err != nil {
		t.Errorf("POST /api/findings: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /api/findings: status %d, want 405", resp.StatusCode)
		}
	}

	// Rotate as log4j 1.x DailyRollingFileAppender does: rename, then create.
	if err := os.Rename(logPath, logPath+".2026-10-30-18"); err != nil {
		t.Fatal(err)
	}
	appendLines(t, logPath,
		"[2026-10-30 19:00:01,000] INFO [MirrorSourceConnector|task-0] WorkerSourceTask{id=MirrorSourceConnector-0} Executing source task (org.apache.kafka.connect.runtime.AbstractWorkerSourceTask:337)",
	)
	resolved := `mm2_watchdog_alerts_firing{rule="task-failed",severity="critical"} 0`
	waitFor(t, "task-failed resolved on /metrics", func() bool { _, b := httpGet(t, base+"/metrics"); return strings.Contains(b, resolved) })
	waitFor(t, "resolved message in Slack", func() bool { return slack.count("") >= 2 && slack.count("esolved") >= 1 })

	_, metrics := httpGet(t, base+"/metrics")
	for _, name := range []string{"mm2_watchdog_log_lines_total", "mm2_watchdog_log_last_record_timestamp_seconds", "mm2_watchdog_findings_total", "mm2_watchdog_notifications_total", "mm2_watchdog_build_info", "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run returned %v", err)
	}
	// The webhook URL is a secret: it must not appear in the process log or
	// on /metrics.
	for where, text := range map[string]string{"log": logBuf.String(), "metrics": metrics} {
		if strings.Contains(text, "canarysecretvalue") {
			t.Errorf("webhook secret leaked into the %s", where)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunRejectsBadConfigWithoutSecrets(t *testing.T) {
	code, _, stderr := runMain(t, nil, "", "run", "--log", "/tmp/x.log", "--slack-webhook-url", "ftp://hooks.example/services/T/B/topsecretpart")
	if code != exitUsage {
		t.Fatalf("code %d, want %d", code, exitUsage)
	}
	if strings.Contains(stderr, "topsecretpart") {
		t.Errorf("secret in error: %s", stderr)
	}
	code, _, stderr = runMain(t, nil, "", "run")
	if code != exitUsage || !strings.Contains(stderr, "--log") {
		t.Errorf("no inputs: code %d stderr %q", code, stderr)
	}
	code, _, stderr = runMain(t, nil, "", "run", "--log", "/tmp/x.log", "--slack-token", "xoxb-1-secret")
	if code != exitUsage || !strings.Contains(stderr, "--slack-channel") || strings.Contains(stderr, "xoxb-1-secret") {
		t.Errorf("token without channel: code %d stderr %q", code, stderr)
	}
}

func TestRunRejectsBadNumbersAndAddresses(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--log", "/tmp/x.log", "--check-interval", "0s"},
		{"run", "--log", "/tmp/x.log", "--check-interval", "-5s"},
		{"run", "--log", "/tmp/x.log", "--max-line-bytes", "-1"},
		{"run", "--log", "/tmp/x.log", "--stall-window", "-1s"},
		{"run", "--log", "/tmp/x.log", "--notification-queue-size", "0"},
		{"run", "--log", "/tmp/x.log", "--listen", "nonsense"},
		{"run", "--log", "/tmp/x.log", "--listen", "127.0.0.1:99999"},
		{"run", "--log", "/tmp/x.log", "--follow-engine", "magic"},
		{"scan", "--rebalance-threshold", "-1", "x.log"},
	} {
		code, _, stderr := runMain(t, nil, "", args...)
		flagName := args[len(args)-2]
		if args[0] == "scan" {
			flagName = args[1]
		}
		if code != exitUsage || !strings.Contains(stderr, flagName) {
			t.Errorf("%v: code %d, stderr %q; want exit 2 naming %s", args, code, stderr, flagName)
		}
	}
}

func TestScanFlagsAfterFiles(t *testing.T) {
	code, out, stderr := runMain(t, nil, "", "scan", "../../testdata/field-cases/case11-record-too-large-task-killed.log", "--format", "json")
	if code != exitFindings {
		t.Fatalf("code %d stderr %s", code, stderr)
	}
	if fs := decodeFindings(t, out); len(fs) != 1 || fs[0].Rule != "record-too-large" {
		t.Errorf("findings %s", out)
	}
}
