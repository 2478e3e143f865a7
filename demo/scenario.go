package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"
)

// AddedPartitions is how many partitions the incident adds to the source's
// orders topic.
const AddedPartitions = 3

// PropertiesName is the file name of the generated MM2 properties file.
const PropertiesName = "mm2.properties"

// Timing is the demo's timeline and pace.
type Timing struct {
	// Healthy is how long the demo runs healthy before the incident.
	Healthy time.Duration
	// Incident is how long after the partition increase the target is
	// repaired.
	Incident time.Duration
	// RotateAfter is when, into the incident, the worker log rolls over.
	RotateAfter time.Duration
	// ProduceEvery is the pause between two source records of each topic.
	ProduceEvery time.Duration
	// MM2 are the simulated MM2's intervals.
	MM2 MM2Timing
}

// DefaultTiming is the pace of `mm2-watchdog demo`: 8 s healthy, the
// incident repaired 25 s later, MM2's 10-minute topic refresh compressed to
// 5 s and its 60-second offset flush and checkpoint intervals to 5 s and
// 2 s, four records a second into each topic.
func DefaultTiming() Timing {
	return Timing{
		Healthy:      8 * time.Second,
		Incident:     25 * time.Second,
		RotateAfter:  12 * time.Second,
		ProduceEvery: 250 * time.Millisecond,
		MM2: MM2Timing{
			Refresh:     5 * time.Second,
			OffsetFlush: 5 * time.Second,
			Heartbeat:   time.Second,
			Checkpoint:  2 * time.Second,
			Poll:        200 * time.Millisecond,
		},
	}
}

// Scaled returns t with every duration multiplied by f (0.2 runs five times
// as fast), each kept at 20 ms or more. f <= 0 returns t unchanged.
func (t Timing) Scaled(f float64) Timing {
	if f <= 0 {
		return t
	}
	s := func(d time.Duration) time.Duration { return max(20*time.Millisecond, time.Duration(float64(d)*f)) }
	return Timing{
		Healthy: s(t.Healthy), Incident: s(t.Incident), RotateAfter: s(t.RotateAfter), ProduceEvery: s(t.ProduceEvery),
		MM2: MM2Timing{Refresh: s(t.MM2.Refresh), OffsetFlush: s(t.MM2.OffsetFlush), Heartbeat: s(t.MM2.Heartbeat),
			Checkpoint: s(t.MM2.Checkpoint), Poll: s(t.MM2.Poll)},
	}
}

// Options configure a Demo.
type Options struct {
	// Dir receives connect.log (and its rolled files) and mm2.properties.
	// It must exist.
	Dir string
	// Timing is the timeline; the zero value means DefaultTiming().
	Timing Timing
	// Narrator tells the story; nil discards it.
	Narrator *Narrator
	// Logger receives the simulator's own diagnostics; nil discards them.
	Logger *slog.Logger
}

// Stats are the demo's counters, for a summary.
type Stats struct {
	MM2      MM2Stats
	Produced int64    // records written to the source
	LogLines int64    // lines written to the worker log
	Rolled   []string // rolled worker log files
	Repaired bool     // the target was repaired
}

// Demo is the whole demo environment: the two clusters, an application
// producing to the source, the simulated MM2 and its worker log, and the
// timeline that breaks and repairs the flow.
type Demo struct {
	opts     Options
	clusters *Clusters
	log      *WorkerLog
	mm2      *MM2
	prod     *kgo.Client
	srcAdm   *kadm.Client
	tgtAdm   *kadm.Client
	props    string
	orders   atomic.Int32 // partitions the producer writes orders to
	produced atomic.Int64
	repaired atomic.Bool
}

