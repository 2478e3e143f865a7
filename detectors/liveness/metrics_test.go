package liveness

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
)

func TestMetricsPublish(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, 1)
	res := &Result{
		Now: t0,
		Heartbeats: []HeartbeatRow{
			{Source: "kafka", Target: "vast", Topic: "heartbeats", Status: StatusStalled, Last: t0.Add(-10 * time.Minute), Age: 10 * time.Minute},
			{Source: "vast", Target: "kafka", Topic: "heartbeats", Status: StatusOK, Last: t0.Add(-time.Second), Age: time.Second},
			{Source: "kafka", Target: "vast", Topic: "kafka.heartbeats", Replicated: true, Status: StatusMissing},
		},
		Groups: []FlowGroups{{Source: "kafka", Target: "vast", Groups: []GroupReport{
			{Group: "billing", Status: GroupReady, Ready: true, LastCheckpoint: t0.Add(-time.Minute), Committed: 2, Checkpointed: 2, Reread: 181},
			{Group: "zz-capped", Status: GroupNotReady, Committed: 1},
		}}},
		SyncLag:   []SyncLagRow{{Source: "kafka", Target: "vast", Topic: "orders", Lag: 181, Partitions: 3}},
		Malformed: []MalformedCount{{Cluster: "vast", Topic: "heartbeats", Records: 4}},
	}
	m.Publish(res)
	want := `
# HELP mm2_watchdog_group_cutover_ready 1 when every partition the group committed on source (in a mirrored topic) has a checkpoint on target, else 0.
# TYPE mm2_watchdog_group_cutover_ready gauge
mm2_watchdog_group_cutover_ready{group="billing",source="kafka",target="vast"} 1
# HELP mm2_watchdog_group_reread_records Records a consumer group would read again if it moved from source to target now (committed offset minus where the translated offset resumes, summed over checkpointed partitions).
# TYPE mm2_watchdog_group_reread_records gauge
mm2_watchdog_group_reread_records{group="billing",source="kafka",target="vast"} 181
# HELP mm2_watchdog_group_series_dropped Consumer groups of flow source->target left without per-group series because of the group limit.
# TYPE mm2_watchdog_group_series_dropped gauge
mm2_watchdog_group_series_dropped{source="kafka",target="vast"} 1
# HELP mm2_watchdog_heartbeat_age_seconds Age of the newest heartbeat of herder source->target in the heartbeats topic on target (now minus the heartbeat's timestamp field). Absent while none is found.
# TYPE mm2_watchdog_heartbeat_age_seconds gauge
mm2_watchdog_heartbeat_age_seconds{source="kafka",target="vast"} 600
mm2_watchdog_heartbeat_age_seconds{source="vast",target="kafka"} 1
# HELP mm2_watchdog_offset_sync_lag_records Source end offsets minus the newest offset-sync of each partition of a mirrored topic, summed (topic is the source topic). Over-states the lag by up to offset.lag.max per partition.
# TYPE mm2_watchdog_offset_sync_lag_records gauge
mm2_watchdog_offset_sync_lag_records{source="kafka",target="vast",topic="orders"} 181
`
	names := []string{MetricGroupCutoverReady, MetricGroupReread, MetricGroupSeriesDropped, MetricHeartbeatAge, MetricOffsetSyncLag, MetricReplicatedHeartbeatAge}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.cpAge.WithLabelValues("kafka", "vast", "billing")); got != 60 {
		t.Errorf("checkpoint age %v", got)
	}
	if got := testutil.ToFloat64(m.malformed.WithLabelValues("vast", "heartbeats")); got != 4 {
		t.Errorf("malformed %v", got)
	}
	if probs, err := testutil.GatherAndLint(reg); err != nil || len(probs) > 0 {
		t.Errorf("lint: %v %v", err, probs)
	}

	// The flow becomes unknown: values are kept. Then the herder and the
	// group disappear: their series go.
	m.Publish(&Result{Now: t0, Groups: []FlowGroups{{Source: "kafka", Target: "vast", Unknown: "down"}},
		Heartbeats: []HeartbeatRow{{Source: "kafka", Target: "vast", Status: StatusUnknown}},
		keepLag:    map[[2]string]bool{{"kafka", "vast"}: true}})
	if n := testutil.CollectAndCount(m.ready) + testutil.CollectAndCount(m.hbAge) + testutil.CollectAndCount(m.syncLag); n != 3 {
		t.Errorf("unknown round dropped series: %d left, want 3", n)
	}
	m.Publish(&Result{Now: t0, Groups: []FlowGroups{{Source: "kafka", Target: "vast"}}})
	for name, v := range map[string]*prometheus.GaugeVec{"ready": m.ready, "reread": m.reread, "cpAge": m.cpAge, "hbAge": m.hbAge, "syncLag": m.syncLag} {
		if n := testutil.CollectAndCount(v); n != 0 {
			t.Errorf("%s keeps %d series of gone subjects", name, n)
		}
	}
}

