package parity

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// t0 is the injected start of every test clock.
var t0 = time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)

// takeRound takes the snapshot the daemon takes of every cluster given,
// keeping failures, at now.
func takeRound(t testing.TB, cfg *mm2config.Config, now time.Time, ks ...*kafkatest.Cluster) Round {
	t.Helper()
	r := Round{Config: cfg, Snapshots: map[string]*cluster.Snapshot{}, Failures: map[string]error{}, Now: now}
	for _, k := range ks {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := k.Client.Snapshot(ctx, cluster.SnapshotOptions{Offsets: true, Configs: true})
		cancel()
		if err != nil {
			r.Failures[k.Alias] = err
			continue
		}
		r.Snapshots[k.Alias] = s
	}
	return r
}

// timers returns the RecordTimer of the watchdog over the clusters.
func timers(ks ...*kafkatest.Cluster) ClientTimer {
	ct := ClientTimer{Clients: map[string]*cluster.Client{}, Timeout: 5 * time.Second}
	for _, k := range ks {
		ct.Clients[k.Alias] = k.Client
	}
	return ct
}

// byRule returns the findings of a rule in a scope.
func byRule(res *Result, scope, rule string) []detectors.Finding {
	var out []detectors.Finding
	for _, f := range res.Findings[scope] {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// rules lists the rule ids of every finding of the round, sorted.
func rules(res *Result) []string {
	var out []string
	for _, f := range res.All() {
		out = append(out, f.Rule+" "+f.Topic)
	}
	slices.Sort(out)
	return out
}

// row returns the table row of a source topic of a flow.
func row(t testing.TB, res *Result, source, target, topic string) TopicRow {
	t.Helper()
	for _, fr := range res.Flows {
		if fr.Source != source || fr.Target != target {
			continue
		}
		for _, r := range fr.Rows {
			if r.SourceTopic == topic {
				return r
			}
		}
	}
	t.Fatalf("no row for %s in flow %s->%s: %+v", topic, source, target, res.Flows)
	return TopicRow{}
}

// rowTopics lists the source topics in the table of a flow.
func rowTopics(res *Result, source, target string) []string {
	var out []string
	for _, fr := range res.Flows {
		if fr.Source == source && fr.Target == target {
			for _, r := range fr.Rows {
				out = append(out, r.SourceTopic+"->"+r.TargetTopic)
			}
		}
	}
	return out
}

// value reads an integer value of a finding; ok is false when absent.
func value(f detectors.Finding, key string) (int64, bool) {
	switch v := f.Values[key].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// mapTimer is a RecordTimer over fixed timestamps that counts its calls.
type mapTimer struct {
	times map[string]time.Time // "alias/topic/partition/offset"
	calls int
}

func (m *mapTimer) RecordTime(_ context.Context, alias, topic string, partition int32, offset int64) (time.Time, error) {
	m.calls++
	k := fmt.Sprintf("%s/%s/%d/%d", alias, topic, partition, offset)
	ts, ok := m.times[k]
	if !ok {
		return time.Time{}, fmt.Errorf("no record at %s", k)
	}
	return ts, nil
}
