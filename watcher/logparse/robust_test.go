package logparse

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

func readTestdata(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// findRecord returns the first record whose message contains sub.
func findRecord(recs []*watcher.Record, sub string) *watcher.Record {
	for _, r := range recs {
		if strings.Contains(r.Message, sub) {
			return r
		}
	}
	return nil
}

func TestStartupTextDoesNotDefeatDetection(t *testing.T) {
	case11 := readTestdata(t, "field-cases", "case11-record-too-large-task-killed.log")
	for _, n := range []int{20, detectMaxLines + 40} {
		t.Run(fmt.Sprintf("%d preamble lines", n), func(t *testing.T) {
			var b strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&b, "Preparing truststore for replication listener %d\n", i)
			}
			log, buf := logBuffer()
			recs, st := feedAll(t, Options{Logger: log}, b.String()+case11)
			if st.Layout != LayoutStrimzi {
				t.Fatalf("layout %q, want strimzi; log: %s", st.Layout, buf.String())
			}
			r := findRecord(recs, "Task threw an uncaught and unrecoverable exception")
			if r == nil || r.Logger != "org.apache.kafka.connect.runtime.WorkerTask" || len(r.Stack) != 14 {
				t.Fatalf("task death record %+v", r)
			}
			if r := findRecord(recs, "failed to send record to document-archive"); r == nil || r.Context != "legacy->platform.MirrorSourceConnector|task-0" {
				t.Fatalf("send failure record %+v", r)
			}
			// Start-up lines are kept (as records of their own, or as the
			// continuation of the first one), and the 8 records follow.
			got := 0
			for _, r := range recs {
				if r.Logger != "" {
					got++
				}
			}
			if got != 8 || recs[0].Line != 1 || recs[len(recs)-8].Line != int64(n+1) {
				t.Errorf("%d records with a logger, want 8; first at line %d", got, recs[len(recs)-8].Line)
			}
		})
	}
}

