package logrules

import (
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// benchRecords are the kinds of record a healthy MM2 worker log is made of
// (the mix bench/loggen writes), plus a finding. Each kind is measured on its
// own: per-record cost and allocations.
func benchRecords() []struct {
	name string
	rec  *watcher.Record
} {
	const (
		wst  = "org.apache.kafka.connect.runtime.WorkerSourceTask"
		mct  = "org.apache.kafka.connect.mirror.MirrorCheckpointTask"
		mst  = "org.apache.kafka.connect.mirror.MirrorSourceTask"
		meta = "org.apache.kafka.clients.Metadata"
	)
	return []struct {
		name string
		rec  *watcher.Record
	}{
		// No prefilter occurs: the hot path.
		{"info-unmatched", r(1, "INFO", "WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets for 812 acknowledged messages", "ctx:MirrorSourceConnector|task-0|offsets", "logger:"+wst)},
		{"info-unmatched-long", r(1, "INFO", "[Producer clientId=connector-producer-MirrorSourceConnector-3] Resetting the last seen epoch of partition orders-7 to 12 since the associated topicId changed", "logger:"+meta)},
		{"debug", r(1, "DEBUG", "[Consumer clientId=kafka->vast|MirrorSourceConnector|replication-consumer, groupId=null] Fetch READ_UNCOMMITTED at offset 42 for partition clicks-3 returned fetch data")},
		{"warn-unmatched", r(3, "WARN", "[Consumer clientId=consumer-1] Error while fetching metadata with correlation id 7 : {orders=LEADER_NOT_AVAILABLE}")},
		{"error-unmatched-stack", r(4, "ERROR", "Some unrelated error happened", "java.lang.IllegalStateException: x", "\tat a.b(C.java:1)", "\tat a.c(C.java:2)", "Caused by: java.io.IOException: y", "\t... 2 more")},
		// A prefilter occurs but the row's pattern does not match.
		{"info-prefilter-only", r(2, "INFO", "refreshing known target topics took 12 ms", "ctx:MirrorSourceConnector|worker", "logger:"+sch)},
		// Signals: rows without findings that update the Engine's memory.
		{"info-signal-checkpointing", r(5, "INFO", "task-thread-MirrorCheckpointConnector-0 checkpointing 3 consumer groups kafka->vast: [billing, search].", "ctx:MirrorCheckpointConnector|task-0", "logger:"+mct)},
		{"info-signal-replicating", r(6, "INFO", "task-thread-MirrorSourceConnector-1 replicating 4 topic-partitions kafka->vast: [orders-0, orders-1, orders-2, clicks-0].", "ctx:MirrorSourceConnector|task-1", "logger:"+mst)},
		// A finding (folded into the same identity every time).
		{"warn-finding", r(7, "WARN", "Could not create topic-partitions for B.orders.", "ctx:MirrorSourceConnector|worker", "org.apache.kafka.common.errors.UnsupportedVersionException: x")},
	}
}

// BenchmarkObserve measures Engine.Observe per kind of record:
//
//	go test -run '^$' -bench Observe -benchmem ./detectors/logrules/
func BenchmarkObserve(b *testing.B) {
	for _, bc := range benchRecords() {
		b.Run(bc.name, func(b *testing.B) {
			e := New(Options{})
			rec := bc.rec
			b.SetBytes(int64(len(rec.Text)))
			b.ReportAllocs()
			for b.Loop() {
				e.Observe(rec)
			}
		})
	}
}
