// Package parity holds the cluster detectors: it compares what MM2 should
// mirror, according to MM2's own configuration, with what the source and
// target clusters actually hold.
//
// For every enabled flow A->B and every source topic the flow replicates
// (MirrorSourceConnector.shouldReplicateTopic: the topic filter, heartbeats,
// internal topics and cycle detection, modelled by watcher/mm2config), the
// target topic name comes from the flow's replication policy, and the two
// snapshots are compared:
//
//   - unmirrored-partitions: the source topic has more partitions than the
//     target topic. MM2 keeps the source partition number
//     (MirrorSourceTask.convertRecord), so records of source partitions
//     target.partitions..source.partitions-1 cannot be written and the task
//     that owns them blocks (MM2-REFERENCE.md §1.5). The finding names the
//     partitions and the records in them (end - start offsets, exact).
//   - target-topic-missing: the target topic does not exist once a grace
//     period has passed (by default the flow's
//     refresh.topics.interval.seconds + 60 s, the time MM2 needs to notice a
//     new topic and create it, §1.4).
//   - replication-stalled: a partition's source end offset moved while its
//     target end offset did not, for a whole window.
//   - replication-loop: topic names on the target that chain the same alias
//     twice (`a.a.t`), or IdentityReplicationPolicy both ways with filters
//     that accept the same topic (MM2 cannot detect those cycles, §4.3).
//   - target-lacks-create-partitions: the target's ApiVersions has no
//     CreatePartitions, so MirrorSourceConnector.createNewPartitions can never
//     add partitions (§1.2).
//   - cluster-unreachable: a cluster of a flow could not be snapshotted.
//
// The detectors see only snapshots (package watcher/cluster) and a narrow
// RecordTimer for the age of the oldest record at risk; they never hold a
// client and export no metrics themselves (Metrics.Publish does, from a
// Result). Unknown is never zero: a flow whose source or target snapshot is
// missing produces no parity finding at all and is listed in Result.Unknown,
// and a topic whose metadata failed keeps the findings of the round before.
//
// The package deliberately does not read MM2's log (the log rules do), does
// not decide when an alert fires, repeats or resolves (package alerts does,
// per scope), and never creates, alters or deletes anything on a cluster.
package parity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// Rule ids of the cluster detectors (CONTRACT.md).
const (
	RuleUnmirrored            = "unmirrored-partitions"
	RuleTargetTopicMissing    = "target-topic-missing"
	RuleReplicationStalled    = "replication-stalled"
	RuleReplicationLoop       = "replication-loop"
	RuleLacksCreatePartitions = "target-lacks-create-partitions"
	RuleClusterUnreachable    = "cluster-unreachable"
)

// Rules lists the rule ids of this package with the severity each fires at,
// for metric pre-initialisation and docs.
func Rules() []detectors.RuleInfo {
	return []detectors.RuleInfo{
		{ID: RuleUnmirrored, Severity: detectors.Critical},
		{ID: RuleTargetTopicMissing, Severity: detectors.Critical},
		{ID: RuleReplicationStalled, Severity: detectors.Critical},
		{ID: RuleReplicationLoop, Severity: detectors.Critical},
		{ID: RuleLacksCreatePartitions, Severity: detectors.Warning},
		{ID: RuleClusterUnreachable, Severity: detectors.Critical},
	}
}

// Row statuses of TopicRow.Status.
const (
	StatusOK         = "ok"
	StatusUnmirrored = "unmirrored"
	StatusMissing    = "missing"
	StatusPending    = "pending"
	StatusStalled    = "stalled"
	StatusUnknown    = "unknown"
)

// Defaults of Options.
const (
	DefaultStallWindow    = 5 * time.Minute
	DefaultMissingSlack   = time.Minute
	DefaultMaxRecordReads = 32
	// DefaultReadRetry is how long a failed RecordTimer read of one offset
	// is not retried.
	DefaultReadRetry = 10 * time.Minute
)

