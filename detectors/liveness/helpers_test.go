package liveness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// t0 is the injected time of every test round.
var t0 = time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)

// kafkaCluster is one kfake cluster with the watchdog's client on it and a
// client for the test's own writes.
type kafkaCluster struct {
	alias  string
	fake   *kfake.Cluster
	client *cluster.Client
	admin  *kadm.Client
	kgo    *kgo.Client
}

// newKafka starts a kfake cluster on 127.0.0.1, closed at the end of the
// test.
func newKafka(t testing.TB, alias string, opts ...kfake.Opt) *kafkaCluster {
	t.Helper()
	fake, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.ClusterID(alias)}, opts...)...)
	if err != nil {
		t.Fatalf("starting kfake cluster %s: %v", alias, err)
	}
	t.Cleanup(fake.Close)
	cl, err := cluster.New(cluster.Config{Alias: alias, Seeds: fake.ListenAddrs(),
		RequestTimeout: 2 * time.Second, APITimeout: 5 * time.Second, DialTimeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	kc, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	return &kafkaCluster{alias: alias, fake: fake, client: cl, admin: kadm.NewClient(kc), kgo: kc}
}

func (k *kafkaCluster) bootstrap() string { return strings.Join(k.fake.ListenAddrs(), ",") }

// createTopic creates a topic with the given partitions.
func (k *kafkaCluster) createTopic(t testing.TB, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := k.admin.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating %s on %s: %v", topic, k.alias, err)
	}
}

// write produces raw records synchronously.
func (k *kafkaCluster) write(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := k.kgo.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", k.alias, err)
	}
}

// fill writes n plain records to one partition.
func (k *kafkaCluster) fill(t testing.TB, topic string, partition int32, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v")}
	}
	if n > 0 {
		k.write(t, recs...)
	}
}

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

// commit commits offsets for a group (outside any generation, as an admin
// tool does).
func (k *kafkaCluster) commit(t testing.TB, group, topic string, offsets map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	resp, err := k.admin.CommitOffsets(ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s on %s: %v", group, k.alias, err)
	}
}

// parseConfig parses MM2 properties text.
func parseConfig(t testing.TB, text string) *mm2config.Config {
	t.Helper()
	cfg, err := mm2config.Parse("mm2.properties", []byte(text), mm2config.Options{
		LookupEnv: func(string) (string, bool) { return "", false },
		ReadFile:  func(string) ([]byte, error) { return nil, fmt.Errorf("no files in tests") },
	})
	if err != nil {
		t.Fatalf("parsing MM2 properties: %v\n%s", err, text)
	}
	return cfg
}

// pairConfig is flow src->tgt (enabled), with the reverse herder left to
// MM2's default (heartbeat-only), plus extra lines.
func pairConfig(src, tgt *kafkaCluster, extra ...string) string {
	lines := []string{
		"clusters = " + src.alias + ", " + tgt.alias,
		src.alias + ".bootstrap.servers = " + src.bootstrap(),
		tgt.alias + ".bootstrap.servers = " + tgt.bootstrap(),
		src.alias + "->" + tgt.alias + ".enabled = true",
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// round snapshots the clusters and returns the Round at now.
func round(t testing.TB, cfg *mm2config.Config, now time.Time, ks ...*kafkaCluster) Round {
	t.Helper()
	r := Round{Config: cfg, Snapshots: map[string]*cluster.Snapshot{}, Readers: map[string]Reader{}, Now: now}
	for _, k := range ks {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := k.client.Snapshot(ctx, cluster.SnapshotOptions{Offsets: true})
		cancel()
		if err != nil {
			t.Fatalf("snapshot of %s: %v", k.alias, err)
		}
		r.Snapshots[k.alias] = s
		r.Readers[k.alias] = k.client
	}
	return r
}

// check runs one round of c.
func check(t testing.TB, c *Checker, cfg *mm2config.Config, now time.Time, ks ...*kafkaCluster) *Result {
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
