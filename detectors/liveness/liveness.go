package liveness

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// Rule ids of this package (CONTRACT.md, "Rules").
const (
	RuleHeartbeatStalled  = "heartbeat-stalled"
	RuleHeartbeatMissing  = "heartbeat-missing"
	RuleCheckpointStalled = "checkpoint-stalled"
)

// Rules lists the rule ids of this package with the severity each fires at,
// for metric pre-initialisation and docs.
func Rules() []detectors.RuleInfo {
	return []detectors.RuleInfo{
		{ID: RuleHeartbeatStalled, Severity: detectors.Critical},
		{ID: RuleHeartbeatMissing, Severity: detectors.Warning},
		{ID: RuleCheckpointStalled, Severity: detectors.Warning},
	}
}

// Defaults of Options.
const (
	// MinHeartbeatMaxAge is the floor of DefaultHeartbeatMaxAge.
	MinHeartbeatMaxAge = time.Minute
	// MinCheckpointWindow is the floor of DefaultCheckpointWindow.
	MinCheckpointWindow = 5 * time.Minute
	// DefaultHeartbeatTail is how many of the newest offsets of a heartbeats
	// partition are read per round. Partition 0 gets one record per
	// emitting herder per emit.heartbeats.interval.seconds (1 s by
	// default), so 1000 offsets cover several minutes of a busy topic.
	DefaultHeartbeatTail = 1000
	// DefaultReadTimeout bounds one read of an internal topic.
	DefaultReadTimeout = 15 * time.Second
)

// DefaultHeartbeatMaxAge is the age past which a heartbeat of herder f is
// stalled: ten emit.heartbeats.interval.seconds, at least a minute.
func DefaultHeartbeatMaxAge(f *mm2config.Flow) time.Duration {
	return max(MinHeartbeatMaxAge, 10*f.HeartbeatInterval)
}

// DefaultCheckpointWindow is how long a group's checkpoints may lag behind
// its commits on the source before checkpoint-stalled fires: three
// emit.checkpoints.interval.seconds (MirrorCheckpointTask emits at most once
// per interval), at least five minutes.
func DefaultCheckpointWindow(f *mm2config.Flow) time.Duration {
	return max(MinCheckpointWindow, 3*f.CheckpointInterval)
}

// Reader is the narrow view of one cluster the liveness checks need.
// *cluster.Client implements it; see its methods for the exact semantics
// (direct partition reads, no consumer group).
type Reader interface {
	// ReadTail reads the records among the newest n offsets of a partition.
	ReadTail(ctx context.Context, topic string, partition int32, n int) ([]*kgo.Record, error)
	// ReadTopic reads every record of a small topic, by partition then offset.
	ReadTopic(ctx context.Context, topic string, limit int) ([]*kgo.Record, error)
	// ListGroups lists every consumer group, sorted.
	ListGroups(ctx context.Context) ([]string, error)
	// GroupOffsets fetches the committed offsets of the given groups.
	GroupOffsets(ctx context.Context, groups []string) (map[string]*cluster.GroupOffsets, error)
}

// Options tune the Checker. Zero values take the defaults.
type Options struct {
	// HeartbeatMaxAge overrides DefaultHeartbeatMaxAge for every herder
	// when positive.
	HeartbeatMaxAge time.Duration
	// CheckpointWindow overrides DefaultCheckpointWindow for every flow
	// when positive.
	CheckpointWindow time.Duration
	// HeartbeatTail is how many newest offsets of a heartbeats partition are
	// read; default DefaultHeartbeatTail.
	HeartbeatTail int
	// ReadLimit caps the records read from a checkpoints or offset-syncs
	// topic; default cluster.DefaultReadLimit.
	ReadLimit int
	// ReadTimeout bounds one read; default DefaultReadTimeout.
	ReadTimeout time.Duration
	// Logger receives skipped records and read failures at debug level;
	// nil discards.
	Logger *slog.Logger
}

// Round is one observation: the MM2 configuration, the snapshots of the
// round (for topic existence and end offsets; take them with Offsets), and a
// Reader per alias.
type Round struct {
	// Config is the MM2 configuration (required).
	Config *mm2config.Config
	// Snapshots by alias; an alias without one makes every scope that needs
	// it unknown.
	Snapshots map[string]*cluster.Snapshot
	// Readers by alias. Herders whose target has no Reader are not
	// checked (dedicated mode starts a heartbeat herder for every pair of
	// clusters; the watchdog may have clients for only some of them).
	Readers map[string]Reader
	// Now is when the round was taken; zero means time.Now().
	Now time.Time
}

// HeartbeatScope is the alert scope of the heartbeat findings of herder
// source->target (its own heartbeats, and for an enabled flow the
// replicated heartbeats on its target).
func HeartbeatScope(source, target string) string { return "heartbeats:" + source + "->" + target }

// GroupScope is the alert scope of the consumer-group findings of flow
// source->target.
func GroupScope(source, target string) string { return "groups:" + source + "->" + target }

