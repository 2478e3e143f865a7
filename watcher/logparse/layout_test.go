package logparse

import (
	"strings"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

const ts = "2026-10-30T18:18:56.123Z"

func TestBuiltinLayouts(t *testing.T) {
	cases := []struct {
		name, layout, in string
		want             []want
	}{
		{
			name:   "kafka with context",
			layout: LayoutKafka,
			in:     "[2026-10-30 18:18:56,123] WARN [MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:412)",
			want: []want{{level: "WARN", ctx: "MirrorSourceConnector|worker", logger: "org.apache.kafka.connect.mirror.MirrorSourceConnector",
				msg: "Could not create topic-partitions for orders.", time: ts}},
		},
		{
			name:   "kafka without context, client prefix in message",
			layout: LayoutKafka,
			in:     "[2026-10-30 18:18:56,123] INFO [Producer clientId=connector-producer-MirrorSourceConnector-0] Closing the Kafka producer with timeoutMillis = 30000 ms. (org.apache.kafka.clients.producer.KafkaProducer:1374)",
			want: []want{{level: "INFO", logger: "org.apache.kafka.clients.producer.KafkaProducer",
				msg: "[Producer clientId=connector-producer-MirrorSourceConnector-0] Closing the Kafka producer with timeoutMillis = 30000 ms.", time: ts}},
		},
		{
			name:   "kafka herder prefix with flow is not a context",
			layout: LayoutKafka,
			in:     "[2026-10-30 18:18:56,123] INFO [Worker clientId=A->B, groupId=A-mm2] Rebalance started (org.apache.kafka.connect.runtime.distributed.WorkerCoordinator:242)",
			want: []want{{level: "INFO", logger: "org.apache.kafka.connect.runtime.distributed.WorkerCoordinator",
				msg: "[Worker clientId=A->B, groupId=A-mm2] Rebalance started", time: ts}},
		},
		{
			name:   "kafka offsets context, unknown line number, message with parentheses",
			layout: LayoutKafka,
			in:     "[2026-10-30 18:18:56,123] ERROR [MirrorSourceConnector|task-3|offsets] WorkerSourceTask{id=MirrorSourceConnector-3} Failed to commit offsets (timeout (30000 ms)) (org.apache.kafka.connect.runtime.WorkerSourceTask:?)",
			want: []want{{level: "ERROR", ctx: "MirrorSourceConnector|task-3|offsets", logger: "org.apache.kafka.connect.runtime.WorkerSourceTask",
				msg: "WorkerSourceTask{id=MirrorSourceConnector-3} Failed to commit offsets (timeout (30000 ms))", time: ts}},
		},
		{
			name:   "kafka log4j2 stack trace",
			layout: LayoutKafka,
			in: "[2026-10-30 18:18:56,123] WARN [MirrorSourceConnector|worker] Could not create topic-partitions for B.orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:412)\n" +
				"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS\n" +
				"\tat java.base/java.util.concurrent.CompletableFuture.reportGet(CompletableFuture.java:396) ~[?:?]\n" +
				"\tat org.apache.kafka.connect.mirror.MirrorSourceConnector.createNewPartitions(MirrorSourceConnector.java:410) ~[connect-mirror-4.1.0.jar:?]\n" +
				"Caused by: org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS\n" +
				"\t... 12 more\n" +
				"[2026-10-30 18:18:57,000] INFO next (org.apache.kafka.connect.mirror.Scheduler:95)",
			want: []want{
				{level: "WARN", ctx: "MirrorSourceConnector|worker", logger: "org.apache.kafka.connect.mirror.MirrorSourceConnector",
					msg: "Could not create topic-partitions for B.orders.", stack: 5, line: 1, time: ts},
				{level: "INFO", logger: "org.apache.kafka.connect.mirror.Scheduler", msg: "next", line: 7, time: "2026-10-30T18:18:57.000Z"},
			},
		},
		{
			name:   "kafka config dump: logger read from the last line of the message",
			layout: LayoutKafka,
			in: "[2026-10-30 18:18:56,123] INFO MirrorSourceConfig values: \n" +
				"\tadmin.timeout.ms = 60000\n" +
				"\ttopics = [.*]\n" +
				" (org.apache.kafka.common.config.AbstractConfig:370)",
			want: []want{{level: "INFO", logger: "org.apache.kafka.common.config.AbstractConfig", msg: "MirrorSourceConfig values: ", stack: 3, time: ts}},
		},
		{
			name:   "strimzi",
			layout: LayoutStrimzi,
			in:     "2026-10-30 18:18:56,123 WARN [src->dst.MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector) [kafka-admin-client-thread | adminclient-3]",
			want: []want{{level: "WARN", ctx: "src->dst.MirrorSourceConnector|worker", logger: "org.apache.kafka.connect.mirror.MirrorSourceConnector",
				thread: "kafka-admin-client-thread | adminclient-3", msg: "Could not create topic-partitions for orders.", time: ts}},
		},
		{
			name:   "strimzi validate scope, empty message",
			layout: LayoutStrimzi,
			in:     "2026-10-30 18:18:56,123 INFO [MirrorSourceConnector|validate]  (org.apache.kafka.connect.runtime.AbstractHerder) [pool-1]",
			want:   []want{{level: "INFO", ctx: "MirrorSourceConnector|validate", logger: "org.apache.kafka.connect.runtime.AbstractHerder", thread: "pool-1", time: ts}},
		},
		{
			name:   "short",
			layout: LayoutShort,
			in:     "2026-10-30 18:18:56,123 WARN  [kafka-admin-client-thread | adminclient-3] MirrorSourceConnector:412 - Could not create topic-partitions for orders.\nERROR [x] not a first line",
			want: []want{{level: "WARN", logger: "MirrorSourceConnector", thread: "kafka-admin-client-thread | adminclient-3",
				msg: "Could not create topic-partitions for orders.", stack: 1, time: ts}},
		},
		{
			name:   "short with five-letter level",
			layout: LayoutShort,
			in:     "2026-10-30 18:18:56,123 ERROR [task-thread-MirrorSourceConnector-0] WorkerTask:196 - Task threw an uncaught and unrecoverable exception.",
			want: []want{{level: "ERROR", logger: "WorkerTask", thread: "task-thread-MirrorSourceConnector-0",
				msg: "Task threw an uncaught and unrecoverable exception.", time: ts}},
		},
		{
			name:   "colon, log4j2 ISO8601 with T",
			layout: LayoutColon,
			in:     "2026-10-30T18:18:56,123 WARN org.apache.kafka.connect.mirror.MirrorSourceConnector: Could not create topic-partitions for orders.",
			want: []want{{level: "WARN", logger: "org.apache.kafka.connect.mirror.MirrorSourceConnector",
				msg: "Could not create topic-partitions for orders.", time: ts}},
		},
		{
			name:   "json with stack_trace and escapes",
			layout: LayoutJSON,
			in: `{"@timestamp":"2026-10-30T18:18:56.123Z","level":"WARN","logger_name":"org.apache.kafka.connect.mirror.MirrorSourceConnector","thread_name":"kafka-admin-client-thread | adminclient-3","message":"Could not create topic-partitions for \"orders\".","connector.context":"[MirrorSourceConnector|worker] ","stack_trace":"java.util.concurrent.ExecutionException: boom\n\tat a.B.c(B.java:1)\nCaused by: x.Y: \u00e9t\u00e9\n"}` + "\n" +
				`{"timestamp":"2026-10-30T20:18:57.000+02:00","level":"INFO","logger":"L","thread":"t","message":"second","mdc":{"connector.context":"[MirrorCheckpointConnector|task-0] ","other":{"x":[1,2]}}}`,
			want: []want{
				{level: "WARN", ctx: "MirrorSourceConnector|worker", logger: "org.apache.kafka.connect.mirror.MirrorSourceConnector",
					thread: "kafka-admin-client-thread | adminclient-3", msg: `Could not create topic-partitions for "orders".`, stack: 3, time: ts},
				{level: "INFO", ctx: "MirrorCheckpointConnector|task-0", logger: "L", thread: "t", msg: "second", time: "2026-10-30T18:18:57.000Z"},
			},
		},
		{
			name:   "json log4j2 JsonLayout instant and thrown-less record",
			layout: LayoutJSON,
			in:     `{"instant":{"epochSecond":1793384336,"nanoOfSecond":123000000},"thread":"main","level":"DEBUG","loggerName":"org.apache.kafka.connect.mirror.MirrorMaker","message":"hello","endOfBatch":false,"threadId":1}`,
			want:   []want{{level: "DEBUG", logger: "org.apache.kafka.connect.mirror.MirrorMaker", thread: "main", msg: "hello", time: ts}},
		},
	}
	for _, c := range cases {
		for _, mode := range []string{"fixed", "detected"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				opts := Options{Layout: c.layout}
				if mode == "detected" {
					opts.Layout = ""
				}
				recs, st := feedAll(t, opts, c.in)
				if st.Layout != c.layout {
					t.Errorf("layout %q, want %q", st.Layout, c.layout)
				}
				if len(recs) != len(c.want) {
					t.Fatalf("%d records, want %d", len(recs), len(c.want))
				}
				for i, w := range c.want {
					checkRecord(t, recs[i], w)
				}
			})
		}
	}
}

