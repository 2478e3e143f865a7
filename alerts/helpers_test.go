package alerts

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// clock is a settable clock for State.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// recorder is a Notifier that records what it is given. fail, when set,
// decides the result of each attempt (1-based across all calls).
type recorder struct {
	mu       sync.Mutex
	got      []Notification
	attempts int
	fail     func(n Notification, attempt int) error
	ch       chan Notification
}

func newRecorder() *recorder { return &recorder{ch: make(chan Notification, 100)} }

func (r *recorder) Name() string { return "test" }

func (r *recorder) Notify(ctx context.Context, n Notification) (Receipt, error) {
	r.mu.Lock()
	r.attempts++
	attempt := r.attempts
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(n, attempt); err != nil {
			return Receipt{}, err
		}
	}
	r.mu.Lock()
	r.got = append(r.got, n)
	r.mu.Unlock()
	r.ch <- n
	return Receipt{}, nil
}

func (r *recorder) notifications() []Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Notification(nil), r.got...)
}

// next waits for the next delivered notification.
func (r *recorder) next(t *testing.T) Notification {
	t.Helper()
	select {
	case n := <-r.ch:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notification delivered within 10s")
		return Notification{}
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func jsonLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func finding(rule string, sev detectors.Severity, topic string) detectors.Finding {
	return detectors.Finding{Rule: rule, Severity: sev, Topic: topic, Source: "kafka", Target: "vast",
		Summary: rule + " on " + topic, Count: 1}
}

// flushed flushes d and returns what the recorder got from it.
func flushed(t *testing.T, d *Dispatcher, r *recorder) []Notification {
	t.Helper()
	before := len(r.notifications())
	if err := d.Flush(context.Background()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	all := r.notifications()
	for range all[before:] {
		<-r.ch
	}
	return all[before:]
}

func rules(n Notification) []string {
	var out []string
	for _, a := range n.Alerts {
		out = append(out, a.Rule+"/"+a.Topic+"/"+string(a.LastReason))
	}
	return out
}