// Result is what one round found.
type Result struct {
	// Findings per alert scope (HeartbeatScope and GroupScope). A scope
	// that could be judged is present, with a nil slice when clean; the
	// alert state resolves what is absent from it.
	Findings map[string][]detectors.Finding
	// Unknown lists the scopes that could not be judged this round; their
	// alerts must be kept as they are.
	Unknown []string
	// Heartbeats has one row per heartbeats topic read, by herder.
	Heartbeats []HeartbeatRow
	// Groups has the cut-over readiness of each enabled flow with
	// checkpoints on, in the order of Config.Flows.
	Groups []FlowGroups
	// SyncLag has the replication lag by source topic from offset-syncs,
	// per enabled flow that emits them.
	SyncLag []SyncLagRow
	// Malformed counts the records of each internal topic read this round
	// that did not decode.
	Malformed []MalformedCount
	// Now is the time of the round (ages are relative to it).
	Now time.Time

	// keepLag lists the flows (source, target) whose offset-sync lag could
	// not be computed this round; their series keep their last values.
	keepLag map[[2]string]bool
	// keepMalformed lists the internal topics (cluster, topic) that are
	// still watched but were not read this round (the cluster was not
	// reached, the read failed, or the topic is read only on demand);
	// their malformed-record series keep their last values.
	keepMalformed map[[2]string]bool
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

// MalformedCount is the number of records of one internal topic, read this
// round, that did not decode (truncated, or a version header other than 0).
type MalformedCount struct {
	Cluster, Topic string
	Records        int
}

// Checker keeps what the detectors need across rounds: the last heartbeat
// seen per herder (for a herder whose heartbeats fell out of the tail), the
// committed offsets and checkpoints of each group in the round before, the
// round in which its commits moved while its checkpoints stood still, which
// internal topics' malformed counts are kept, and the last findings of each heartbeats
// topic (re-issued while a read fails). A Checker is not safe for concurrent
// use.
type Checker struct {
	opts   Options
	logger *slog.Logger

	lastBeat map[string]time.Time          // heartbeat key -> newest timestamp seen
	lastHB   map[string]*detectors.Finding // heartbeat row key -> finding of the last judged round
	groups   map[string]*groupState        // flow|group
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.HeartbeatTail <= 0 {
		opts.HeartbeatTail = DefaultHeartbeatTail
	}
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = cluster.DefaultReadLimit
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Checker{
		opts:     opts,
		logger:   logger,
		lastBeat: map[string]time.Time{},
		lastHB:   map[string]*detectors.Finding{},
		groups:   map[string]*groupState{},
	}
}

// Check judges one round. ctx bounds the reads; each read also has
// Options.ReadTimeout. r.Config must not be nil.
func (c *Checker) Check(ctx context.Context, r Round) *Result {
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	res := &Result{Findings: map[string][]detectors.Finding{}, Now: r.Now, keepLag: map[[2]string]bool{}}
	mal := &malformed{counts: map[[2]string]int{}, kept: map[[2]string]bool{}}
	c.checkHeartbeats(ctx, r, res, mal)
	syncs := c.checkGroups(ctx, r, res, mal)
	c.syncLag(r, res, syncs)
	res.Malformed = mal.list()
	res.keepMalformed = mal.kept
	sort.Strings(res.Unknown)
	return res
}

// readCtx bounds one read with the read timeout.
func (c *Checker) readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.ReadTimeout)
}

// malformed counts undecodable records per cluster and topic, and lists
// the watched topics that were not read this round.
type malformed struct {
	counts map[[2]string]int
	kept   map[[2]string]bool
}

func (m *malformed) add(cluster, topic string) { m.counts[[2]string{cluster, topic}]++ }

// touch records that a topic was read, so that its count is published as 0.
func (m *malformed) touch(cluster, topic string) { m.counts[[2]string{cluster, topic}] += 0 }

// keep records that a watched topic was not read this round, so that its
// count from the last read stays published.
func (m *malformed) keep(cluster, topic string) { m.kept[[2]string{cluster, topic}] = true }

func (m *malformed) list() []MalformedCount {
	out := make([]MalformedCount, 0, len(m.counts))
	for k, n := range m.counts {
		out = append(out, MalformedCount{Cluster: k[0], Topic: k[1], Records: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].Topic < out[j].Topic
	})
	return out
}

// topicState says whether a topic exists on a cluster according to the
// round's snapshot: present, absent, or unknown (no snapshot, or a
// metadata error other than "unknown topic").
type topicState int

const (
	topicUnknown topicState = iota
	topicAbsent
	topicPresent
)

func lookupTopic(snap *cluster.Snapshot, name string) (topicState, *cluster.Topic) {
	if snap == nil {
		return topicUnknown, nil
	}
	t, ok := snap.Topics[name]
	if !ok {
		return topicAbsent, nil
	}
	if t.Err != nil {
		if isUnknownTopic(t.Err) {
			return topicAbsent, t
		}
		return topicUnknown, t
	}
	return topicPresent, t
}
