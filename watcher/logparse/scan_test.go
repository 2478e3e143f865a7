package logparse

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

func scanAll(t *testing.T, r io.Reader, opts Options) ([]*watcher.Record, Stats) {
	t.Helper()
	var recs []*watcher.Record
	st, err := ScanReader(context.Background(), r, "in.log", opts, func(rec *watcher.Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatalf("ScanReader: %v", err)
	}
	return recs, st
}

func TestFieldCases(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "field-cases")
	type rec struct {
		line         int64
		level, ctx   string
		logger       string
		stack        int
		msgSubstring string
	}
	cases := []struct {
		file    string
		records int
		check   []rec
	}{
		{"case09-herder-exit-offsets-topic-denied.log", 12, []rec{
			{4, "WARN", "", "org.apache.kafka.clients.admin.KafkaAdminClient", 0, "TOPIC_AUTHORIZATION_FAILED"},
			{5, "ERROR", "", "org.apache.kafka.connect.runtime.distributed.DistributedHerder", 1, "Uncaught exception in herder work thread, exiting:"},
			{13, "INFO", "", "org.apache.kafka.connect.runtime.Connect", 0, "Kafka Connect stopped"},
		}},
		{"case11-record-too-large-task-killed.log", 8, []rec{
			{3, "ERROR", "legacy->platform.MirrorSourceConnector|task-0", "org.apache.kafka.connect.runtime.AbstractWorkerSourceTask", 1, "failed to send record to document-archive:"},
			{5, "ERROR", "legacy->platform.MirrorSourceConnector|task-0", "org.apache.kafka.connect.runtime.WorkerTask", 14, "Task threw an uncaught and unrecoverable exception."},
			{22, "INFO", "legacy->platform.MirrorHeartbeatConnector|task-0", "org.apache.kafka.connect.runtime.WorkerSourceTask", 0, "Committing offsets for 1 acknowledged messages"},
		}},
		{"case18-circular-replication-prefix-chain.log", 13, []rec{
			{1, "INFO", "", "org.apache.kafka.connect.mirror.MirrorSourceConnector", 0, "Found 6 topic-partitions on peer. 3 are new. 0 were removed. Previously had 3."},
			{2, "INFO", "", "org.apache.kafka.connect.mirror.MirrorSourceConnector", 0, "Created remote topic peer.peer.peer.test-topic-1 with 3 partitions."},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			byLine := map[int64]*watcher.Record{}
			n := 0
			st, err := ScanFile(context.Background(), path, Options{}, func(r *watcher.Record) error {
				n++
				byLine[r.Line] = r
				if r.File != path || r.Time.IsZero() || r.Logger == "" || r.Thread == "" {
					t.Errorf("record %d: file %q time %v logger %q thread %q", r.Line, r.File, r.Time, r.Logger, r.Thread)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != c.records || st.Records != int64(n) || st.Layout != LayoutStrimzi || st.Envelope != EnvelopeNone {
				t.Fatalf("%d records (stats %+v), want %d strimzi", n, st, c.records)
			}
			for _, w := range c.check {
				r := byLine[w.line]
				if r == nil {
					t.Fatalf("no record at line %d", w.line)
				}
				if r.Level != w.level || r.Context != w.ctx || r.Logger != w.logger || len(r.Stack) != w.stack || !strings.Contains(r.Message, w.msgSubstring) {
					t.Errorf("line %d: level %q ctx %q logger %q stack %d msg %q", w.line, r.Level, r.Context, r.Logger, len(r.Stack), r.Message)
				}
			}
		})
	}
}

func TestStackCapAndDroppedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("[2026-10-30 18:18:56,123] ERROR boom (a.B:1)\n")
	for i := 0; i < 10; i++ {
		b.WriteString("\tat frame\n")
	}
	b.WriteString("[2026-10-30 18:18:57,123] INFO next (a.B:1)\n")
	recs, st := feedAll(t, Options{Layout: LayoutKafka, MaxStackLines: 4}, b.String())
	if len(recs) != 2 || len(recs[0].Stack) != 4 || !recs[0].Truncated || recs[1].Truncated {
		t.Fatalf("records %+v", recs)
	}
	if st.DroppedLines != 6 || st.Lines != 12 || st.Records != 2 {
		t.Errorf("stats %+v", st)
	}
	// A JSON stack_trace is capped the same way.
	recs, st = feedAll(t, Options{Layout: LayoutJSON, MaxStackLines: 2}, `{"level":"ERROR","message":"m","stack_trace":"a\nb\nc\nd"}`)
	if len(recs[0].Stack) != 2 || !recs[0].Truncated || st.DroppedLines != 2 {
		t.Errorf("json: stack %q truncated %v stats %+v", recs[0].Stack, recs[0].Truncated, st)
	}
}

func TestLongLineIsCut(t *testing.T) {
	long := "[2026-10-30 18:18:56,123] WARN " + strings.Repeat("x", 5000) + " (a.B:1)"
	recs, st := feedAll(t, Options{Layout: LayoutKafka, MaxLineBytes: 1000}, long+"\n\t"+strings.Repeat("y", 3000))
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if !r.Truncated || len(r.Text) != 1000 || r.Level != "WARN" || len(r.Message) != 1000-len("[2026-10-30 18:18:56,123] WARN ") || len(r.Stack[0]) != 1000 {
		t.Errorf("truncated %v, text %d bytes, level %q, message %d bytes, stack %d bytes", r.Truncated, len(r.Text), r.Level, len(r.Message), len(r.Stack[0]))
	}
	if st.TruncatedLines != 2 {
		t.Errorf("TruncatedLines %d", st.TruncatedLines)
	}
}

// repeatReader yields n bytes of c without holding them.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > r.n {
		k = r.n
	}
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= k
	return int(k), nil
}

