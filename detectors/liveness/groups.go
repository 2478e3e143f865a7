package liveness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// Group statuses (GroupReport.Status).
const (
	// GroupReady: every partition the group committed on the source, in a
	// topic the flow mirrors, has a checkpoint.
	GroupReady = "ready"
	// GroupNotReady: some committed partition has no checkpoint yet.
	GroupNotReady = "not-ready"
	// GroupNoCommits: the group has checkpoints but no committed offset
	// on the source in a mirrored topic (expired, deleted, or reset).
	GroupNoCommits = "no-commits"
	// GroupUnknown: the group's committed offsets could not be fetched.
	GroupUnknown = "unknown"
)

// Partition statuses (GroupPartition.Status).
const (
	// PartitionOK: the group would resume on the target exactly where it
	// stands on the source.
	PartitionOK = "ok"
	// PartitionRereads: the group would read Reread records again.
	PartitionRereads = "rereads"
	// PartitionSkips: the checkpoint is ahead of the group's committed
	// offset (the group was reset backwards on the source after it); the
	// group would skip records on the target.
	PartitionSkips = "skips"
	// PartitionNoCheckpoint: committed on the source, no checkpoint.
	PartitionNoCheckpoint = "no-checkpoint"
	// PartitionUncommitted: the group never committed this partition on
	// the source; it is neither ready nor counted.
	PartitionUncommitted = "uncommitted"
)

// FlowGroups is the cut-over readiness of the consumer groups of one flow.
type FlowGroups struct {
	Source string `json:"source"`
	Target string `json:"target"`
	// Unknown says why the flow's groups could not be judged this round;
	// Groups is then empty.
	Unknown string `json:"unknown,omitempty"`
	// Groups are the groups the flow's groups/groups.exclude filter lets
	// through that have checkpoints, or committed offsets on the source in
	// a mirrored topic, sorted by name.
	Groups []GroupReport `json:"groups"`
	// SyncsUnknown says why the offset-syncs could not be read; re-read
	// counts are then lower bounds.
	SyncsUnknown string `json:"syncs_unknown,omitempty"`
}

// GroupReport is the cut-over verdict of one consumer group of a flow.
type GroupReport struct {
	Group  string `json:"group"`
	Status string `json:"status"` // GroupReady, GroupNotReady, GroupNoCommits or GroupUnknown
	// Ready is Status == GroupReady.
	Ready bool `json:"cutover_ready"`
	// LastCheckpoint is the newest checkpoint record timestamp of the
	// group (MirrorCheckpointTask's emit time), zero when none.
	LastCheckpoint time.Time `json:"last_checkpoint,omitzero"`
	// Committed and Checkpointed count the committed partitions and those
	// of them with a checkpoint.
	Committed    int `json:"committed_partitions"`
	Checkpointed int `json:"checkpointed_partitions"`
	// Reread is the number of records the group would read again after
	// moving to the target, summed over its checkpointed partitions.
	// RereadAtLeast is set when a translation could not be reconstructed
	// (no offset-sync at or below a checkpoint) and Reread is a lower
	// bound.
	Reread        int64 `json:"reread_records"`
	RereadAtLeast bool  `json:"reread_at_least,omitempty"`
	// Partitions are the rows of the table, by topic and partition.
	Partitions []GroupPartition `json:"partitions"`
	// Err is why the group is unknown.
	Err string `json:"error,omitempty"`
}

// GroupPartition is one partition of a group's readiness table. Offsets are
// -1 when absent (and absent from its JSON form).
type GroupPartition struct {
	// Topic is the source topic; TargetTopic its name on the target.
	Topic       string
	TargetTopic string
	Partition   int32
	// Committed is the group's committed offset on the source (the next
	// offset it will consume).
	Committed int64
	// CheckpointUpstream and CheckpointDownstream are the newest
	// checkpoint's upstream (source) offset and its translation on the
	// target: the offset the group resumes from after the move.
	CheckpointUpstream   int64
	CheckpointDownstream int64
	// CheckpointTime is the checkpoint record's timestamp.
	CheckpointTime time.Time
	// Resumes is the source offset the target offset CheckpointDownstream
	// corresponds to, reconstructed from the offset-sync at or below it
	// (upstream + downstream distance); -1 when no offset-sync was found.
	Resumes int64
	// Reread is Committed - Resumes (or Committed - CheckpointUpstream,
	// a lower bound, when Resumes is unknown); -1 when not applicable.
	Reread int64
	Status string // one of the Partition* constants
}

