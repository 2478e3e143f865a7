package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// kafkaLine is MM2's layout [%d] %p %X{connector.context}%m (%c:%L).
var kafkaLine = regexp.MustCompile(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (INFO|WARN|ERROR) (\[[^\]]+\] )?.+ \([a-z.]+\.[A-Za-z]+:\d+\)$`)

func TestWorkerLogLayoutAndRotation(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 10, 30, 18, 59, 59, 123e6, time.UTC)
	w, err := OpenWorkerLog(dir, func() time.Time { return clock })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Log("WARN", ctxConnector, loggerSourceConnector, 523, "Could not create topic-partitions for orders.",
		"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS"); err != nil {
		t.Fatal(err)
	}
	rolled, err := w.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "connect.log.2026-10-30-18"); rolled != want {
		t.Errorf("rolled to %s, want %s", rolled, want)
	}
	clock = clock.Add(time.Second)
	if err := w.Log("INFO", "", loggerScheduler, 95, "refreshing topics took 3 ms"); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(rolled)
	if err != nil {
		t.Fatal(err)
	}
	want := "[2026-10-30 18:59:59,123] WARN [MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:523)\n" +
		"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS\n"
	if string(old) != want {
		t.Errorf("rolled file:\n%s\nwant:\n%s", old, want)
	}
	cur, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(cur); got != "[2026-10-30 19:00:00,123] INFO refreshing topics took 3 ms (org.apache.kafka.connect.mirror.Scheduler:95)\n" {
		t.Errorf("new connect.log = %q", got)
	}
	if w.Lines() != 3 || len(w.Rotated()) != 1 {
		t.Errorf("lines %d, rotated %v", w.Lines(), w.Rotated())
	}
}

// fastTiming runs the demo timeline in a few seconds.
func fastTiming() Timing { return DefaultTiming().Scaled(0.15) }

// TestDemoTimeline plays the whole timeline and checks what the simulated
// MM2 did and logged: the task blocked on the new partitions and resumed
// after the repair, the worker log holds MM2's lines in MM2's layout and
// was rolled over, and the narration tells each phase.
func TestDemoTimeline(t *testing.T) {
	dir := t.TempDir()
	var out lockedBuffer
	d, err := New(Options{Dir: dir, Timing: fastTiming(), Narrator: NewNarrator(&out, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	waitFor(t, "the task to block on orders-6", func() bool { return d.Stats().MM2.Blocked })
	waitFor(t, "the repair", func() bool { return d.Stats().Repaired })
	waitFor(t, "phase 4", func() bool { return strings.Contains(out.String(), "Phase 4") })
	before := d.Stats().MM2.Mirrored
	waitFor(t, "mirroring after the repair", func() bool { s := d.Stats(); return !s.MM2.Blocked && s.MM2.Mirrored > before })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	st := d.Stats()
	if len(st.Rolled) != 1 {
		t.Fatalf("rolled files %v, want one", st.Rolled)
	}
	if _, err := os.Stat(st.Rolled[0]); err != nil {
		t.Errorf("rolled file: %v", err)
	}
	if !regexp.MustCompile(`connect\.log\.\d{4}-\d\d-\d\d-\d\d$`).MatchString(st.Rolled[0]) {
		t.Errorf("rolled file name %s is not log4j's connect.log.YYYY-MM-DD-HH", st.Rolled[0])
	}
	var all []byte
	for _, p := range append(st.Rolled, d.LogFile()) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	text := string(all)
	for _, want := range []string{
		"INFO [MirrorSourceConnector|worker] Found 3 new topic-partitions on kafka. Found 0 deleted topic-partitions on kafka. Found 3 topic-partitions missing on vast. (org.apache.kafka.connect.mirror.MirrorSourceConnector:",
		"INFO [MirrorSourceConnector|worker] Found 0 new topic-partitions on kafka. Found 0 deleted topic-partitions on kafka. Found 3 topic-partitions missing on vast.",
		"WARN [MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:523)\norg.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS\n",
		"INFO [MirrorSourceConnector|worker] refreshing topics took ",
		"INFO [MirrorSourceConnector|task-0|offsets] WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets for ",
		"INFO [MirrorSourceConnector|worker] Increased size of orders to 9 partitions. (org.apache.kafka.connect.mirror.MirrorSourceConnector:526)",
		"INFO Creating task MirrorSourceConnector-0 (org.apache.kafka.connect.runtime.Worker:",
		"replicating 12 topic-partitions kafka->vast: [clicks-0, clicks-1, clicks-2, orders-0,",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("worker log lacks %q", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "org.apache.kafka.common.errors.") {
			continue // the exception line of a WARN
		}
		if !kafkaLine.MatchString(line) {
			t.Errorf("line not in MM2's layout: %q", line)
		}
	}
	narration := out.String()
	for _, want := range []string{"Phase 1", "adding 3 partitions to kafka/orders (6 → 9)", "now blocks", "connect.log → connect.log.", "Phase 3", "unblocked", "Phase 4"} {
		if !strings.Contains(narration, want) {
			t.Errorf("narration lacks %q:\n%s", want, narration)
		}
	}
	if !regexp.MustCompile(`(?m)^\[00:0\d\] Phase 2`).MatchString(narration) {
		t.Errorf("narration lines carry no [mm:ss] stamp:\n%s", narration)
	}
}

// TestMM2RecordFormats reads what the simulated MM2 wrote to its internal
// topics and decodes it with MM2's record layouts, and checks that data
// records keep their partition number.
func TestMM2RecordFormats(t *testing.T) {
	d, err := New(Options{Dir: t.TempDir(), Timing: fastTiming()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitFor(t, "heartbeats, checkpoints and offset syncs", func() bool {
		s := d.Stats().MM2
		return s.Heartbeats >= 2 && s.Checkpoints >= 1 && s.OffsetSyncs >= 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	read := func(addrs []string, topic string, partition int32) []*kgo.Record {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().AtStart()}}))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		fs := cl.PollFetches(rctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading %s-%d: %v", topic, partition, err)
		}
		return fs.Records()
	}
	c := d.Clusters()
	hbs := read(c.Target.ListenAddrs(), HeartbeatsTopic, 0)
	if len(hbs) == 0 {
		t.Fatal("no heartbeats on the target")
	}
	for _, r := range hbs {
		h, err := mm2config.DecodeHeartbeat(r.Key, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if h.Source != SourceAlias || h.Target != TargetAlias {
			t.Errorf("heartbeat %+v, want kafka->vast", h)
		}
		if d := h.Timestamp.Sub(r.Timestamp); d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("heartbeat time %v, record timestamp %v", h.Timestamp, r.Timestamp)
		}
	}
	cps := read(c.Target.ListenAddrs(), CheckpointsTopic, 0)
	if len(cps) == 0 {
		t.Fatal("no checkpoints on the target")
	}
	for _, r := range cps {
		cp, err := mm2config.DecodeCheckpoint(r.Key, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Group != Group || cp.Topic != TopicOrders || cp.UpstreamOffset <= 0 || cp.Offset < 0 {
			t.Errorf("checkpoint %+v", cp)
		}
	}
	syncs := read(c.Source.ListenAddrs(), OffsetSyncsTopic, 0)
	if len(syncs) == 0 {
		t.Fatal("no offset syncs on the source")
	}
	for _, r := range syncs {
		os, err := mm2config.DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if (os.Topic != TopicOrders && os.Topic != TopicClicks) || os.UpstreamOffset < 0 || os.Offset < 0 {
			t.Errorf("offset sync %+v", os)
		}
	}
	// Identity mirroring: the first record of clicks-1 on the source is
	// the first record of clicks-1 on the target.
	src, tgt := read(c.Source.ListenAddrs(), TopicClicks, 1), read(c.Target.ListenAddrs(), TopicClicks, 1)
	if len(src) == 0 || len(tgt) == 0 || !bytes.Equal(src[0].Value, tgt[0].Value) || !src[0].Timestamp.Equal(tgt[0].Timestamp) {
		t.Errorf("clicks-1 not mirrored partition for partition: source %d records, target %d", len(src), len(tgt))
	}
}

func TestTimingScaled(t *testing.T) {
	d := DefaultTiming()
	s := d.Scaled(0.5)
	if s.Healthy != d.Healthy/2 || s.MM2.Refresh != d.MM2.Refresh/2 || s.MM2.Heartbeat != d.MM2.Heartbeat/2 {
		t.Errorf("Scaled(0.5) = %+v", s)
	}
	if got := d.Scaled(0.0001).MM2.Poll; got != 20*time.Millisecond {
		t.Errorf("floor: Poll %v", got)
	}
	if d.Scaled(0) != d {
		t.Error("Scaled(0) changed the timing")
	}
}

func TestPropertiesNameBothClusters(t *testing.T) {
	c, err := StartClusters()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.Properties(5)
	for _, want := range []string{
		"kafka.bootstrap.servers = " + c.Source.ListenAddrs()[0],
		"vast.bootstrap.servers = " + c.Target.ListenAddrs()[0],
		"kafka->vast.enabled = true", "kafka->vast.topics = orders, clicks",
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"emit.heartbeats.enabled = true", "refresh.topics.interval.seconds = 5",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("properties lack %q:\n%s", want, p)
		}
	}
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := c.WriteProperties(path, 5); err != nil {
		t.Fatal(err)
	}
	cfg, err := mm2config.Load(path, mm2config.Options{})
	if err != nil {
		t.Fatalf("mm2config.Load: %v", err)
	}
	if len(cfg.Flows) != 1 || cfg.Flows[0].Source != SourceAlias || cfg.Flows[0].Target != TargetAlias {
		t.Errorf("flows %+v, want the one flow kafka->vast", cfg.Flows)
	}
}
