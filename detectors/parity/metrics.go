package parity

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of this package (CONTRACT.md, "Metrics").
const (
	MetricTopicPartitions    = "mm2_watchdog_topic_partitions"
	MetricUnmirrored         = "mm2_watchdog_unmirrored_partitions"
	MetricRecordsAtRisk      = "mm2_watchdog_records_at_risk"
	MetricTargetTopicMissing = "mm2_watchdog_target_topic_missing"
	MetricStalled            = "mm2_watchdog_stalled_partitions"
	MetricClusterUp          = "mm2_watchdog_cluster_up"
	MetricTopicSeriesDropped = "mm2_watchdog_topic_series_dropped"
)

// DefaultMaxTopicSeries is the number of source topics per flow that get
// per-topic series unless WithMaxTopicSeries says otherwise: with topics=.*
// on 20,000 topics and two flows the per-topic gauges would otherwise make
// about 200,000 series.
const DefaultMaxTopicSeries = 2000

// MetricsOption configures NewMetrics.
type MetricsOption func(*Metrics)

// WithMaxTopicSeries caps the source topics per flow that get per-topic
// series (mm2_watchdog_topic_partitions of the source and target topic, and
// the four flow gauges); n <= 0 means no cap. Topics with a problem
// (unmirrored partitions, target topic missing, stalled partitions) get
// series first, then the others by name; the rest are counted in
// mm2_watchdog_topic_series_dropped.
func WithMaxTopicSeries(n int) MetricsOption {
	return func(m *Metrics) { m.maxTopics = max(0, n) }
}

// Metrics are the per-topic parity gauges of CONTRACT.md, set from each
// Result by Publish. The flow gauges (source, target, topic) name the
// source topic; mm2_watchdog_topic_partitions names each topic on its own
// cluster.
//
// Series of a topic are deleted when it leaves the flow's filter, the source
// cluster or the configuration. Unknown is never zero: a flow that could not
// be checked, and a topic whose metadata failed, keep their last values
// (mm2_watchdog_cluster_up says which cluster is down), and
// mm2_watchdog_records_at_risk is absent while an offset is unknown.
//
// Per-topic series exist for at most the cap of WithMaxTopicSeries source
// topics per flow (default DefaultMaxTopicSeries): topics with a problem
// first, then by name. A topic that falls out of the cap loses its series;
// mm2_watchdog_topic_series_dropped counts the topics left out.
// Metrics is not safe for concurrent use of Publish.
type Metrics struct {
	maxTopics int // 0: no cap

	topicPartitions *prometheus.GaugeVec // cluster, topic
	unmirrored      *prometheus.GaugeVec // source, target, topic
	atRisk          *prometheus.GaugeVec // source, target, topic
	targetMissing   *prometheus.GaugeVec // source, target, topic
	stalled         *prometheus.GaugeVec // source, target, topic
	clusterUp       *prometheus.GaugeVec // cluster
	dropped         *prometheus.GaugeVec // source, target

	// The label sets published last round, to delete the ones that
	// disappear.
	pubTopic   map[[2]string]bool
	pubFlow    map[[3]string]bool
	pubDropped map[[2]string]bool
}

// NewMetrics registers the parity gauges on reg. It panics, as
// prometheus.MustRegister does, when a metric of the same name is already
// registered.
func NewMetrics(reg prometheus.Registerer, opts ...MetricsOption) *Metrics {
	m := &Metrics{
		maxTopics: DefaultMaxTopicSeries,
		topicPartitions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricTopicPartitions,
			Help: "Partition count of a mirrored topic on a cluster (the source topics the flows replicate and their target topics).",
		}, []string{"cluster", "topic"}),
		unmirrored: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricUnmirrored,
			Help: "Source partitions of a mirrored topic that have no partition on the target topic (topic is the source topic).",
		}, []string{"source", "target", "topic"}),
		atRisk: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricRecordsAtRisk,
			Help: "Records (end minus start offsets) in source partitions that have no target partition, or in a source topic whose target topic is missing (topic is the source topic).",
		}, []string{"source", "target", "topic"}),
		targetMissing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricTargetTopicMissing,
			Help: "1 when a source topic the flow replicates has no target topic after the grace period, else 0 (topic is the source topic).",
		}, []string{"source", "target", "topic"}),
		stalled: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricStalled,
			Help: "Mirrored partitions whose source end offset has been ahead for the stall window while the target end offset did not move (topic is the source topic).",
		}, []string{"source", "target", "topic"}),
		clusterUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricClusterUp,
			Help: "1 when the last snapshot of the cluster succeeded, 0 when the cluster could not be reached.",
		}, []string{"cluster"}),
		dropped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricTopicSeriesDropped,
			Help: "Source topics of flow source->target left without per-topic series because of the topic series limit (topics with a problem are published first).",
		}, []string{"source", "target"}),
		pubTopic:   map[[2]string]bool{},
		pubFlow:    map[[3]string]bool{},
		pubDropped: map[[2]string]bool{},
	}
	for _, o := range opts {
		o(m)
	}
	reg.MustRegister(m.topicPartitions, m.unmirrored, m.atRisk, m.targetMissing, m.stalled, m.clusterUp, m.dropped)
	return m
}