// TestMetricsMalformedStale: a malformed-records series is kept while its
// topic is watched but not read, and deleted once the topic is no longer
// watched.
func TestMetricsMalformedStale(t *testing.T) {
	m := NewMetrics(prometheus.NewPedanticRegistry(), 0)
	m.Publish(&Result{Now: t0, Malformed: []MalformedCount{
		{Cluster: "vast", Topic: "heartbeats", Records: 4},
		{Cluster: "vast", Topic: cpTopic, Records: 1},
		{Cluster: "kafka", Topic: syncTopic},
	}})
	if n := testutil.CollectAndCount(m.malformed); n != 3 {
		t.Fatalf("%d series, want 3", n)
	}
	// vast is not reached: its topics keep their counts; the offset-syncs
	// topic is no longer read (the flow was removed).
	m.Publish(&Result{Now: t0, keepMalformed: map[[2]string]bool{{"vast", "heartbeats"}: true, {"vast", cpTopic}: true}})
	if n := testutil.CollectAndCount(m.malformed); n != 2 {
		t.Errorf("%d series after the flow went, want 2", n)
	}
	if got := testutil.ToFloat64(m.malformed.WithLabelValues("vast", "heartbeats")); got != 4 {
		t.Errorf("kept count %v, want 4", got)
	}
	m.Publish(&Result{Now: t0, Malformed: []MalformedCount{{Cluster: "vast", Topic: "heartbeats"}}})
	if n := testutil.CollectAndCount(m.malformed); n != 1 {
		t.Errorf("%d series, want only vast heartbeats", n)
	}
	if got := testutil.ToFloat64(m.malformed.WithLabelValues("vast", "heartbeats")); got != 0 {
		t.Errorf("re-read count %v, want 0", got)
	}
}

// TestMalformedKeptWhileUnreached: a round that cannot reach the target
// keeps the checkpoints topic's count instead of dropping it.
func TestMalformedKeptWhileUnreached(t *testing.T) {
	src, tgt := groupPair(t)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "emit.heartbeats.enabled = false"))
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, 0)
	c := New(Options{})
	m.Publish(check(t, c, cfg, t0, src, tgt))
	if got := testutil.ToFloat64(m.malformed.WithLabelValues("vast", cpTopic)); got != 0 {
		t.Fatalf("checkpoints malformed %v", got)
	}
	res := check(t, c, cfg, t0.Add(time.Minute), src) // vast not reached
	if !res.keepMalformed[[2]string{"vast", cpTopic}] {
		t.Fatalf("keepMalformed %v, want the checkpoints topic", res.keepMalformed)
	}
	m.Publish(res)
	if n := testutil.CollectAndCount(m.malformed); n != 2 {
		t.Errorf("%d malformed series while vast is unreached, want 2 (checkpoints kept, offset-syncs read)", n)
	}
}
