package liveness

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
)

const (
	cpTopic   = "kafka.checkpoints.internal"
	syncTopic = "mm2-offset-syncs.vast.internal"
)

// groupPair sets up the cut-over example: orders on kafka has 3 partitions
// with 318, 182 and 0 records; group billing committed 318 on partition 0
// and 182 on partition 1 and never committed partition 2. MM2 synced
// partition 0 at 318 -> 318 but partition 1 only at 0 -> 0, so the
// checkpoints translate 318 -> 318 and 182 -> 1.
func groupPair(t *testing.T) (src, tgt *kafkatest.Cluster) {
	t.Helper()
	src, tgt = kafkatest.New(t, "kafka"), kafkatest.New(t, "vast")
	src.CreateTopic(t, "orders", 3, nil)
	src.CreateTopic(t, "audit", 1, nil)
	src.CreateTopic(t, syncTopic, 1, nil)
	tgt.CreateTopic(t, cpTopic, 1, nil)
	src.Produce(t, "orders", 0, 318, nil)
	src.Produce(t, "orders", 1, 182, nil)
	src.Produce(t, "audit", 0, 5, nil)
	src.Commit(t, "billing", "orders", map[int32]int64{0: 318, 1: 182})
	src.Commit(t, "console-consumer-4711", "orders", map[int32]int64{0: 10})
	src.Write(t,
		offsetSync(syncTopic, "orders", 0, 0, 0),
		offsetSync(syncTopic, "orders", 1, 0, 0),
		offsetSync(syncTopic, "orders", 0, 318, 318),
	)
	tgt.Write(t,
		checkpoint(cpTopic, "billing", "kafka.orders", 0, 300, 301, t0.Add(-2*time.Minute)),
		checkpoint(cpTopic, "billing", "kafka.orders", 0, 318, 318, t0.Add(-time.Minute)),
		checkpoint(cpTopic, "billing", "kafka.orders", 1, 182, 1, t0.Add(-time.Minute)),
	)
	return src, tgt
}

func flowGroups(t *testing.T, res *Result, source, target string) FlowGroups {
	t.Helper()
	for _, fg := range res.Groups {
		if fg.Source == source && fg.Target == target {
			return fg
		}
	}
	t.Fatalf("no groups for %s->%s: %+v", source, target, res.Groups)
	return FlowGroups{}
}

func TestCutoverReadiness(t *testing.T) {
	src, tgt := groupPair(t)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "kafka->vast.topics = orders", "emit.heartbeats.enabled = false"))
	res := check(t, New(Options{}), cfg, t0, src, tgt)
	fg := flowGroups(t, res, "kafka", "vast")
	if fg.Unknown != "" || fg.SyncsUnknown != "" {
		t.Fatalf("flow unknown: %+v", fg)
	}
	if len(fg.Groups) != 1 || fg.Groups[0].Group != "billing" {
		t.Fatalf("groups %+v, want only billing (console-consumer-* is excluded by default)", fg.Groups)
	}
	g := fg.Groups[0]
	if !g.Ready || g.Status != GroupReady || g.Committed != 2 || g.Checkpointed != 2 || g.Reread != 181 || g.RereadAtLeast {
		t.Errorf("group %+v, want ready with 181 records to re-read", g)
	}
	if !g.LastCheckpoint.Equal(t0.Add(-time.Minute)) {
		t.Errorf("last checkpoint %v", g.LastCheckpoint)
	}
	type row struct {
		p                 int32
		committed, up, dn int64
		resumes, reread   int64
		status            string
	}
	var got []row
	for _, p := range g.Partitions {
		if p.Topic != "orders" || p.TargetTopic != "kafka.orders" {
			t.Errorf("partition topics %+v", p)
		}
		got = append(got, row{p.Partition, p.Committed, p.CheckpointUpstream, p.CheckpointDownstream, p.Resumes, p.Reread, p.Status})
	}
	want := []row{
		{0, 318, 318, 318, 318, 0, PartitionOK},
		{1, 182, 182, 1, 1, 181, PartitionRereads},
		{2, -1, -1, -1, -1, -1, PartitionUncommitted},
	}
	if !slices.Equal(got, want) {
		t.Errorf("table\n got %+v\nwant %+v", got, want)
	}

	// Offset-sync lag: partition 0 synced at its last record, partition 1
	// 181 records behind, partition 2 empty and never synced.
	var lag *SyncLagRow
	for i := range res.SyncLag {
		if res.SyncLag[i].Topic == "orders" {
			lag = &res.SyncLag[i]
		}
	}
	if lag == nil || lag.Lag != 181 || lag.Partitions != 3 || lag.Unsynced != 1 || lag.OffsetLagMax != 100 {
		t.Errorf("orders lag %+v", lag)
	}
	for _, l := range res.SyncLag {
		if l.Topic == "audit" {
			t.Errorf("audit is not mirrored but has a lag row")
		}
	}
}