// New starts the clusters, writes mm2.properties, opens the worker log in
// opts.Dir and starts the simulated MM2 herder (its start-up lines and
// first heartbeat). Nothing is produced or mirrored until Run.
func New(opts Options) (*Demo, error) {
	if opts.Timing == (Timing{}) {
		opts.Timing = DefaultTiming()
	}
	if opts.Narrator == nil {
		opts.Narrator = NewNarrator(discard{}, nil)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := StartClusters()
	if err != nil {
		return nil, err
	}
	d := &Demo{opts: opts, clusters: c, props: filepath.Join(opts.Dir, PropertiesName)}
	fail := func(err error) (*Demo, error) {
		d.Close()
		return nil, err
	}
	if err := c.WriteProperties(d.props, int(max(time.Second, opts.Timing.MM2.Refresh)/time.Second)); err != nil {
		return fail(err)
	}
	if d.log, err = OpenWorkerLog(opts.Dir, nil); err != nil {
		return fail(err)
	}
	if d.mm2, err = NewMM2(c, d.log, opts.Timing.MM2, opts.Logger.With("component", "mm2-simulator")); err != nil {
		return fail(err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	err = d.mm2.Start(sctx)
	cancel()
	if err != nil {
		return fail(err)
	}
	if d.prod, err = kgo.NewClient(kgo.SeedBrokers(c.Source.ListenAddrs()...), kgo.ClientID("orders-service"),
		kgo.RecordPartitioner(kgo.ManualPartitioner())); err != nil {
		return fail(fmt.Errorf("source producer: %w", err))
	}
	d.srcAdm = kadm.NewClient(d.prod)
	tgt, err := kgo.NewClient(kgo.SeedBrokers(c.Target.ListenAddrs()...), kgo.ClientID("operator"))
	if err != nil {
		return fail(fmt.Errorf("target admin client: %w", err))
	}
	d.tgtAdm = kadm.NewClient(tgt)
	d.orders.Store(OrdersPartitions)
	return d, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Close stops everything New started. It is safe to call more than once
// and on a partly built Demo.
func (d *Demo) Close() {
	if d.mm2 != nil {
		d.mm2.Close()
		d.mm2 = nil
	}
	if d.prod != nil {
		d.prod.Close()
		d.prod = nil
	}
	if d.tgtAdm != nil {
		d.tgtAdm.Close()
		d.tgtAdm = nil
	}
	if d.log != nil {
		_ = d.log.Close()
	}
	if d.clusters != nil {
		d.clusters.Close()
		d.clusters = nil
	}
}

// Clusters are the demo's clusters.
func (d *Demo) Clusters() *Clusters { return d.clusters }

// PropertiesFile is the path of the generated MM2 properties file.
func (d *Demo) PropertiesFile() string { return d.props }

// LogFile is the path of the active worker log (follow it by name).
func (d *Demo) LogFile() string { return d.log.Path() }

// Stats returns the counters so far.
func (d *Demo) Stats() Stats {
	return Stats{
		MM2: d.mm2.Stats(), Produced: d.produced.Load(), LogLines: d.log.Lines(),
		Rolled: d.log.Rotated(), Repaired: d.repaired.Load(),
	}
}

// Run produces to the source, runs the simulated MM2 and plays the
// timeline: healthy, partitions added to the source's orders topic, the
// worker log rolled over, the target repaired, healthy again. It returns
// when ctx is done (nil) or when a step fails.
func (d *Demo) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.mm2.Run(gctx) })
	g.Go(func() error { return d.produce(gctx) })
	g.Go(func() error { return d.watchTask(gctx) })
	g.Go(func() error { return d.timeline(gctx) })
	err := g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// produce is the application on the source: a record to orders and one to
// clicks every ProduceEvery, round-robin over the partitions.
func (d *Demo) produce(ctx context.Context) error {
	t := time.NewTicker(d.opts.Timing.ProduceEvery)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := time.Now()
		recs := []*kgo.Record{
			{Topic: TopicOrders, Partition: int32(i) % d.orders.Load(), Key: fmt.Appendf(nil, "customer-%d", i%17), Value: fmt.Appendf(nil, `{"order":%d}`, i), Timestamp: now},
			{Topic: TopicClicks, Partition: int32(i) % ClicksPartitions, Value: fmt.Appendf(nil, `{"click":%d}`, i), Timestamp: now},
		}
		for _, r := range recs {
			d.prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					d.opts.Logger.Debug("source produce failed", "err", err)
					return
				}
				d.produced.Add(1)
			})
		}
	}
}

// watchTask narrates when the simulated MM2 task blocks and unblocks.
func (d *Demo) watchTask(ctx context.Context) error {
	n := d.opts.Narrator
	blocked := false
	t := time.NewTicker(d.opts.Timing.MM2.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if b := d.mm2.Stats().Blocked; b != blocked {
			blocked = b
			if b {
				n.Sayf("MM2's only task (tasks.max=1) now blocks: it must write a record to vast/orders partition %d, which does not exist.\n"+
					"Connect's producer waits for ever (max.block.ms=Long.MAX_VALUE) and logs nothing; clicks and orders 0-%d stop too.", OrdersPartitions, OrdersPartitions-1)
			} else {
				n.Sayf("MM2's task is unblocked and mirrors the backlog.")
			}
		}
	}
}