func TestFollowGarbageThenRecords(t *testing.T) {
	// As a follower sees it: nothing, a quiet flush, 2 MB of random bytes,
	// another flush, then real records.
	a, err := NewAssembler("f", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*watcher.Record
	emit := func(r *watcher.Record) { recs = append(recs, r) }
	a.Flush(emit)
	rnd := rand.New(rand.NewPCG(3, 4))
	garbage := make([]byte, 2<<20)
	for i := range garbage {
		garbage[i] = byte(rnd.Uint32())
	}
	var n int64
	for _, l := range bytes.Split(garbage, []byte("\n")) {
		n++
		a.Feed(l, n, emit)
	}
	a.Flush(emit)
	for _, l := range strings.Split(strings.TrimSpace(readTestdata(t, "field-cases", "case11-record-too-large-task-killed.log")), "\n") {
		n++
		a.Feed([]byte(l), n, emit)
	}
	a.Flush(emit)
	if a.Stats().Layout != LayoutStrimzi {
		t.Fatalf("layout %q, want strimzi", a.Stats().Layout)
	}
	if r := findRecord(recs, "Task threw an uncaught"); r == nil || r.Logger != "org.apache.kafka.connect.runtime.WorkerTask" || len(r.Stack) != 14 {
		t.Fatalf("task death record %+v", r)
	}
}

func TestFallbackSwitchesToRecognisedLayout(t *testing.T) {
	// Enough timestamped lines of an unknown layout to decide the fallback,
	// then Kafka-layout records.
	var b strings.Builder
	for i := 0; i < detectCandidates; i++ {
		fmt.Fprintf(&b, "2026-10-30 18:18:%02d,000 [main] INFO  c.Foo - starting %d\n", i, i)
	}
	b.WriteString("[2026-10-30 18:19:00,000] ERROR [MirrorSourceConnector|task-0] WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception (org.apache.kafka.connect.runtime.WorkerTask:234)\n")
	b.WriteString("org.apache.kafka.connect.errors.ConnectException: boom\n")
	recs, st := feedAll(t, Options{}, b.String())
	if st.Layout != LayoutKafka {
		t.Fatalf("layout %q", st.Layout)
	}
	r := recs[len(recs)-1]
	if r.Logger != "org.apache.kafka.connect.runtime.WorkerTask" || r.Context != "MirrorSourceConnector|task-0" || len(r.Stack) != 1 {
		t.Fatalf("record %+v", r)
	}
}

func TestMixedLayouts(t *testing.T) {
	kafka := readTestdata(t, "logs", "healthy.kafka.log")
	case11 := readTestdata(t, "field-cases", "case11-record-too-large-task-killed.log")
	log, buf := logBuffer()
	recs, st := feedAll(t, Options{Logger: log}, kafka+case11)
	kafkaRecs, _ := feedAll(t, Options{}, kafka)
	caseRecs, _ := feedAll(t, Options{}, case11)
	if len(recs) != len(kafkaRecs)+len(caseRecs) {
		t.Errorf("%d records, want %d+%d", len(recs), len(kafkaRecs), len(caseRecs))
	}
	r := findRecord(recs, "Task threw an uncaught and unrecoverable exception")
	if r == nil || r.Logger != "org.apache.kafka.connect.runtime.WorkerTask" || r.Thread == "" || len(r.Stack) != 14 {
		t.Fatalf("task death record %+v", r)
	}
	if n := strings.Count(buf.String(), "level=WARN"); n != 1 || !strings.Contains(buf.String(), "layout changed") || st.LayoutWarnings != 1 {
		t.Errorf("want one layout-change warning, got %d (stats %d): %s", n, st.LayoutWarnings, buf.String())
	}
	// And back: Kafka records after Strimzi ones.
	recs, _ = feedAll(t, Options{}, case11+kafka)
	if len(recs) != len(kafkaRecs)+len(caseRecs) {
		t.Errorf("reverse: %d records, want %d+%d", len(recs), len(kafkaRecs), len(caseRecs))
	}
}

func TestMixedLayoutsKeepContinuations(t *testing.T) {
	in := "[2026-10-30 18:18:56,123] ERROR [MirrorSourceConnector|task-0] failed (x.Y:1)\n" +
		"org.apache.kafka.connect.errors.ConnectException: at 2026-10-30 18:18:56,000 INFO it broke\n" +
		"2026-10-30 18:18:56,000 the time it broke\n" +
		"2026-10-30 18:18:56,000 INFO a message line that starts like a Strimzi one\n" +
		"\tat x.Y.z(Y.java:1)\n" +
		"Caused by: java.io.IOException: 2026-10-30 18:18:56,000 INFO x (a.B) [t]\n" +
		"\tacks = -1\n" +
		"[2026-10-30 18:18:57,123] INFO next (x.Y:1)\n"
	recs, st := feedAll(t, Options{}, in)
	if len(recs) != 2 || len(recs[0].Stack) != 6 || st.Layout != LayoutKafka || st.LayoutWarnings != 0 {
		t.Fatalf("layout %q, %d records: %+v", st.Layout, len(recs), recs)
	}
}

func TestFixedLayoutDoesNotSwitch(t *testing.T) {
	in := "[2026-10-30 18:18:56,123] INFO a (x.Y:1)\n2026-10-30 18:18:56,123 INFO b (x.Y) [t]\n"
	recs, _ := feedAll(t, Options{Layout: LayoutKafka}, in)
	if len(recs) != 1 || len(recs[0].Stack) != 1 {
		t.Fatalf("records %+v", recs)
	}
}

func TestPatternMatchingNothingWarns(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "[2026-10-30 18:18:56,123] INFO line %d (x.Y:1)\n", i)
	}
	log, buf := logBuffer()
	recs, st := feedAll(t, Options{Pattern: "%d{ISO8601} %p %c: %m%n", Logger: log, MaxStackLines: 100}, b.String())
	if n := strings.Count(buf.String(), "level=WARN"); n != 1 || st.LayoutWarnings != 1 {
		t.Errorf("want one warning, got %d (stats %d): %s", n, st.LayoutWarnings, buf.String())
	}
	// The record stays bounded and what it drops is counted.
	if len(recs) != 1 || len(recs[0].Stack) != 100 || !recs[0].Truncated || st.DroppedLines != 1000-1-100 {
		t.Errorf("%d records, stack %d, dropped %d", len(recs), len(recs[0].Stack), st.DroppedLines)
	}
	// A pattern that matches does not warn.
	log, buf = logBuffer()
	_, st = feedAll(t, Options{Pattern: "[%d] %p %m (%c:%L)%n", Logger: log}, b.String())
	if buf.Len() != 0 || st.LayoutWarnings != 0 {
		t.Errorf("matching pattern warned: %s", buf.String())
	}
}