// groupState is what the checkpoint-stalled detector remembers of a group
// from the round before. It compares offsets only, never record timestamps:
// checkpoint timestamps come from the MM2 host's clock and round times from
// the watchdog's, and the two may disagree by any amount.
type groupState struct {
	// commits are the group's committed offsets on the source in
	// checkpointed topics; checkpoints its newest checkpoint of each
	// checkpoint-key topic partition.
	commits     map[syncKey]int64
	checkpoints map[syncKey]cpOffsets
	// pendingSince is the time of the round (watchdog clock) in which the
	// group's commits moved while its checkpoints did not change; zero
	// while no such round is pending, or after a checkpoint changed.
	pendingSince time.Time
	seen         bool
}

// cpOffsets is the content of a checkpoint that MM2 compares before it
// emits a new one (MirrorCheckpointTask.checkpointIsMoreRecent).
type cpOffsets struct {
	upstream, downstream int64
}

// syncKey is a topic partition.
type syncKey struct {
	topic     string
	partition int32
}

// syncIndex holds offset-syncs by source topic partition, in the order they
// were written (oldest first). nil means unknown.
type syncIndex map[syncKey][]mm2config.OffsetSync

// flowSyncs is the offset-syncs read for one flow this round.
type flowSyncs struct {
	flow    *mm2config.Flow
	idx     syncIndex
	unknown string
}

// checkGroups builds the readiness report of every enabled flow with
// checkpoints on, runs checkpoint-stalled, and returns the offset-syncs it
// read for the lag report.
func (c *Checker) checkGroups(ctx context.Context, r Round, res *Result, mal *malformed) []flowSyncs {
	var all []flowSyncs
	live := map[string]bool{}
	for _, f := range r.Config.Flows {
		fs := c.readSyncs(ctx, r, f, mal)
		all = append(all, fs)
		if !f.CheckpointsEnabled {
			continue
		}
		scope := GroupScope(f.Source, f.Target)
		fg, findings := c.flowGroups(ctx, r, f, fs, mal, live)
		res.Groups = append(res.Groups, fg)
		if fg.Unknown != "" {
			res.Unknown = append(res.Unknown, scope)
			// Keep the state of the flow's groups while it is unknown.
			prefix := f.String() + "|"
			for k := range c.groups {
				if strings.HasPrefix(k, prefix) {
					live[k] = true
				}
			}
			continue
		}
		res.Findings[scope] = findings
	}
	for k := range c.groups {
		if !live[k] {
			delete(c.groups, k)
		}
	}
	return all
}

// readSyncs reads the flow's offset-syncs topic where
// offset-syncs.topic.location puts it.
func (c *Checker) readSyncs(ctx context.Context, r Round, f *mm2config.Flow, mal *malformed) flowSyncs {
	out := flowSyncs{flow: f}
	if !f.EmitOffsetSyncsEnabled {
		out.unknown = "emit.offset-syncs.enabled is false"
		return out
	}
	alias, name := f.OffsetSyncsTopic()
	reader := r.Readers[alias]
	state, t := lookupTopic(r.Snapshots[alias], name)
	switch {
	case reader == nil || r.Snapshots[alias] == nil:
		out.unknown = fmt.Sprintf("cluster %s was not reached this round", alias)
		mal.keep(alias, name)
		return out
	case state == topicAbsent:
		out.idx = syncIndex{}
		return out
	case state == topicUnknown:
		out.unknown = fmt.Sprintf("topic %s on %s: %v", name, alias, t.Err)
		mal.keep(alias, name)
		return out
	}
	rctx, cancel := c.readCtx(ctx)
	recs, err := reader.ReadTopic(rctx, name, c.opts.ReadLimit)
	cancel()
	if err != nil {
		c.logger.Debug("reading offset-syncs failed", "cluster", alias, "topic", name, "err", err)
		mal.keep(alias, name)
		out.unknown = fmt.Sprintf("reading %s on %s: %v", name, alias, err)
		return out
	}
	mal.touch(alias, name)
	out.idx = syncIndex{}
	bad := 0
	for _, rec := range recs {
		s, err := mm2config.DecodeOffsetSync(rec.Key, rec.Value)
		if err != nil {
			bad++
			mal.add(alias, name)
			continue
		}
		k := syncKey{s.Topic, s.Partition}
		out.idx[k] = append(out.idx[k], s)
	}
	if bad > 0 {
		c.logger.Debug("skipped offset-sync records that do not decode", "cluster", alias, "topic", name, "records", bad)
	}
	return out
}

