package tailer

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// writeSteady writes seqLine(0..n-1) to p one write per line (log4j's
// immediateFlush), pausing briefly every 100 lines for a steady rate, and
// calls rotate with the file closed after every `every` lines, the way log4j
// closes, renames and reopens its file.
func writeSteady(t *testing.T, p string, n, every int, pause time.Duration, rotate func(k int)) {
	t.Helper()
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := open()
	for i := range n {
		if i > 0 && i%every == 0 {
			f.Close()
			rotate(i / every)
			f = open()
		}
		if _, err := f.WriteString(seqLine(i) + "\n"); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			time.Sleep(pause) // the write rate, not synchronisation
		}
	}
	f.Close()
}

func TestRotation(t *testing.T) {
	const n, every = 10000, 2000
	cases := []struct {
		name   string
		poll   bool
		pause  time.Duration
		rotate func(t *testing.T, p string, k int)
	}{
		{"log4j1-daily-rename", false, time.Millisecond, func(t *testing.T, p string, k int) {
			mustRename(t, p, p+".2024-01-01-"+two(k))
		}},
		{"log4j2-rolling-rename", false, time.Millisecond, func(t *testing.T, p string, k int) {
			mustRename(t, p, filepath.Join(filepath.Dir(p), "connect-2024-01-01-"+two(k)+".log"))
		}},
		{"delete-recreate", false, time.Millisecond, func(t *testing.T, p string, k int) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
		{"log4j1-daily-rename-poll", true, 2 * time.Millisecond, func(t *testing.T, p string, k int) {
			mustRename(t, p, p+".2024-01-01-"+two(k))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "connect.log")
			writeFile(t, p, "")
			h := startHarness(t, Config{Globs: []string{p}, Poll: tc.poll, PollInterval: 5 * time.Millisecond})
			writeSteady(t, p, n, every, tc.pause, func(k int) { tc.rotate(t, p, k) })
			s := h.sink(p)
			s.waitLines(t, n, 30*time.Second)
			h.stop()
			checkSeq(t, s.snapshot(), n)
			if got, want := testutil.ToFloat64(h.metrics(p).Renames), float64(n/every-1); got != want {
				t.Errorf("renames = %v, want %v", got, want)
			}
			// Line numbers start again at 1 in each new file.
			s.mu.Lock()
			defer s.mu.Unlock()
			for i, num := range s.nums {
				if want := int64(i%every + 1); num != want {
					t.Fatalf("line %d has number %d, want %d", i, num, want)
				}
			}
		})
	}
}

func TestCopyTruncate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "connect.log")
	writeFile(t, p, "")
	h := startHarness(t, Config{Globs: []string{p}})
	s := h.sink(p)
	w, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(from, to int) {
		if _, err := w.WriteString(joinLines(from, to)); err != nil {
			t.Fatal(err)
		}
	}
	copyTruncate := func(suffix string) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, p+suffix, string(b))
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
	}

	write(0, 1000)
	s.waitLines(t, 1000, 10*time.Second)
	// Small refill: the file is shorter than what was read.
	copyTruncate(".1")
	write(1000, 1100)
	s.waitLines(t, 1100, 10*time.Second)
	// Refill past the old size at once: noticed either by size or, when the
	// refill wins the race, by the changed bytes before the read offset.
	copyTruncate(".2")
	write(1100, 4100)
	s.waitLines(t, 4100, 10*time.Second)
	h.stop()
	checkSeq(t, s.snapshot(), 4100)
	if got := testutil.ToFloat64(h.metrics(p).Truncations); got != 2 {
		t.Errorf("truncations = %v, want 2", got)
	}
}

// TestTruncateRefilledBeforeLook is the copytruncate case that nxadm/tail
// misses: the writer refills past the old size before the follower looks.
func TestTruncateRefilledBeforeLook(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	writeFile(t, p, joinLines(0, 10))
	m := FileMetrics{Truncations: newCounter()}
	ft := newFileTail(p, 1<<10, false, testLogger(t), m)
	s := newLineSink()
	ft.poll(s)
	defer ft.close()
	writeFile(t, p, joinLines(10, 40)) // truncate and refill to 3x the size
	ft.poll(s)
	checkSeq(t, s.snapshot(), 40)
	if got := testutil.ToFloat64(m.Truncations); got != 1 {
		t.Errorf("truncations = %v, want 1", got)
	}
	if s.nums[10] != 1 {
		t.Errorf("first line after truncation numbered %d, want 1", s.nums[10])
	}
}

