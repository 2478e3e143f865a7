package deploy_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestDemoMetricsPassPromtool scrapes /metrics of the demo in the middle of
// its incident — parity, heartbeat, group, log and alert series all present —
// and runs `promtool check metrics` over it.
func TestDemoMetricsPassPromtool(t *testing.T) {
	promtool(t)
	bin := watchdogBinary(t)
	dir := t.TempDir()
	var out syncBuffer
	metricsURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`)
	url := startWatchdog(t, bin, dir, &out, false, func(line string) (string, bool) {
		u := metricsURL.FindString(line)
		return u, u != ""
	}, "demo", "--listen", "127.0.0.1:0", "--pace", "0.3", "--duration", "2m", "--dir", dir)
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
