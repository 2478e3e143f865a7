package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenWorkerLogStartsFresh: a directory kept from an earlier demo (--dir)
// does not replay that run's log.
func TestOpenWorkerLogStartsFresh(t *testing.T) {
	dir := t.TempDir()
	stale := "[2026-11-30 18:00:00,000] WARN Could not create topic-partitions for orders.\n"
	for _, name := range []string{WorkerLogName, WorkerLogName + ".2026-11-30-17"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stale), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := OpenWorkerLog(dir, func() time.Time { return time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Log("INFO", "", "org.apache.kafka.connect.mirror.MirrorMaker", 1, "Kafka MirrorMaker started"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "Could not create") {
		t.Errorf("the previous run's log was kept:\n%s", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, WorkerLogName+".*")); len(left) != 0 {
		t.Errorf("rolled files of the previous run left: %v", left)
	}
}
