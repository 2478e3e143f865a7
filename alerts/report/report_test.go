package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

func sample() []detectors.Finding {
	return []detectors.Finding{
		{Rule: "send-retrying", Severity: detectors.Warning, Summary: "retrying", Source: "a", Target: "b", Topic: "t<1>"},
		{Rule: "partitions-not-created", Severity: detectors.Critical, Summary: "line one\nline two", Topic: "orders",
			Partitions: []int32{3, 4}, Connector: "MirrorSourceConnector", Task: detectors.TaskPtr(0), Count: 3,
			Cause:    "org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS",
			Evidence: &detectors.Evidence{File: "connect.log", Line: 12}, Hint: "recreate"},
	}
}

func TestWriteJSONIsNDJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", b.String())
	}
	for _, l := range lines {
		var f detectors.Finding
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Errorf("line %q: %v", l, err)
		}
	}
	if !strings.Contains(lines[0], `"topic":"t<1>"`) {
		t.Errorf("HTML escaping should be off: %s", lines[0])
	}
	var empty bytes.Buffer
	if err := WriteJSON(&empty, nil); err != nil || empty.Len() != 0 {
		t.Errorf("no findings must write nothing, got %q", empty.String())
	}
}

func TestWriteTextOrdersBySeverity(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sample(), false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	crit, warn := strings.Index(out, "CRITICAL"), strings.Index(out, "WARNING")
	if crit < 0 || warn < 0 || crit > warn {
		t.Errorf("critical must come first:\n%s", out)
	}
	for _, want := range []string{"partitions=[3 4]", "MirrorSourceConnector/task-0", "line one line two", "connect.log:12", "cause: org.apache", "hint:  recreate", "a->b topic=t<1>"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a terminal")
	}
	b.Reset()
	_ = WriteText(&b, sample(), true)
	if !strings.Contains(b.String(), "\x1b[31mCRITICAL") {
		t.Error("no colour on a terminal")
	}
	b.Reset()
	_ = WriteText(&b, nil, false)
	if strings.TrimSpace(b.String()) != "no findings" {
		t.Errorf("empty: %q", b.String())
	}
}

func TestResolvedFindings(t *testing.T) {
	fs := sample()
	fs = append(fs, detectors.Finding{Rule: "task-failed", Severity: detectors.Critical, Summary: "task died",
		Connector: "MirrorSourceConnector", Task: detectors.TaskPtr(1), Hint: "restart", Recovered: true})
	fs[0], fs[2] = fs[2], fs[0] // the resolved one first in the input
	var b bytes.Buffer
	if err := WriteText(&b, fs, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := strings.Split(out, "\n")
	if !strings.HasPrefix(rows[0], "STATE") {
		t.Fatalf("no STATE column:\n%s", out)
	}
	for i, want := range []string{"active    \x1b[31mCRITICAL", "active    \x1b[33mWARNING", "resolved  \x1b[90mCRITICAL\x1b[0m  task-failed"} {
		if !strings.HasPrefix(rows[i+1], want) {
			t.Errorf("row %d = %q, want prefix %q", i+1, rows[i+1], want)
		}
	}
	if !strings.Contains(out, "task-failed MirrorSourceConnector/task-1 (resolved)\n") {
		t.Errorf("details lack the resolved mark:\n%s", out)
	}

	b.Reset()
	if err := WriteJSON(&b, fs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], `"resolved":true`) || strings.Contains(lines[1], "resolved") {
		t.Errorf("resolved must be in the JSON of recovered findings only:\n%s", b.String())
	}
	var back detectors.Finding
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil || !back.Recovered {
		t.Errorf("round trip: %+v %v", back, err)
	}
}
