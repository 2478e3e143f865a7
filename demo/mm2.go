package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// MM2Timing are the intervals of the simulated MM2, each standing in for an
// MM2 setting.
type MM2Timing struct {
	// Refresh stands in for refresh.topics.interval.seconds (MM2 default
	// 600 s): how often MirrorSourceConnector compares source and target
	// topic-partitions.
	Refresh time.Duration
	// OffsetFlush stands in for offset.flush.interval.ms (Connect default
	// 60 s): how often the task's "Committing offsets" line is logged.
	OffsetFlush time.Duration
	// Heartbeat stands in for emit.heartbeats.interval.seconds (default 1 s).
	Heartbeat time.Duration
	// Checkpoint stands in for emit.checkpoints.interval.seconds (default
	// 60 s); the demo consumer group commits at the same pace.
	Checkpoint time.Duration
	// Poll is the longest a task poll waits for records, and how often a
	// blocked send looks at the target's metadata again.
	Poll time.Duration
}

// offsetLagMax is MirrorSourceConfig offset.lag.max (default 100): an offset
// sync is emitted at least every this many records of a partition.
const offsetLagMax = 100

type tp struct {
	topic     string
	partition int32
}

func (t tp) String() string { return fmt.Sprintf("%s-%d", t.topic, t.partition) }

// MM2Stats are counters of the simulated MM2.
type MM2Stats struct {
	Mirrored    int64 // records written to the target
	Heartbeats  int64 // heartbeat records written
	Checkpoints int64 // checkpoint records written
	OffsetSyncs int64 // offset-sync records written
	Blocked     bool  // the task waits for a target partition that does not exist
}

// MM2 simulates one MirrorMaker 2 herder kafka->vast with
// IdentityReplicationPolicy and tasks.max=1: a MirrorSourceConnector that
// refreshes topic-partitions and tries to create missing ones, one
// MirrorSourceTask that copies records partition for partition, a
// MirrorHeartbeatTask and a MirrorCheckpointTask, all writing the worker log
// MM2 would write.
//
// Like the real task (MM2-REFERENCE.md §1.5), the task blocks when it must
// write a record to a target partition that does not exist: Connect's
// producer waits for metadata for ever (max.block.ms=Long.MAX_VALUE) and
// logs nothing above TRACE, so every partition of the task stops being
// mirrored until the target gains the partition.
type MM2 struct {
	log    *WorkerLog
	timing MM2Timing
	logger *slog.Logger

	// srcCl is the task's consumer and the offset-syncs producer; tgtCl
	// writes heartbeats and checkpoints. The task's own producer is made by
	// the task (newTaskProducer), as Connect gives every task its own.
	srcCl, tgtCl   *kgo.Client
	srcAdm, tgtAdm *kadm.Client
	tgtAddrs       []string

	reconfigure chan struct{} // the connector asks the task to take new partitions
	restart     chan struct{} // the task is restarted (a new producer)

	mu          sync.Mutex
	known       map[string]int32 // source partitions per topic known to the connector
	tgtParts    map[string]int32 // target partitions per topic, as the task's producer last saw them
	syncs       map[tp]mm2config.OffsetSync
	pendingAcks int64 // acknowledged since the last offset commit line

	mirrored, heartbeats, checkpoints, offsetSyncs atomic.Int64
	blocked                                        atomic.Bool
}

