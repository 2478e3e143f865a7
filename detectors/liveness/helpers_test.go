package liveness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// t0 is the injected time of every test round.
var t0 = time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)

// heartbeat is a heartbeat record in MM2's layout, record timestamp = ts.
func heartbeat(topic, source, target string, ts time.Time) *kgo.Record {
	key, value := mm2config.Heartbeat{Source: source, Target: target, Timestamp: ts}.Encode()
	return &kgo.Record{Topic: topic, Partition: 0, Key: key, Value: value, Timestamp: ts}
}

// checkpoint is a checkpoint record in MM2's layout.
func checkpoint(topic, group, targetTopic string, partition int32, upstream, downstream int64, ts time.Time) *kgo.Record {
	key, value := mm2config.Checkpoint{Group: group, Topic: targetTopic, Partition: partition,
		UpstreamOffset: upstream, Offset: downstream}.Encode()
	return &kgo.Record{Topic: topic, Partition: 0, Key: key, Value: value, Timestamp: ts}
}

// offsetSync is an offset-sync record in MM2's layout.
func offsetSync(topic, sourceTopic string, partition int32, upstream, downstream int64) *kgo.Record {
	key, value := mm2config.OffsetSync{Topic: sourceTopic, Partition: partition, UpstreamOffset: upstream, Offset: downstream}.Encode()
	return &kgo.Record{Topic: topic, Partition: 0, Key: key, Value: value}
}

// round snapshots the clusters and returns the Round at now.
func round(t testing.TB, cfg *mm2config.Config, now time.Time, ks ...*kafkatest.Cluster) Round {
	t.Helper()
	r := Round{Config: cfg, Snapshots: map[string]*cluster.Snapshot{}, Readers: map[string]Reader{}, Now: now}
	for _, k := range ks {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := k.Client.Snapshot(ctx, cluster.SnapshotOptions{Offsets: true})
		cancel()
		if err != nil {
			t.Fatalf("snapshot of %s: %v", k.Alias, err)
		}
		r.Snapshots[k.Alias] = s
		r.Readers[k.Alias] = k.Client
	}
	return r
}

// check runs one round of c.
func check(t testing.TB, c *Checker, cfg *mm2config.Config, now time.Time, ks ...*kafkatest.Cluster) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Check(ctx, round(t, cfg, now, ks...))
}

// findings lists "rule source->target topic group" of every finding, sorted.
func findings(res *Result) []string {
	var out []string
	for _, f := range res.All() {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s->%s %s %s", f.Rule, f.Source, f.Target, f.Topic, f.Group)))
	}
	return out
}

// heartbeatRow returns the row of herder (or flow, when replicated).
func heartbeatRow(t testing.TB, res *Result, source, target string, replicated bool) HeartbeatRow {
	t.Helper()
	for _, r := range res.Heartbeats {
		if r.Source == source && r.Target == target && r.Replicated == replicated {
			return r
		}
	}
	t.Fatalf("no heartbeat row %s->%s replicated=%t in %+v", source, target, replicated, res.Heartbeats)
	return HeartbeatRow{}
}

// byRule returns the findings of one rule.
func byRule(res *Result, rule string) []detectors.Finding {
	var out []detectors.Finding
	for _, f := range res.All() {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}
