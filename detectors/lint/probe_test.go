package lint

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// limitedVersions are the ApiVersions of a broker without CreatePartitions,
// IncrementalAlterConfigs, InitProducerId and DescribeAcls.
func limitedVersions() *kversion.Versions {
	v := kversion.Stable()
	for _, k := range []kmsg.Key{kmsg.CreatePartitions, kmsg.IncrementalAlterConfigs, kmsg.InitProducerID, kmsg.DescribeACLs} {
		v.SetMaxKeyVersion(int16(k), -1)
	}
	return v
}

// probePair starts a full Kafka ("kafka") and a limited broker ("vast")
// over TCP: on kafka, orders has 6 partitions and clicks 3 with an explicit
// retention.bytes; on vast, orders exists with 3 partitions and clicks is
// missing.
func probePair(t *testing.T) (kafka, vast *kafkatest.Cluster) {
	t.Helper()
	kafka = kafkatest.New(t, "kafka", kfake.SeedTopics(6, "orders"))
	if err := kafka.Fake.CreateTopic("clicks", 3, map[string]string{"retention.bytes": "1048576"}); err != nil {
		t.Fatal(err)
	}
	vast = kafkatest.New(t, "vast", kfake.MaxVersions(limitedVersions()), kfake.SeedTopics(3, "orders"))
	return kafka, vast
}

// snapshot takes the snapshot --probe takes: topic configs named by names
// (all when nil).
func snapshot(t *testing.T, c *kafkatest.Cluster, names []string) *cluster.Snapshot {
	t.Helper()
	s, err := c.Client.Snapshot(context.Background(), cluster.SnapshotOptions{Configs: true, ConfigNames: names})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func probeConfig(t *testing.T, kafka, vast *kafkatest.Cluster, extra string) *mm2config.Config {
	t.Helper()
	data := fmt.Sprintf(`clusters = kafka, vast
kafka.bootstrap.servers = %s
vast.bootstrap.servers = %s
kafka->vast.enabled = true
kafka->vast.topics = orders, clicks
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
sync.topic.acls.enabled = false
sync.topic.configs.enabled = false
%s`, kafka.Bootstrap(), vast.Bootstrap(), extra)
	cfg, fs := Parse("mm2.properties", []byte(data), mm2config.Options{LookupEnv: noEnv})
	if cfg == nil {
		t.Fatalf("parse:%s", describe(fs))
	}
	return cfg
}

func TestLimitsFromSnapshot(t *testing.T) {
	kafka, vast := probePair(t)
	full, ok := LimitsFromSnapshot(snapshot(t, kafka, nil))
	if !ok || full.Limited() {
		t.Errorf("kafka: got %+v ok=%v, want full", full, ok)
	}
	lim, ok := LimitsFromSnapshot(snapshot(t, vast, nil))
	if !ok || lim != LimitedBroker(lim.Basis) {
		t.Errorf("vast: got %+v ok=%v, want every limit", lim, ok)
	}
	if !strings.Contains(lim.Basis, "CreatePartitions, IncrementalAlterConfigs, InitProducerId, DescribeAcls") {
		t.Errorf("basis %q does not name the missing keys", lim.Basis)
	}
}

func TestProbePrecreate(t *testing.T) {
	kafka, vast := probePair(t)
	// The file pins nothing, but the probe decides: vast is limited and
	// kafka is not (the strict profile would agree here).
	cfg := probeConfig(t, kafka, vast, "vast.producer.enable.idempotence = false\nvast.producer.compression.type = none\n")
	opts := Options{}
	names := ProbeConfigNames(opts)
	opts.Snapshots = map[string]*cluster.Snapshot{"kafka": snapshot(t, kafka, names), "vast": snapshot(t, vast, names)}
	fs := atLeastWarning(Check(cfg, opts))
	if len(fs) != 2 {
		t.Fatalf("want 2 lint-precreate findings, got:%s", describe(fs))
	}
	byTopic := map[string]detectors.Finding{}
	for _, f := range fs {
		if f.Rule != RulePrecreate || f.Severity != detectors.Critical || f.Source != "kafka" || f.Target != "vast" {
			t.Errorf("unexpected:%s", describe([]detectors.Finding{f}))
		}
		byTopic[f.Topic] = f
	}
	orders := byTopic["orders"]
	if !slices.Equal(orders.Partitions, []int32{3, 4, 5}) || orders.Values["source_partitions"] != 6 || orders.Values["target_partitions"] != 3 {
		t.Errorf("orders:%s partitions=%v", describe([]detectors.Finding{orders}), orders.Partitions)
	}
	clicks := byTopic["clicks"]
	if clicks.Values["source_partitions"] != 3 || !slices.Equal(clicks.Values["rejected_configs"].([]string), []string{"retention.bytes=1048576"}) {
		t.Errorf("clicks:%s", describe([]detectors.Finding{clicks}))
	}

	// Excluding retention.bytes from config sync removes it from the finding.
	cfg = probeConfig(t, kafka, vast, "vast.producer.enable.idempotence = false\nvast.producer.compression.type = none\nconfig.properties.exclude = retention\\\\.bytes\n")
	fs = atLeastWarning(Check(cfg, opts))
	i := slices.IndexFunc(fs, func(f detectors.Finding) bool { return f.Topic == "clicks" })
	if i < 0 || fs[i].Values["rejected_configs"] != nil {
		t.Errorf("excluded config still reported:%s", describe(fs))
	}
}

func TestProbeDecidesLimits(t *testing.T) {
	kafka, vast := probePair(t)
	// Flows both ways; the strict profile would call kafka limited too, the
	// probe says it is not.
	cfg := probeConfig(t, kafka, vast, "vast->kafka.enabled = true\nvast->kafka.topics = returns\noffset-syncs.topic.location = target\n")
	opts := Options{Snapshots: map[string]*cluster.Snapshot{"kafka": snapshot(t, kafka, nil), "vast": snapshot(t, vast, nil)}}
	fs := atLeastWarning(Check(cfg, opts))
	for _, f := range fs {
		if f.Target == "kafka" && f.Rule != RulePrecreate {
			t.Errorf("kafka treated as limited:%s", describe([]detectors.Finding{f}))
		}
	}
	for _, rule := range []string{RuleIdempotence, RuleCompression} {
		if !slices.ContainsFunc(fs, func(f detectors.Finding) bool { return f.Rule == rule && f.Target == "vast" }) {
			t.Errorf("no %s for vast:%s", rule, describe(fs))
		}
	}
	// An explicit flag beats the probe.
	opts.Limits = map[string]Limits{"vast": FullKafka("--kafka")}
	if fs := atLeastWarning(Check(cfg, opts)); len(fs) != 0 {
		t.Errorf("--kafka vast: want nothing, got:%s", describe(fs))
	}
}
