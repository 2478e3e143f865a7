package logrules

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
)

var update = flag.Bool("update", false, "rewrite testdata/logs/*.golden.json from the current output")

const logsDir = "../../testdata/logs"

// scan runs one log file through logparse and a fresh Engine and returns the
// folded findings, with evidence paths reduced to the file's base name.
func scan(t *testing.T, path string) []detectors.Finding {
	t.Helper()
	e := New(Options{})
	records := 0
	_, err := logparse.ScanFile(context.Background(), path, logparse.Options{}, func(r *watcher.Record) error {
		records++
		e.Observe(r)
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", path, err)
	}
	if records == 0 {
		t.Fatalf("%s: the parser produced no records", path)
	}
	fs := e.Findings()
	for i := range fs {
		if fs[i].Evidence != nil {
			fs[i].Evidence.File = filepath.Base(fs[i].Evidence.File)
		}
	}
	return fs
}

func ndjson(t *testing.T, fs []detectors.Finding) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, f := range fs {
		line, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestGolden scans every fixture and compares the findings with its golden
// NDJSON file (regenerate with go test ./detectors/logrules -update).
func TestGolden(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no fixtures in %s: %v", logsDir, err)
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".log")
		t.Run(name, func(t *testing.T) {
			got := ndjson(t, scan(t, path))
			golden := filepath.Join(logsDir, name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("findings differ from %s\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestFixturesPerRule checks that every log rule has fixtures in at least two
// layouts, that a fixture named after a rule reports that rule, and that all
// layouts of one scenario report the same rules with the same counts.
func TestFixturesPerRule(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	layouts := map[string][]string{} // scenario → fixture paths
	for _, p := range logs {
		base := strings.TrimSuffix(filepath.Base(p), ".log")
		i := strings.LastIndexByte(base, '.')
		layouts[base[:i]] = append(layouts[base[:i]], p)
	}
	for _, r := range Rules() {
		if r.Cause && !r.standalone && r.ID != "config-sync-unsupported" && r.ID != "internal-topic-failed" && r.ID != "record-too-large" {
			continue
		}
		if len(layouts[r.ID]) < 2 && !strings.HasPrefix(r.ID, "scheduled-job") && r.ID != "poll-failed" &&
			r.ID != "offset-sync-failed" && r.ID != "producer-fatal-error" {
			t.Errorf("rule %s has %d fixtures in testdata/logs, want at least two layouts", r.ID, len(layouts[r.ID]))
		}
	}
	for scenario, paths := range layouts {
		var want string
		for i, p := range paths {
			fs := scan(t, p)
			var sig []string
			found := false
			for _, f := range fs {
				sig = append(sig, f.Rule+"/"+string(f.Severity))
				if f.Rule == scenario {
					found = true
				}
			}
			sort.Strings(sig)
			got := strings.Join(sig, " ")
			if scenario != "healthy" && !strings.Contains(scenario, "-fallback") && !found {
				t.Errorf("%s: no %s finding: %s", filepath.Base(p), scenario, got)
			}
			if i == 0 {
				want = got
			} else if got != want {
				t.Errorf("%s: rules %q differ from %s: %q", filepath.Base(p), got, filepath.Base(paths[0]), want)
			}
		}
	}
}