// Options tune the checker. Zero values take the defaults.
type Options struct {
	// StallWindow is how long a partition's source end offset must be ahead
	// of where it stood when the target end offset last moved, with the
	// target end offset unchanged, before replication-stalled fires.
	// Default DefaultStallWindow (5 minutes).
	StallWindow time.Duration
	// MissingGrace returns how long a target topic may be absent before
	// target-topic-missing fires, per flow. Nil means the flow's
	// refresh.topics.interval.seconds + 60 s (MM2 creates target topics on
	// its topic refresh, MirrorSourceConnector.refreshTopicPartitions); the
	// one-shot check passes a func returning 0.
	MissingGrace func(f *mm2config.Flow) time.Duration
	// MaxRecordReads caps the RecordTimer calls of one Check (timestamps
	// already read are remembered per start offset and cost nothing).
	// Default DefaultMaxRecordReads; negative means none.
	MaxRecordReads int
	// Logger receives RecordTimer failures at debug level; nil discards.
	Logger *slog.Logger
}

// RecordTimer reads the timestamp of the record at offset in a partition of
// the cluster alias. ClientTimer implements it over watcher/cluster clients;
// tests give a map. The Checker asks only for the log start offset of source
// partitions with records at risk, at most Options.MaxRecordReads times a
// round, and remembers the answer until the start offset changes.
type RecordTimer interface {
	RecordTime(ctx context.Context, alias, topic string, partition int32, offset int64) (time.Time, error)
}

// Round is one observation of every cluster: the snapshots that could be
// taken, and the reason for each alias that could not be reached.
type Round struct {
	// Config is the MM2 configuration whose enabled flows are checked
	// (required).
	Config *mm2config.Config
	// Snapshots by alias; absent when the cluster could not be reached.
	// The parity checks need Offsets (and Configs for the retention
	// figures) in the snapshot options.
	Snapshots map[string]*cluster.Snapshot
	// Failures by alias: why the snapshot is absent (a *cluster.Error).
	// Each alias here that an enabled flow uses is reported as
	// cluster-unreachable; an alias with neither a snapshot nor a failure
	// only makes its flows unknown.
	Failures map[string]error
	// Now is when the round was taken; zero means time.Now().
	Now time.Time
}

// TopicRow is one line of the per-flow parity table.
type TopicRow struct {
	SourceTopic, TargetTopic string
	// SourcePartitions and TargetPartitions are -1 when unknown (metadata
	// error, or not judged); TargetPartitions is 0 when the target topic
	// does not exist.
	SourcePartitions, TargetPartitions int
	// Missing are the source partitions with no target partition, ascending.
	Missing []int32
	// RecordsAtRisk is the number of records (end - start offsets) in the
	// missing source partitions, or in the whole source topic when the
	// target topic is missing; 0 for a mirrored topic; -1 when an offset is
	// unknown or the row was not judged (unknown, pending).
	RecordsAtRisk int64
	// Stalled are the partitions, present on both sides, whose replication
	// is stalled, ascending.
	Stalled []int32
	// Status is one of the Status* constants: "ok", "unmirrored",
	// "missing", "pending" (absent but within its grace period), "stalled",
	// "unknown".
	Status string
	// Err says why a row is unknown.
	Err string
}

// FlowReport is the parity table of one flow.
type FlowReport struct {
	Source, Target string
	// Unknown is set when the flow could not be checked (a cluster was not
	// reachable); Rows is then empty.
	Unknown string
	// Rows are the replicated source topics, sorted by name.
	Rows []TopicRow
}

// Result is what one round found.
type Result struct {
	// Findings per alert scope. Scopes are ClusterScope and FlowScope(A, B)
	// for each flow that could be judged; the alert state resolves anything
	// in a scope that is absent from the new set. A scope with no findings
	// is present with a nil slice.
	Findings map[string][]detectors.Finding
	// Unknown lists the flow scopes that could not be judged this round;
	// their alerts must be kept as they are.
	Unknown []string
	// Flows are the parity tables, in the order of Config.Flows.
	Flows []FlowReport
}

