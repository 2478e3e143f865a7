package parity

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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

// t0 is the injected start of every test clock.
var t0 = time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)

// kafkaCluster is one kfake cluster with the watchdog's client on it and an
// admin client for the test's own changes.
type kafkaCluster struct {
	alias  string
	fake   *kfake.Cluster
	client *cluster.Client // the watchdog's client
	admin  *kadm.Client    // the test's admin client
	kgo    *kgo.Client
}

// newKafka starts a kfake cluster listening on 127.0.0.1 and closes it, and
// the clients on it, at the end of the test.
func newKafka(t testing.TB, alias string, opts ...kfake.Opt) *kafkaCluster {
	t.Helper()
	opts = append([]kfake.Opt{kfake.NumBrokers(1), kfake.ClusterID(alias)}, opts...)
	fake, err := kfake.NewCluster(opts...)
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

// bootstrap is the bootstrap.servers value of the cluster.
func (k *kafkaCluster) bootstrap() string { return strings.Join(k.fake.ListenAddrs(), ",") }

// produce writes n records to one partition, synchronously, with timestamps
// ts(i) when ts is not nil.
func (k *kafkaCluster) produce(t testing.TB, topic string, partition int32, n int, ts func(i int) time.Time) {
	t.Helper()
	if n == 0 {
		return
	}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(topic + "/" + strconv.Itoa(int(partition)) + "/" + strconv.Itoa(i))}
		if ts != nil {
			recs[i].Timestamp = ts(i)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := k.kgo.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s/%d on %s: %v", topic, partition, k.alias, err)
	}
}

// createTopic creates a topic with the given partitions and configs.
func (k *kafkaCluster) createTopic(t testing.TB, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := k.admin.CreateTopic(ctx, partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating %s on %s: %v", topic, k.alias, err)
	}
}

// deleteTopic deletes a topic.
func (k *kafkaCluster) deleteTopic(t testing.TB, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := k.admin.DeleteTopic(ctx, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("deleting %s on %s: %v", topic, k.alias, err)
	}
}

// addPartitions adds n partitions to a topic (CreatePartitions).
func (k *kafkaCluster) addPartitions(t testing.TB, topic string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := k.admin.CreatePartitions(ctx, n, topic)
	if err == nil {
		err = resp[topic].Err
	}
	if err != nil {
		t.Fatalf("adding %d partitions to %s on %s: %v", n, topic, k.alias, err)
	}
}

// snapshot takes the snapshot the daemon takes.
func (k *kafkaCluster) snapshot(t testing.TB) (*cluster.Snapshot, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return k.client.Snapshot(ctx, cluster.SnapshotOptions{Offsets: true, Configs: true})
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

// twoClusterConfig is the MM2 properties of flow kafka->vast over src and
// tgt, with extra lines appended.
func twoClusterConfig(src, tgt *kafkaCluster, extra ...string) string {
	lines := []string{
		"clusters = " + src.alias + ", " + tgt.alias,
		src.alias + ".bootstrap.servers = " + src.bootstrap(),
		tgt.alias + ".bootstrap.servers = " + tgt.bootstrap(),
		src.alias + "->" + tgt.alias + ".enabled = true",
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// takeRound snapshots every cluster given, keeping failures, at now.
func takeRound(t testing.TB, cfg *mm2config.Config, now time.Time, ks ...*kafkaCluster) Round {
	t.Helper()
	r := Round{Config: cfg, Snapshots: map[string]*cluster.Snapshot{}, Failures: map[string]error{}, Now: now}
	for _, k := range ks {
		s, err := k.snapshot(t)
		if err != nil {
			r.Failures[k.alias] = err
			continue
		}
		r.Snapshots[k.alias] = s
	}
	return r
}

// timers returns the RecordTimer of the watchdog over the clusters.
func timers(ks ...*kafkaCluster) ClientTimer {
	ct := ClientTimer{Clients: map[string]*cluster.Client{}, Timeout: 5 * time.Second}
	for _, k := range ks {
		ct.Clients[k.alias] = k.client
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
