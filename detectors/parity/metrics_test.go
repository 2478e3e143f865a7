package parity

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
)

var metricNames = []string{MetricTopicPartitions, MetricUnmirrored, MetricRecordsAtRisk, MetricTargetTopicMissing, MetricStalled, MetricClusterUp}

func expo(lines ...string) *strings.Reader {
	return strings.NewReader(strings.Join(lines, "\n") + "\n")
}

const (
	helpTopicPartitions = `# HELP mm2_watchdog_topic_partitions Partition count of a mirrored topic on a cluster (the source topics the flows replicate and their target topics).
# TYPE mm2_watchdog_topic_partitions gauge`
	helpUnmirrored = `# HELP mm2_watchdog_unmirrored_partitions Source partitions of a mirrored topic that have no partition on the target topic (topic is the source topic).
# TYPE mm2_watchdog_unmirrored_partitions gauge`
	helpAtRisk = `# HELP mm2_watchdog_records_at_risk Records (end minus start offsets) in source partitions that have no target partition, or in a source topic whose target topic is missing (topic is the source topic).
# TYPE mm2_watchdog_records_at_risk gauge`
	helpMissing = `# HELP mm2_watchdog_target_topic_missing 1 when a source topic the flow replicates has no target topic after the grace period, else 0 (topic is the source topic).
# TYPE mm2_watchdog_target_topic_missing gauge`
	helpStalled = `# HELP mm2_watchdog_stalled_partitions Mirrored partitions whose source end offset has been ahead for the stall window while the target end offset did not move (topic is the source topic).
# TYPE mm2_watchdog_stalled_partitions gauge`
	helpUp = `# HELP mm2_watchdog_cluster_up 1 when the last snapshot of the cluster succeeded, 0 when the cluster could not be reached.
# TYPE mm2_watchdog_cluster_up gauge`
)

// TestMetrics: values after a round against two kfake clusters, series
// deleted when a topic leaves the filter, series kept while the target is
// unreachable, and a lint-clean registry.
func TestMetrics(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(6, "orders"), kfake.SeedTopics(2, "payments"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(3, "kafka.orders"))
	src.Produce(t, "orders", 3, 2, nil)
	src.Produce(t, "orders", 4, 3, nil)
	src.Produce(t, "orders", 5, 4, nil)
	src.Produce(t, "payments", 0, 5, nil)
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	c := New(Options{MissingGrace: noGrace})
	ctx := context.Background()
	publish := func(cfgText string, at time.Time) {
		t.Helper()
		r := takeRound(t, kafkatest.ParseConfig(t, cfgText), at, src, tgt)
		m.Publish(r, c.Check(ctx, r, nil))
	}

	publish(kafkatest.PairConfig(src, tgt), t0)
	err := testutil.GatherAndCompare(reg, expo(
		helpUp,
		`mm2_watchdog_cluster_up{cluster="kafka"} 1`,
		`mm2_watchdog_cluster_up{cluster="vast"} 1`,
		helpAtRisk,
		`mm2_watchdog_records_at_risk{source="kafka",target="vast",topic="orders"} 9`,
		`mm2_watchdog_records_at_risk{source="kafka",target="vast",topic="payments"} 5`,
		helpStalled,
		`mm2_watchdog_stalled_partitions{source="kafka",target="vast",topic="orders"} 0`,
		`mm2_watchdog_stalled_partitions{source="kafka",target="vast",topic="payments"} 0`,
		helpMissing,
		`mm2_watchdog_target_topic_missing{source="kafka",target="vast",topic="orders"} 0`,
		`mm2_watchdog_target_topic_missing{source="kafka",target="vast",topic="payments"} 1`,
		helpTopicPartitions,
		`mm2_watchdog_topic_partitions{cluster="kafka",topic="orders"} 6`,
		`mm2_watchdog_topic_partitions{cluster="kafka",topic="payments"} 2`,
		`mm2_watchdog_topic_partitions{cluster="vast",topic="kafka.orders"} 3`,
		helpUnmirrored,
		`mm2_watchdog_unmirrored_partitions{source="kafka",target="vast",topic="orders"} 3`,
		`mm2_watchdog_unmirrored_partitions{source="kafka",target="vast",topic="payments"} 0`,
	), metricNames...)
	if err != nil {
		t.Fatalf("first round: %v", err)
	}

	// payments leaves the filter: its series go.
	onlyOrders := kafkatest.PairConfig(src, tgt, "kafka->vast.topics = orders")
	publish(onlyOrders, t0.Add(time.Minute))
	afterFilter := []string{
		helpUp,
		`mm2_watchdog_cluster_up{cluster="kafka"} 1`,
		`mm2_watchdog_cluster_up{cluster="vast"} %s`,
		helpAtRisk,
		`mm2_watchdog_records_at_risk{source="kafka",target="vast",topic="orders"} 9`,
		helpStalled,
		`mm2_watchdog_stalled_partitions{source="kafka",target="vast",topic="orders"} 0`,
		helpMissing,
		`mm2_watchdog_target_topic_missing{source="kafka",target="vast",topic="orders"} 0`,
		helpTopicPartitions,
		`mm2_watchdog_topic_partitions{cluster="kafka",topic="orders"} 6`,
		`mm2_watchdog_topic_partitions{cluster="vast",topic="kafka.orders"} 3`,
		helpUnmirrored,
		`mm2_watchdog_unmirrored_partitions{source="kafka",target="vast",topic="orders"} 3`,
	}
	want := func(up string) *strings.Reader {
		lines := append([]string(nil), afterFilter...)
		lines[2] = strings.Replace(lines[2], "%s", up, 1)
		return expo(lines...)
	}
	if err := testutil.GatherAndCompare(reg, want("1"), metricNames...); err != nil {
		t.Errorf("after payments left the filter: %v", err)
	}

	// The target goes away: the flow's series stay, cluster_up says why.
	tgt.Fake.Close()
	publish(onlyOrders, t0.Add(2*time.Minute))
	if err := testutil.GatherAndCompare(reg, want("0"), metricNames...); err != nil {
		t.Errorf("with the target unreachable: %v", err)
	}

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
