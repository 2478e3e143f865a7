// Package kafkatest starts in-process Kafka clusters (kfake) listening on
// 127.0.0.1 for tests, with the watchdog's own cluster client on each and a
// plain franz-go client for the test's writes and admin changes.
//
// It is for _test.go files only: every helper takes a testing.TB, fails the
// test on error and closes what it started with t.Cleanup. It does not model
// a real broker's limits beyond what kfake implements, and it reads no files
// and no environment.
package kafkatest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// opTimeout bounds each produce and admin request a helper makes.
const opTimeout = 15 * time.Second

// Cluster is one kfake cluster with the watchdog's client on it and a client
// for the test's own writes and admin changes.
type Cluster struct {
	// Alias is the MM2 cluster alias; it is also the kfake cluster id.
	Alias string
	// Fake is the in-process cluster; closing it makes it unreachable.
	Fake *kfake.Cluster
	// Client is the watchdog's client, as the daemon builds it (request
	// timeout 2s, API timeout 5s, dial timeout 1s).
	Client *cluster.Client
	// Admin is the test's admin client, over Kgo.
	Admin *kadm.Client
	// Kgo is the test's producer, with the manual partitioner: a record goes
	// to the partition it names.
	Kgo *kgo.Client
}

// New starts a one-broker kfake cluster with cluster id alias on 127.0.0.1
// (opts are appended, so they may add seed topics or limit ApiVersions) and
// closes it, and the clients on it, at the end of the test.
func New(t testing.TB, alias string, opts ...kfake.Opt) *Cluster {
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
		t.Fatalf("client for %s: %v", alias, err)
	}
	t.Cleanup(cl.Close)
	kc, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatalf("test client for %s: %v", alias, err)
	}
	t.Cleanup(kc.Close)
	return &Cluster{Alias: alias, Fake: fake, Client: cl, Admin: kadm.NewClient(kc), Kgo: kc}
}

// Bootstrap is the bootstrap.servers value of the cluster: host:port
// pairs joined by commas.
func (c *Cluster) Bootstrap() string { return strings.Join(c.Fake.ListenAddrs(), ",") }

// Produce writes n records to one partition of topic, synchronously, with
// value "topic/partition/i" and, when ts is not nil, timestamp ts(i). n = 0
// writes nothing.
func (c *Cluster) Produce(t testing.TB, topic string, partition int32, n int, ts func(i int) time.Time) {
	t.Helper()
	if n == 0 {
		return
	}
	recs := make([]*kgo.Record, n)
	prefix := topic + "/" + strconv.Itoa(int(partition)) + "/"
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(prefix + strconv.Itoa(i))}
		if ts != nil {
			recs[i].Timestamp = ts(i)
		}
	}
	c.Write(t, recs...)
}

// Write produces records synchronously, each to the partition it names.
func (c *Cluster) Write(t testing.TB, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := c.Kgo.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", c.Alias, err)
	}
}

// CreateTopic creates a topic with replication factor 1, the given
// partitions and topic configs (nil for the broker defaults).
func (c *Cluster) CreateTopic(t testing.TB, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	resp, err := c.Admin.CreateTopic(ctx, partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating %s on %s: %v", topic, c.Alias, err)
	}
}

// DeleteTopic deletes a topic.
func (c *Cluster) DeleteTopic(t testing.TB, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	resp, err := c.Admin.DeleteTopic(ctx, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("deleting %s on %s: %v", topic, c.Alias, err)
	}
}

// AddPartitions adds n partitions to a topic (CreatePartitions).
func (c *Cluster) AddPartitions(t testing.TB, topic string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	resp, err := c.Admin.CreatePartitions(ctx, n, topic)
	if err == nil {
		err = resp[topic].Err
	}
	if err != nil {
		t.Fatalf("adding %d partitions to %s on %s: %v", n, topic, c.Alias, err)
	}
}

// Commit commits offsets (partition -> next offset to consume) of topic for
// a consumer group, outside any generation, as kafka-consumer-groups.sh
// --reset-offsets does.
func (c *Cluster) Commit(t testing.TB, group, topic string, offsets map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	resp, err := c.Admin.CommitOffsets(ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s on %s: %v", group, c.Alias, err)
	}
}

// ParseConfig parses MM2 properties text as file "mm2.properties", with no
// environment variables and no readable files for ${env:} and ${file:}
// placeholders.
func ParseConfig(t testing.TB, text string) *mm2config.Config {
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

// PairConfig is the MM2 properties text of clusters src and tgt with flow
// src->tgt enabled (the reverse flow left to MM2's default: disabled, its
// herder emitting heartbeats only), followed by the extra lines.
func PairConfig(src, tgt *Cluster, extra ...string) string {
	lines := []string{
		"clusters = " + src.Alias + ", " + tgt.Alias,
		src.Alias + ".bootstrap.servers = " + src.Bootstrap(),
		tgt.Alias + ".bootstrap.servers = " + tgt.Bootstrap(),
		src.Alias + "->" + tgt.Alias + ".enabled = true",
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}
