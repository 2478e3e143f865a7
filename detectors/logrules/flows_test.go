package logrules

import (
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// TestConfiguredFlowAttribution: in dedicated mode the WARN names neither
// alias; with one enabled flow in the MM2 config it is that flow's, with two
// it stays unattributed, and a line that names another alias is not bent.
func TestConfiguredFlowAttribution(t *testing.T) {
	const msc = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	warn := func() *watcher.Record {
		return r(1, "WARN", "Could not create topic-partitions for orders.", "ctx:MirrorSourceConnector|worker", "logger:"+msc,
			"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS")
	}
	for _, tc := range []struct {
		name           string
		flows          []string
		source, target string
	}{
		{"one flow", []string{"kafka->vast"}, "kafka", "vast"},
		{"two flows", []string{"kafka->vast", "vast->kafka"}, "", ""},
		{"no config", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := New(Options{Flows: tc.flows}).Observe(warn())
			if len(fs) != 1 || fs[0].Rule != "partitions-not-created" {
				t.Fatalf("findings = %+v", fs)
			}
			if fs[0].Source != tc.source || fs[0].Target != tc.target {
				t.Errorf("flow = %s->%s, want %s->%s", fs[0].Source, fs[0].Target, tc.source, tc.target)
			}
		})
	}
	// The Found line names the target; a target that is not the configured
	// flow's keeps the line's own alias.
	found := r(2, "INFO", "Found 0 new topic-partitions on other. Found 0 deleted topic-partitions on other. Found 3 topic-partitions missing on elsewhere.",
		"ctx:MirrorSourceConnector|worker", "logger:"+msc)
	fs := New(Options{Flows: []string{"kafka->vast"}}).Observe(found)
	for _, f := range fs {
		if f.Source == "kafka" || f.Target == "vast" {
			t.Errorf("a line about other->elsewhere was attributed to kafka->vast: %+v", f)
		}
	}
}

// TestEvictionKeepsCriticals: past MaxTracked, warnings are dropped before a
// critical, however old the critical is, and the drops are counted.
func TestEvictionKeepsCriticals(t *testing.T) {
	e := New(Options{MaxTracked: 3})
	crit := r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to orders: ", "ctx:MirrorSourceConnector|task-0",
		"logger:org.apache.kafka.connect.runtime.AbstractWorkerSourceTask",
		"org.apache.kafka.common.errors.RecordTooLargeException: The request included a message larger than the max message size the server will accept.")
	observeAll(e, crit)
	for i := 0; i < 10; i++ {
		observeAll(e, r(float64(2+i), "WARN", "WorkerSourceTask{id=MirrorSourceConnector-0} Failed to send record to topic 't"+string(rune('a'+i))+"' and partition '0'. Backing off before retrying: ",
			"ctx:MirrorSourceConnector|task-0", "logger:org.apache.kafka.connect.runtime.AbstractWorkerSourceTask"))
	}
	fs := e.Findings()
	if len(fs) != 3 {
		t.Fatalf("kept %d findings, want 3", len(fs))
	}
	var critical int
	for _, f := range fs {
		if f.Rule == "record-too-large" {
			critical++
		}
	}
	if critical != 1 {
		t.Errorf("the critical was evicted: %+v", fs)
	}
	if e.Evicted() != 8 {
		t.Errorf("Evicted() = %d, want 8", e.Evicted())
	}
}
