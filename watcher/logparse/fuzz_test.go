package logparse

import (
	"bytes"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

var seedLines = []string{
	"[2026-10-30 18:18:56,123] WARN [MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:412)",
	"[2026-10-30 18:18:56,123] INFO [Worker clientId=A->B, groupId=A-mm2] Rebalance started (org.apache.kafka.connect.runtime.distributed.WorkerCoordinator:242)",
	"2026-10-30 18:18:56,123 WARN [src->dst.MirrorSourceConnector|task-0|offsets] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector) [kafka-admin-client-thread | adminclient-3]",
	"2026-10-30 18:18:56,123 WARN  [kafka-admin-client-thread | adminclient-3] MirrorSourceConnector:412 - Could not create topic-partitions for orders.",
	"2026-10-30T18:18:56,123 WARN org.apache.kafka.connect.mirror.MirrorSourceConnector: Could not create topic-partitions for orders.",
	`{"@timestamp":"2026-10-30T18:18:56.123Z","level":"WARN","logger_name":"x.Y","thread_name":"t","message":"m \"q\" \u00e9","mdc":{"connector.context":"[C|worker] "},"stack_trace":"E\n\tat a"}`,
	"\tat org.apache.kafka.connect.runtime.WorkerTask.run(WorkerTask.java:244) ~[connect-runtime-4.1.0.jar:?]",
	"Caused by: org.apache.kafka.common.errors.RecordTooLargeException: too large",
	"\t... 12 more",
	"",
	"[",
	"[2026-10-30 18:18:56,123] INFO [x|task-",
}

var seedEnvelopes = []string{
	"2026-03-05T11:02:10.118220931Z stdout F [2026-03-05 11:02:10,118] INFO x (a.B:1)",
	"2026-03-05T11:02:10.118220931Z stderr P partial piece ",
	"2026-03-05T11:02:10Z stdout F:x",
	`{"log":"2026-10-30 18:18:56,123 INFO a\tb \"c\" \ud83d\ude00 (a.B) [t]\n","stream":"stdout","time":"2026-10-30T18:18:56.123456789Z"}`,
	`{"stream":"stderr","log":"partial without newline","time":"x"}`,
	`{"log":"cut in the mid`,
	`{"log":"\u12`,
}

// checkRecordBounds checks invariants every emitted record must hold.
func checkRecordBounds(t *testing.T, r *watcher.Record, maxLine int) {
	if len(r.Text) > maxLine || len(r.Message) > maxLine*2 {
		t.Fatalf("record over the cap: text %d message %d", len(r.Text), len(r.Message))
	}
	for _, s := range r.Stack {
		if len(s) > maxLine*2 {
			t.Fatalf("stack line of %d bytes", len(s))
		}
	}
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range seedEnvelopes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if start, _, _, ok := parseCRI(line); ok && (start < 0 || start > len(line)) {
			t.Fatalf("CRI content start %d out of range", start)
		}
		var scratch []byte
		orig := append([]byte(nil), line...)
		decodeDocker(line, &scratch)
		if !bytes.Equal(orig, line) {
			t.Fatal("decodeDocker modified its input")
		}
		a, err := NewAssembler("f", Options{MaxLineBytes: 256})
		if err != nil {
			t.Fatal(err)
		}
		emit := func(r *watcher.Record) { checkRecordBounds(t, r, 256) }
		for i := int64(1); i <= 3; i++ {
			a.Feed(line, i, emit)
		}
		a.Flush(emit)
		if a.Pending() {
			t.Fatal("pending after Flush")
		}
	})
}

func FuzzLayout(f *testing.F) {
	for _, s := range seedLines {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, name := range LayoutNames() {
			p, err := builtinParser(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			var fl fields
			if p.parse([]byte(line), &fl) != noMatch {
				limit := len(line) + len(fl.dec)
				for _, s := range []span{fl.levelSp, fl.ctx, fl.logger, fl.thread, fl.msg, fl.stack} {
					if s.off < 0 || s.off > s.end && s.end != 0 || s.end > limit {
						t.Fatalf("%s: span %v out of range %d", name, s, limit)
					}
				}
			}
			a, _ := NewAssembler("f", Options{Layout: name, MaxLineBytes: 128, MaxStackLines: 2})
			emit := func(r *watcher.Record) { checkRecordBounds(t, r, 128) }
			a.Feed([]byte(line), 1, emit)
			a.Feed([]byte(line), 2, emit)
			a.Flush(emit)
		}
		a, _ := NewAssembler("f", Options{})
		a.Feed([]byte(line), 1, func(*watcher.Record) {})
		a.Flush(func(*watcher.Record) {})
	})
}

func FuzzPattern(f *testing.F) {
	for _, p := range []string{
		"[%d] %p %X{connector.context}%m (%c:%L)%n",
		"%d{yyyy-MM-dd HH:mm:ss,SSS} %p %X{connector.context}%m (%c) [%t]%n",
		"%d %-5p [%t] %c{1}:%L - %m%n",
		"%d{ISO8601} %p %c: %m%n",
		"%m [%p] %d{yyyy-MM-dd HH:mm:ss}%n",
		"%d{DATE}{UTC} %5.10p %C %% %x %m%ex",
	} {
		for _, l := range seedLines[:5] {
			f.Add(p, l)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		pp, err := compilePattern(pattern, nil)
		if err != nil {
			if ValidatePattern(pattern) == nil {
				t.Fatal("ValidatePattern disagrees with compilePattern")
			}
			return
		}
		var fl fields
		if pp.parse([]byte(line), &fl) != noMatch {
			for _, s := range []span{fl.ctx, fl.logger, fl.thread, fl.msg} {
				if s.off < 0 || s.end > len(line) || (s.end != 0 && s.off > s.end) {
					t.Fatalf("span %v out of range %d", s, len(line))
				}
			}
		}
		a, err := NewAssembler("f", Options{Pattern: pattern})
		if err != nil {
			t.Fatal(err)
		}
		a.Feed([]byte(line), 1, func(*watcher.Record) {})
		a.Flush(func(*watcher.Record) {})
	})
}