// wait sleeps for d or until ctx is done.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (d *Demo) timeline(ctx context.Context) error {
	n, tm := d.opts.Narrator, d.opts.Timing
	perSecond := int(2 * time.Second / tm.ProduceEvery)
	n.Sayf("Phase 1, healthy: an application writes %d records/s to kafka/%s (%d partitions) and kafka/%s (%d); the simulated MM2\n"+
		"mirrors them to the same topics and partitions on vast, writes heartbeats every %s and checkpoints for group %s.",
		perSecond, TopicOrders, OrdersPartitions, TopicClicks, ClicksPartitions, tm.MM2.Heartbeat, Group)
	if !wait(ctx, tm.Healthy) {
		return nil
	}

	total := int32(OrdersPartitions + AddedPartitions)
	n.Sayf("Phase 2, incident: adding %d partitions to kafka/%s (%d → %d). The source accepts CreatePartitions; vast does not offer it,\n"+
		"so MM2 cannot give vast/%s the new partitions. Watch mm2_watchdog_unmirrored_partitions and mm2_watchdog_records_at_risk.",
		AddedPartitions, TopicOrders, OrdersPartitions, total, TopicOrders)
	if err := d.addSourcePartitions(ctx, total); err != nil {
		return err
	}
	n.Sayf("The application now writes to %s partitions %d-%d too. Every topic refresh (%s here, 10 min in MM2) logs\n"+
		"'Found … topic-partitions missing on vast.' and the WARN 'Could not create topic-partitions for %s.'",
		TopicOrders, OrdersPartitions, total-1, tm.MM2.Refresh, TopicOrders)
	if !wait(ctx, tm.RotateAfter) {
		return nil
	}
	rolled, err := d.log.Rotate()
	if err != nil {
		return err
	}
	n.Sayf("log4j rolls the worker log over: connect.log → %s, and a new connect.log begins.\n"+
		"The watchdog follows connect.log by name and keeps reading.", filepath.Base(rolled))
	if !wait(ctx, max(0, tm.Incident-tm.RotateAfter)) {
		return nil
	}

	n.Sayf("Phase 3, repair: vast has no CreatePartitions, so the operator deletes vast/%s and creates it again with %d partitions.\n"+
		"(What vast/%s held is gone with it; MM2 carries on from its committed source offsets.)", TopicOrders, total, TopicOrders)
	if err := d.repairTarget(ctx, total); err != nil {
		return err
	}
	d.repaired.Store(true)
	d.mm2.TargetRepaired(TopicOrders, total)
	d.mm2.RestartTask()
	n.Sayf("vast/%s has %d partitions; the operator restarts MM2's task (POST /connectors/MirrorSourceConnector/tasks/0/restart)\n"+
		"so that its producer sees the new topic. The next cluster check and topic refresh see it; the alerts resolve.", TopicOrders, total)
	if !wait(ctx, tm.Incident/2) {
		return nil
	}
	n.Sayf("Phase 4, healthy again. The demo keeps running; press Ctrl-C to stop.")
	return nil
}

// addSourcePartitions raises kafka/orders to total partitions and points
// the application at them.
func (d *Demo) addSourcePartitions(ctx context.Context, total int32) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := d.srcAdm.UpdatePartitions(cctx, int(total), TopicOrders)
	if err == nil {
		err = resp[TopicOrders].Err
	}
	if err != nil {
		return fmt.Errorf("adding partitions to %s/%s: %w", SourceAlias, TopicOrders, err)
	}
	// The application learns of the new partitions with its next metadata
	// refresh; its first record to the last new partition waits for that.
	d.prod.ForceMetadataRefresh()
	for i := 0; ; i++ {
		rec := &kgo.Record{Topic: TopicOrders, Partition: total - 1, Key: []byte("customer-0"), Value: fmt.Appendf(nil, `{"order":"first-on-%d"}`, total-1)}
		err := d.prod.ProduceSync(cctx, rec).FirstErr()
		if err == nil {
			d.produced.Add(1)
			break
		}
		if cctx.Err() != nil {
			return fmt.Errorf("producing to %s/%s partition %d: %w", SourceAlias, TopicOrders, total-1, err)
		}
		d.prod.ForceMetadataRefresh()
		if !wait(cctx, 20*time.Millisecond) {
			return nil
		}
	}
	d.orders.Store(total)
	return nil
}

// repairTarget deletes the target's orders topic and creates it again with
// total partitions (DeleteTopics and CreateTopics, which vast supports).
func (d *Demo) repairTarget(ctx context.Context, total int32) error {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := d.tgtAdm.DeleteTopic(cctx, TopicOrders); err != nil {
		return fmt.Errorf("deleting %s/%s: %w", TargetAlias, TopicOrders, err)
	}
	for {
		resp, err := d.tgtAdm.CreateTopic(cctx, total, 1, nil, TopicOrders)
		if err == nil {
			err = resp.Err
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) || cctx.Err() != nil {
			return fmt.Errorf("creating %s/%s with %d partitions: %w", TargetAlias, TopicOrders, total, err)
		}
		if !wait(cctx, 50*time.Millisecond) {
			return fmt.Errorf("creating %s/%s: %w", TargetAlias, TopicOrders, cctx.Err())
		}
	}
}