func TestTruncatedGzipEmitsWhatWasRead(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "[2026-10-30 18:18:56,123] INFO [MirrorSourceConnector|task-0] record %d with some text %x (x.Y:1)\n", i, i*7919)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(b.String()))
	zw.Close()
	trunc := gz.Bytes()[:gz.Len()/2]
	var recs []*watcher.Record
	st, err := ScanReader(context.Background(), bytes.NewReader(trunc), "t.log.gz", Options{}, func(r *watcher.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err == nil {
		t.Fatal("no error for a truncated gzip")
	}
	if len(recs) == 0 || int64(len(recs)) != st.Records || st.Records+1 < st.Lines {
		t.Fatalf("%d records emitted, stats %+v", len(recs), st)
	}
	var batched int
	_, err = ScanReaderBatched(context.Background(), bytes.NewReader(trunc), "t.log.gz", Options{}, 64, func(b []*watcher.Record) error {
		batched += len(b)
		return nil
	})
	if err == nil || batched != len(recs) {
		t.Fatalf("batched: %d records, err %v; want %d", batched, err, len(recs))
	}
}

func TestRecordTimeIsUTC(t *testing.T) {
	loc := time.FixedZone("CEST", 2*3600)
	recs, _ := feedAll(t, Options{Layout: LayoutKafka, Location: loc}, "[2026-10-30 20:18:56,123] INFO a (x.Y:1)")
	want := time.Date(2026, 10, 30, 18, 18, 56, 123e6, time.UTC)
	if r := recs[0]; r.Time != want || r.Time.Location() != time.UTC {
		t.Fatalf("time %v, want %v", r.Time, want)
	}
}

func TestJSONThrown(t *testing.T) {
	const head = `{"instant":{"epochSecond":1793384337,"nanoOfSecond":0},"thread":"t","level":"ERROR","loggerName":"org.apache.kafka.connect.runtime.WorkerTask","message":"Task threw an uncaught and unrecoverable exception",`
	cases := []struct {
		name, line string
		want       []string
	}{
		{"log4j2 JsonLayout frames and causes",
			head + `"thrown":{"commonElementCount":0,"localizedMessage":"Unrecoverable exception from producer send callback","message":"Unrecoverable exception from producer send callback","name":"org.apache.kafka.connect.errors.ConnectException","extendedStackTrace":[{"class":"org.apache.kafka.connect.runtime.WorkerSourceTask","method":"maybeThrowProducerSendException","file":"WorkerSourceTask.java","line":312,"exact":false,"location":"connect-runtime-3.9.0.jar","version":"?"}],"cause":{"name":"org.apache.kafka.common.errors.RecordTooLargeException","message":"The request \"x\" is too large.","commonElementCount":0,"extendedStackTrace":[],"cause":{"name":"java.io.IOException","extendedStackTrace":[]}}},"endOfBatch":false}`,
			[]string{
				"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback",
				"\tat org.apache.kafka.connect.runtime.WorkerSourceTask.maybeThrowProducerSendException(WorkerSourceTask.java:312)",
				`Caused by: org.apache.kafka.common.errors.RecordTooLargeException: The request "x" is too large.`,
				"Caused by: java.io.IOException",
			}},
		{"log4j2 JsonLayout stacktraceAsString",
			head + `"thrown":{"name":"org.apache.kafka.connect.errors.ConnectException","message":"x","extendedStackTrace":"org.apache.kafka.connect.errors.ConnectException: x\n\tat a.B.c(B.java:1)\nCaused by: org.apache.kafka.common.errors.RecordTooLargeException: big"}}`,
			[]string{"org.apache.kafka.connect.errors.ConnectException: x", "\tat a.B.c(B.java:1)", "Caused by: org.apache.kafka.common.errors.RecordTooLargeException: big"}},
		{"ECS error.stack_trace",
			head + `"error.type":"a.B","error.message":"m","error.stack_trace":"a.B: m\n\tat x.Y.z(Y.java:2)"}`,
			[]string{"a.B: m", "\tat x.Y.z(Y.java:2)"}},
		{"ECS error.type and error.message",
			head + `"error.type":"org.apache.kafka.common.errors.RecordTooLargeException","error.message":"too \"big\""}`,
			[]string{`org.apache.kafka.common.errors.RecordTooLargeException: too "big"`}},
		{"ECS nested error object",
			head + `"error":{"type":"a.B","message":"m"}}`,
			[]string{"a.B: m"}},
		{"stack_trace string",
			head + `"stack_trace":"a.B: m\n\tat x.Y.z(Y.java:2)"}`,
			[]string{"a.B: m", "\tat x.Y.z(Y.java:2)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, st := feedAll(t, Options{}, c.line)
			if st.Layout != LayoutJSON || len(recs) != 1 {
				t.Fatalf("layout %q, %d records", st.Layout, len(recs))
			}
			if got := strings.Join(recs[0].Stack, "\n"); got != strings.Join(c.want, "\n") {
				t.Errorf("stack:\n%s\nwant:\n%s", got, strings.Join(c.want, "\n"))
			}
			if recs[0].Message != "Task threw an uncaught and unrecoverable exception" {
				t.Errorf("message %q", recs[0].Message)
			}
		})
	}
}

func TestPatternWrappers(t *testing.T) {
	ok := []struct{ pattern, line, logger, level string }{
		{"[%d] %highlight{%p} %X{connector.context}%m (%c:%L)%n", "[2026-10-30 18:18:56,123] WARN [A|task-0] m (x.Y:1)", "x.Y", "WARN"},
		{"%style{[%d]}{bright,blue} %highlight{%-5p}{FATAL=red, WARN=yellow} %m (%c:%L)%n", "[2026-10-30 18:18:56,123] INFO  m (x.Y:1)", "x.Y", "INFO"},
		{"[%d] %p %notEmpty{%X{connector.context}}%m (%c:%L)%n", "[2026-10-30 18:18:56,123] INFO m (x.Y:1)", "x.Y", "INFO"},
	}
	for _, c := range ok {
		recs, _ := feedAll(t, Options{Pattern: c.pattern}, c.line)
		if len(recs) != 1 || recs[0].Logger != c.logger || recs[0].Level != c.level || recs[0].Message != "m" {
			t.Errorf("%s: records %+v", c.pattern, recs)
		}
	}
	bad := []struct{ pattern, want string }{
		{"%notEmpty{[%t] }%m%n", "unsupported conversion %notEmpty at column 1"},
		{"[%d] %p %notEmpty{%X{a}}%m%n", "unsupported conversion %notEmpty at column 9"},
		{"%d %replace{%m}{\\s+}{ }%n", "unsupported conversion %replace at column 4"},
		{"%d %equals{%X{a}}{}{-} %m%n", "unsupported conversion %equals at column 4"},
		{"%d %maxLen{%m}{100}%n", "unsupported conversion %maxLen at column 4"},
		{"%d %encode{%m}%n", "unsupported conversion %encode at column 4"},
		{"%d %highlight{%p %m%n", "unterminated { at column 14"},
		{"%style{%d %Q}{red} %m%n", "unknown conversion %Q at column 11"},
	}
	for _, c := range bad {
		err := ValidatePattern(c.pattern)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.pattern, err, c.want)
		}
	}
}
