package alerts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newTestState(t *testing.T, cfg Config) (*State, *Dispatcher, *recorder, *clock, *Metrics) {
	t.Helper()
	clk := newClock()
	rec := newRecorder()
	m := NewMetrics(prometheus.NewRegistry(), nil)
	cfg.GroupWait = time.Hour // tests deliver with Flush
	d := NewDispatcher(rec, m, cfg, nil)
	return NewState(cfg, d, m, clk.Now), d, rec, clk, m
}

func TestStateEventLifecycle(t *testing.T) {
	s, d, rec, clk, m := newTestState(t, Config{})
	f := finding("partitions-not-created", detectors.Critical, "orders")

	s.Observe(f)
	got := flushed(t, d, rec)
	if len(got) != 1 || got[0].Status != Firing || !slices.Equal(rules(got[0]), []string{"partitions-not-created/orders/first"}) {
		t.Fatalf("first observation: got %+v", got)
	}
	if a := s.Active(); len(a) != 1 || a[0].Fingerprint != f.Fingerprint() || !a[0].StartedAt.Equal(clk.Now()) {
		t.Fatalf("Active = %+v", a)
	}

	clk.Add(time.Minute)
	f.Count = 2
	s.Observe(f)
	if got := flushed(t, d, rec); len(got) != 0 {
		t.Fatalf("repeat observation notified: %+v", got)
	}
	if a := s.Active(); a[0].Count != 2 {
		t.Errorf("Active count = %d, want the latest finding's 2", a[0].Count)
	}

	f.Partitions = []int32{3}
	s.Observe(f)
	if got := flushed(t, d, rec); len(got) != 1 || got[0].Alerts[0].LastReason != ReasonChanged {
		t.Fatalf("partitions change: got %+v", got)
	}

	// Quiet period counts from the last observation.
	clk.Add(29 * time.Minute)
	s.Tick()
	if len(s.Active()) != 1 {
		t.Fatal("resolved before the quiet period")
	}
	clk.Add(time.Minute)
	s.Tick()
	got = flushed(t, d, rec)
	if len(got) != 1 || got[0].Status != Resolved || got[0].Alerts[0].EndedAt != clk.Now() {
		t.Fatalf("quiet period: got %+v", got)
	}
	if len(s.Active()) != 0 {
		t.Fatal("resolved alert still active")
	}
	if v := testutil.ToFloat64(m.findings.WithLabelValues("partitions-not-created", "critical")); v != 3 {
		t.Errorf("findings_total = %v, want 3", v)
	}
	if v := testutil.ToFloat64(m.firing.WithLabelValues("partitions-not-created", "critical")); v != 0 {
		t.Errorf("alerts_firing = %v, want 0 after resolve", v)
	}
}

func TestStateRecoveredAndRefire(t *testing.T) {
	s, d, rec, clk, _ := newTestState(t, Config{})
	f := finding("task-failed", detectors.Critical, "")
	f.Connector, f.Task = "MirrorSourceConnector", detectors.TaskPtr(0)
	s.Observe(f)
	flushed(t, d, rec)

	clk.Add(time.Minute)
	rf := f
	rf.Recovered = true
	s.Observe(rf)
	got := flushed(t, d, rec)
	if len(got) != 1 || got[0].Status != Resolved {
		t.Fatalf("recovery: got %+v", got)
	}
	// A recovery of another task resolves nothing.
	other := rf
	other.Task = detectors.TaskPtr(1)
	s.Observe(other)
	if got := flushed(t, d, rec); len(got) != 0 {
		t.Fatalf("recovery of unknown alert notified: %+v", got)
	}
	clk.Add(time.Minute)
	s.Observe(f)
	got = flushed(t, d, rec)
	if len(got) != 1 || got[0].Alerts[0].LastReason != ReasonFirst || !got[0].Alerts[0].StartedAt.Equal(clk.Now()) {
		t.Fatalf("refire: got %+v", got)
	}
}

func TestStateRepeatAndSeverity(t *testing.T) {
	s, d, rec, clk, m := newTestState(t, Config{QuietPeriod: 24 * time.Hour})
	crit := finding("partition-not-in-metadata", detectors.Critical, "orders")
	warn := finding("send-retrying", detectors.Warning, "orders")
	s.Observe(crit)
	s.Observe(warn)
	got := flushed(t, d, rec)
	if len(got) != 1 || len(got[0].Alerts) != 2 || got[0].Alerts[0].Severity != detectors.Critical {
		t.Fatalf("want one grouped notification, critical first; got %+v", got)
	}
	clk.Add(4 * time.Hour)
	s.Tick()
	got = flushed(t, d, rec)
	if len(got) != 1 || !slices.Equal(rules(got[0]), []string{"partition-not-in-metadata/orders/repeat"}) {
		t.Fatalf("repeat: got %+v", got)
	}
	// Warning goes critical: changed.
	warn.Severity = detectors.Critical
	s.Observe(warn)
	got = flushed(t, d, rec)
	if len(got) != 1 || !slices.Equal(rules(got[0]), []string{"send-retrying/orders/changed"}) {
		t.Fatalf("severity up: got %+v", got)
	}
	if v := testutil.ToFloat64(m.firing.WithLabelValues("send-retrying", "warning")); v != 0 {
		t.Errorf("firing{send-retrying,warning} = %v, want 0", v)
	}
	if v := testutil.ToFloat64(m.firing.WithLabelValues("send-retrying", "critical")); v != 1 {
		t.Errorf("firing{send-retrying,critical} = %v, want 1", v)
	}
}