func TestFileAppearsLater(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "connect.log") // not even the directory exists
	h := startHarness(t, Config{Globs: []string{p}, PollInterval: 10 * time.Millisecond})
	m := h.metrics(p)
	if got := testutil.ToFloat64(m.Waiting); got != 1 {
		t.Fatalf("waiting = %v before the file exists, want 1", got)
	}
	if err := os.Mkdir(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, joinLines(0, 50)) // written before it is seen: read from its start
	s := h.sink(p)
	s.waitLines(t, 50, 10*time.Second)
	appendTo(t, p, joinLines(50, 100))
	s.waitLines(t, 100, 10*time.Second)
	h.stop()
	checkSeq(t, s.snapshot(), 100)
	if got := testutil.ToFloat64(m.Waiting); got != 0 {
		t.Errorf("waiting = %v while following, want 0", got)
	}
}

func TestStartAtEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	writeFile(t, p, joinLines(0, 100)+"half a li")
	h := startHarness(t, Config{Globs: []string{p}})
	appendTo(t, p, "ne\n"+joinLines(101, 103))
	s := h.sink(p)
	s.waitLines(t, 3, 10*time.Second)
	h.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	want := []string{"half a line", seqLine(101), seqLine(102)}
	for i, w := range want {
		if s.lines[i] != w || s.nums[i] != int64(101+i) {
			t.Errorf("line %d = %d %q, want %d %q", i, s.nums[i], s.lines[i], 101+i, w)
		}
	}
	if len(s.lines) != 3 {
		t.Errorf("got %d lines, want 3", len(s.lines))
	}
}

func TestPartialLineWaitsForItsEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "connect.log")
	writeFile(t, p, "first\r\nsec")
	ft := newFileTail(p, 1<<10, false, testLogger(t), FileMetrics{})
	defer ft.close()
	s := newLineSink()
	ft.poll(s)
	if got := s.snapshot(); len(got) != 1 || got[0] != "first" {
		t.Fatalf("lines = %q, want [first]", got)
	}
	appendTo(t, p, "ond\n")
	ft.poll(s)
	if got := s.snapshot(); len(got) != 2 || got[1] != "second" {
		t.Fatalf("lines = %q, want [first second]", got)
	}
}

// TestHugeLine writes a 50 MB line and checks that it is cut at the cap,
// counted, and read with a bounded amount of memory.
func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	p := filepath.Join(t.TempDir(), "connect.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("before\n")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
	for range 50 {
		f.Write(chunk)
	}
	f.WriteString("\nafter\n")
	f.Close()

	const limit = 64 << 10
	m := FileMetrics{Lines: newCounter(), TruncatedLines: newCounter()}
	ft := newFileTail(p, limit, false, testLogger(t), m)
	defer ft.close()
	s := &lenSink{}
	var before, after runtimeMem
	before.read()
	ft.poll(s)
	after.read()
	if got := after.totalAlloc - before.totalAlloc; got > 1<<20 {
		t.Errorf("reading a 50 MB line allocated %d bytes, want < 1 MiB", got)
	}
	if want := []int{6, limit, 5}; len(s.lens) != 3 || s.lens[0] != want[0] || s.lens[1] != want[1] || s.lens[2] != want[2] {
		t.Errorf("line lengths = %v, want %v", s.lens, want)
	}
	if want := []bool{false, true, false}; len(s.trunc) != 3 || s.trunc[1] != true || s.trunc[0] || s.trunc[2] {
		t.Errorf("truncated = %v, want %v", s.trunc, want)
	}
	if got := testutil.ToFloat64(m.TruncatedLines); got != 1 {
		t.Errorf("truncated lines = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.Lines); got != 3 {
		t.Errorf("lines = %v, want 3", got)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func two(k int) string { return string([]byte{byte('0' + k/10), byte('0' + k%10)}) }