// checkpointRec is a decoded checkpoint with its record timestamp.
type checkpointRec struct {
	mm2config.Checkpoint
	time time.Time
}

// flowGroups judges the groups of one flow.
func (c *Checker) flowGroups(ctx context.Context, r Round, f *mm2config.Flow, fs flowSyncs, mal *malformed, live map[string]bool) (FlowGroups, []detectors.Finding) {
	fg := FlowGroups{Source: f.Source, Target: f.Target, SyncsUnknown: fs.unknown}
	src, tgt := r.Snapshots[f.Source], r.Snapshots[f.Target]
	srcR, tgtR := r.Readers[f.Source], r.Readers[f.Target]
	cpTopic := f.CheckpointsTopic()
	if src == nil || srcR == nil {
		fg.Unknown = fmt.Sprintf("cluster %s was not reached this round", f.Source)
		mal.keep(f.Target, cpTopic)
		return fg, nil
	}
	if tgt == nil || tgtR == nil {
		fg.Unknown = fmt.Sprintf("cluster %s was not reached this round", f.Target)
		mal.keep(f.Target, cpTopic)
		return fg, nil
	}

	// Newest checkpoint per (group, target topic, partition): records come
	// by partition then offset, and a key always lands on one partition,
	// so the last one read wins, as in a compacted topic.
	cps := map[string]map[syncKey]checkpointRec{}
	switch state, t := lookupTopic(tgt, cpTopic); state {
	case topicUnknown:
		fg.Unknown = fmt.Sprintf("topic %s on %s: %v", cpTopic, f.Target, t.Err)
		mal.keep(f.Target, cpTopic)
		return fg, nil
	case topicPresent:
		rctx, cancel := c.readCtx(ctx)
		recs, err := tgtR.ReadTopic(rctx, cpTopic, c.opts.ReadLimit)
		cancel()
		if err != nil {
			fg.Unknown = fmt.Sprintf("reading %s on %s: %v", cpTopic, f.Target, err)
			mal.keep(f.Target, cpTopic)
			return fg, nil
		}
		mal.touch(f.Target, cpTopic)
		bad := 0
		for _, rec := range recs {
			cp, err := mm2config.DecodeCheckpoint(rec.Key, rec.Value)
			if err != nil {
				bad++
				mal.add(f.Target, cpTopic)
				continue
			}
			if !f.Groups.Match(cp.Group) {
				continue
			}
			m := cps[cp.Group]
			if m == nil {
				m = map[syncKey]checkpointRec{}
				cps[cp.Group] = m
			}
			m[syncKey{cp.Topic, cp.Partition}] = checkpointRec{cp, rec.Timestamp}
		}
		if bad > 0 {
			c.logger.Debug("skipped checkpoint records that do not decode", "cluster", f.Target, "topic", cpTopic, "records", bad)
		}
	}

	// The groups on the source that the filter lets through.
	rctx, cancel := c.readCtx(ctx)
	listed, err := srcR.ListGroups(rctx)
	cancel()
	if err != nil {
		fg.Unknown = fmt.Sprintf("listing consumer groups on %s: %v", f.Source, err)
		return fg, nil
	}
	names := map[string]bool{}
	for _, g := range listed {
		if f.Groups.Match(g) {
			names[g] = true
		}
	}
	for g := range cps {
		names[g] = true
	}
	groups := slices.Sorted(maps.Keys(names))
	offsets := map[string]*cluster.GroupOffsets{}
	if len(groups) > 0 {
		rctx, cancel := c.readCtx(ctx)
		offsets, err = srcR.GroupOffsets(rctx, groups)
		cancel()
		if err != nil {
			fg.Unknown = fmt.Sprintf("fetching committed offsets on %s: %v", f.Source, err)
			return fg, nil
		}
	}

	// Checkpoint-key topic name of each checkpointed source topic and back.
	// Two source topics can share a name in checkpoint keys (B.orders and
	// B.C.orders both become orders on A->B), as they do in MM2's own
	// keys; the first by name wins so that the table is stable.
	toSource := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(src.Topics)) {
		if !mirrored(f, name) {
			continue
		}
		if tn := c.targetName(f, name); toSource[tn] == "" {
			toSource[tn] = name
		}
	}

	var findings []detectors.Finding
	for _, g := range groups {
		rep, commits, known := c.groupReport(f, g, offsets[g], cps[g], fs.idx, src, toSource)
		if rep.Status == "" {
			continue // neither a mirrored commit nor a checkpoint
		}
		fg.Groups = append(fg.Groups, rep)
		key := f.String() + "|" + g
		live[key] = true
		if !known {
			continue
		}
		if fnd := c.stalled(f, key, rep, commits, cps[g], r.Now); fnd != nil {
			findings = append(findings, *fnd)
		}
	}
	return fg, findings
}

