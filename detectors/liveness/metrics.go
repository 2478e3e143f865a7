package liveness

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of this package.
const (
	MetricHeartbeatAge           = "mm2_watchdog_heartbeat_age_seconds"
	MetricReplicatedHeartbeatAge = "mm2_watchdog_replicated_heartbeat_age_seconds"
	MetricMalformedRecords       = "mm2_watchdog_malformed_records"
	MetricGroupCheckpointAge     = "mm2_watchdog_group_checkpoint_age_seconds"
	MetricGroupReread            = "mm2_watchdog_group_reread_records"
	MetricGroupCutoverReady      = "mm2_watchdog_group_cutover_ready"
	MetricGroupSeriesDropped     = "mm2_watchdog_group_series_dropped"
	MetricOffsetSyncLag          = "mm2_watchdog_offset_sync_lag_records"
)

// DefaultMaxGroups caps the consumer groups per flow that get per-group
// series.
const DefaultMaxGroups = 100

// Metrics are the gauges of the liveness checks, set from each Result by
// Publish. Per-group series exist for at most maxGroups groups per flow (the
// first by name); the rest are counted in mm2_watchdog_group_series_dropped.
//
// Unknown is never zero: a herder or flow that could not be read keeps its
// last values, and a series whose subject is gone (a herder without
// heartbeats, a group without commits or checkpoints, a topic no longer
// mirrored, an internal topic no longer watched) is deleted. Metrics is not safe for concurrent use of Publish.
type Metrics struct {
	maxGroups int

	hbAge      *prometheus.GaugeVec // source, target
	replAge    *prometheus.GaugeVec // source, target
	malformed  *prometheus.GaugeVec // cluster, topic
	cpAge      *prometheus.GaugeVec // source, target, group
	reread     *prometheus.GaugeVec // source, target, group
	ready      *prometheus.GaugeVec // source, target, group
	dropped    *prometheus.GaugeVec // source, target
	syncLag    *prometheus.GaugeVec // source, target, topic
	pubHB      map[[2]string]bool
	pubRepl    map[[2]string]bool
	pubMal     map[[2]string]bool
	pubGroups  map[[3]string]bool
	pubDropped map[[2]string]bool
	pubLag     map[[3]string]bool
}

// NewMetrics registers the gauges on reg. maxGroups <= 0 means
// DefaultMaxGroups. It panics, as prometheus.MustRegister does, when a
// metric of the same name is already registered.
func NewMetrics(reg prometheus.Registerer, maxGroups int) *Metrics {
	if maxGroups <= 0 {
		maxGroups = DefaultMaxGroups
	}
	flow := []string{"source", "target"}
	group := []string{"source", "target", "group"}
	m := &Metrics{
		maxGroups: maxGroups,
		hbAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricHeartbeatAge,
			Help: "Age of the newest heartbeat of herder source->target in the heartbeats topic on target (now minus the heartbeat's timestamp field). Absent while none is found.",
		}, flow),
		replAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricReplicatedHeartbeatAge,
			Help: "Age of the newest heartbeat that flow source->target replicated (the <source>.heartbeats topic on target): end-to-end proof that the flow copies records.",
		}, flow),
		malformed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricMalformedRecords,
			Help: "Records of an MM2 internal topic (heartbeats, checkpoints, offset-syncs), in the last read of it, that did not decode (truncated or an unknown version); they are skipped.",
		}, []string{"cluster", "topic"}),
		cpAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricGroupCheckpointAge,
			Help: "Age of the newest checkpoint of a consumer group written by flow source->target (record timestamp). Absent while the group has none.",
		}, group),
		reread: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricGroupReread,
			Help: "Records a consumer group would read again if it moved from source to target now (committed offset minus where the translated offset resumes, summed over checkpointed partitions).",
		}, group),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricGroupCutoverReady,
			Help: "1 when every partition the group committed on source (in a mirrored topic) has a checkpoint on target, else 0.",
		}, group),
		dropped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricGroupSeriesDropped,
			Help: "Consumer groups of flow source->target left without per-group series because of the group limit.",
		}, flow),
		syncLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricOffsetSyncLag,
			Help: "Source end offsets minus the newest offset-sync of each partition of a mirrored topic, summed (topic is the source topic). Over-states the lag by up to offset.lag.max per partition.",
		}, []string{"source", "target", "topic"}),
		pubHB: map[[2]string]bool{}, pubRepl: map[[2]string]bool{}, pubMal: map[[2]string]bool{}, pubGroups: map[[3]string]bool{},
		pubDropped: map[[2]string]bool{}, pubLag: map[[3]string]bool{},
	}
	reg.MustRegister(m.hbAge, m.replAge, m.malformed, m.cpAge, m.reread, m.ready, m.dropped, m.syncLag)
	return m
}

