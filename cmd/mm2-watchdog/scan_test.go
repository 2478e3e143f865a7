package main

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

const fixtures = "../../testdata/logs"

// fixtureLines returns the first n lines of a fixture (all for n < 0), each
// with its newline.
func fixtureLines(t *testing.T, name string, from, to int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if to < 0 || to > len(lines) {
		to = len(lines)
	}
	return strings.Join(lines[from:to], "")
}

// writeLog writes a log file with the given modification time.
func writeLog(t *testing.T, path, text string, mtime time.Time) {
	t.Helper()
	if strings.HasSuffix(path, ".gz") {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(f)
		if _, err := zw.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	} else if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func findingsByRule(fs []detectors.Finding) map[string]detectors.Finding {
	m := map[string]detectors.Finding{}
	for _, f := range fs {
		m[f.Rule] = f
	}
	return m
}

// taskRestart is what MM2 3.9 logs when the failed task of task-failed.kafka.log
// is restarted (Worker.startTask).
const taskRestart = "[2026-03-05 12:00:00,000] INFO Creating task MirrorSourceConnector-0 (org.apache.kafka.connect.runtime.Worker:759)\n"

func TestScanReportsRecoveriesAsResolved(t *testing.T) {
	// task-failed.kafka.log: the task dies at 11:00:30 and is created again at
	// 11:05.
	code, out, stderr := runMain(t, nil, "", "scan", "--format", "json", filepath.Join(fixtures, "task-failed.kafka.log"))
	if code != exitOK {
		t.Errorf("a recovered task failure must not fail the scan: code %d (stderr %s)", code, stderr)
	}
	fs := decodeFindings(t, out)
	if len(fs) != 1 || fs[0].Rule != "task-failed" || !fs[0].Recovered {
		t.Fatalf("want one resolved task-failed, got %+v", fs)
	}
	if !strings.Contains(out, `"resolved":true`) {
		t.Errorf("JSON lacks \"resolved\":true: %s", out)
	}
	// Cut before the restart, the same failure is active.
	dir := t.TempDir()
	active := filepath.Join(dir, "connect.log")
	writeLog(t, active, fixtureLines(t, "task-failed.kafka.log", 0, 14), time.Now())
	code, out, _ = runMain(t, nil, "", "scan", "--format", "json", active)
	fs = decodeFindings(t, out)
	if code != exitFindings || len(fs) != 1 || fs[0].Recovered || strings.Contains(out, "resolved") {
		t.Errorf("unrecovered failure: code %d findings %s", code, out)
	}

	// partitions-not-created, then the partitions are added and the next
	// refresh finds nothing missing.
	pnc := filepath.Join(dir, "pnc.log")
	writeLog(t, pnc, fixtureLines(t, "partitions-not-created.kafka.log", 0, -1)+
		"[2026-03-05 11:30:00,000] INFO [MirrorSourceConnector|worker] Increased size of A.orders to 6 partitions. (org.apache.kafka.connect.mirror.MirrorSourceConnector:209)\n"+
		"[2026-03-05 11:30:00,300] INFO [MirrorSourceConnector|worker] refreshing topics took 150 ms (org.apache.kafka.connect.mirror.Scheduler:992)\n",
		time.Now())
	code, out, stderr = runMain(t, nil, "", "scan", "--format", "json", pnc)
	byRule := findingsByRule(decodeFindings(t, out))
	if code != exitOK || !byRule["partitions-not-created"].Recovered || !byRule["partitions-missing-on-target"].Recovered {
		t.Errorf("added partitions must resolve both findings: code %d out %s stderr %s", code, out, stderr)
	}

	// One active and one resolved: only the active one counts for
	// --fail-on, and the table shows it first.
	both := filepath.Join(dir, "both.log")
	writeLog(t, both, fixtureLines(t, "partitions-not-created.kafka.log", 0, 14)+
		"[2026-03-05 11:15:00,000] INFO [MirrorSourceConnector|worker] Increased size of A.orders to 6 partitions. (org.apache.kafka.connect.mirror.MirrorSourceConnector:209)\n"+
		fixtureLines(t, "task-failed.kafka.log", 11, 14), time.Now())
	code, out, _ = runMain(t, nil, "", "scan", both)
	if code != exitFindings {
		t.Errorf("an active critical must fail the scan: code %d\n%s", code, out)
	}
	rows := strings.Split(strings.SplitN(out, "\n\n", 2)[0], "\n")
	if !strings.HasPrefix(rows[0], "STATE ") {
		t.Fatalf("no STATE column: %q", rows[0])
	}
	state := map[string]string{}
	seenResolved := false
	for _, r := range rows[1:] {
		f := strings.Fields(r)
		if len(f) < 3 {
			t.Fatalf("short row %q", r)
		}
		state[f[2]] = f[0]
		if f[0] == "resolved" {
			seenResolved = true
		} else if seenResolved {
			t.Errorf("active row after a resolved one:\n%s", out)
		}
	}
	if state["task-failed"] != "active" || state["partitions-not-created"] != "resolved" {
		t.Errorf("want task-failed active and partitions-not-created resolved, got %v:\n%s", state, out)
	}
	if !strings.Contains(out, "partitions-not-created topic=A.orders MirrorSourceConnector (resolved)") {
		t.Errorf("details lack the resolved mark:\n%s", out)
	}
	if code, _, _ := runMain(t, nil, "", "scan", "--fail-on", "critical", pnc); code != exitOK {
		t.Errorf("only resolved findings: code %d, want 0", code)
	}
}

func TestScanKeepsSeparateLogsApart(t *testing.T) {
	healthy, err := filepath.Glob(filepath.Join(fixtures, "healthy*.log"))
	if err != nil || len(healthy) < 2 {
		t.Fatalf("healthy fixtures: %v %v", healthy, err)
	}
	code, out, stderr := runMain(t, nil, "", append([]string{"scan", "--format", "json", "--fail-on", "info"}, healthy...)...)
	if code != exitOK || out != "" {
		t.Errorf("healthy logs scanned together: code %d findings %s (stderr %s)", code, out, stderr)
	}
	// The same failure and restart in two unrelated logs: the restart in
	// worker-b does not end the failure in worker-a.
	dir := t.TempDir()
	now := time.Now()
	a, b := filepath.Join(dir, "worker-a.log"), filepath.Join(dir, "worker-b.log")
	writeLog(t, a, fixtureLines(t, "task-failed.kafka.log", 0, 14), now.Add(-time.Hour))
	writeLog(t, b, taskRestart, now)
	code, out, _ = runMain(t, nil, "", "scan", "--format", "json", a, b)
	fs := decodeFindings(t, out)
	if code != exitFindings || len(fs) != 1 || fs[0].Recovered || fs[0].Evidence == nil || fs[0].Evidence.File != a {
		t.Errorf("unrelated logs must not resolve each other: code %d %s", code, out)
	}
}

func TestScanRotatedSiblingsFormOneTimeline(t *testing.T) {
	now := time.Now()
	failure := fixtureLines(t, "task-failed.kafka.log", 0, 14)
	for _, tc := range []struct {
		name    string
		rotated string
		live    string
	}{
		{"3.9", "connect.log.2026-10-30-18", "connect.log"},
		{"3.9 gzip", "connect.log.2026-10-30-18.gz", "connect.log"},
		{"4.x", "connect-2026-10-30-18.log", "connect.log"},
		{"numbered", "connect.log.1", "connect.log"},
		{"kubelet", "0.log.20261030-181856.gz", "0.log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rotated, live := filepath.Join(dir, tc.rotated), filepath.Join(dir, tc.live)
			writeLog(t, rotated, failure, now.Add(-time.Hour))
			writeLog(t, live, taskRestart, now)
			// Given newest first: the files are still read oldest first.
			code, out, stderr := runMain(t, nil, "", "scan", "--format", "json", live, rotated)
			fs := decodeFindings(t, out)
			if code != exitOK || len(fs) != 1 || !fs[0].Recovered || fs[0].Evidence == nil || fs[0].Evidence.File != rotated {
				t.Errorf("failure in %s, restart in %s: code %d %s (stderr %s)", tc.rotated, tc.live, code, out, stderr)
			}
		})
	}
}

