package alerts

import (
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)
	cfg := Config{MaterialValues: map[string][]string{"unmirrored-partitions": {"target_partitions"}}}.withDefaults()

	crit := detectors.Finding{Rule: "partitions-not-created", Severity: detectors.Critical, Topic: "orders", Partitions: []int32{3, 4}}
	warn := detectors.Finding{Rule: "send-retrying", Severity: detectors.Warning, Topic: "orders"}
	recovered := crit
	recovered.Recovered = true
	withPartitions := func(f detectors.Finding, ps ...int32) *detectors.Finding { f.Partitions = ps; return &f }
	withSeverity := func(f detectors.Finding, s detectors.Severity) *detectors.Finding { f.Severity = s; return &f }
	unmirrored := func(target int) *detectors.Finding {
		return &detectors.Finding{Rule: "unmirrored-partitions", Severity: detectors.Critical, Topic: "orders",
			Values: map[string]any{"target_partitions": target, "records_at_risk": 10 * target}}
	}

	// firing builds a prev alert as State would have left it after notifying f at notified.
	firing := func(f detectors.Finding, scope string, observed, notified time.Time) *Alert {
		a := &Alert{Finding: f, Fingerprint: f.Fingerprint(), Status: Firing, Scope: scope, StartedAt: notified}
		a.lastObserved = observed
		a.LastNotified = notified
		a.notifiedRank = f.Severity.Rank()
		a.notifiedMaterial = materialKey(&f, cfg)
		return a
	}
	resolvedAlert := firing(crit, "", t0, t0)
	resolvedAlert.Status = Resolved

	tests := []struct {
		name string
		prev *Alert
		cur  *detectors.Finding
		now  time.Time
		want Reason
	}{
		{"new finding fires", nil, &crit, t0, ReasonFirst},
		{"new warning fires", nil, &warn, t0, ReasonFirst},
		{"fires again after it resolved", resolvedAlert, &crit, t0.Add(time.Minute), ReasonFirst},
		{"recovery without alert", nil, &recovered, t0, ReasonNone},
		{"tick without alert", nil, nil, t0, ReasonNone},
		{"same observation again", firing(crit, "", t0, t0), &crit, t0.Add(time.Minute), ReasonNone},
		{"partition order does not matter", firing(crit, "", t0, t0), withPartitions(crit, 4, 3, 3), t0.Add(time.Minute), ReasonNone},
		{"severity up", firing(warn, "", t0, t0), withSeverity(warn, detectors.Critical), t0.Add(time.Minute), ReasonChanged},
		{"severity down is quiet", firing(crit, "", t0, t0), withSeverity(crit, detectors.Warning), t0.Add(time.Minute), ReasonNone},
		{"partitions changed", firing(crit, "", t0, t0), withPartitions(crit, 3, 4, 5), t0.Add(time.Minute), ReasonChanged},
		{"marked value changed", firing(*unmirrored(3), "parity", t0, t0), unmirrored(4), t0.Add(time.Minute), ReasonChanged},
		{"unmarked value changes are quiet", firing(*unmirrored(3), "parity", t0, t0),
			func() *detectors.Finding { f := unmirrored(3); f.Values["records_at_risk"] = 999; return f }(), t0.Add(time.Minute), ReasonNone},
		{"recovered", firing(crit, "", t0, t0), &recovered, t0.Add(time.Minute), ReasonResolved},
		{"quiet period reached", firing(crit, "", t0, t0), nil, t0.Add(30 * time.Minute), ReasonResolved},
		{"quiet period not yet", firing(crit, "", t0, t0), nil, t0.Add(30*time.Minute - time.Second), ReasonNone},
		{"snapshot alert has no quiet period", firing(warn, "parity", t0, t0), nil, t0.Add(48 * time.Hour), ReasonNone},
		{"critical repeats on tick", firing(crit, "parity", t0, t0), nil, t0.Add(4 * time.Hour), ReasonRepeat},
		{"critical repeats on observation", firing(crit, "", t0.Add(3*time.Hour), t0), &crit, t0.Add(4 * time.Hour), ReasonRepeat},
		{"critical not yet due", firing(crit, "", t0.Add(3*time.Hour), t0), &crit, t0.Add(4*time.Hour - time.Second), ReasonNone},
		{"warning never repeats", firing(warn, "", t0.Add(5*time.Hour), t0), &warn, t0.Add(5 * time.Hour), ReasonNone},
		{"downgraded to warning stops repeating", firing(crit, "", t0.Add(5*time.Hour), t0), withSeverity(crit, detectors.Warning), t0.Add(5 * time.Hour), ReasonNone},
	}
	seen := map[Reason]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(tt.prev, tt.cur, tt.now, cfg); got != tt.want {
				t.Errorf("decide = %q, want %q", got, tt.want)
			}
		})
		seen[tt.want] = true
	}
	for _, r := range []Reason{ReasonNone, ReasonFirst, ReasonChanged, ReasonRepeat, ReasonResolved} {
		if !seen[r] {
			t.Errorf("no case expects %q", r)
		}
	}
}