// TestCutoverNotReady: a partition committed without a checkpoint makes the
// group not ready; a missing offset-sync makes the re-read a lower bound.
func TestCutoverNotReady(t *testing.T) {
	src, tgt := groupPair(t)
	src.Commit(t, "billing", "orders", map[int32]int64{2: 0})
	src.Commit(t, "fresh", "orders", map[int32]int64{0: 5})
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "emit.heartbeats.enabled = false", "offset-syncs.topic.location = target"))
	res := check(t, New(Options{}), cfg, t0, src, tgt)
	fg := flowGroups(t, res, "kafka", "vast")
	if len(fg.Groups) != 2 {
		t.Fatalf("groups %+v", fg.Groups)
	}
	billing, fresh := fg.Groups[0], fg.Groups[1]
	if billing.Ready || billing.Status != GroupNotReady || billing.Committed != 3 || billing.Checkpointed != 2 {
		t.Errorf("billing %+v", billing)
	}
	// offset-syncs now live on vast, where there are none: translation
	// cannot be reconstructed, Reread counts only the checkpoint lag.
	if !billing.RereadAtLeast || billing.Reread != 0 {
		t.Errorf("billing re-read %d (at least %t), want a lower bound of 0", billing.Reread, billing.RereadAtLeast)
	}
	if fresh.Status != GroupNotReady || fresh.LastCheckpoint != (time.Time{}) {
		t.Errorf("fresh %+v", fresh)
	}
	if len(byRule(res, RuleCheckpointStalled)) != 0 {
		t.Errorf("one round cannot see a stall: %v", findings(res))
	}
}

