package detectors

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFindingJSONOmitsUnknown(t *testing.T) {
	f := Finding{Rule: "task-failed", Severity: Critical, Summary: "s", Task: TaskPtr(0)}
	b, err := json.Marshal(&f)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if got != `{"rule":"task-failed","severity":"critical","summary":"s","task":0}` {
		t.Errorf("JSON = %s", got)
	}
	for _, absent := range []string{"first_seen", "count", "evidence", "topic", "Recovered"} {
		if strings.Contains(got, absent) {
			t.Errorf("JSON has %q for an unknown value: %s", absent, got)
		}
	}
}

func TestIdentityIgnoresCountsAndText(t *testing.T) {
	a := Finding{Rule: "r", Source: "a", Target: "b", Topic: "t", Task: TaskPtr(1), Count: 1, Summary: "x"}
	b := a
	b.Count, b.Summary, b.LastSeen = 7, "y", time.Now()
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("fingerprint depends on count/summary/time")
	}
	c := a
	c.Task = TaskPtr(2)
	if a.Fingerprint() == c.Fingerprint() {
		t.Error("different tasks share a fingerprint")
	}
	d := a
	d.Task = nil
	if a.Identity() == d.Identity() {
		t.Error("task 1 and unknown task share an identity")
	}
	// Field boundaries matter: ("ab","c") is not ("a","bc").
	e1 := Finding{Rule: "r", Source: "ab", Target: "c"}
	e2 := Finding{Rule: "r", Source: "a", Target: "bc"}
	if e1.Identity() == e2.Identity() {
		t.Error("identity does not separate fields")
	}
}

func TestFold(t *testing.T) {
	t1 := time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)
	f := Finding{Rule: "r", Severity: Warning, Count: 1, FirstSeen: t1, LastSeen: t1, Values: map[string]any{"a": 1}}
	f.Fold(Finding{Rule: "r", Severity: Critical, FirstSeen: t1.Add(time.Minute), LastSeen: t1.Add(time.Minute), Values: map[string]any{"b": 2}, Cause: "X"})
	if f.Count != 2 || !f.FirstSeen.Equal(t1) || !f.LastSeen.Equal(t1.Add(time.Minute)) || f.Severity != Critical || f.Cause != "X" || len(f.Values) != 2 {
		t.Errorf("fold = %+v", f)
	}
}

func TestParseSeverity(t *testing.T) {
	for in, want := range map[string]Severity{"info": Info, "WARN": Warning, "warning": Warning, "critical": Critical, " crit ": Critical} {
		if got, err := ParseSeverity(in); err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSeverity("fatal"); err == nil || !strings.Contains(err.Error(), "fatal") {
		t.Errorf("want an error naming the value, got %v", err)
	}
	if !(Critical.Rank() > Warning.Rank() && Warning.Rank() > Info.Rank() && Info.Rank() > Severity("x").Rank()) {
		t.Error("rank order")
	}
}
