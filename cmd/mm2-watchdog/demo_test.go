package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitLong polls cond until it holds or 25 s pass (the demo timeline under
// -race on a busy machine).
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(25 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var (
	metricsURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`)
	atRiskLine = regexp.MustCompile(`(?m)^mm2_watchdog_records_at_risk\{source="kafka",target="vast",topic="orders"\} (\d+)$`)
)

// TestDemoEndToEnd runs `mm2-watchdog demo` in-process at five times the
// speed: the real daemon must report the unmirrored partitions with records
// at risk on /metrics, fire the log rule from the simulated worker log, send
// the alerts to Slack, and resolve everything after the repair; the command
// exits 0 on cancellation and leaves a rolled worker log in --dir.
func TestDemoEndToEnd(t *testing.T) {
	dir := t.TempDir()
	slack := &slackRecorder{}
	srv := httptest.NewServer(slack)
	defer srv.Close()

	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- realMain(ctx, []string{"demo", "--listen", "127.0.0.1:0", "--pace", "0.2", "--dir", dir,
			"--slack-webhook-url", srv.URL + "/services/T0/B0/demosecret"}, strings.NewReader(""), &stdout, &stderr, noEnv)
	}()

	var base string
	waitLong(t, "the metrics URL in the narration", func() bool {
		m := metricsURL.FindString(stdout.String())
		base = strings.TrimSuffix(m, "/metrics")
		return m != ""
	})
	metric := func(line string) func() bool {
		return func() bool { _, b := httpGet(t, base+"/metrics"); return strings.Contains(b, line) }
	}
	waitLong(t, "3 unmirrored partitions of orders", metric(`mm2_watchdog_unmirrored_partitions{source="kafka",target="vast",topic="orders"} 3`))
	waitLong(t, "records at risk in orders", func() bool {
		_, b := httpGet(t, base+"/metrics")
		m := atRiskLine.FindStringSubmatch(b)
		if m == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		return n > 0
	})
	waitLong(t, "partitions-not-created from the worker log", metric(`mm2_watchdog_alerts_firing{rule="partitions-not-created",severity="critical"} 1`))
	waitLong(t, "unmirrored-partitions firing", metric(`mm2_watchdog_alerts_firing{rule="unmirrored-partitions",severity="critical"} 1`))
	if _, b := httpGet(t, base+"/api/findings"); !strings.Contains(b, `"rule":"unmirrored-partitions"`) {
		t.Errorf("/api/findings lacks unmirrored-partitions: %s", b)
	}

	waitLong(t, "orders mirrored again", metric(`mm2_watchdog_unmirrored_partitions{source="kafka",target="vast",topic="orders"} 0`))
	waitLong(t, "unmirrored-partitions resolved", metric(`mm2_watchdog_alerts_firing{rule="unmirrored-partitions",severity="critical"} 0`))
	waitLong(t, "partitions-not-created resolved", metric(`mm2_watchdog_alerts_firing{rule="partitions-not-created",severity="critical"} 0`))
	waitLong(t, "the resolutions narrated", func() bool {
		out := stdout.String()
		return strings.Contains(out, "RESOLVED  critical unmirrored-partitions") && strings.Contains(out, "RESOLVED  critical partitions-not-created")
	})
	waitLong(t, "alerts in Slack", func() bool { return slack.count("unmirrored-partitions") >= 1 })

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit code %d, stderr %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("demo did not stop after cancellation")
	}
	out := stdout.String()
	for _, want := range []string{"Phase 1", "Phase 2", "FIRING    critical unmirrored-partitions  kafka->vast orders partitions [6 7 8]", "records at risk", "Summary after", "files kept in " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FIRING    warning  lint-") {
		t.Errorf("the demo's MM2 configuration is not lint-clean:\n%s", out)
	}
	rolled, _ := filepath.Glob(filepath.Join(dir, "connect.log.*"))
	if len(rolled) == 0 {
		t.Error("no rolled worker log in --dir")
	}
	for _, name := range []string{"connect.log", "mm2.properties", "watchdog.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if strings.Contains(out+stderr.String(), "demosecret") {
		t.Error("the webhook secret leaked to the console")
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "--pace", "0"},
		{"demo", "--pace", "NaN"},
		{"demo", "--duration", "-1s"},
		{"demo", "--dir", "/nonexistent/mm2-watchdog-demo"},
		{"demo", "--slack-token", "xoxb-1-secret"},
		{"demo", "extra"},
	} {
		code, _, stderr := runMain(t, nil, "", args...)
		if code != exitUsage {
			t.Errorf("%v: code %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
		if strings.Contains(stderr, "xoxb-1-secret") {
			t.Errorf("%v: secret in stderr", args)
		}
	}
}
