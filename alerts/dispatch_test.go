package alerts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// sleeps records the waits the retry loop asks for and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

func alertOf(rule, topic string) Alert {
	f := finding(rule, detectors.Critical, topic)
	return Alert{Finding: f, Fingerprint: f.Fingerprint(), Status: Firing, LastReason: ReasonFirst}
}

func TestDispatcherGroupsAndRuns(t *testing.T) {
	rec := newRecorder()
	logs := &syncBuffer{}
	d := NewDispatcher(rec, nil, Config{GroupWait: 200 * time.Millisecond, GroupInterval: time.Hour}, jsonLogger(logs))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()

	s := NewState(Config{}, d, nil, nil)
	for _, topic := range []string{"a", "b", "c"} {
		s.Observe(finding("send-retrying", detectors.Warning, topic))
	}
	n := rec.next(t)
	if n.Status != Firing || len(n.Alerts) != 3 || n.Seq != 1 {
		t.Fatalf("want one notification of 3 alerts, got %+v", n)
	}
	// A later alert waits for the group interval (1h); shutdown flushes it.
	s.Observe(finding("send-retrying", detectors.Warning, "d"))
	resolved := finding("send-retrying", detectors.Warning, "a")
	resolved.Recovered = true
	s.Observe(resolved)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := rec.notifications()
	if len(got) != 3 || !slices.Equal(rules(got[1]), []string{"send-retrying/d/first"}) ||
		got[2].Status != Resolved || !slices.Equal(rules(got[2]), []string{"send-retrying/a/resolved"}) {
		t.Fatalf("after shutdown flush got %+v", got)
	}
}

func TestDispatcherDue(t *testing.T) {
	d := NewDispatcher(newRecorder(), nil, Config{GroupWait: 10 * time.Second, GroupInterval: 5 * time.Minute}, nil)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if !d.dueLocked().IsZero() {
		t.Fatal("due with nothing pending")
	}
	d.firing.add(Alert{Fingerprint: "x"})
	d.firstAt = t0
	if got := d.dueLocked(); !got.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("first group due %v, want group wait", got)
	}
	d.lastFormed = t0.Add(-time.Minute)
	if got := d.dueLocked(); !got.Equal(t0.Add(4 * time.Minute)) {
		t.Errorf("later group due %v, want last formed + group interval", got)
	}
	d.lastFormed = t0.Add(-time.Hour)
	if got := d.dueLocked(); !got.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("group after a long quiet due %v, want group wait", got)
	}
}

func TestDispatcherFireAndResolveInOneGroup(t *testing.T) {
	rec := newRecorder()
	d := NewDispatcher(rec, nil, Config{}, nil)
	s := NewState(Config{}, d, nil, nil)
	f := finding("task-failed", detectors.Critical, "a")
	s.Observe(f)
	f.Severity = detectors.Critical
	f.Partitions = []int32{1}
	s.Observe(f) // changed while the first is still pending: one alert, reason first
	f.Recovered = true
	s.Observe(f)
	got := flushed(t, d, rec)
	if len(got) != 2 || !slices.Equal(rules(got[0]), []string{"task-failed/a/first"}) ||
		!slices.Equal(rules(got[1]), []string{"task-failed/a/resolved"}) {
		t.Fatalf("got %+v", got)
	}
	if got[0].Alerts[0].Partitions[0] != 1 {
		t.Errorf("pending alert kept stale data: %+v", got[0].Alerts[0].Finding)
	}
}

func TestDispatcherSplitsLargeGroups(t *testing.T) {
	rec := newRecorder()
	d := NewDispatcher(rec, nil, Config{}, nil)
	var as []Alert
	for i := range MaxAlertsPerNotification + 5 {
		as = append(as, alertOf("unmirrored-partitions", fmt.Sprintf("t%02d", i)))
	}
	d.submit(as...)
	got := flushed(t, d, rec)
	if len(got) != 2 || len(got[0].Alerts) != MaxAlertsPerNotification || len(got[1].Alerts) != 5 || got[0].Seq+1 != got[1].Seq {
		t.Fatalf("got %d notifications", len(got))
	}
}