// targetName is the topic name MM2 puts in checkpoint keys for a source
// topic (MirrorCheckpointTask.renameTopicPartition): a topic that came from
// the target (topicSource(t) equals the target alias) gets
// replicationPolicy.originalTopic(t), the first name of its whole chain
// (B.C.orders -> orders on flow A->B), and every other topic
// formatRemoteTopic(source, t).
func (c *Checker) targetName(f *mm2config.Flow, sourceTopic string) string {
	if f.Policy.TopicSource(sourceTopic) == f.Target {
		return f.Policy.OriginalTopic(sourceTopic)
	}
	return f.TargetTopic(sourceTopic)
}

// mirrored reports whether MM2 checkpoints a group's committed offsets in a
// source topic of the flow. MirrorCheckpointTask.shouldCheckpointTopic and
// MirrorCheckpointConnector (which keeps only groups with a committed offset
// in such a topic) both ask topicFilter.shouldReplicateTopic with the topic
// name as committed on the source: the topics/topics.exclude filter alone.
// Unlike MirrorSourceConnector.shouldReplicateTopic (Flow.ShouldReplicateTopic)
// there is no heartbeats exception, internal-topic test or cycle test, so a
// topic that came from the target is checkpointed when the filter accepts
// its source-side name (B.orders on A->B needs topics to match "B.orders").
func mirrored(f *mm2config.Flow, topic string) bool {
	return f.Topics.Match(topic)
}