func TestHugeLineIsNotHeldInMemory(t *testing.T) {
	const huge = 50 << 20
	in := io.MultiReader(
		strings.NewReader("[2026-10-30 18:18:56,123] INFO first (a.B:1)\n[2026-10-30 18:18:56,124] WARN "),
		&repeatReader{c: 'z', n: huge},
		strings.NewReader(" (a.B:2)\n[2026-10-30 18:18:56,125] INFO after (a.B:3)\n"),
	)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	recs, st := scanAll(t, in, Options{Layout: LayoutKafka})
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("allocated %d MiB for a 50 MiB line", alloc>>20)
	}
	if len(recs) != 3 || !recs[1].Truncated || recs[1].Level != "WARN" || recs[2].Message != "after" || recs[2].Line != 3 {
		t.Fatalf("records: %d, %+v", len(recs), recs[len(recs)-1])
	}
	if st.TruncatedLines != 1 || st.DiscardedBytes < huge-(1<<20) {
		t.Errorf("stats %+v", st)
	}
}

func TestGarbageAndInvalidUTF8(t *testing.T) {
	garbage := []byte{0x00, 0xff, 0xfe, '[', 0xc3, 0x28, '\r', 0x1b, '[', '2', 'J', 0x80}
	var in bytes.Buffer
	in.WriteString("[2026-10-30 18:18:56,123] INFO first (a.B:1)\n")
	in.Write(garbage)
	in.WriteString("\n[2026-10-30 18:18:56,124] WARN caf\xe9 (a.B:2)\n")
	in.Write(bytes.Repeat(garbage, 1000))
	in.WriteString("\n[2026-10-30 18:18:56,125] ERROR last (a.B:3)\n")
	recs, _ := scanAll(t, &in, Options{})
	if len(recs) != 3 || recs[1].Message != "caf\xe9" || recs[2].Level != "ERROR" || len(recs[0].Stack) != 1 || len(recs[1].Stack) != 1 {
		t.Fatalf("records %d: %+v", len(recs), recs)
	}
}

func TestScanGzipByMagicAndStdinLikeReaders(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "field-cases", "case11-record-too-large-task-killed.log"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	// A rotated, compressed file whose name does not end in .gz.
	path := filepath.Join(t.TempDir(), "connect.log.2026-10-30-18")
	if err := os.WriteFile(path, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := ScanFile(context.Background(), path, Options{}, func(*watcher.Record) error { n++; return nil }); err != nil || n != 8 {
		t.Fatalf("gzip: %d records, %v", n, err)
	}
	for name, r := range map[string]io.Reader{
		"one byte":    iotest.OneByteReader(bytes.NewReader(data)),
		"half":        iotest.HalfReader(bytes.NewReader(data)),
		"gz one byte": iotest.OneByteReader(bytes.NewReader(gz.Bytes())),
	} {
		if recs, _ := scanAll(t, r, Options{}); len(recs) != 8 || len(recs[3].Stack) != 14 {
			t.Errorf("%s: %d records", name, len(recs))
		}
	}
	// A pipe, as stdin is.
	pr, pw := io.Pipe()
	go func() {
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			pw.Write(l)
		}
		pw.Close()
	}()
	if recs, _ := scanAll(t, pr, Options{}); len(recs) != 8 {
		t.Errorf("pipe: %d records", len(recs))
	}
}

func TestScanFileStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = old; r.Close() })
	go func() {
		io.WriteString(w, "[2026-10-30 18:18:56,123] INFO from stdin (a.B:1)")
		w.Close()
	}()
	var got []*watcher.Record
	if _, err := ScanFile(context.Background(), "-", Options{}, func(rec *watcher.Record) error { got = append(got, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].File != "-" || got[0].Message != "from stdin" {
		t.Fatalf("records %+v", got)
	}
}

func TestScanErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.log")
	if _, err := ScanFile(context.Background(), missing, Options{}, nil); err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	stop := errors.New("stop")
	in := strings.Repeat("[2026-10-30 18:18:56,123] INFO x (a.B:1)\n", 100)
	n := 0
	st, err := ScanReader(context.Background(), strings.NewReader(in), "x.log", Options{}, func(*watcher.Record) error {
		n++
		if n == 20 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "x.log") || n != 20 || st.Records != 20 {
		t.Errorf("emit error: %v after %d records (stats %+v)", err, n, st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ScanReader(ctx, strings.NewReader(in), "x.log", Options{}, func(*watcher.Record) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	bad := append([]byte{0x1f, 0x8b}, []byte("not really gzip")...)
	if _, err := ScanReader(context.Background(), bytes.NewReader(bad), "bad.gz", Options{}, func(*watcher.Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "bad.gz") {
		t.Errorf("corrupt gzip: %v", err)
	}
	if _, err := ScanReader(context.Background(), strings.NewReader(in), "x.log", Options{Pattern: "%Q"}, nil); err == nil || !strings.Contains(err.Error(), "%Q") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestResetRedetects(t *testing.T) {
	a, err := NewAssembler("f", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*watcher.Record
	emit := func(r *watcher.Record) { recs = append(recs, r) }
	a.Feed([]byte("[2026-10-30 18:18:56,123] INFO plain (a.B:1)"), 1, emit)
	a.Flush(emit)
	a.Feed([]byte("[2026-10-30 18:18:57,123] INFO dropped by reset (a.B:1)"), 2, emit)
	a.Reset()
	if a.Pending() {
		t.Fatal("pending after Reset")
	}
	a.Feed([]byte("2026-03-05T11:02:10.1Z stdout F 2026-10-30 18:18:58,123 INFO in a pod (a.B) [t]"), 1, emit)
	a.Flush(emit)
	st := a.Stats()
	if len(recs) != 2 || recs[1].Message != "in a pod" || st.Envelope != EnvelopeCRI || st.Layout != LayoutStrimzi || st.Lines != 3 {
		t.Fatalf("records %d, stats %+v", len(recs), st)
	}
	// A fixed layout survives Reset.
	b, _ := NewAssembler("f", Options{Layout: LayoutKafka})
	b.Reset()
	if b.Stats().Layout != LayoutKafka {
		t.Errorf("layout %q after Reset", b.Stats().Layout)
	}
}

func TestAllocations(t *testing.T) {
	a, err := NewAssembler("f", Options{Layout: LayoutKafka})
	if err != nil {
		t.Fatal(err)
	}
	emit := func(*watcher.Record) {}
	first := []byte("[2026-10-30 18:18:56,123] ERROR [MirrorSourceConnector|task-0] boom (a.B:1)")
	frame := []byte("\tat org.apache.kafka.connect.runtime.WorkerTask.run(WorkerTask.java:244)")
	a.Feed(first, 1, emit)
	for i := 0; i < 300; i++ { // grow the buffers once
		a.Feed(frame, 2, emit)
	}
	a.Feed(first, 1, emit)
	if n := testing.AllocsPerRun(100, func() { a.Feed(frame, 2, emit) }); n != 0 {
		t.Errorf("continuation line: %v allocations, want 0", n)
	}
	// A one-line record: the Record and its one string.
	if n := testing.AllocsPerRun(100, func() { a.Feed(first, 1, emit) }); n > 2 {
		t.Errorf("first line: %v allocations, want at most 2", n)
	}
}

func TestRetainedRecordsSurviveBatching(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "[2026-10-30 18:18:56,123] INFO [MirrorSourceConnector|task-%d] message %d %s (a.B:%d)\n", i%7, i, strings.Repeat("p", i%300), i)
		if i%10 == 0 {
			fmt.Fprintf(&b, "\tat frame %d\n", i)
		}
	}
	b.WriteString("[2026-10-30 18:18:56,123] INFO big " + strings.Repeat("q", arenaBytes) + " (a.B:1)\n")
	recs, _ := scanAll(t, strings.NewReader(b.String()), Options{})
	if len(recs) != 3001 {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs[:3000] {
		if want := fmt.Sprintf("message %d %s", i, strings.Repeat("p", i%300)); r.Message != want || r.Context != fmt.Sprintf("MirrorSourceConnector|task-%d", i%7) {
			t.Fatalf("record %d: message %q context %q", i, r.Message, r.Context)
		}
		if i%10 == 0 && (len(r.Stack) != 1 || r.Stack[0] != fmt.Sprintf("\tat frame %d", i)) {
			t.Fatalf("record %d: stack %q", i, r.Stack)
		}
	}
	if len(recs[3000].Message) != len("big ")+arenaBytes {
		t.Errorf("big record message %d bytes", len(recs[3000].Message))
	}
}
