package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoMetricsPassPromtool scrapes /metrics of the demo in the middle of
// its incident — parity, heartbeat, group, log and alert series all present —
// and runs `promtool check metrics` over it.
func TestDemoMetricsPassPromtool(t *testing.T) {
	promtool(t)
	bin := watchdogBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "demo", "--listen", "127.0.0.1:0", "--pace", "0.3", "--duration", "2m", "--dir", dir)
	cmd.Env = []string{"HOME=" + dir}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	urls := make(chan string, 1)
	drained := make(chan struct{})
	metricsURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`)
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			out.WriteLine(sc.Text())
			if u := metricsURL.FindString(sc.Text()); u != "" && !sent {
				urls <- u
				sent = true
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { <-drained; exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("demo did not stop cleanly on SIGINT: %v\n%s", err, out.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("demo did not stop within 30 s of SIGINT\n%s", out.String())
		}
	})
	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		t.Fatalf("demo exited before printing its URLs: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("demo printed no /metrics URL within 60 s\n%s", out.String())
	}
	var body string
	waitFor(t, &out, "unmirrored partitions, heartbeats and groups on the demo's /metrics", func() bool {
		code, b := httpGet(url)
		body = b
		return code == 200 && strings.Contains(b, "mm2_watchdog_unmirrored_partitions{") &&
			regexp.MustCompile(`mm2_watchdog_unmirrored_partitions\{[^}]*\} [1-9]`).MatchString(b) &&
			strings.Contains(b, "mm2_watchdog_heartbeat_age_seconds{") &&
			strings.Contains(b, "mm2_watchdog_group_cutover_ready{")
	})
	runPromtool(t, []byte(body), "check", "metrics")
}