// TestCheckpointStalled: the group commits on the source, its checkpoints
// stop; after the window checkpoint-stalled fires, and resolves when a new
// checkpoint arrives. Malformed checkpoints are counted, not fatal.
func TestCheckpointStalled(t *testing.T) {
	src, tgt := groupPair(t)
	tgt.Write(t, &kgo.Record{Topic: cpTopic, Key: []byte{0, 7, 'b'}, Value: []byte{0, 0}, Timestamp: t0})
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "emit.heartbeats.enabled = false"))
	c := New(Options{})
	stalled := func(res *Result) []string {
		var out []string
		for _, f := range byRule(res, RuleCheckpointStalled) {
			out = append(out, f.Group)
		}
		return out
	}

	res := check(t, c, cfg, t0, src, tgt)
	if got := stalled(res); len(got) != 0 {
		t.Fatalf("round 1: %v", got)
	}
	var bad int
	for _, m := range res.Malformed {
		if m.Topic == cpTopic {
			bad = m.Records
		}
	}
	if bad != 1 {
		t.Errorf("malformed checkpoints %d, want 1 (%+v)", bad, res.Malformed)
	}
	src.Produce(t, "orders", 1, 20, nil)
	src.Commit(t, "billing", "orders", map[int32]int64{1: 200})
	res = check(t, c, cfg, t0.Add(time.Minute), src, tgt)
	if got := stalled(res); len(got) != 0 {
		t.Fatalf("round 2 (commit moved, window not over): %v", got)
	}
	res = check(t, c, cfg, t0.Add(5*time.Minute), src, tgt)
	if got := stalled(res); len(got) != 0 {
		t.Fatalf("round 3 (4 minutes): %v", got)
	}
	res = check(t, c, cfg, t0.Add(6*time.Minute+time.Second), src, tgt)
	got := byRule(res, RuleCheckpointStalled)
	if len(got) != 1 || got[0].Group != "billing" || got[0].Severity != "warning" {
		t.Fatalf("round 4: %v", findings(res))
	}
	if got[0].Values["stalled_seconds"] != int64(301) || got[0].Values["window_seconds"] != int64(300) ||
		got[0].Values["commits_moved_at"] != "2026-10-30T18:01:00Z" {
		t.Errorf("values %v", got[0].Values)
	}
	if g := flowGroups(t, res, "kafka", "vast").Groups[0]; g.Reread != 18+181 {
		t.Errorf("re-read after the commit moved: %d, want 199", g.Reread)
	}

	tgt.Write(t, checkpoint(cpTopic, "billing", "kafka.orders", 1, 200, 1, t0.Add(6*time.Minute+30*time.Second)))
	res = check(t, c, cfg, t0.Add(7*time.Minute), src, tgt)
	if got := stalled(res); len(got) != 0 {
		t.Errorf("after a new checkpoint: %v", got)
	}
}

// TestCheckpointStalledClockSkew: the MM2 host's clock is an hour off the
// watchdog's. While MM2 keeps writing checkpoints that follow the commits,
// nothing fires, whatever the record timestamps say; once they stop, the
// stall is seen after the window all the same.
func TestCheckpointStalledClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			src, tgt := groupPair(t)
			cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "emit.heartbeats.enabled = false"))
			c := New(Options{})
			committed := int64(182)
			commit := func(now time.Time, checkpoint bool) {
				src.Produce(t, "orders", 1, 10, nil)
				committed += 10
				src.Commit(t, "billing", "orders", map[int32]int64{1: committed})
				if checkpoint {
					tgt.Write(t, billingCheckpoint(committed, now.Add(skew)))
				}
			}
			check(t, c, cfg, t0, src, tgt)
			now := t0
			for i := range 10 {
				now = t0.Add(time.Duration(i+1) * time.Minute)
				commit(now.Add(-30*time.Second), true)
				res := check(t, c, cfg, now, src, tgt)
				if got := byRule(res, RuleCheckpointStalled); len(got) != 0 {
					t.Fatalf("minute %d, checkpoints following the commits: %v", i+1, findings(res))
				}
			}
			// MM2 stops checkpointing; the group keeps committing.
			stalledAt := now.Add(time.Minute)
			for now = stalledAt; now.Sub(stalledAt) < 5*time.Minute; now = now.Add(time.Minute) {
				commit(now, false)
				if res := check(t, c, cfg, now, src, tgt); len(byRule(res, RuleCheckpointStalled)) != 0 {
					t.Fatalf("%s after the stall began, inside the window: %v", now.Sub(stalledAt), findings(res))
				}
			}
			commit(now, false)
			res := check(t, c, cfg, now, src, tgt)
			if got := byRule(res, RuleCheckpointStalled); len(got) != 1 || got[0].Values["stalled_seconds"] != int64(300) {
				t.Fatalf("5 minutes after the stall began: %v", findings(res))
			}
		})
	}
}

// billingCheckpoint is billing's checkpoint of kafka.orders partition 1 at the
// given upstream offset, translated with the 0 -> 0 offset-sync.
func billingCheckpoint(upstream int64, ts time.Time) *kgo.Record {
	return checkpoint(cpTopic, "billing", "kafka.orders", 1, upstream, 1, ts)
}