// Publish sets the gauges from a result and deletes the series whose
// subject is gone.
func (m *Metrics) Publish(res *Result) {
	// Heartbeats.
	hb, repl := map[[2]string]bool{}, map[[2]string]bool{}
	for _, row := range res.Heartbeats {
		k := [2]string{row.Source, row.Target}
		vec, seen, prev := m.hbAge, hb, m.pubHB
		if row.Replicated {
			vec, seen, prev = m.replAge, repl, m.pubRepl
		}
		switch {
		case row.Status == StatusUnknown:
			if prev[k] {
				seen[k] = true
			}
		case row.Status == StatusMissing || (row.Last.IsZero() && !row.AgeAtLeast):
		default:
			seen[k] = true
			vec.WithLabelValues(k[:]...).Set(row.Age.Seconds())
		}
	}
	deleteGone2(m.hbAge, m.pubHB, hb)
	deleteGone2(m.replAge, m.pubRepl, repl)
	m.pubHB, m.pubRepl = hb, repl

	// Malformed records: a topic read this round is set; one still watched
	// but not read keeps its last value; the rest are deleted.
	mal := map[[2]string]bool{}
	for _, mc := range res.Malformed {
		k := [2]string{mc.Cluster, mc.Topic}
		mal[k] = true
		m.malformed.WithLabelValues(k[:]...).Set(float64(mc.Records))
	}
	for k := range m.pubMal {
		if res.keepMalformed[k] {
			mal[k] = true
		}
	}
	deleteGone2(m.malformed, m.pubMal, mal)
	m.pubMal = mal

	// Groups.
	groups, dropped := map[[3]string]bool{}, map[[2]string]bool{}
	for _, fg := range res.Groups {
		fk := [2]string{fg.Source, fg.Target}
		if fg.Unknown != "" {
			for k := range m.pubGroups {
				if k[0] == fg.Source && k[1] == fg.Target {
					groups[k] = true
				}
			}
			if m.pubDropped[fk] {
				dropped[fk] = true
			}
			continue
		}
		dropped[fk] = true
		m.dropped.WithLabelValues(fk[:]...).Set(float64(max(0, len(fg.Groups)-m.maxGroups)))
		for i, g := range fg.Groups {
			if i >= m.maxGroups {
				break
			}
			k := [3]string{fg.Source, fg.Target, g.Group}
			if g.Status == GroupUnknown {
				if m.pubGroups[k] {
					groups[k] = true
				}
				continue
			}
			groups[k] = true
			if g.LastCheckpoint.IsZero() {
				m.cpAge.DeleteLabelValues(k[:]...)
			} else {
				m.cpAge.WithLabelValues(k[:]...).Set(max(0, res.Now.Sub(g.LastCheckpoint).Seconds()))
			}
			if g.Checkpointed > 0 {
				m.reread.WithLabelValues(k[:]...).Set(float64(g.Reread))
			} else {
				m.reread.DeleteLabelValues(k[:]...)
			}
			ready := 0.0
			if g.Ready {
				ready = 1
			}
			m.ready.WithLabelValues(k[:]...).Set(ready)
		}
	}
	for k := range m.pubGroups {
		if !groups[k] {
			m.cpAge.DeleteLabelValues(k[:]...)
			m.reread.DeleteLabelValues(k[:]...)
			m.ready.DeleteLabelValues(k[:]...)
		}
	}
	deleteGone2(m.dropped, m.pubDropped, dropped)
	m.pubGroups, m.pubDropped = groups, dropped

	// Offset-sync lag.
	lag := map[[3]string]bool{}
	for _, row := range res.SyncLag {
		k := [3]string{row.Source, row.Target, row.Topic}
		lag[k] = true
		m.syncLag.WithLabelValues(k[:]...).Set(float64(row.Lag))
	}
	for k := range m.pubLag {
		if lag[k] {
			continue
		}
		if res.keepLag[[2]string{k[0], k[1]}] {
			lag[k] = true
			continue
		}
		m.syncLag.DeleteLabelValues(k[:]...)
	}
	m.pubLag = lag
}

func deleteGone2(vec *prometheus.GaugeVec, before, now map[[2]string]bool) {
	for k := range before {
		if !now[k] {
			vec.DeleteLabelValues(k[:]...)
		}
	}
}
