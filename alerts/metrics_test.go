package alerts

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, []RuleSeverity{
		{"partitions-not-created", detectors.Critical},
		{"send-retrying", detectors.Warning}})
	m.SetBuildInfo("v1.2.3", runtime.Version(), "abc123")
	NewDispatcher(NewLogNotifier(nil), m, Config{}, nil)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	want := []string{
		"mm2_watchdog_alerts_firing",
		"mm2_watchdog_build_info",
		"mm2_watchdog_findings_total",
		"mm2_watchdog_notification_queue_length",
		"mm2_watchdog_notifications_dropped_total",
		"mm2_watchdog_notifications_total",
	}
	if !slices.Equal(names, want) {
		t.Errorf("metric families = %v\nwant %v", names, want)
	}

	expo := `
# HELP mm2_watchdog_findings_total Observations of findings by rule and severity: one per log observation, one per finding per cluster-check round.
# TYPE mm2_watchdog_findings_total counter
mm2_watchdog_findings_total{rule="partitions-not-created",severity="critical"} 0
mm2_watchdog_findings_total{rule="send-retrying",severity="warning"} 0
# HELP mm2_watchdog_notifications_total Notification delivery attempts by integration and result (success, failure, retry, dropped).
# TYPE mm2_watchdog_notifications_total counter
mm2_watchdog_notifications_total{integration="log",result="dropped"} 0
mm2_watchdog_notifications_total{integration="log",result="failure"} 0
mm2_watchdog_notifications_total{integration="log",result="retry"} 0
mm2_watchdog_notifications_total{integration="log",result="success"} 0
# HELP mm2_watchdog_build_info A metric with a constant value of 1, labelled with the version, Go version and revision mm2-watchdog was built from.
# TYPE mm2_watchdog_build_info gauge
mm2_watchdog_build_info{goversion="` + runtime.Version() + `",revision="abc123",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expo),
		MetricFindingsTotal, MetricNotificationsTotal, MetricBuildInfo); err != nil {
		t.Error(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestNilMetricsAreSafe(t *testing.T) {
	var m *Metrics
	m.SetBuildInfo("v", "go", "r")
	s := NewState(Config{}, nil, m, nil)
	s.Observe(finding("task-failed", detectors.Critical, ""))
	s.Tick()
	if len(s.Active()) != 1 {
		t.Fatal("State without dispatcher or metrics lost the alert")
	}
}

func TestLogNotifier(t *testing.T) {
	logs := &syncBuffer{}
	n := NewLogNotifier(jsonLogger(logs))
	f := finding("partitions-not-created", detectors.Critical, "orders")
	f.Partitions = []int32{3, 4}
	f.Task = detectors.TaskPtr(0)
	a := Alert{Finding: f, Fingerprint: f.Fingerprint(), Status: Firing, LastReason: ReasonFirst}
	r := a
	r.Status, r.LastReason = Resolved, ReasonResolved
	if _, err := n.Notify(context.Background(), Notification{Seq: 1, Status: Firing, Alerts: []Alert{a, r}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %q", lines)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"level": "WARN", "msg": "alert firing", "rule": "partitions-not-created",
		"topic": "orders", "severity": "critical", "task": 0.0, "fingerprint": f.Fingerprint(), "reason": "first"} {
		if rec[k] != v {
			t.Errorf("%s = %v, want %v", k, rec[k], v)
		}
	}
	if !strings.Contains(lines[1], `"msg":"alert resolved"`) || !strings.Contains(lines[1], `"level":"INFO"`) {
		t.Errorf("resolved line = %s", lines[1])
	}
}