// groupReport builds one group's table. commits are its committed offsets
// in mirrored topics; known is false when they could not be fetched.
func (c *Checker) groupReport(f *mm2config.Flow, g string, gos *cluster.GroupOffsets, cps map[syncKey]checkpointRec, syncs syncIndex, src *cluster.Snapshot, toSource map[string]string) (GroupReport, map[syncKey]int64, bool) {
	rep := GroupReport{Group: g}
	for _, cp := range cps {
		if cp.time.After(rep.LastCheckpoint) {
			rep.LastCheckpoint = cp.time
		}
	}
	if gos == nil || gos.Err != nil {
		if len(cps) == 0 && gos == nil {
			return rep, nil, false
		}
		rep.Status = GroupUnknown
		rep.Err = "no answer"
		if gos != nil {
			rep.Err = gos.Err.Error()
		}
		return rep, nil, false
	}
	commits := map[syncKey]int64{}
	topics := map[string]bool{}
	for t, ps := range gos.Offsets {
		if !mirrored(f, t) {
			continue
		}
		for p, o := range ps {
			if o.Err != nil || o.Offset < 0 {
				continue
			}
			commits[syncKey{t, p}] = o.Offset
			topics[t] = true
		}
	}
	// Checkpointed partitions by source topic partition.
	byTP := map[syncKey]checkpointRec{}
	for k, cp := range cps {
		st, ok := toSource[k.topic]
		if !ok {
			st = ""
		}
		byTP[syncKey{st, k.partition}] = cp
		if st != "" {
			topics[st] = true
		}
	}
	if len(commits) == 0 && len(cps) == 0 {
		return rep, commits, true
	}
	for _, t := range slices.Sorted(maps.Keys(topics)) {
		n := int32(0)
		if st, ok := src.Topics[t]; ok && st.Err == nil && st.Partitions > 0 {
			n = int32(st.Partitions)
		}
		parts := map[int32]bool{}
		for p := range n {
			parts[p] = true
		}
		for k := range commits {
			if k.topic == t {
				parts[k.partition] = true
			}
		}
		for k := range byTP {
			if k.topic == t {
				parts[k.partition] = true
			}
		}
		for _, p := range slices.Sorted(maps.Keys(parts)) {
			row := partitionRow(c.targetName(f, t), t, p, commits, byTP, syncs)
			rep.Partitions = append(rep.Partitions, row)
		}
	}
	for _, row := range rep.Partitions {
		if row.Committed < 0 {
			continue
		}
		rep.Committed++
		if row.CheckpointUpstream >= 0 {
			rep.Checkpointed++
			if row.Reread > 0 {
				rep.Reread += row.Reread
			}
			if row.Resumes < 0 {
				rep.RereadAtLeast = true
			}
		}
	}
	switch {
	case rep.Committed == 0:
		rep.Status = GroupNoCommits
	case rep.Checkpointed == rep.Committed:
		rep.Status, rep.Ready = GroupReady, true
	default:
		rep.Status = GroupNotReady
	}
	return rep, commits, true
}

// partitionRow computes one row of the readiness table.
//
// MM2 translates a committed upstream offset U with the newest offset-sync
// (u, d) at or below it: to d when U == u, else to d+1 (OffsetSyncStore
// .translateDownstream, 3.5 and later), so a group resumes on the target at
// the record right after the last synced one. The records it reads again
// are those between the source position that target offset corresponds to
// (u + (D - d), with the offset-sync at or below D) and its committed
// offset on the source.
func partitionRow(targetTopic, topic string, p int32, commits map[syncKey]int64, cps map[syncKey]checkpointRec, syncs syncIndex) GroupPartition {
	k := syncKey{topic, p}
	row := GroupPartition{Topic: topic, TargetTopic: targetTopic, Partition: p,
		Committed: -1, CheckpointUpstream: -1, CheckpointDownstream: -1, Resumes: -1, Reread: -1}
	if c, ok := commits[k]; ok {
		row.Committed = c
	}
	cp, hasCP := cps[k]
	if hasCP {
		row.CheckpointUpstream, row.CheckpointDownstream, row.CheckpointTime = cp.UpstreamOffset, cp.Offset, cp.time
		row.Resumes = resumes(syncs[k], cp.Offset, cp.UpstreamOffset)
	}
	switch {
	case row.Committed < 0:
		row.Status = PartitionUncommitted
	case !hasCP:
		row.Status = PartitionNoCheckpoint
	default:
		from := row.Resumes
		if from < 0 {
			from = row.CheckpointUpstream
		}
		row.Reread = row.Committed - from
		switch {
		case row.Reread < 0:
			row.Status = PartitionSkips
		case row.Reread == 0:
			row.Status = PartitionOK
		default:
			row.Status = PartitionRereads
		}
	}
	return row
}