// NewMM2 connects the simulated MM2 to both clusters. Call Start, then
// Run, and Close when done.
func NewMM2(c *Clusters, log *WorkerLog, timing MM2Timing, logger *slog.Logger) (*MM2, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Metadata is cached for at most one poll interval, so that the
	// connector's topic refresh sees a recreated topic at once.
	src, err := kgo.NewClient(kgo.SeedBrokers(c.Source.ListenAddrs()...),
		kgo.ClientID(SourceAlias+"->"+TargetAlias+"|MirrorSourceConnector|replication-consumer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(),
		kgo.FetchMaxWait(timing.Poll), kgo.MetadataMinAge(timing.Poll))
	if err != nil {
		return nil, fmt.Errorf("source client: %w", err)
	}
	tgt, err := kgo.NewClient(kgo.SeedBrokers(c.Target.ListenAddrs()...),
		kgo.ClientID(SourceAlias+"->"+TargetAlias+"|MirrorHeartbeatConnector|heartbeats-target-producer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(), kgo.MetadataMinAge(timing.Poll))
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("target client: %w", err)
	}
	return &MM2{
		log: log, timing: timing, logger: logger,
		srcCl: src, tgtCl: tgt, srcAdm: kadm.NewClient(src), tgtAdm: kadm.NewClient(tgt),
		tgtAddrs:    c.Target.ListenAddrs(),
		reconfigure: make(chan struct{}, 1),
		restart:     make(chan struct{}, 1),
		known:       map[string]int32{},
		tgtParts:    map[string]int32{},
		syncs:       map[tp]mm2config.OffsetSync{},
	}, nil
}

// Close closes the clients.
func (m *MM2) Close() {
	m.srcCl.Close()
	m.tgtCl.Close()
}

// Stats returns the counters so far.
func (m *MM2) Stats() MM2Stats {
	return MM2Stats{
		Mirrored: m.mirrored.Load(), Heartbeats: m.heartbeats.Load(), Checkpoints: m.checkpoints.Load(),
		OffsetSyncs: m.offsetSyncs.Load(), Blocked: m.blocked.Load(),
	}
}

// Start starts the herder: the start-up lines MM2 logs, the initial load
// of topic-partitions on both clusters, and the first heartbeat
// (MirrorHeartbeatTask emits at once). Call it once, before Run.
func (m *MM2) Start(ctx context.Context) error {
	m.info("", loggerMirrorMaker, 178, "Kafka MirrorMaker starting with 2 herders.")
	src, err := m.partitions(ctx, m.srcAdm)
	if err != nil {
		return fmt.Errorf("loading initial set of topic-partitions on %s: %w", SourceAlias, err)
	}
	tgt, err := m.partitions(ctx, m.tgtAdm)
	if err != nil {
		return fmt.Errorf("loading topics of %s: %w", TargetAlias, err)
	}
	m.mu.Lock()
	m.known, m.tgtParts = src, tgt
	m.mu.Unlock()
	m.info(ctxConnector, loggerSourceConnector, 146, fmt.Sprintf("Started MirrorSourceConnector with %d topic-partitions.", total(src)))
	m.info(ctxConnector, loggerSourceConnector, 147, "Starting MirrorSourceConnector took 41 ms.")
	m.info("", loggerMirrorMaker, 183, "Kafka MirrorMaker started")
	m.heartbeat(ctx)
	return nil
}

// Run runs the connectors and the task of a started herder until ctx is
// done.
func (m *MM2) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return m.task(gctx) })
	g.Go(func() error { return every(gctx, m.timing.Refresh, m.refresh) })
	g.Go(func() error { return every(gctx, m.timing.OffsetFlush, m.commitOffsets) })
	g.Go(func() error { return every(gctx, m.timing.Heartbeat, m.heartbeat) })
	g.Go(func() error { return every(gctx, m.timing.Checkpoint, m.checkpoint) })
	err := g.Wait()
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

// every calls f every interval until ctx is done. Errors of f are the
// simulated MM2's business (it logs them); they do not stop the loop.
func every(ctx context.Context, interval time.Duration, f func(context.Context)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			f(ctx)
		}
	}
}

func (m *MM2) info(context, logger string, line int, msg string) {
	if err := m.log.Log("INFO", context, logger, line, msg); err != nil {
		m.logger.Warn("writing worker log", "err", err)
	}
}

func total(parts map[string]int32) int {
	n := 0
	for _, p := range parts {
		n += int(p)
	}
	return n
}

// partitions lists the partition counts of the mirrored topics on a
// cluster; a topic that does not exist is absent.
func (m *MM2) partitions(ctx context.Context, adm *kadm.Client) (map[string]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tds, err := adm.ListTopics(ctx, TopicOrders, TopicClicks)
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, td := range tds {
		if td.Err == nil {
			out[td.Topic] = int32(len(td.Partitions))
		}
	}
	return out, nil
}