func TestStateSnapshotScopes(t *testing.T) {
	s, d, rec, clk, _ := newTestState(t, Config{})
	a := finding("unmirrored-partitions", detectors.Critical, "orders")
	b := finding("unmirrored-partitions", detectors.Critical, "payments")
	c := finding("heartbeat-stalled", detectors.Critical, "")
	s.Sync("parity", []detectors.Finding{a, b})
	s.Sync("heartbeat", []detectors.Finding{c})
	got := flushed(t, d, rec)
	if len(got) != 1 || len(got[0].Alerts) != 3 {
		t.Fatalf("alerts that fire together: got %d notifications %+v", len(got), got)
	}

	// Unknown neither resolves nor fires; the alerts are marked.
	clk.Add(time.Hour)
	s.SyncUnknown("parity")
	s.Tick()
	if got := flushed(t, d, rec); len(got) != 0 {
		t.Fatalf("unknown round notified: %+v", got)
	}
	for _, al := range s.Active() {
		if want := al.Scope == "parity"; al.Unknown != want {
			t.Errorf("%s/%s Unknown = %v, want %v", al.Rule, al.Topic, al.Unknown, want)
		}
	}

	// A new complete set without orders resolves orders only, in its scope only.
	s.Sync("parity", []detectors.Finding{b})
	got = flushed(t, d, rec)
	if len(got) != 1 || got[0].Status != Resolved || !slices.Equal(rules(got[0]), []string{"unmirrored-partitions/orders/resolved"}) {
		t.Fatalf("absent from snapshot: got %+v", got)
	}
	act := s.Active()
	if len(act) != 2 || act[0].Unknown || act[1].Unknown {
		t.Fatalf("Active after sync = %+v", act)
	}
	// Snapshot alerts have no quiet period.
	clk.Add(2 * time.Hour)
	s.Tick()
	if n := len(s.Active()); n != 2 {
		t.Fatalf("snapshot alerts resolved by the quiet period: %d left", n)
	}
	s.Sync("parity", nil)
	s.Sync("heartbeat", nil)
	got = flushed(t, d, rec)
	if len(got) != 1 || len(got[0].Alerts) != 2 || got[0].Status != Resolved {
		t.Fatalf("empty snapshots: got %+v", got)
	}
}

func TestStateDoesNotShareFindingMemory(t *testing.T) {
	s, _, _, _, _ := newTestState(t, Config{})
	f := finding("unmirrored-partitions", detectors.Critical, "orders")
	f.Values = map[string]any{"records_at_risk": 10}
	f.Partitions = []int32{1}
	s.Observe(f)
	f.Values["records_at_risk"] = 99 // a detector folding into its own copy
	f.Partitions[0] = 7
	a := s.Active()[0]
	if a.Values["records_at_risk"] != 10 || a.Partitions[0] != 1 {
		t.Fatalf("alert shares memory with the caller's finding: %+v", a.Finding)
	}
}

func TestAlertJSON(t *testing.T) {
	s, _, _, _, _ := newTestState(t, Config{})
	f := finding("task-failed", detectors.Critical, "")
	f.Task = detectors.TaskPtr(0)
	s.Observe(f)
	b, err := json.Marshal(s.Active())
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, want := range []string{`"rule":"task-failed"`, `"severity":"critical"`, `"task":0`, `"status":"firing"`,
		`"fingerprint":"` + f.Fingerprint() + `"`, `"started_at":"2026-10-30T18:00:00Z"`, `"last_notified":`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON %s lacks %s", js, want)
		}
	}
	for _, absent := range []string{`"topic"`, `"ended_at"`, `"scope"`, `"unknown"`, `Recovered`} {
		if strings.Contains(js, absent) {
			t.Errorf("JSON %s has %s", js, absent)
		}
	}
}

// BenchmarkObserveRepeat measures the common case: a firing alert seen again.
func BenchmarkObserveRepeat(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), nil)
	s := NewState(Config{}, NewDispatcher(newRecorder(), m, Config{}, nil), m, nil)
	f := finding("send-retrying", detectors.Warning, "orders")
	f.Partitions = []int32{1, 2, 3}
	f.Values = map[string]any{"retries": 5}
	s.Observe(f)
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(f)
	}
}