// hasProblem reports whether a row shows a problem whose series must not
// be capped away: unmirrored partitions, a missing target topic, or
// stalled partitions.
func hasProblem(row *TopicRow) bool {
	return len(row.Missing) > 0 || row.Status == StatusMissing || len(row.Stalled) > 0
}

// capped returns the indexes of the rows that get series, in row (name)
// order: the problem rows first, then the others by name, at most limit
// of them (all when limit is 0).
func capped(rows []TopicRow, limit int) []int {
	idx := make([]int, 0, min(len(rows), max(limit, 0)))
	if limit == 0 || len(rows) <= limit {
		for i := range rows {
			idx = append(idx, i)
		}
		return idx
	}
	for i := range rows {
		if len(idx) < limit && hasProblem(&rows[i]) {
			idx = append(idx, i)
		}
	}
	for i := range rows {
		if len(idx) < limit && !hasProblem(&rows[i]) {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	return idx
}

// Publish sets the gauges from a round and its result, and deletes the series
// of topics that are no longer mirrored.
func (m *Metrics) Publish(r Round, res *Result) {
	for _, alias := range r.Config.Clusters {
		if r.Snapshots[alias] != nil {
			m.clusterUp.WithLabelValues(alias).Set(1)
		} else if _, failed := r.Failures[alias]; failed {
			m.clusterUp.WithLabelValues(alias).Set(0)
		}
	}
	topics := make(map[[2]string]bool, len(m.pubTopic))
	flows := make(map[[3]string]bool, len(m.pubFlow))
	dropped := make(map[[2]string]bool, len(m.pubDropped))
	keep := func(tk [2]string) {
		if m.pubTopic[tk] {
			topics[tk] = true
		}
	}
	for _, fr := range res.Flows {
		if fr.Unknown != "" {
			for k := range m.pubFlow {
				if k[0] == fr.Source && k[1] == fr.Target {
					flows[k] = true
				}
			}
			for k := range m.pubTopic {
				if k[0] == fr.Source || k[0] == fr.Target {
					topics[k] = true
				}
			}
			if dk := [2]string{fr.Source, fr.Target}; m.pubDropped[dk] {
				dropped[dk] = true
			}
			continue
		}
		published := capped(fr.Rows, m.maxTopics)
		dk := [2]string{fr.Source, fr.Target}
		dropped[dk] = true
		m.dropped.WithLabelValues(dk[:]...).Set(float64(len(fr.Rows) - len(published)))
		for _, i := range published {
			row := &fr.Rows[i]
			sk := [2]string{fr.Source, row.SourceTopic}
			tk := [2]string{fr.Target, row.TargetTopic}
			fk := [3]string{fr.Source, fr.Target, row.SourceTopic}
			if row.SourcePartitions >= 0 {
				topics[sk] = true
				m.topicPartitions.WithLabelValues(sk[0], sk[1]).Set(float64(row.SourcePartitions))
			} else {
				keep(sk)
			}
			if row.TargetPartitions > 0 {
				topics[tk] = true
				m.topicPartitions.WithLabelValues(tk[0], tk[1]).Set(float64(row.TargetPartitions))
			} else if row.TargetPartitions < 0 {
				keep(tk)
			}
			if row.Status == StatusUnknown {
				if m.pubFlow[fk] {
					flows[fk] = true
				}
				continue
			}
			flows[fk] = true
			m.unmirrored.WithLabelValues(fk[:]...).Set(float64(len(row.Missing)))
			if row.RecordsAtRisk >= 0 {
				m.atRisk.WithLabelValues(fk[:]...).Set(float64(row.RecordsAtRisk))
			} else {
				m.atRisk.DeleteLabelValues(fk[:]...)
			}
			missing := 0.0
			if row.Status == StatusMissing {
				missing = 1
			}
			m.targetMissing.WithLabelValues(fk[:]...).Set(missing)
			m.stalled.WithLabelValues(fk[:]...).Set(float64(len(row.Stalled)))
		}
	}
	for k := range m.pubTopic {
		if !topics[k] {
			m.topicPartitions.DeleteLabelValues(k[0], k[1])
		}
	}
	for k := range m.pubFlow {
		if !flows[k] {
			for _, v := range []*prometheus.GaugeVec{m.unmirrored, m.atRisk, m.targetMissing, m.stalled} {
				v.DeleteLabelValues(k[:]...)
			}
		}
	}
	for k := range m.pubDropped {
		if !dropped[k] {
			m.dropped.DeleteLabelValues(k[:]...)
		}
	}
	m.pubTopic, m.pubFlow, m.pubDropped = topics, flows, dropped
}