// refresh is MirrorSourceConnector.refreshTopicPartitions followed by the
// Scheduler's "refreshing topics took N ms" line (MM2-REFERENCE.md §1.4,
// §1.8): when the source topic-partitions changed or some are missing on
// the target, log the "Found …" line, try to create the missing partitions
// (CreatePartitions on the target) and request a task reconfiguration.
func (m *MM2) refresh(ctx context.Context) {
	start := time.Now()
	src, err := m.partitions(ctx, m.srcAdm)
	if err != nil {
		return
	}
	tgt, err := m.partitions(ctx, m.tgtAdm)
	if err != nil {
		return
	}
	m.mu.Lock()
	var added, deleted, missing int
	for topic, n := range src {
		if k := m.known[topic]; n > k {
			added += int(n - k)
		} else {
			deleted += int(k - n)
		}
		if t, ok := tgt[topic]; ok && n > t {
			missing += int(n - t)
		}
	}
	changed := added > 0 || deleted > 0
	if changed {
		m.known = src
	}
	m.mu.Unlock()

	if changed || missing > 0 {
		m.info(ctxConnector, loggerSourceConnector, 412, fmt.Sprintf(
			"Found %d new topic-partitions on %s. Found %d deleted topic-partitions on %s. Found %d topic-partitions missing on %s.",
			added, SourceAlias, deleted, SourceAlias, missing, TargetAlias))
		m.createPartitions(ctx, src, tgt)
		if changed {
			select {
			case m.reconfigure <- struct{}{}:
			default:
			}
		}
	}
	m.info(ctxConnector, loggerScheduler, 95, fmt.Sprintf("refreshing topics took %d ms", max(1, time.Since(start).Milliseconds())))
}