func TestGroupByRotation(t *testing.T) {
	dir := t.TempDir()
	same := time.Now().Add(-time.Hour)
	names := []string{
		"connect.log", "connect.log.2026-10-30-18", "connect.log.2026-10-30-17.gz",
		"connect-2026-10-30-16.log", "connect.log.1", "connect.log.2",
		"other.log", "0.log", "0.log.20261030-181856",
	}
	for _, n := range names {
		writeLog(t, filepath.Join(dir, n), "", same) // equal times: the suffix decides
	}
	var in []string
	for _, n := range names {
		in = append(in, filepath.Join(dir, n))
	}
	in = append(in, "-", filepath.Join(dir, "missing.log.3"))
	got := groupByRotation(in)
	var gotNames [][]string
	for _, g := range got {
		var ns []string
		for _, p := range g {
			ns = append(ns, filepath.Base(p))
		}
		gotNames = append(gotNames, ns)
	}
	want := [][]string{
		{"connect.log.2", "connect.log.1", "connect-2026-10-30-16.log", "connect.log.2026-10-30-17.gz", "connect.log.2026-10-30-18", "connect.log"},
		{"other.log"},
		{"0.log.20261030-181856", "0.log"},
		{"-"},
		{"missing.log.3"},
	}
	if !reflect.DeepEqual(gotNames, want) {
		t.Errorf("groups:\n got %q\nwant %q", gotNames, want)
	}

	// Modification time wins over the suffix.
	writeLog(t, filepath.Join(dir, "connect.log.1"), "", same.Add(time.Minute))
	g := groupByRotation([]string{filepath.Join(dir, "connect.log.1"), filepath.Join(dir, "connect.log.2026-10-30-18")})
	if len(g) != 1 || filepath.Base(g[0][0]) != "connect.log.2026-10-30-18" {
		t.Errorf("mtime order: %q", g)
	}
}

func TestScanUnreadableInputsPrintNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.log")
	for _, format := range []string{"text", "json"} {
		code, out, stderr := runMain(t, nil, "", "scan", "--format", format, missing, filepath.Join(dir, "gone.log"))
		if code != exitUsage || out != "" || !strings.Contains(stderr, "nope.log") || !strings.Contains(stderr, "gone.log") {
			t.Errorf("%s: code %d stdout %q stderr %q", format, code, out, stderr)
		}
	}
	// A readable input is still reported, and the exit code still says that
	// another could not be read.
	code, out, stderr := runMain(t, nil, "", "scan", missing, filepath.Join(fixtures, "healthy.kafka.log"))
	if code != exitUsage || !strings.Contains(out, "no findings") || !strings.Contains(stderr, "nope.log") {
		t.Errorf("one readable input: code %d stdout %q stderr %q", code, out, stderr)
	}
}
