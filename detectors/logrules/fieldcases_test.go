package logrules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

const fieldDir = "../../testdata/field-cases"

func byRule(fs []detectors.Finding, rule string) []detectors.Finding {
	var out []detectors.Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// TestFieldCase09 follows testdata/field-cases/EXPECTED.md.
func TestFieldCase09(t *testing.T) {
	fs := scan(t, filepath.Join(fieldDir, "case09-herder-exit-offsets-topic-denied.log"))
	died := byRule(fs, "worker-died")
	if len(died) != 1 {
		t.Fatalf("want one worker-died, got %d: %+v", len(died), fs)
	}
	d := died[0]
	if d.Severity != detectors.Critical || !strings.HasPrefix(d.Cause, "org.apache.kafka.common.errors.TopicAuthorizationException") {
		t.Errorf("worker-died severity %s cause %q", d.Severity, d.Cause)
	}
	if d.Topic != "mirrormaker2-cluster-offsets" && !strings.Contains(d.Summary, "mirrormaker2-cluster-offsets") {
		t.Errorf("topic not named: topic %q summary %q", d.Topic, d.Summary)
	}
	// may: one authorization-failed for the same topic; must not: anything else
	// (the orderly shutdown lines).
	for _, f := range fs {
		switch f.Rule {
		case "worker-died":
		case "authorization-failed":
			if f.Topic != "mirrormaker2-cluster-offsets" {
				t.Errorf("authorization-failed for another topic: %+v", f)
			}
		default:
			t.Errorf("unexpected finding %s: %s", f.Rule, f.Summary)
		}
	}
	if n := len(byRule(fs, "authorization-failed")); n > 1 {
		t.Errorf("%d authorization-failed findings, want at most one", n)
	}
}

func TestFieldCase11(t *testing.T) {
	fs := scan(t, filepath.Join(fieldDir, "case11-record-too-large-task-killed.log"))
	if len(fs) != 1 {
		t.Fatalf("want exactly one finding for the incident, got %d: %+v", len(fs), fs)
	}
	f := fs[0]
	okConn := f.Connector == "legacy->platform.MirrorSourceConnector" ||
		(f.Connector == "MirrorSourceConnector" && f.Source == "legacy" && f.Target == "platform")
	if f.Rule != "record-too-large" || f.Severity != detectors.Critical || !okConn ||
		f.Task == nil || *f.Task != 0 || f.Topic != "document-archive" ||
		!strings.HasPrefix(f.Cause, "org.apache.kafka.common.errors.RecordTooLargeException") {
		t.Errorf("got %+v", f)
	}
	if strings.Contains(f.Connector, "Heartbeat") {
		t.Errorf("heartbeat connector reported")
	}
}

func TestFieldCase18(t *testing.T) {
	fs := scan(t, filepath.Join(fieldDir, "case18-circular-replication-prefix-chain.log"))
	loops := byRule(fs, "replication-loop")
	if len(loops) != 1 {
		t.Fatalf("want one replication-loop finding, got %d: %+v", len(loops), fs)
	}
	l := loops[0]
	if l.Severity != detectors.Critical || !strings.Contains(l.Summary, `"peer"`) || !strings.Contains(l.Summary, "peer.peer.peer.test-topic-1") {
		t.Errorf("alias or chained topics not named: %q", l.Summary)
	}
	if topics, _ := l.Values["topics"].([]string); len(topics) < 3 {
		t.Errorf("values.topics = %v", l.Values["topics"])
	}
	if len(byRule(fs, "topic-not-created")) != 0 {
		t.Errorf("topic-not-created reported")
	}
}

// TestNoise feeds a long healthy MM2 log — start-up, rebalances below the
// storm threshold, successful refreshes and partition increases, the
// spurious 4.0/4.1 config WARN without a stack — and expects no finding.
func TestNoise(t *testing.T) {
	for _, layout := range []string{"kafka", "strimzi", "json", "cri", "short"} {
		if fs := scan(t, filepath.Join(logsDir, "healthy."+layout+".log")); len(fs) != 0 {
			t.Errorf("healthy.%s.log: %d findings, first %s: %s", layout, len(fs), fs[0].Rule, fs[0].Summary)
		}
	}
	e := New(Options{})
	sched := func(job string) string {
		return "thread:Scheduler for MirrorSourceConnector: A->B|MirrorSourceConnector-" + job
	}
	n := 0
	for hour := 0; hour < 24; hour++ {
		base := float64(hour * 3600)
		recs := []*watcher.Record{
			r(base, "INFO", "[Worker clientId=A->B, groupId=A-mm2] Rebalance started"),
			r(base+1, "INFO", "[Worker clientId=A->B, groupId=A-mm2] Successfully joined group with generation Generation{generationId=3, memberId='connect-1', protocol='sessioned'}"),
			r(base+2, "INFO", "task-thread-MirrorSourceConnector-0 replicating 3 topic-partitions A->B: [orders-0, orders-1, A.heartbeats-0].", "ctx:MirrorSourceConnector|task-0"),
			r(base+3, "INFO", "WorkerSourceTask{id=MirrorSourceConnector-0} Executing source task", "ctx:MirrorSourceConnector|task-0"),
			r(base+4, "INFO", "Found 2 new topic-partitions on A. Found 0 deleted topic-partitions on A. Found 2 topic-partitions missing on B.", sched("refreshing topics")),
			r(base+4.1, "INFO", fmt.Sprintf("Increased size of A.orders to %d partitions.", 6+hour), sched("refreshing topics")),
			r(base+4.2, "INFO", "refreshing topics took 120 ms", sched("refreshing topics"), "logger:"+sch),
			r(base+5, "INFO", "Created remote topic A.new-topic with 3 partitions."),
			r(base+6, "WARN", "Could not alter configuration of topic A.orders."),
			r(base+7, "INFO", "syncing topic configs took 30 ms", "logger:"+sch),
			r(base+8, "WARN", "[Consumer clientId=A->B|MirrorSourceConnector|replication-consumer] Error while fetching metadata with correlation id 7 : {orders=LEADER_NOT_AVAILABLE}"),
			r(base+9, "INFO", "ProducerConfig values: ", "\tacks = -1", "\tenable.idempotence = false", "\tcompression.type = zstd"),
		}
		for m := 0; m < 60; m++ {
			recs = append(recs, r(base+60*float64(m)+30, "INFO", fmt.Sprintf("WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets for %d acknowledged messages", 100+m), "ctx:MirrorSourceConnector|task-0|offsets"))
		}
		for _, rec := range recs {
			n++
			if got := e.Observe(rec); len(got) != 0 {
				t.Fatalf("record %q: %+v", rec.Message, got)
			}
		}
	}
	if fs := e.Findings(); len(fs) != 0 || n < 1000 {
		t.Fatalf("%d records gave %d findings", n, len(fs))
	}
}

// TestNoAllocationOnUnmatchedRecords proves the hot path: a record no
// prefilter matches costs no allocation.
func TestNoAllocationOnUnmatchedRecords(t *testing.T) {
	e := New(Options{})
	recs := []*watcher.Record{
		r(1, "INFO", "WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets for 812 acknowledged messages", "ctx:MirrorSourceConnector|task-0|offsets"),
		r(2, "INFO", "[Producer clientId=connector-producer-MirrorSourceConnector-0] Cluster ID: 4L6g3nShT-eMCtK--X86sw"),
		r(3, "WARN", "[Consumer clientId=consumer-1] Error while fetching metadata with correlation id 7 : {orders=LEADER_NOT_AVAILABLE}",
			"org.apache.kafka.common.errors.LeaderNotAvailableException: x", "\tat a.b(C.java:1)"),
		r(4, "ERROR", "Some unrelated error happened", "java.lang.IllegalStateException: x", "\tat a.b(C.java:1)"),
		r(5, "DEBUG", "Sending metadata request"),
	}
	for _, rec := range recs {
		if allocs := testing.AllocsPerRun(200, func() { e.Observe(rec) }); allocs != 0 {
			t.Errorf("%q: %.1f allocations per record, want 0", rec.Message, allocs)
		}
	}
}