// createPartitions is MirrorSourceConnector.createNewPartitions: increase
// each target topic to its source topic's partition count. On the demo's
// target the client refuses before sending anything (the broker does not
// advertise CreatePartitions); MM2's Java admin client fails the same way,
// with UnsupportedVersionException "The node does not support
// CREATE_PARTITIONS", logged as WARN with the exception attached. An
// ApiException has no stack frames (ApiException.fillInStackTrace returns
// this), so log4j prints the exception's one line.
func (m *MM2) createPartitions(ctx context.Context, src, tgt map[string]int32) {
	topics := make([]string, 0, len(src))
	for topic := range src {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		n, t := src[topic], tgt[topic]
		if t == 0 || n <= t {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := m.tgtAdm.UpdatePartitions(cctx, int(n), topic)
		cancel()
		if err == nil {
			err = resp[topic].Err
		}
		if err != nil {
			m.logger.Debug("CreatePartitions refused", "topic", topic, "err", err)
			exc := "org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS"
			if _, ok := resp[topic]; ok {
				exc = "org.apache.kafka.common.errors.ApiException: " + err.Error()
			}
			if lerr := m.log.Log("WARN", ctxConnector, loggerSourceConnector, 523,
				fmt.Sprintf("Could not create topic-partitions for %s.", topic), exc); lerr != nil {
				m.logger.Warn("writing worker log", "err", lerr)
			}
			continue
		}
		m.info(ctxConnector, loggerSourceConnector, 526, fmt.Sprintf("Increased size of %s to %d partitions.", topic, n))
	}
}

// TargetRepaired logs what the demo shows once the target topic has the
// source's partition count again: "Increased size of <topic> to <n>
// partitions.", the line MirrorSourceConnector.createNewPartitions logs on
// success, so that the log rules see the recovery signal. (After a topic is
// recreated by hand a real MM2 logs nothing; the watchdog then resolves
// partitions-not-created after its quiet period.)
func (m *MM2) TargetRepaired(topic string, partitions int32) {
	m.info(ctxConnector, loggerSourceConnector, 526, fmt.Sprintf("Increased size of %s to %d partitions.", topic, partitions))
}

// RestartTask restarts the task, as an operator does through Connect's
// REST API (POST /connectors/MirrorSourceConnector/tasks/0/restart) after
// recreating a target topic: the task gets a new producer, which learns the
// new topic's id and partitions.
func (m *MM2) RestartTask() {
	select {
	case m.restart <- struct{}{}:
	default:
	}
}

// errRestart tells the task loop that a restart was requested.
var errRestart = errors.New("task restart requested")

func (m *MM2) newTaskProducer() (*kgo.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(m.tgtAddrs...),
		kgo.ClientID("connector-producer-MirrorSourceConnector-0"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(), kgo.MetadataMinAge(m.timing.Poll))
	if err != nil {
		return nil, fmt.Errorf("task producer: %w", err)
	}
	return cl, nil
}

// assignment lists the topic-partitions of the single task, in order.
func (m *MM2) assignment() []tp {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tp
	for topic, n := range m.known {
		for p := int32(0); p < n; p++ {
			out = append(out, tp{topic, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	return out
}

// startTask logs what Connect and MirrorSourceTask log when the task
// starts, and begins consuming the partitions not consumed yet from the
// earliest offset (the task's consumer has auto.offset.reset=earliest).
func (m *MM2) startTask(consuming map[tp]bool) {
	parts := m.assignment()
	add := map[string]map[int32]kgo.Offset{}
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.String()
		if !consuming[p] {
			consuming[p] = true
			if add[p.topic] == nil {
				add[p.topic] = map[int32]kgo.Offset{}
			}
			add[p.topic][p.partition] = kgo.NewOffset().AtStart()
		}
	}
	m.srcCl.AddConsumePartitions(add)
	m.info(ctxTask, loggerWorkerTask, 280, "WorkerSourceTask{id=MirrorSourceConnector-0} Executing source task")
	m.info(ctxTask, loggerSourceTask, 112, fmt.Sprintf("task-thread-MirrorSourceConnector-0 replicating %d topic-partitions %s->%s: [%s].",
		len(parts), SourceAlias, TargetAlias, strings.Join(names, ", ")))
	m.info(ctxTask, loggerSourceTask, 118, "Starting with 0 previously uncommitted partitions.")
}

// task is MirrorSourceTask with Connect's producer: poll the assigned
// source partitions and write each record to the target partition of the
// same number, blocking while that partition does not exist.
func (m *MM2) task(ctx context.Context) error {
	prod, err := m.newTaskProducer()
	if err != nil {
		return err
	}
	defer func() { prod.Close() }()
	consuming := map[tp]bool{}
	m.startTask(consuming)
	for ctx.Err() == nil {
		select {
		case <-m.reconfigure:
			m.startTask(consuming)
		case <-m.restart:
			if prod, err = m.restartTask(prod, consuming); err != nil {
				return err
			}
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, m.timing.Poll)
		fetches := m.srcCl.PollRecords(pctx, 500)
		cancel()
		for _, r := range fetches.Records() {
			for {
				err := m.send(ctx, prod, r)
				if err == nil {
					break
				}
				if !errors.Is(err, errRestart) {
					return nil // ctx done
				}
				if prod, err = m.restartTask(prod, consuming); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// restartTask replaces the task's producer and logs what Connect logs when
// a task is stopped and started again (Worker.stopTask, Worker.startTask,
// then the task's start lines).
func (m *MM2) restartTask(old *kgo.Client, consuming map[tp]bool) (*kgo.Client, error) {
	m.info("", loggerWorker, 1107, "Stopping task MirrorSourceConnector-0")
	old.Close()
	prod, err := m.newTaskProducer()
	if err != nil {
		return nil, err
	}
	if tgt, err := m.partitions(context.Background(), m.tgtAdm); err == nil {
		m.mu.Lock()
		m.tgtParts = tgt
		m.mu.Unlock()
	}
	m.info("", loggerWorker, 600, "Creating task MirrorSourceConnector-0")
	m.startTask(consuming)
	return prod, nil
}

// send writes one record to the target, waiting (like Connect's producer
// with max.block.ms=Long.MAX_VALUE) until the target partition exists. It
// returns ctx's error when ctx is done and errRestart when the task is to
// be restarted.
func (m *MM2) send(ctx context.Context, prod *kgo.Client, r *kgo.Record) error {
	pause := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.restart:
			return errRestart
		case <-time.After(m.timing.Poll):
			return nil
		}
	}
	for {
		m.mu.Lock()
		have := m.tgtParts[r.Topic]
		m.mu.Unlock()
		if r.Partition < have {
			break
		}
		m.blocked.Store(true)
		if err := pause(); err != nil {
			return err
		}
		if tgt, err := m.partitions(ctx, m.tgtAdm); err == nil {
			m.mu.Lock()
			m.tgtParts = tgt
			m.mu.Unlock()
		}
	}
	if m.blocked.Swap(false) {
		prod.ForceMetadataRefresh()
	}
	out := &kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp}
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res := prod.ProduceSync(pctx, out)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := res.FirstErr(); err != nil {
			// A recreated target topic has a new topic id; Connect's
			// producer retries (and so blocks) until the task restarts.
			m.logger.Debug("send to target failed; retrying", "topic", r.Topic, "partition", r.Partition, "err", err)
			m.blocked.Store(true)
			if err := pause(); err != nil {
				return err
			}
			continue
		}
		m.blocked.Store(false)
		m.acked(r, res[0].Record.Offset)
		return nil
	}
}

// acked counts an acknowledged record and emits an offset sync when
// MirrorSourceTask would (OffsetSyncWriter: the first record of a
// partition, a jump in the upstream/downstream distance, or offset.lag.max
// records since the last sync).
func (m *MM2) acked(r *kgo.Record, downstream int64) {
	m.mirrored.Add(1)
	key := tp{r.Topic, r.Partition}
	m.mu.Lock()
	m.pendingAcks++
	prev, ok := m.syncs[key]
	emit := !ok || r.Offset-prev.UpstreamOffset >= offsetLagMax ||
		r.Offset-prev.UpstreamOffset != downstream-prev.Offset
	sync := mm2config.OffsetSync{Topic: r.Topic, Partition: r.Partition, UpstreamOffset: r.Offset, Offset: downstream}
	if emit {
		m.syncs[key] = sync
	}
	m.mu.Unlock()
	if !emit {
		return
	}
	k, v := sync.Encode()
	m.srcCl.Produce(context.Background(), &kgo.Record{Topic: OffsetSyncsTopic, Partition: 0, Key: k, Value: v}, func(_ *kgo.Record, err error) {
		if err != nil {
			m.logger.Warn("offset sync not written", "err", err)
			return
		}
		m.offsetSyncs.Add(1)
	})
}

// commitOffsets is the task's offset commit thread: "Committing offsets for
// N acknowledged messages" (WorkerSourceTask), logged only when something
// was acknowledged since the last commit, so it stops while the task
// blocks.
func (m *MM2) commitOffsets(context.Context) {
	m.mu.Lock()
	n := m.pendingAcks
	m.pendingAcks = 0
	m.mu.Unlock()
	if n > 0 {
		m.info(ctxOffsets, loggerCommit, 233, fmt.Sprintf("WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets for %d acknowledged messages", n))
	}
}

// heartbeat is MirrorHeartbeatTask: one record on the target's heartbeats
// topic, partition 0, key (kafka, vast), record timestamp = heartbeat time.
// It does not block on the data task.
func (m *MM2) heartbeat(ctx context.Context) {
	now := time.Now()
	k, v := mm2config.Heartbeat{Source: SourceAlias, Target: TargetAlias, Timestamp: now}.Encode()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := m.tgtCl.ProduceSync(pctx, &kgo.Record{Topic: HeartbeatsTopic, Partition: 0, Key: k, Value: v, Timestamp: now}).FirstErr(); err != nil {
		m.logger.Debug("heartbeat not written", "err", err)
		return
	}
	m.heartbeats.Add(1)
}

// checkpoint plays the demo consumer group and MirrorCheckpointTask: the
// group commits the source end offsets of orders on the source, and each
// committed offset that an offset sync covers is translated and written to
// kafka.checkpoints.internal on the target (OffsetSyncStore: the sync's
// downstream offset, plus one when the group is past the synced record).
func (m *MM2) checkpoint(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ends, err := m.srcAdm.ListEndOffsets(cctx, TopicOrders)
	if err != nil {
		return
	}
	commits := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			commits.AddOffset(o.Topic, o.Partition, o.Offset, -1)
		}
	})
	if _, err := m.srcAdm.CommitOffsets(cctx, Group, commits); err != nil {
		m.logger.Debug("demo group commit failed", "err", err)
		return
	}
	var recs []*kgo.Record
	m.mu.Lock()
	commits.Each(func(o kadm.Offset) {
		s, ok := m.syncs[tp{o.Topic, o.Partition}]
		if !ok || o.At < s.UpstreamOffset {
			return
		}
		down := s.Offset
		if o.At > s.UpstreamOffset {
			down++
		}
		k, v := mm2config.Checkpoint{Group: Group, Topic: o.Topic, Partition: o.Partition, UpstreamOffset: o.At, Offset: down}.Encode()
		recs = append(recs, &kgo.Record{Topic: CheckpointsTopic, Partition: 0, Key: k, Value: v})
	})
	m.mu.Unlock()
	if len(recs) == 0 {
		return
	}
	if err := m.tgtCl.ProduceSync(cctx, recs...).FirstErr(); err != nil {
		m.logger.Debug("checkpoints not written", "err", err)
		return
	}
	m.checkpoints.Add(int64(len(recs)))
}