// resumes maps a downstream offset back to the source offset it
// corresponds to, with the newest offset-sync whose downstream offset is at
// or below it; at most upstream (the checkpoint's own upstream offset). -1
// when no such sync is known.
func resumes(syncs []mm2config.OffsetSync, downstream, upstream int64) int64 {
	best := -1
	for i, s := range syncs {
		if s.Offset <= downstream && s.UpstreamOffset <= upstream && (best < 0 || s.Offset >= syncs[best].Offset) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	s := syncs[best]
	return min(upstream, s.UpstreamOffset+(downstream-s.Offset))
}

// stalled runs checkpoint-stalled for one group. Its checkpoints advanced
// in a round when some partition's checkpoint (upstream offset, downstream
// offset) is new or differs from the round before. The window starts, on
// the watchdog's clock, at the round in which the group's commits moved and
// its checkpoints did not advance; the finding fires once the window has
// passed and resolves in the first round in which a checkpoint advanced.
// Record timestamps play no part, so clock skew between the MM2 host and the
// watchdog cannot fire or hide it.
func (c *Checker) stalled(f *mm2config.Flow, key string, rep GroupReport, commits map[syncKey]int64, cps map[syncKey]checkpointRec, now time.Time) *detectors.Finding {
	st := c.groups[key]
	if st == nil {
		st = &groupState{}
		c.groups[key] = st
	}
	content := make(map[syncKey]cpOffsets, len(cps))
	advanced := false
	for k, cp := range cps {
		o := cpOffsets{cp.UpstreamOffset, cp.Offset}
		content[k] = o
		if prev, ok := st.checkpoints[k]; !ok || prev != o {
			advanced = true
		}
	}
	moved := st.seen && !maps.Equal(st.commits, commits)
	advanced = st.seen && advanced
	st.commits, st.checkpoints, st.seen = commits, content, true
	switch {
	case advanced:
		st.pendingSince = time.Time{}
	case moved && st.pendingSince.IsZero():
		st.pendingSince = now
	}
	window := c.opts.CheckpointWindow
	if window <= 0 {
		window = DefaultCheckpointWindow(f)
	}
	if st.pendingSince.IsZero() || now.Sub(st.pendingSince) < window {
		return nil
	}
	stalledFor := now.Sub(st.pendingSince)
	values := map[string]any{
		"window_seconds":   seconds(window),
		"commits_moved_at": st.pendingSince.UTC().Format(time.RFC3339),
		"stalled_seconds":  seconds(stalledFor),
	}
	last := "it has no checkpoint at all"
	if !rep.LastCheckpoint.IsZero() {
		// The record timestamp is MM2's clock: shown, never compared.
		values["last_checkpoint_record_time"] = rep.LastCheckpoint.UTC().Format(time.RFC3339)
		last = fmt.Sprintf("its newest checkpoint record is stamped %s by the MM2 host", rep.LastCheckpoint.UTC().Format(time.RFC3339))
	}
	return &detectors.Finding{
		Rule: RuleCheckpointStalled, Severity: detectors.Warning,
		Source: f.Source, Target: f.Target, Group: rep.Group, Values: values,
		Summary: fmt.Sprintf("Group %s keeps committing on %s but %s->%s has not changed any checkpoint of it for %s (window %s; %s): its offsets on %s are going stale.",
			rep.Group, f.Source, f.Source, f.Target, stalledFor.Round(time.Second), window, last, f.Target),
		Hint: fmt.Sprintf("Check the MirrorCheckpointConnector of %s->%s (its task and the worker log), that offset-syncs are emitted, and that the watchdog and MM2 may read %s.",
			f.Source, f.Target, f.CheckpointsTopic()),
	}
}

// MarshalJSON writes the row with snake_case names, leaving out offsets that
// are absent (-1) and a zero checkpoint time: unknown is never a zero.
func (p GroupPartition) MarshalJSON() ([]byte, error) {
	m := map[string]any{"topic": p.Topic, "target_topic": p.TargetTopic, "partition": p.Partition, "status": p.Status}
	for k, v := range map[string]int64{"committed": p.Committed, "checkpoint_upstream": p.CheckpointUpstream,
		"checkpoint_downstream": p.CheckpointDownstream, "resumes_at": p.Resumes, "reread_records": p.Reread} {
		if v >= 0 {
			m[k] = v
		}
	}
	if p.Status == PartitionSkips {
		m["reread_records"] = p.Reread
	}
	if !p.CheckpointTime.IsZero() {
		m["checkpoint_time"] = p.CheckpointTime
	}
	return json.Marshal(m)
}
