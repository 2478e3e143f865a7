package parity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
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

// TestMetricsTopicCap: with a cap of 4 topics per flow, the three topics
// with a problem get series first, then the first healthy one by name; the
// other two are counted as dropped. When the problems clear, the series
// follow the name order and the series of topics that fell out of the cap
// are deleted. With no cap every topic gets series.
func TestMetricsTopicCap(t *testing.T) {
	cfg := &mm2config.Config{Clusters: []string{"kafka", "vast"}}
	row := func(name string) TopicRow {
		return TopicRow{SourceTopic: name, TargetTopic: "kafka." + name, SourcePartitions: 2, TargetPartitions: 2, Status: StatusOK}
	}
	rows := func(problems bool) []TopicRow {
		var out []TopicRow
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			out = append(out, row(n))
		}
		if problems {
			out[3].Stalled, out[3].Status = []int32{0}, StatusStalled
			out[4].Missing, out[4].Status, out[4].TargetPartitions = []int32{1}, StatusUnmirrored, 1
			out[5].Status, out[5].TargetPartitions = StatusMissing, 0
		}
		return out
	}
	result := func(rs []TopicRow) *Result {
		return &Result{Flows: []FlowReport{{Source: "kafka", Target: "vast", Rows: rs}}}
	}
	// topicsOf lists the topic labels of metric name in reg, sorted.
	topicsOf := func(reg prometheus.Gatherer, name string) []string {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "topic" {
						out = append(out, l.GetValue())
					}
				}
			}
		}
		slices.Sort(out)
		return out
	}
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, WithMaxTopicSeries(4))
	r := Round{Config: cfg, Now: t0}

	m.Publish(r, result(rows(true)))
	want := []string{"a", "d", "e", "f"}
	for _, name := range []string{MetricUnmirrored, MetricStalled, MetricTargetTopicMissing} {
		if got := topicsOf(reg, name); !slices.Equal(got, want) {
			t.Errorf("%s series for %v, want %v (problem topics first)", name, got, want)
		}
	}
	// Source and target topic partition counts of the published topics
	// (f has no target topic).
	if got := topicsOf(reg, MetricTopicPartitions); !slices.Equal(got, []string{"a", "d", "e", "f", "kafka.a", "kafka.d", "kafka.e"}) {
		t.Errorf("topic_partitions series for %v", got)
	}
	err := testutil.GatherAndCompare(reg, expo(
		`# HELP mm2_watchdog_topic_series_dropped Source topics of flow source->target left without per-topic series because of the topic series limit (topics with a problem are published first).`,
		`# TYPE mm2_watchdog_topic_series_dropped gauge`,
		`mm2_watchdog_topic_series_dropped{source="kafka",target="vast"} 2`,
	), MetricTopicSeriesDropped)
	if err != nil {
		t.Error(err)
	}

	// The problems clear: a..d by name; e and f fall out and lose their series.
	m.Publish(r, result(rows(false)))
	want = []string{"a", "b", "c", "d"}
	for _, name := range []string{MetricUnmirrored, MetricStalled, MetricTargetTopicMissing, MetricRecordsAtRisk} {
		if got := topicsOf(reg, name); !slices.Equal(got, want) {
			t.Errorf("after the problems cleared, %s series for %v, want %v", name, got, want)
		}
	}
	if got := testutil.CollectAndCount(m.topicPartitions); got != 8 {
		t.Errorf("%d topic_partitions series, want 8 (a..d on both sides)", got)
	}
	if got := testutil.ToFloat64(m.dropped.WithLabelValues("kafka", "vast")); got != 2 {
		t.Errorf("dropped %v, want 2", got)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}

	// The flow leaves the configuration: its dropped count goes too.
	m.Publish(r, &Result{})
	if n := testutil.CollectAndCount(m.dropped) + testutil.CollectAndCount(m.unmirrored); n != 0 {
		t.Errorf("%d series left after the flow went", n)
	}

	// No cap: every topic, nothing dropped.
	allReg := prometheus.NewPedanticRegistry()
	all := NewMetrics(allReg, WithMaxTopicSeries(0))
	all.Publish(r, result(rows(true)))
	if got := topicsOf(allReg, MetricUnmirrored); len(got) != 6 {
		t.Errorf("uncapped series for %v, want all 6", got)
	}
	if got := testutil.ToFloat64(all.dropped.WithLabelValues("kafka", "vast")); got != 0 {
		t.Errorf("uncapped dropped %v, want 0", got)
	}
}
