package follow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
)

const (
	warnLine = "[2026-10-30 18:18:56,123] WARN [MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:412)"
	cause    = "org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support CREATE_PARTITIONS"
	frame    = "\tat org.apache.kafka.connect.mirror.MirrorSourceConnector.createNewPartitions(MirrorSourceConnector.java:412)"
	infoLine = "[2026-10-30 18:19:01,000] INFO [MirrorSourceConnector|worker] Found 0 topic-partitions missing on vast. (org.apache.kafka.connect.mirror.MirrorSourceConnector:160)"
)

type run struct {
	f      *Follower
	out    chan *watcher.Record
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, opts Options) *run {
	t.Helper()
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{f: f, out: make(chan *watcher.Record, 100), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- f.Run(ctx, r.out) }()
	select {
	case <-f.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels and returns what was flushed at shutdown.
func (r *run) stop(t *testing.T) []*watcher.Record {
	r.cancel()
	var got []*watcher.Record
	for {
		select {
		case rec := <-r.out:
			got = append(got, rec)
		case err, ok := <-r.done:
			if !ok {
				return got
			}
			if err != nil {
				t.Errorf("Run: %v", err)
			}
			close(r.done)
			for {
				select {
				case rec := <-r.out:
					got = append(got, rec)
				default:
					return got
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
}

func (r *run) next(t *testing.T) *watcher.Record {
	t.Helper()
	select {
	case rec := <-r.out:
		return rec
	case <-time.After(10 * time.Second):
		t.Fatal("no record")
		return nil
	}
}

func appendLines(t *testing.T, p string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

func TestRecordsAndQuietFlush(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	if err := os.WriteFile(p, []byte(infoLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	r := start(t, Options{Globs: []string{p}, Metrics: m, FlushAfter: 50 * time.Millisecond,
		Parse: logparse.Options{Layout: logparse.LayoutKafka}})
	// The existing line is skipped (start at the end); the stack trace is
	// the last thing written, so only the quiet period sends it.
	appendLines(t, p, warnLine, "Caused by: "+cause, frame)
	rec := r.next(t)
	if rec.Message != "Could not create topic-partitions for orders." || rec.Line != 2 || rec.File != p {
		t.Errorf("record = %+v", rec)
	}
	if len(rec.Stack) != 2 || rec.Stack[1] != frame {
		t.Errorf("stack = %q", rec.Stack)
	}
	want := time.Date(2026, 10, 30, 18, 18, 56, 123e6, time.UTC)
	if !rec.Time.Equal(want) {
		t.Errorf("time = %v, want %v", rec.Time, want)
	}
	if got := testutil.ToFloat64(m.lastRecord.WithLabelValues(p)); got != float64(want.UnixNano())/1e9 {
		t.Errorf("last record timestamp = %v, want %v", got, float64(want.Unix())+0.123)
	}
	if got := testutil.ToFloat64(m.lines.WithLabelValues(p)); got != 3 {
		t.Errorf("lines = %v, want 3", got)
	}
	if probs, err := testutil.GatherAndLint(reg); err != nil || len(probs) > 0 {
		t.Errorf("lint: %v %v", err, probs)
	}
}

func TestShutdownFlushesPendingRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	r := start(t, Options{Globs: []string{p}, FlushAfter: time.Hour,
		Parse: logparse.Options{Layout: logparse.LayoutKafka}})
	appendLines(t, p, infoLine, warnLine, frame)
	if rec := r.next(t); rec.Line != 1 {
		t.Fatalf("first record at line %d, want 1", rec.Line)
	}
	// The WARN record is pending (no next record, an hour of quiet needed);
	// wait until its lines were read, then stop.
	waitFor(t, func() bool { return testutil.ToFloat64(r.f.opts.Metrics.lines.WithLabelValues(p)) == 3 })
	got := r.stop(t)
	if len(got) != 1 || got[0].Line != 2 || len(got[0].Stack) != 1 {
		t.Fatalf("flushed at shutdown: %+v", got)
	}
}

func TestLongLineMarksRecordTruncated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	m := NewMetrics(nil)
	r := start(t, Options{Globs: []string{p}, MaxLineBytes: 1024, Metrics: m,
		Parse: logparse.Options{Layout: logparse.LayoutKafka}})
	long := strings.Replace(warnLine, "orders", strings.Repeat("o", 5000), 1)
	appendLines(t, p, infoLine, long, "\tat "+strings.Repeat("f", 3000), infoLine)
	for i, want := range []bool{false, true} {
		rec := r.next(t)
		if rec.Truncated != want {
			t.Errorf("record %d (line %d) truncated = %v, want %v", i, rec.Line, rec.Truncated, want)
		}
	}
	if got := testutil.ToFloat64(m.truncated.WithLabelValues(p)); got != 2 {
		t.Errorf("truncated lines = %v, want 2", got)
	}
}

func TestMetricsForMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	reg := prometheus.NewRegistry()
	start(t, Options{Globs: []string{p}, Metrics: NewMetrics(reg)})
	want := `
# HELP mm2_watchdog_log_file_waiting 1 while the log file does not exist or cannot be opened.
# TYPE mm2_watchdog_log_file_waiting gauge
mm2_watchdog_log_file_waiting{file="` + p + `"} 1
# HELP mm2_watchdog_log_rotations_total Log rotations noticed: rename (a new file at the path) or truncate (cut in place).
# TYPE mm2_watchdog_log_rotations_total counter
mm2_watchdog_log_rotations_total{file="` + p + `",kind="rename"} 0
mm2_watchdog_log_rotations_total{file="` + p + `",kind="truncate"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), MetricFileWaiting, MetricRotations, MetricLastRecordTimestamp); err != nil {
		t.Error(err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{
		{},
		{Globs: []string{"/var/log/[mm2"}},
		{Globs: []string{"/x"}, Parse: logparse.Options{Layout: "nope"}},
		{Globs: []string{"/x"}, Engine: "inotify"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) = nil error", o)
		}
	}
}

// waitFor waits for cond, checking each millisecond: for conditions that
// have no channel to wait on (metric values).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		<-tick.C
	}
}

// TestTailEngine runs the nxadm/tail engine through the same glue: a file
// missing at start (waiting), read from its start when it appears, a line
// over the cap (counted, record Truncated), and a pending record sent after
// the quiet period. The file appears whole (renamed into place), because
// nxadm/tail only notices writes after it has read a new file to its end.
func TestTailEngine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "connect.log")
	m := NewMetrics(nil)
	r := start(t, Options{Globs: []string{p}, Engine: EngineTail, MaxLineBytes: 1024, Metrics: m,
		FlushAfter: 50 * time.Millisecond, Parse: logparse.Options{Layout: logparse.LayoutKafka}})
	if got := testutil.ToFloat64(m.waiting.WithLabelValues(p)); got != 1 {
		t.Errorf("waiting = %v before the file exists, want 1", got)
	}
	long := strings.Replace(warnLine, "orders", strings.Repeat("o", 5000), 1)
	appendLines(t, p+".tmp", infoLine, long, "\tat "+strings.Repeat("f", 3000), warnLine, "Caused by: "+cause, frame)
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		line      int64
		truncated bool
		stack     int
	}{{1, false, 0}, {2, true, 1}, {4, false, 2}} {
		rec := r.next(t) // the last one only after FlushAfter
		if rec.Line != want.line || rec.Truncated != want.truncated || len(rec.Stack) != want.stack {
			t.Errorf("record %d: line %d truncated %v stack %d, want %+v", i, rec.Line, rec.Truncated, len(rec.Stack), want)
		}
	}
	if got := testutil.ToFloat64(m.truncated.WithLabelValues(p)); got != 2 {
		t.Errorf("truncated lines = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.lines.WithLabelValues(p)); got != 6 {
		t.Errorf("lines = %v, want 6", got)
	}
	if got := testutil.ToFloat64(m.waiting.WithLabelValues(p)); got != 0 {
		t.Errorf("waiting = %v while following, want 0", got)
	}
}