func TestJSONStackTraceLinesAndText(t *testing.T) {
	in := `{"@timestamp":"2026-10-30T18:18:56.123Z","level":"ERROR","message":"m","stack_trace":"E: x\r\n\tat a.b(C.java:1)\n\t... 3 more"}`
	recs, _ := feedAll(t, Options{Layout: LayoutJSON}, in)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if got := strings.Join(r.Stack, "|"); got != "E: x|\tat a.b(C.java:1)|\t... 3 more" {
		t.Errorf("stack %q", got)
	}
	if r.Text != in {
		t.Errorf("Text %q, want the JSON line", r.Text)
	}
}

func TestContextShape(t *testing.T) {
	cases := map[string]int{
		"[MirrorSourceConnector|worker] x":                                             len("[MirrorSourceConnector|worker] "),
		"[MirrorSourceConnector|task-0] x":                                             len("[MirrorSourceConnector|task-0] "),
		"[MirrorSourceConnector|task-12|offsets] x":                                    len("[MirrorSourceConnector|task-12|offsets] "),
		"[a->b.MirrorSourceConnector|validate] ":                                       len("[a->b.MirrorSourceConnector|validate] "),
		"[Producer clientId=connector-producer-x-0] x":                                 0,
		"[Worker clientId=A->B, groupId=A-mm2] x":                                      0,
		"[AdminClient clientId=A->B|MirrorSourceConnector|replication-target-admin] x": 0,
		"[MirrorSourceConnector|task-] x":                                              0,
		"[MirrorSourceConnector|task-0]x":                                              0,
		"[|worker] x":                                                                  0,
		"[MirrorSourceConnector|task-0|commit] x":                                      0,
		"MirrorSourceConnector|task-0] x":                                              0,
		"[MirrorSourceConnector|task-0":                                                0,
	}
	for in, n := range cases {
		if got := contextLen([]byte(in)); got != n {
			t.Errorf("contextLen(%q) = %d, want %d", in, got, n)
		}
	}
}