// All returns every finding of the round, in scope order.
func (r *Result) All() []detectors.Finding {
	scopes := make([]string, 0, len(r.Findings))
	for s := range r.Findings {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	var out []detectors.Finding
	for _, s := range scopes {
		out = append(out, r.Findings[s]...)
	}
	return out
}

// FlowScope is the alert scope of the parity findings of flow source->target.
func FlowScope(source, target string) string { return "flow:" + source + "->" + target }

// ClusterScope is the alert scope of cluster-level findings
// (cluster-unreachable).
const ClusterScope = "clusters"

// Checker keeps what the detectors need across rounds: per mirrored
// partition the state of the stall detector, per target topic when it was
// first seen missing, the timestamps already read, and the last findings of
// each topic (re-issued while the topic's metadata is unknown). State of a
// topic is dropped when the topic leaves the flow's filter or the source
// cluster, and kept while its flow cannot be checked. A Checker is not safe
// for concurrent use.
type Checker struct {
	opts  Options
	log   *slog.Logger
	round uint64
	reads int // RecordTimer calls left this round
	flows map[flowKey]*flowState
}

type flowKey struct{ source, target string }

type flowState struct {
	// flow is the Flow the cached decisions (skip, topicState.target)
	// were made with; a reloaded configuration brings a new one.
	flow   *mm2config.Flow
	topics map[string]*topicState // replicated source topics
	skip   map[string]uint64      // source topics the flow does not replicate, and the round last seen
	// lacks is the last target-lacks-create-partitions finding, re-issued
	// while the target's ApiVersions is unknown.
	lacks *detectors.Finding
}

type topicState struct {
	round        uint64    // last round the topic was seen in the filter
	target       string    // the target topic name; "" until decided for the current Flow
	firstMissing time.Time // when the target topic was first seen absent; zero when present
	parts        []partState
	times        map[int32]recordTime // timestamps at start offsets of missing partitions
	last         []detectors.Finding  // findings of the last round the topic was judged
}

// partState is the stall detector of one partition present on both sides.
type partState struct {
	known bool
	// tgtEnd is the target end offset; srcBase the source end offset seen
	// when tgtEnd was first observed at its current value.
	tgtEnd, srcBase int64
	// pending is the first time the source end offset was seen beyond
	// srcBase while the target end offset stayed at tgtEnd.
	pending time.Time
}

type recordTime struct {
	offset     int64
	at         time.Time // zero when the read failed
	retryAfter time.Time
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.StallWindow <= 0 {
		opts.StallWindow = DefaultStallWindow
	}
	if opts.MissingGrace == nil {
		opts.MissingGrace = func(f *mm2config.Flow) time.Duration {
			return f.RefreshTopicsInterval + DefaultMissingSlack
		}
	}
	if opts.MaxRecordReads == 0 {
		opts.MaxRecordReads = DefaultMaxRecordReads
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Checker{opts: opts, log: log, flows: map[flowKey]*flowState{}}
}

// Check judges one round. timer may be nil; then oldest_record_age_seconds
// and seconds_until_retention are not reported. ctx bounds the timer's reads
// only. r.Config must not be nil.
func (c *Checker) Check(ctx context.Context, r Round, timer RecordTimer) *Result {
	c.round++
	c.reads = max(c.opts.MaxRecordReads, 0)
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	res := &Result{Findings: map[string][]detectors.Finding{ClusterScope: nil}}

	used := usedAliases(r.Config)
	for _, alias := range r.Config.Clusters {
		if !used[alias] {
			continue
		}
		if err, failed := r.Failures[alias]; failed && r.Snapshots[alias] == nil {
			if err == nil {
				err = errors.New("no snapshot")
			}
			res.Findings[ClusterScope] = append(res.Findings[ClusterScope], unreachable(alias, err))
		}
	}

	live := make(map[flowKey]bool, len(r.Config.Flows))
	for _, f := range r.Config.Flows {
		fk := flowKey{f.Source, f.Target}
		live[fk] = true
		scope := FlowScope(f.Source, f.Target)
		src, tgt := r.Snapshots[f.Source], r.Snapshots[f.Target]
		if src == nil || tgt == nil {
			down := f.Source
			if src != nil {
				down = f.Target
			}
			res.Unknown = append(res.Unknown, scope)
			res.Flows = append(res.Flows, FlowReport{Source: f.Source, Target: f.Target,
				Unknown: fmt.Sprintf("cluster %q could not be reached", down)})
			continue // the flow's state is kept as it is
		}
		fs := c.flows[fk]
		if fs == nil {
			fs = &flowState{topics: map[string]*topicState{}, skip: map[string]uint64{}}
			c.flows[fk] = fs
		}
		fr, out := c.checkFlow(ctx, f, r.Config.Clusters, src, tgt, fs, now, timer)
		res.Flows = append(res.Flows, fr)
		res.Findings[scope] = out
	}
	for scope, lf := range identityLoops(r.Config, r.Snapshots) {
		fs, judged := res.Findings[scope]
		if !judged || slices.ContainsFunc(fs, func(f detectors.Finding) bool { return f.Rule == RuleReplicationLoop }) {
			continue
		}
		res.Findings[scope] = append(fs, lf)
	}
	for fk := range c.flows {
		if !live[fk] {
			delete(c.flows, fk)
		}
	}
	return res
}

// usedAliases are the aliases an enabled flow reads or writes.
func usedAliases(cfg *mm2config.Config) map[string]bool {
	used := map[string]bool{}
	for _, f := range cfg.Flows {
		used[f.Source], used[f.Target] = true, true
	}
	return used
}

func unreachable(alias string, err error) detectors.Finding {
	reason := cluster.Classify(err)
	return detectors.Finding{
		Rule:     RuleClusterUnreachable,
		Severity: detectors.Critical,
		Cluster:  alias,
		Summary:  fmt.Sprintf("Cluster %s cannot be reached (%s); every check that needs it reports unknown.", alias, reason.Describe()),
		Cause:    err.Error(),
		Values:   map[string]any{"reason": string(reason)},
		Hint:     "Check bootstrap.servers, the network path from the watchdog to the brokers, and the security settings (TLS truststore, SASL credentials) for this alias in the MM2 properties.",
	}
}

func (c *Checker) checkFlow(ctx context.Context, f *mm2config.Flow, aliases []string, src, tgt *cluster.Snapshot,
	fs *flowState, now time.Time, timer RecordTimer) (FlowReport, []detectors.Finding) {
	fr := FlowReport{Source: f.Source, Target: f.Target}
	var out []detectors.Finding

	switch ok, known := tgt.Supports(kmsg.CreatePartitions); {
	case known && !ok:
		lf := lacksCreatePartitions(f)
		fs.lacks = &lf
		out = append(out, lf)
	case known:
		fs.lacks = nil
	case fs.lacks != nil:
		out = append(out, *fs.lacks)
	}

	// The filter decision and the target name of a source topic are
	// remembered for as long as the Flow is the same.
	if fs.flow != f {
		fs.flow = f
		clear(fs.skip)
		for _, ts := range fs.topics {
			ts.target = ""
		}
	}
	names := make([]string, 0, len(src.Topics))
	for name := range src.Topics {
		if ts := fs.topics[name]; ts != nil && ts.target != "" {
			ts.round = c.round
			names = append(names, name)
			continue
		}
		if _, skip := fs.skip[name]; skip {
			fs.skip[name] = c.round
			continue
		}
		if !f.ShouldReplicateTopic(name) {
			fs.skip[name] = c.round
			continue
		}
		ts := fs.topics[name]
		if ts == nil {
			ts = &topicState{}
			fs.topics[name] = ts
		}
		ts.round, ts.target = c.round, f.TargetTopic(name)
		names = append(names, name)
	}
	for name, ts := range fs.topics {
		if ts.round != c.round {
			delete(fs.topics, name)
		}
	}
	for name, round := range fs.skip {
		if round != c.round {
			delete(fs.skip, name)
		}
	}
	sort.Strings(names)
	fr.Rows = make([]TopicRow, 0, len(names))
	grace := c.opts.MissingGrace(f)
	for _, name := range names {
		ts := fs.topics[name]
		row, found, judged := c.checkTopic(ctx, f, src.Topics[name], tgt, ts, grace, now, timer)
		if judged {
			ts.last = found
		} else {
			found = ts.last
		}
		out = append(out, found...)
		fr.Rows = append(fr.Rows, row)
	}
	if lf := loopFinding(f, tgt, aliases); lf != nil {
		out = append(out, *lf)
	}
	return fr, out
}

func lacksCreatePartitions(f *mm2config.Flow) detectors.Finding {
	return detectors.Finding{
		Rule: RuleLacksCreatePartitions, Severity: detectors.Warning,
		Source: f.Source, Target: f.Target, Cluster: f.Target,
		Summary: fmt.Sprintf("Target cluster %s does not offer CreatePartitions (ApiVersions key 37): when a source topic of %s->%s gains partitions, MM2 cannot add them on the target and records written to the new partitions are not mirrored.", f.Target, f.Source, f.Target),
		Hint:    "Create target topics with at least as many partitions as their source topics will ever have, and never add partitions to a mirrored source topic without recreating its target topic first.",
	}
}

// checkTopic judges one replicated source topic. judged is false when the
// topic's metadata is unknown on either side; found is then nil and the
// caller re-issues the topic's last findings.
func (c *Checker) checkTopic(ctx context.Context, f *mm2config.Flow, st *cluster.Topic, tgt *cluster.Snapshot,
	ts *topicState, grace time.Duration, now time.Time, timer RecordTimer) (row TopicRow, found []detectors.Finding, judged bool) {
	tname := ts.target
	row = TopicRow{SourceTopic: st.Name, TargetTopic: tname, SourcePartitions: -1, TargetPartitions: -1, RecordsAtRisk: -1}
	if st.Err != nil {
		row.Status, row.Err = StatusUnknown, fmt.Sprintf("source metadata: %v", st.Err)
		return row, nil, false
	}
	row.SourcePartitions = st.Partitions
	tt := tgt.Topics[tname]
	if tt != nil && tt.Err != nil && !errors.Is(tt.Err, kerr.UnknownTopicOrPartition) {
		row.Status, row.Err = StatusUnknown, fmt.Sprintf("target metadata: %v", tt.Err)
		return row, nil, false
	}
	if (tt == nil || tt.Err != nil) && f.PolicyGuessed() {
		// A custom replication policy without --target-topic-template: the
		// target name is a guess, and a guess that finds nothing proves
		// nothing. Unknown, never "missing".
		row.Status = StatusUnknown
		row.Err = fmt.Sprintf("no %s on %s; custom replication policy %s: the target name is a guess, give --target-topic-template", tname, f.Target, f.PolicyClass)
		return row, nil, true
	}
	if tt == nil || tt.Err != nil { // absent, or asked for by name and unknown to the broker
		row.TargetPartitions = 0
		ts.parts = ts.parts[:0]
		clear(ts.times)
		if ts.firstMissing.IsZero() {
			ts.firstMissing = now
		}
		if now.Sub(ts.firstMissing) < grace {
			row.Status = StatusPending
			return row, nil, true
		}
		row.Status = StatusMissing
		row.RecordsAtRisk = recordsIn(st, 0, st.Partitions)
		fnd := detectors.Finding{
			Rule: RuleTargetTopicMissing, Severity: detectors.Critical,
			Source: f.Source, Target: f.Target, Topic: tname,
			Summary: fmt.Sprintf("Source topic %s on %s should be mirrored to %s as %s, but that topic does not exist on the target.", st.Name, f.Source, f.Target, tname),
			Values: map[string]any{
				"source_topic":        st.Name,
				"source_partitions":   st.Partitions,
				"missing_for_seconds": int64(now.Sub(ts.firstMissing) / time.Second),
			},
			Hint: "Look for `Could not create topic` in the MM2 log (a rejected topic config is the usual cause) and create the target topic with the source's partition count.",
		}
		if row.RecordsAtRisk >= 0 {
			fnd.Values["records_at_risk"] = row.RecordsAtRisk
		}
		return row, []detectors.Finding{fnd}, true
	}
	ts.firstMissing = time.Time{}
	row.TargetPartitions = tt.Partitions
	row.Status = StatusOK
	row.RecordsAtRisk = 0
	if st.Partitions > tt.Partitions {
		row.Status = StatusUnmirrored
		row.Missing = make([]int32, 0, st.Partitions-tt.Partitions)
		for p := tt.Partitions; p < st.Partitions; p++ {
			row.Missing = append(row.Missing, int32(p))
		}
		row.RecordsAtRisk = recordsIn(st, tt.Partitions, st.Partitions)
		found = append(found, c.unmirrored(ctx, f, st, tt, ts, row, now, timer))
	} else {
		clear(ts.times)
	}

	// Stall detection on the partitions that exist on both sides.
	n := min(st.Partitions, tt.Partitions)
	if cap(ts.parts) < n {
		ts.parts = slices.Grow(ts.parts[:0], n)
	}
	ts.parts = ts.parts[:n]
	for p := range n {
		so, sok := st.Offset(int32(p))
		to, tok := tt.Offset(int32(p))
		if !sok || !tok || so.Err != nil || to.Err != nil {
			continue // unknown this round: keep the partition's state
		}
		if c.stalled(&ts.parts[p], so.End, to.End, now) {
			row.Stalled = append(row.Stalled, int32(p))
		}
	}
	if len(row.Stalled) > 0 {
		if row.Status == StatusOK {
			row.Status = StatusStalled
		}
		found = append(found, detectors.Finding{
			Rule: RuleReplicationStalled, Severity: detectors.Critical,
			Source: f.Source, Target: f.Target, Topic: tname, Partitions: slices.Clone(row.Stalled),
			Summary: fmt.Sprintf("Replication of %s (%s->%s) is stalled on partition(s) %s: the source end offset has been ahead for %s or more while the end offset of target topic %s did not move.",
				st.Name, f.Source, f.Target, joinInts(row.Stalled), c.opts.StallWindow, tname),
			Values: map[string]any{
				"source_topic":       st.Name,
				"stalled_partitions": len(row.Stalled),
				"window_seconds":     int64(c.opts.StallWindow / time.Second),
			},
			Hint: "A task blocked on a partition missing on the target stalls every partition it owns; look for unmirrored partitions, failed tasks, and the task's `Committing offsets` lines in the MM2 log.",
		})
	}
	return row, found, true
}

// stalled feeds one observation of a partition's end offsets to its stall
// detector and reports whether the source has been ahead, with the target end
// offset unchanged, for at least the stall window. Any change of the target
// end offset (including a drop, when the target topic was recreated) or a
// drop of the source end offset restarts the detector.
func (c *Checker) stalled(ps *partState, srcEnd, tgtEnd int64, now time.Time) bool {
	if !ps.known || tgtEnd != ps.tgtEnd || srcEnd < ps.srcBase {
		*ps = partState{known: true, tgtEnd: tgtEnd, srcBase: srcEnd}
		return false
	}
	if srcEnd > ps.srcBase && ps.pending.IsZero() {
		ps.pending = now
	}
	return !ps.pending.IsZero() && now.Sub(ps.pending) >= c.opts.StallWindow
}

func (c *Checker) unmirrored(ctx context.Context, f *mm2config.Flow, st, tt *cluster.Topic, ts *topicState,
	row TopicRow, now time.Time, timer RecordTimer) detectors.Finding {
	fnd := detectors.Finding{
		Rule: RuleUnmirrored, Severity: detectors.Critical,
		Source: f.Source, Target: f.Target, Topic: row.TargetTopic, Partitions: slices.Clone(row.Missing),
		Summary: fmt.Sprintf("Source topic %s on %s has %d partitions but target topic %s on %s has %d: partitions %s are not mirrored.",
			row.SourceTopic, f.Source, st.Partitions, row.TargetTopic, f.Target, tt.Partitions, joinInts(row.Missing)),
		Values: map[string]any{
			"source_topic":       row.SourceTopic,
			"source_partitions":  st.Partitions,
			"target_partitions":  tt.Partitions,
			"missing_partitions": len(row.Missing),
		},
		Hint: fmt.Sprintf("Recreate %s on %s with %d partitions (or add partitions if the target supports CreatePartitions), then restart the MirrorSourceConnector tasks; records already in the new source partitions are mirrored once the partitions exist.",
			row.TargetTopic, f.Target, st.Partitions),
	}
	if row.RecordsAtRisk >= 0 {
		fnd.Values["records_at_risk"] = row.RecordsAtRisk
	}
	if timer == nil || row.RecordsAtRisk == 0 || !deletes(st) {
		return fnd
	}
	oldest := c.oldestRecord(ctx, f.Source, st, row.Missing, ts, now, timer)
	if oldest.IsZero() {
		return fnd
	}
	age := max(now.Sub(oldest), 0)
	fnd.Values["oldest_record_age_seconds"] = int64(age / time.Second)
	if ms, ok := retentionMs(st); ok {
		left := time.Duration(ms)*time.Millisecond - age
		fnd.Values["seconds_until_retention"] = max(int64(left/time.Second), 0)
	}
	return fnd
}

// oldestRecord returns the oldest timestamp among the records at the log
// start offsets of the given partitions, asking timer only for offsets not
// read before; zero when none is known.
func (c *Checker) oldestRecord(ctx context.Context, alias string, st *cluster.Topic, parts []int32,
	ts *topicState, now time.Time, timer RecordTimer) time.Time {
	if ts.times == nil {
		ts.times = map[int32]recordTime{}
	}
	var oldest time.Time
	for _, p := range parts {
		o, ok := st.Offset(p)
		if !ok || o.Err != nil || o.End <= o.Start {
			delete(ts.times, p)
			continue
		}
		rt, seen := ts.times[p]
		if !seen || rt.offset != o.Start || (rt.at.IsZero() && !now.Before(rt.retryAfter)) {
			if c.reads <= 0 {
				continue
			}
			c.reads--
			rt = recordTime{offset: o.Start}
			at, err := timer.RecordTime(ctx, alias, st.Name, p, o.Start)
			if err != nil || at.IsZero() {
				rt.retryAfter = now.Add(DefaultReadRetry)
				c.log.Debug("reading the timestamp of the oldest record at risk", "cluster", alias,
					"topic", st.Name, "partition", p, "offset", o.Start, "err", err)
			}
			rt.at = at
			ts.times[p] = rt
		}
		if !rt.at.IsZero() && (oldest.IsZero() || rt.at.Before(oldest)) {
			oldest = rt.at
		}
	}
	return oldest
}

// deletes reports whether the topic's records can be deleted by time: its
// cleanup.policy contains delete, or is not known (the broker default is
// delete). Compacted-only topics keep their records.
func deletes(t *cluster.Topic) bool {
	pol, ok := t.Configs["cleanup.policy"]
	return !ok || strings.Contains(pol, "delete")
}

// retentionMs returns the source topic's time retention (retention.ms) when
// it is known and finite and records are deleted by time (see deletes). Kafka deletes a whole segment once its newest record
// is older than retention.ms, so retention.ms minus the age of the oldest
// record is the earliest the record can go.
func retentionMs(t *cluster.Topic) (int64, bool) {
	if !deletes(t) {
		return 0, false
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(t.Configs["retention.ms"]), 10, 64)
	if err != nil || ms <= 0 {
		return 0, false
	}
	return ms, true
}

// recordsIn sums end - start offsets over partitions [from, to) of t; -1 when
// any of them is unknown.
func recordsIn(t *cluster.Topic, from, to int) int64 {
	var n int64
	for p := from; p < to; p++ {
		o, ok := t.Offset(int32(p))
		if !ok || o.Err != nil || o.Start < 0 || o.End < 0 {
			return -1
		}
		n += max(o.End-o.Start, 0)
	}
	return n
}

func joinInts(ps []int32) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}