// TestCheckpointKeyOfTopicFromTarget: MirrorCheckpointTask.renameTopicPartition
// names a source topic that came from the target by
// replicationPolicy.originalTopic, not one hop upstream. On flow A->B the
// source topic B.C.orders (mirrored from C to B, then from B to A) has
// topicSource "B", the target, so its checkpoints are keyed
// originalTopic("B.C.orders") = "orders"; "C.orders" would be one hop.
func TestCheckpointKeyOfTopicFromTarget(t *testing.T) {
	a, b := kafkatest.New(t, "A"), kafkatest.New(t, "B")
	a.CreateTopic(t, "B.C.orders", 1, nil)
	a.Produce(t, "B.C.orders", 0, 10, nil)
	a.Commit(t, "billing", "B.C.orders", map[int32]int64{0: 10})
	b.CreateTopic(t, "A.checkpoints.internal", 1, nil)
	b.Write(t,
		checkpoint("A.checkpoints.internal", "billing", "C.orders", 0, 4, 4, t0),
		checkpoint("A.checkpoints.internal", "billing", "orders", 0, 10, 10, t0),
	)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(a, b, "emit.heartbeats.enabled = false"))
	fg := flowGroups(t, check(t, New(Options{}), cfg, t0, a, b), "A", "B")
	if len(fg.Groups) != 1 {
		t.Fatalf("groups %+v", fg.Groups)
	}
	g := fg.Groups[0]
	if g.Status != GroupReady || g.Committed != 1 || g.Checkpointed != 1 || len(g.Partitions) != 1 {
		t.Fatalf("billing %+v, want ready on B.C.orders", g)
	}
	if p := g.Partitions[0]; p.Topic != "B.C.orders" || p.TargetTopic != "orders" || p.CheckpointUpstream != 10 || p.Status != PartitionOK {
		t.Errorf("row %+v, want B.C.orders checkpointed as orders at 10", p)
	}
}

// TestCheckpointTopicFilter: MM2 checkpoints a committed partition when the
// topic filter accepts its source-side name (MirrorCheckpointTask
// .shouldCheckpointTopic), and ignores groups with no such partition
// (MirrorCheckpointConnector). With topics = orders on A->B, commits on
// B.orders (which came from B) are neither checkpointed nor counted.
func TestCheckpointTopicFilter(t *testing.T) {
	a, b := kafkatest.New(t, "A"), kafkatest.New(t, "B")
	a.CreateTopic(t, "orders", 1, nil)
	a.CreateTopic(t, "B.orders", 1, nil)
	a.Produce(t, "orders", 0, 10, nil)
	a.Produce(t, "B.orders", 0, 10, nil)
	a.Commit(t, "billing", "orders", map[int32]int64{0: 10})
	a.Commit(t, "billing", "B.orders", map[int32]int64{0: 7})
	a.Commit(t, "replica-reader", "B.orders", map[int32]int64{0: 3})
	b.CreateTopic(t, "A.checkpoints.internal", 1, nil)
	b.Write(t, checkpoint("A.checkpoints.internal", "billing", "A.orders", 0, 10, 10, t0))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(a, b, "A->B.topics = orders", "emit.heartbeats.enabled = false"))
	fg := flowGroups(t, check(t, New(Options{}), cfg, t0, a, b), "A", "B")
	if len(fg.Groups) != 1 || fg.Groups[0].Group != "billing" {
		t.Fatalf("groups %+v, want billing only (replica-reader commits on no checkpointed topic)", fg.Groups)
	}
	g := fg.Groups[0]
	if g.Status != GroupReady || g.Committed != 1 || g.Checkpointed != 1 {
		t.Errorf("billing %+v, want ready with orders only", g)
	}
	for _, p := range g.Partitions {
		if p.Topic != "orders" || p.TargetTopic != "A.orders" {
			t.Errorf("row %+v, want orders only", p)
		}
	}
}