func TestTimeZones(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	line := "[2026-10-30 18:18:56,123] INFO x (a.B:1)"
	recs, _ := feedAll(t, Options{Layout: LayoutKafka, Location: berlin}, line)
	if want := time.Date(2026, 10, 30, 17, 18, 56, 123e6, time.UTC); !recs[0].Time.Equal(want) {
		t.Errorf("time %v, want %v", recs[0].Time, want)
	}
	// Text with an offset ignores Location.
	recs, _ = feedAll(t, Options{Pattern: "%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %p %m%n", Location: berlin}, "2026-10-30T18:18:56.123-0500 INFO x")
	if want := time.Date(2026, 10, 30, 23, 18, 56, 123e6, time.UTC); !recs[0].Time.Equal(want) {
		t.Errorf("time %v, want %v", recs[0].Time, want)
	}
	// %d{…}{UTC} overrides Location.
	recs, _ = feedAll(t, Options{Pattern: "%d{yyyy-MM-dd HH:mm:ss,SSS}{UTC} %p %m%n", Location: berlin}, "2026-10-30 18:18:56,123 INFO x")
	if want := time.Date(2026, 10, 30, 18, 18, 56, 123e6, time.UTC); !recs[0].Time.Equal(want) {
		t.Errorf("time %v, want %v", recs[0].Time, want)
	}
	// The default is UTC, and micro-second fractions are kept.
	recs, _ = feedAll(t, Options{Layout: LayoutStrimzi}, "2026-10-30 18:18:56.123456 INFO x (a.B) [t]")
	if want := time.Date(2026, 10, 30, 18, 18, 56, 123456000, time.UTC); !recs[0].Time.Equal(want) {
		t.Errorf("time %v, want %v", recs[0].Time, want)
	}
}

