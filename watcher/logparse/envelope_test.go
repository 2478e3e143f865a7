package logparse

import (
	"strings"
	"testing"
)

func TestCRIEnvelope(t *testing.T) {
	in := strings.Join([]string{
		"2026-03-05T11:02:10.118220931Z stdout F [2026-03-05 11:02:10,118] ERROR [MirrorSourceConnector|task-0] WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted (org.apache.kafka.connect.runtime.WorkerTask:234)",
		"2026-03-05T11:02:10.118230000Z stdout F org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback",
		"2026-03-05T11:02:10.118240000Z stdout F \tat org.apache.kafka.connect.runtime.WorkerSourceTask.maybeThrowProducerSendException(WorkerSourceTask.java:312)",
		"2026-03-05T11:02:11.000000000Z stdout P [2026-03-05 11:02:11,000] INFO a long ",
		"2026-03-05T11:02:11.000000001Z stderr F [2026-03-05 11:02:11,001] WARN from stderr (x.Y:1)",
		"2026-03-05T11:02:11.000000002Z stdout P line in ",
		"2026-03-05T11:02:11.000000003Z stdout F three pieces (x.Y:2)",
		"2026-03-05T11:02:12.000000000Z stdout F ",
		"not a cri line at all",
	}, "\n")
	recs, st := feedAll(t, Options{}, in)
	if st.Envelope != EnvelopeCRI || st.Layout != LayoutKafka {
		t.Fatalf("envelope %q layout %q", st.Envelope, st.Layout)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records: %+v", len(recs), recs)
	}
	checkRecord(t, recs[0], want{level: "ERROR", ctx: "MirrorSourceConnector|task-0", logger: "org.apache.kafka.connect.runtime.WorkerTask",
		msg:   "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
		stack: 2, line: 1, time: "2026-03-05T11:02:10.118Z"})
	if recs[0].Stack[1] != "\tat org.apache.kafka.connect.runtime.WorkerSourceTask.maybeThrowProducerSendException(WorkerSourceTask.java:312)" {
		t.Errorf("stack frame %q", recs[0].Stack[1])
	}
	checkRecord(t, recs[1], want{level: "WARN", logger: "x.Y", msg: "from stderr", line: 5, time: "2026-03-05T11:02:11.001Z"})
	// The stdout partials join across the stderr line; the joined line is
	// numbered by its first piece; the empty line and the stray line are
	// continuation lines.
	checkRecord(t, recs[2], want{level: "INFO", logger: "x.Y", msg: "a long line in three pieces", stack: 2, line: 4, time: "2026-03-05T11:02:11.000Z"})
	if recs[2].Stack[0] != "" || recs[2].Stack[1] != "not a cri line at all" {
		t.Errorf("stack %q", recs[2].Stack)
	}
}

func TestCRIPartialFlushedAtEnd(t *testing.T) {
	recs, _ := feedAll(t, Options{Layout: LayoutKafka}, "2026-03-05T11:02:11.000000000Z stdout P [2026-03-05 11:02:11,000] INFO unfinished")
	if len(recs) != 1 || recs[0].Message != "unfinished" {
		t.Fatalf("records %+v", recs)
	}
}

func TestDockerEnvelope(t *testing.T) {
	in := strings.Join([]string{
		`{"log":"2026-10-30 18:18:56,123 ERROR [MirrorSourceConnector|task-0] failed to send record to \"orders\":\t\u00e9\ud83d\ude00 \\o/  (org.apache.kafka.connect.runtime.AbstractWorkerSourceTask) [kafka-producer-network-thread | connector-producer-MirrorSourceConnector-0]\n","stream":"stdout","time":"2026-10-30T18:18:56.123456789Z"}`,
		`{"log":"org.apache.kafka.common.errors.RecordTooLargeException: too large\r\n","stream":"stdout","time":"2026-10-30T18:18:56.123556789Z"}`,
		`{"log":"2026-10-30 18:18:57,000 INFO a line split by docker ","stream":"stdout","time":"2026-10-30T18:18:57Z"}`,
		`{"stream":"stderr","log":"2026-10-30 18:18:57,001 WARN other order (a.B) [t]\n","time":"2026-10-30T18:18:57Z"}`,
		`{"log":"at 16 KiB (a.B) [t]\n","stream":"stdout","time":"2026-10-30T18:18:57Z"}`,
	}, "\n")
	recs, st := feedAll(t, Options{}, in)
	if st.Envelope != EnvelopeDocker || st.Layout != LayoutStrimzi {
		t.Fatalf("envelope %q layout %q", st.Envelope, st.Layout)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records: %+v", len(recs), recs)
	}
	checkRecord(t, recs[0], want{level: "ERROR", ctx: "MirrorSourceConnector|task-0", logger: "org.apache.kafka.connect.runtime.AbstractWorkerSourceTask",
		thread: "kafka-producer-network-thread | connector-producer-MirrorSourceConnector-0",
		msg:    "failed to send record to \"orders\":\té😀 \\o/ ", stack: 1, line: 1, time: "2026-10-30T18:18:56.123Z"})
	if recs[0].Stack[0] != "org.apache.kafka.common.errors.RecordTooLargeException: too large" {
		t.Errorf("stack %q", recs[0].Stack)
	}
	checkRecord(t, recs[1], want{level: "WARN", logger: "a.B", thread: "t", msg: "other order", line: 4, time: "2026-10-30T18:18:57.001Z"})
	checkRecord(t, recs[2], want{level: "INFO", logger: "a.B", thread: "t", msg: "a line split by docker at 16 KiB", line: 3, time: "2026-10-30T18:18:57.000Z"})
}

func TestUnescape(t *testing.T) {
	cases := map[string]string{
		`plain`:            "plain",
		`a\nb\tc\"d\\e\/f`: "a\nb\tc\"d\\e/f",
		`\u00e9\u20AC`:     "é€",
		`\ud83d\ude00`:     "😀",
		`\ud83d x`:         "\uFFFD x",
		`\uZZZZ`:           "\uFFFDZZZZ",
		`\q`:               `\q`,
		`cut\`:             "cut",
		`\b\f\r`:           "\b\f\r",
	}
	for in, w := range cases {
		if got := string(appendUnescaped(nil, []byte(in))); got != w {
			t.Errorf("unescape(%q) = %q, want %q", in, got, w)
		}
	}
}

func TestEnvelopeDetection(t *testing.T) {
	cases := map[string]envelope{
		"2026-03-05T11:02:10.118220931Z stdout F x":               envCRI,
		"2026-03-05T11:02:10Z stderr P x":                         envCRI,
		"2026-03-05T11:02:10.1+01:00 stdout F:x y":                envCRI,
		`{"log":"x\n","stream":"stdout","time":"t"}`:              envDocker,
		`{"stream":"stdout","log":"x\n"}`:                         envDocker,
		`{"@timestamp":"2026-10-30T18:18:56.123Z","message":"m"}`: envNone,
		"[2026-10-30 18:18:56,123] INFO x (a.B:1)":                envNone,
		"2026-03-05T11:02:10.118220931Z stdout X x":               envNone,
		"2026-03-05 11:02:10,118 INFO stdout F":                   envNone,
	}
	for in, w := range cases {
		if got := detectEnvelope([]byte(in)); got != w {
			t.Errorf("detectEnvelope(%q) = %v, want %v", in, got, w)
		}
	}
}