func TestDispatcherRetryAfterHonoured(t *testing.T) {
	rec := newRecorder()
	rec.fail = func(n Notification, attempt int) error {
		if attempt <= 2 {
			return Retryable(errors.New("slack rate limit exceeded"), 7*time.Second)
		}
		return nil
	}
	sl := &sleeps{}
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, nil)
	d := NewDispatcher(rec, m, Config{}, nil, WithSleep(sl.sleep))
	d.submit(alertOf("record-too-large", "orders"))
	if got := flushed(t, d, rec); len(got) != 1 {
		t.Fatalf("got %d notifications", len(got))
	}
	if w := sl.waits(); !slices.Equal(w, []time.Duration{7 * time.Second, 7 * time.Second}) {
		t.Errorf("waits = %v, want the Retry-After twice", w)
	}
	if v := testutil.ToFloat64(m.notifications.WithLabelValues("test", "retry")); v != 2 {
		t.Errorf("retry = %v", v)
	}
	if v := testutil.ToFloat64(m.notifications.WithLabelValues("test", "success")); v != 1 {
		t.Errorf("success = %v", v)
	}
	if d.LastError() != nil {
		t.Errorf("LastError after success = %v", d.LastError())
	}
}

func TestDispatcherOutageKeepsOrderAndLogsOnChange(t *testing.T) {
	rec := newRecorder()
	down := true
	var mu sync.Mutex
	rec.fail = func(n Notification, attempt int) error {
		mu.Lock()
		defer mu.Unlock()
		if attempt == 6 {
			down = false
		}
		if down {
			return Retryable(errors.New("slack server error: 503 Service Unavailable"), 0)
		}
		return nil
	}
	sl := &sleeps{}
	logs := &syncBuffer{}
	d := NewDispatcher(rec, nil, Config{}, jsonLogger(logs), WithSleep(sl.sleep))
	for _, topic := range []string{"a", "b", "c"} {
		d.submit(alertOf("task-failed", topic))
		d.mu.Lock()
		d.formLocked(time.Now())
		d.mu.Unlock()
	}
	got := flushed(t, d, rec)
	var topics []string
	for _, n := range got {
		topics = append(topics, n.Alerts[0].Topic)
	}
	if !slices.Equal(topics, []string{"a", "b", "c"}) {
		t.Fatalf("delivered %v, want a b c in order", topics)
	}
	w := sl.waits()
	if len(w) != 5 {
		t.Fatalf("waits = %v, want 5", w)
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second} {
		if w[i] < want*9/10 || w[i] > want*11/10 {
			t.Errorf("wait %d = %v, want %v ±10%%", i, w[i], want)
		}
	}
	if n := strings.Count(logs.String(), "will retry"); n != 1 {
		t.Errorf("logged the same error %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "delivered after retries") {
		t.Errorf("recovery not logged:\n%s", logs)
	}
}

func TestDispatcherPermanentFailure(t *testing.T) {
	rec := newRecorder()
	rec.fail = func(n Notification, attempt int) error {
		if n.Alerts[0].Topic == "bad" {
			return errors.New("channel_not_found")
		}
		return nil
	}
	m := NewMetrics(prometheus.NewRegistry(), nil)
	d := NewDispatcher(rec, m, Config{}, nil)
	d.submit(alertOf("task-failed", "bad"))
	d.mu.Lock()
	d.formLocked(time.Now())
	d.mu.Unlock()
	d.submit(alertOf("task-failed", "good"))
	got := flushed(t, d, rec)
	if len(got) != 1 || got[0].Alerts[0].Topic != "good" {
		t.Fatalf("got %+v", got)
	}
	if v := testutil.ToFloat64(m.notifications.WithLabelValues("test", "failure")); v != 1 {
		t.Errorf("failure = %v", v)
	}
	if err := d.LastError(); err != nil {
		t.Errorf("LastError = %v after a later success", err)
	}
}

func TestDispatcherQueueOverflowDropsOldest(t *testing.T) {
	rec := newRecorder()
	m := NewMetrics(prometheus.NewRegistry(), nil)
	d := NewDispatcher(rec, m, Config{QueueSize: 3}, nil)
	d.mu.Lock()
	for i := range 5 {
		d.seq++
		d.enqueueLocked(Notification{Seq: d.seq, Status: Firing, Alerts: []Alert{alertOf("task-failed", fmt.Sprint(i))}})
	}
	d.mu.Unlock()
	if v := testutil.ToFloat64(m.dropped.WithLabelValues("test")); v != 2 {
		t.Errorf("dropped_total = %v, want 2", v)
	}
	if v := testutil.ToFloat64(m.queueLength); v != 3 {
		t.Errorf("queue_length = %v, want 3", v)
	}
	got := flushed(t, d, rec)
	var seqs []uint64
	for _, n := range got {
		seqs = append(seqs, n.Seq)
	}
	if !slices.Equal(seqs, []uint64{3, 4, 5}) {
		t.Errorf("delivered %v, want the newest 3", seqs)
	}
	if v := testutil.ToFloat64(m.queueLength); v != 0 {
		t.Errorf("queue_length after flush = %v", v)
	}
}

func TestDispatcherShutdownDeadline(t *testing.T) {
	rec := newRecorder()
	rec.fail = func(Notification, int) error { return Retryable(errors.New("connection refused"), 0) }
	m := NewMetrics(prometheus.NewRegistry(), nil)
	logs := &syncBuffer{}
	blockUntilDone := func(ctx context.Context, _ time.Duration) error { <-ctx.Done(); return ctx.Err() }
	d := NewDispatcher(rec, m, Config{GroupWait: time.Hour, FlushTimeout: 50 * time.Millisecond}, jsonLogger(logs), WithSleep(blockUntilDone))
	d.submit(alertOf("task-failed", "a"), alertOf("worker-died", ""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if v := testutil.ToFloat64(m.dropped.WithLabelValues("test")); v != 1 {
		t.Errorf("dropped_total = %v, want 1 (one grouped notification)", v)
	}
	if !strings.Contains(logs.String(), "not delivered before the shutdown deadline") ||
		!strings.Contains(logs.String(), "connection refused") {
		t.Errorf("loss not logged with the last real error:\n%s", logs)
	}
	if v := testutil.ToFloat64(m.queueLength); v != 0 {
		t.Errorf("queue_length = %v", v)
	}
}

// TestDispatcherRefireDropsStaleResolve: an alert resolved and fired again
// before the resolve went out must not end with a "resolved" message.
func TestDispatcherRefireDropsStaleResolve(t *testing.T) {
	rec := newRecorder()
	d := NewDispatcher(rec, nil, Config{}, nil)
	s := NewState(Config{}, d, nil, nil)
	f := finding("task-failed", detectors.Critical, "a")
	s.Observe(f)
	if got := flushed(t, d, rec); len(got) != 1 {
		t.Fatalf("first firing: %+v", got)
	}
	f.Recovered = true
	s.Observe(f)
	f.Recovered = false
	s.Observe(f)
	got := flushed(t, d, rec) // the notifications sent since the last flush
	if len(got) == 0 || got[len(got)-1].Status != Firing {
		t.Fatalf("want the re-fire to be the last message, got %+v", got)
	}
	for _, n := range got {
		if n.Status == Resolved {
			t.Errorf("a stale resolve was sent after the re-fire: %+v", n)
		}
	}
}

// TestDispatcherNewAlertNotHeldByGroupInterval: a first-time alert waits
// GroupWait, not the GroupInterval since the last message.
func TestDispatcherNewAlertNotHeldByGroupInterval(t *testing.T) {
	d := NewDispatcher(newRecorder(), nil, Config{GroupWait: time.Second, GroupInterval: time.Hour}, nil)
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.lastFormed = now
	d.firstAt = now
	d.firing.add(Alert{Fingerprint: "x", Status: Firing, LastReason: ReasonRepeat})
	if due := d.dueLocked(); due.Sub(now) < time.Hour {
		t.Fatalf("a repeat is due after %v, want the group interval", due.Sub(now))
	}
	d.firstNewAt = now
	d.firing.add(Alert{Fingerprint: "y", Status: Firing, LastReason: ReasonFirst})
	if due := d.dueLocked(); due.Sub(now) > time.Second {
		t.Errorf("a new alert is due after %v, want the group wait", due.Sub(now))
	}
}

// slowNotifier blocks each attempt until released, honouring its context.
type slowNotifier struct {
	started chan struct{}
	release chan struct{}
	mu      sync.Mutex
	sent    int
}

func (s *slowNotifier) Name() string { return "slow" }

// Notify counts an attempt as sent when it starts: the server has the
// request, even if the client then gives up waiting for the answer.
func (s *slowNotifier) Notify(ctx context.Context, n Notification) (Receipt, error) {
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	s.started <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	}
	return Receipt{}, nil
}

// TestDispatcherShutdownDoesNotAbortAnAttempt: SIGTERM while a POST is under
// way lets that POST finish; it is not aborted and sent a second time.
func TestDispatcherShutdownDoesNotAbortAnAttempt(t *testing.T) {
	n := &slowNotifier{started: make(chan struct{}, 4), release: make(chan struct{})}
	d := NewDispatcher(n, nil, Config{GroupWait: time.Millisecond, FlushTimeout: 5 * time.Second}, nil)
	s := NewState(Config{}, d, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	s.Observe(finding("task-failed", detectors.Critical, "a"))
	<-n.started // the attempt is under way
	cancel()    // shutdown
	close(n.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sent != 1 {
		t.Errorf("sent %d times, want exactly once", n.sent)
	}
}