func TestDetection(t *testing.T) {
	t.Run("strimzi beats colon on ties by majority", func(t *testing.T) {
		in := "2026-10-30 18:18:56,123 INFO WorkerSourceTask{id=x}: committing (org.apache.kafka.connect.runtime.WorkerSourceTask) [t]\n" +
			"2026-10-30 18:18:56,124 INFO Kafka version: 3.9.0 (org.apache.kafka.common.utils.AppInfoParser) [main]\n"
		_, st := feedAll(t, Options{}, in)
		if st.Layout != LayoutStrimzi {
			t.Errorf("layout %q", st.Layout)
		}
	})
	t.Run("unknown layout with timestamps", func(t *testing.T) {
		log, buf := logBuffer()
		in := "2026-10-30 18:18:56,123 [main] INFO  c.Foo - started\n\tat frame\n2026-10-30 18:18:57,123 [main] ERROR c.Foo - failed\n"
		recs, st := feedAll(t, Options{Logger: log}, in)
		if st.Layout != LayoutRawTimestamp {
			t.Fatalf("layout %q", st.Layout)
		}
		if len(recs) != 2 || recs[0].Level != "INFO" || recs[1].Level != "ERROR" || len(recs[0].Stack) != 1 || recs[0].Message != "2026-10-30 18:18:56,123 [main] INFO  c.Foo - started" {
			t.Fatalf("records %+v", recs)
		}
		if recs[1].Time.IsZero() {
			t.Error("no time on raw record")
		}
		if n := strings.Count(buf.String(), "level=WARN"); n != 1 || !strings.Contains(buf.String(), "layout=raw-timestamp") {
			t.Errorf("want one warning naming the layout, got %q", buf.String())
		}
	})
	t.Run("unknown layout without timestamps", func(t *testing.T) {
		log, buf := logBuffer()
		recs, st := feedAll(t, Options{Logger: log}, "hello WARN world\nsecond\n")
		if st.Layout != LayoutRawLine || len(recs) != 2 || recs[0].Level != "WARN" {
			t.Fatalf("layout %q, records %+v", st.Layout, recs)
		}
		if !strings.Contains(buf.String(), "layout=raw-line") {
			t.Errorf("warning %q", buf.String())
		}
	})
	t.Run("records wait for detection until flush", func(t *testing.T) {
		a, err := NewAssembler("f", Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		emit := func(*watcher.Record) { n++ }
		a.Feed([]byte("[2026-10-30 18:18:56,123] INFO a (x.Y:1)"), 1, emit)
		a.Feed([]byte("[2026-10-30 18:18:56,123] INFO b (x.Y:1)"), 2, emit)
		if n != 0 || !a.Pending() {
			t.Fatalf("emitted %d before detection; pending=%v", n, a.Pending())
		}
		a.Flush(emit)
		if n != 2 || a.Pending() || a.Stats().Layout != LayoutKafka {
			t.Fatalf("after flush: %d records, pending=%v, layout=%q", n, a.Pending(), a.Stats().Layout)
		}
		// Once detected, a record is emitted when the next first line arrives.
		a.Feed([]byte("[2026-10-30 18:18:56,123] INFO c (x.Y:1)"), 3, emit)
		a.Feed([]byte("\tat x"), 4, emit)
		if n != 2 || !a.Pending() {
			t.Fatalf("n=%d pending=%v", n, a.Pending())
		}
		a.Feed([]byte("[2026-10-30 18:18:56,123] INFO d (x.Y:1)"), 5, emit)
		if n != 3 {
			t.Fatalf("n=%d", n)
		}
	})
	t.Run("detection decides after enough candidates", func(t *testing.T) {
		a, _ := NewAssembler("f", Options{})
		n := 0
		for i := 1; i <= detectCandidates; i++ {
			a.Feed([]byte("2026-10-30 18:18:56,123 INFO a (x.Y) [t]"), int64(i), func(*watcher.Record) { n++ })
		}
		if a.Stats().Layout != LayoutStrimzi || n != detectCandidates-1 {
			t.Fatalf("layout %q, %d records", a.Stats().Layout, n)
		}
	})
}

func TestBadOptions(t *testing.T) {
	if _, err := NewAssembler("f", Options{Layout: "log4j"}); err == nil || !strings.Contains(err.Error(), `"log4j"`) {
		t.Errorf("unknown layout: %v", err)
	}
	if _, err := NewAssembler("f", Options{Pattern: "%d %Q"}); err == nil {
		t.Error("bad pattern accepted")
	}
	if got := LayoutNames(); strings.Join(got, ",") != "kafka,strimzi,short,colon,json" {
		t.Errorf("LayoutNames() = %v", got)
	}
}
