package tailer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// lineSink collects lines and signals every change.
type lineSink struct {
	mu      sync.Mutex
	lines   []string
	nums    []int64
	trunc   []bool
	flushes int
	changed chan struct{}
}

func newLineSink() *lineSink { return &lineSink{changed: make(chan struct{}, 1)} }

func (s *lineSink) Line(b []byte, n int64, tr bool) {
	s.mu.Lock()
	s.lines = append(s.lines, string(b))
	s.nums = append(s.nums, n)
	s.trunc = append(s.trunc, tr)
	s.mu.Unlock()
	signal(s.changed)
}
func (s *lineSink) Pending() bool { return false }
func (s *lineSink) Flush() {
	s.mu.Lock()
	s.flushes++
	s.mu.Unlock()
	signal(s.changed)
}

func (s *lineSink) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

func (s *lineSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lines)
}

// waitLines waits until the sink holds at least n lines.
func (s *lineSink) waitLines(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for s.count() < n {
		select {
		case <-s.changed:
		case <-deadline.C:
			t.Fatalf("timed out with %d of %d lines", s.count(), n)
		}
	}
}

// harness runs a Manager with one lineSink per path and per-path metrics.
type harness struct {
	t      *testing.T
	mgr    *Manager
	mu     sync.Mutex
	sinks  map[string]*lineSink
	ms     map[string]FileMetrics
	forgot chan string
	cancel context.CancelFunc
	done   chan error
	newOne chan string
}

func startHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, sinks: map[string]*lineSink{}, ms: map[string]FileMetrics{},
		forgot: make(chan string, 16), newOne: make(chan string, 16)}
	cfg.NewSink = func(p string) Sink {
		s := newLineSink()
		h.mu.Lock()
		h.sinks[p] = s
		h.mu.Unlock()
		h.newOne <- p
		return s
	}
	cfg.Metrics = func(p string) FileMetrics {
		fm := FileMetrics{
			Lines:          prometheus.NewCounter(prometheus.CounterOpts{Name: "l"}),
			TruncatedLines: prometheus.NewCounter(prometheus.CounterOpts{Name: "t"}),
			Waiting:        prometheus.NewGauge(prometheus.GaugeOpts{Name: "w"}),
			Renames:        prometheus.NewCounter(prometheus.CounterOpts{Name: "r"}),
			Truncations:    prometheus.NewCounter(prometheus.CounterOpts{Name: "x"}),
		}
		h.mu.Lock()
		h.ms[p] = fm
		h.mu.Unlock()
		return fm
	}
	cfg.Forget = func(p string) { h.forgot <- p }
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.mgr = m
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- m.Run(ctx) }()
	t.Cleanup(h.stop)
	select {
	case <-m.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("manager never became ready")
	}
	return h
}

func (h *harness) stop() {
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
		h.done <- nil // later calls return at once
	case <-time.After(10 * time.Second):
		h.t.Error("Run did not return after cancel")
	}
}

func (h *harness) sink(p string) *lineSink {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sinks[filepath.Clean(p)]
}

func (h *harness) metrics(p string) FileMetrics {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ms[filepath.Clean(p)]
}

// testLogger logs through t.Log, so a failing test shows what the follower saw.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// seqLines returns "seq=NNNNNN <filler>" lines from..to-1, MM2-like in length.
func seqLine(i int) string {
	return fmt.Sprintf("[2026-10-30 18:18:56,123] INFO [MirrorSourceConnector|task-0] seq=%06d committed offsets (org.apache.kafka.connect.runtime.WorkerSourceTask:100)", i)
}

// checkSeq asserts lines are exactly seqLine(0..n-1), in order.
func checkSeq(t *testing.T, lines []string, n int) {
	t.Helper()
	if len(lines) != n {
		t.Errorf("got %d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		if want := seqLine(i); l != want {
			t.Fatalf("line %d = %q, want %q (lost or duplicated lines)", i, l, want)
		}
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func joinLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(seqLine(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func newCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "c"})
}

// lenSink keeps only the length of each line.
type lenSink struct {
	lens  []int
	trunc []bool
}

func (s *lenSink) Line(b []byte, _ int64, tr bool) {
	s.lens = append(s.lens, len(b))
	s.trunc = append(s.trunc, tr)
}
func (s *lenSink) Pending() bool { return false }
func (s *lenSink) Flush()        {}

type runtimeMem struct{ totalAlloc uint64 }

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.totalAlloc = ms.TotalAlloc
}
