package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Bounds of the retry loop's own backoff, used when a retryable failure
// carries no Retry-After: the wait starts at retryInitial and doubles up to
// retryMax, with ±10% jitter.
const (
	retryInitial = time.Second
	retryMax     = time.Minute
)

// Dispatcher groups alerts into notifications, queues them and delivers them
// through one Notifier with one retry loop. Submitting never blocks; Run
// delivers. Grouping and delivery use the wall clock.
//
// Grouping: the first alert after a quiet spell is held for GroupWait and
// everything that arrives meanwhile joins it; after a notification was
// formed, further alerts wait until GroupInterval has passed since then —
// except an alert that fires for the first time, which is never held longer
// than GroupWait (a new problem is announced at once; repeats, changes and
// resolves are batched). A resolve still waiting when its alert fires again
// is dropped, so it is never sent after the re-fire that followed it. A
// formed group becomes one firing notification and one resolved notification
// (either may be absent), each split at MaxAlertsPerNotification. Within a
// group, an alert that was submitted several times appears once, with its
// latest data and its first reason.
//
// Delivery keeps order: the head of the queue is retried until it succeeds,
// fails permanently, or the context ends. Nothing is dropped while the
// destination is down, except what overflows QueueSize (oldest first).
type Dispatcher struct {
	n      Notifier
	name   string
	m      *Metrics
	cfg    Config
	logger *slog.Logger
	sleep  func(ctx context.Context, d time.Duration) error

	wake chan struct{}

	// sendMu serialises delivery between Run and Flush.
	sendMu sync.Mutex

	mu         sync.Mutex
	firing     pendingSet // the pending group
	resolved   pendingSet
	firstAt    time.Time
	firstNewAt time.Time // when the first first-time firing alert joined the pending group
	lastFormed time.Time
	queue      []Notification
	inFlight   bool
	seq        uint64
	lastErr    error
}

// DispatcherOption adjusts a Dispatcher.
type DispatcherOption func(*Dispatcher)

// WithSleep replaces the wait between delivery attempts. sleep must return
// ctx.Err() if ctx ends first. Tests use it to assert the waits asked for
// without waiting.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) DispatcherOption {
	return func(d *Dispatcher) { d.sleep = sleep }
}

// NewDispatcher returns a Dispatcher delivering to n. m may be nil; logger
// nil discards logs.
func NewDispatcher(n Notifier, m *Metrics, cfg Config, logger *slog.Logger, opts ...DispatcherOption) *Dispatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Dispatcher{
		n:      n,
		name:   n.Name(),
		m:      m,
		cfg:    cfg.withDefaults(),
		logger: logger.With("integration", n.Name()),
		sleep:  sleepCtx,
		wake:   make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(d)
	}
	m.initIntegration(d.name)
	m.queue(0)
	return d
}

// LastError returns the last delivery error that was not caused by the
// context ending (nil after a success).
func (d *Dispatcher) LastError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastErr
}

// submit adds alerts to the pending group. Safe on a nil Dispatcher.
func (d *Dispatcher) submit(as ...Alert) {
	if d == nil || len(as) == 0 {
		return
	}
	d.mu.Lock()
	now := time.Now()
	for _, a := range as {
		if d.firing.len() == 0 && d.resolved.len() == 0 {
			d.firstAt = now
		}
		if a.Status == Resolved {
			// Fired and resolved within one group: both are sent, firing
			// first, so the flap is seen.
			d.resolved.add(a)
		} else {
			// Resolved, then fired again before the resolve was sent: the
			// resolve belongs to an episode that is over, and sending it
			// after the new firing message would say the opposite of the
			// truth. The firing message stands for both.
			d.resolved.remove(a.Fingerprint)
			d.firing.add(a)
			if a.LastReason == ReasonFirst && d.firstNewAt.IsZero() {
				d.firstNewAt = now
			}
		}
	}
	d.mu.Unlock()
	d.signal()
}

func (d *Dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// dueLocked returns when the pending group is due to be formed; zero when
// nothing is pending.
func (d *Dispatcher) dueLocked() time.Time {
	if d.firing.len() == 0 && d.resolved.len() == 0 {
		return time.Time{}
	}
	due := d.firstAt.Add(d.cfg.GroupWait)
	if !d.lastFormed.IsZero() {
		if next := d.lastFormed.Add(d.cfg.GroupInterval); next.After(due) {
			due = next
		}
	}
	if !d.firstNewAt.IsZero() {
		if fresh := d.firstNewAt.Add(d.cfg.GroupWait); fresh.Before(due) {
			due = fresh
		}
	}
	return due
}

// formLocked turns the pending group into notifications at the tail of the
// queue.
func (d *Dispatcher) formLocked(now time.Time) {
	if d.firing.len() == 0 && d.resolved.len() == 0 {
		return
	}
	for _, p := range []*pendingSet{&d.firing, &d.resolved} {
		as := p.take()
		slices.SortStableFunc(as, func(a, b Alert) int { return less(&a, &b) })
		for chunk := range slices.Chunk(as, MaxAlertsPerNotification) {
			d.seq++
			d.enqueueLocked(Notification{Seq: d.seq, Status: chunk[0].Status, Alerts: chunk})
		}
	}
	d.lastFormed = now
	d.firstNewAt = time.Time{}
}

// enqueueLocked appends n to the queue, dropping the oldest waiting
// notification when the queue is full.
func (d *Dispatcher) enqueueLocked(n Notification) {
	if len(d.queue) >= d.cfg.QueueSize {
		old := d.queue[0]
		d.queue = slices.Delete(d.queue, 0, 1)
		d.m.drop(d.name, 1)
		d.logger.Warn("notification queue full, dropped the oldest notification",
			"seq", old.Seq, "status", old.Status, "alerts", len(old.Alerts), "queue_size", d.cfg.QueueSize)
	}
	d.queue = append(d.queue, n)
	d.queueMetricLocked()
}

func (d *Dispatcher) queueMetricLocked() {
	n := len(d.queue)
	if d.inFlight {
		n++
	}
	d.m.queue(n)
}

// popLocked takes the head of the queue for delivery.
func (d *Dispatcher) popLocked() (Notification, bool) {
	if len(d.queue) == 0 {
		return Notification{}, false
	}
	n := d.queue[0]
	d.queue = slices.Delete(d.queue, 0, 1)
	d.inFlight = true
	return n, true
}

// doneLocked ends the delivery of a popped notification; with requeue it goes
// back to the head of the queue.
func (d *Dispatcher) doneLocked(n Notification, requeue bool) {
	d.inFlight = false
	if requeue {
		d.queue = slices.Insert(d.queue, 0, n)
	}
	d.queueMetricLocked()
}

// Run delivers notifications until ctx ends, then flushes what is pending
// (including resolved notifications) within Config.FlushTimeout and returns.
// Notifications still undelivered then are counted as dropped and logged. It
// returns nil; delivery failures are logged and measured, not returned.
func (d *Dispatcher) Run(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		d.mu.Lock()
		now := time.Now()
		due := d.dueLocked()
		if !due.IsZero() && !now.Before(due) {
			d.formLocked(now)
			due = time.Time{}
		}
		hasWork := len(d.queue) > 0
		d.mu.Unlock()

		if hasWork {
			if err := d.deliverAll(ctx); err != nil && ctx.Err() != nil {
				break
			}
			continue
		}
		var tc <-chan time.Time
		if !due.IsZero() {
			timer.Reset(due.Sub(now))
			tc = timer.C
		}
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-tc:
		}
		timer.Stop()
		if ctx.Err() != nil {
			break
		}
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.FlushTimeout)
	defer cancel()
	if err := d.Flush(fctx); err != nil {
		d.mu.Lock()
		lost := len(d.queue)
		d.queue = nil
		d.queueMetricLocked()
		d.mu.Unlock()
		d.m.drop(d.name, lost)
		d.logger.Error("notifications not delivered before the shutdown deadline",
			"dropped", lost, "err", Redact(err.Error()))
	}
	return nil
}

// Flush forms the pending group at once (ignoring the group wait) and
// delivers everything queued, in order, until done or ctx ends. It returns
// nil when the queue is empty, else an error wrapping ctx's error and the
// last delivery error. Notifications it could not deliver stay queued.
func (d *Dispatcher) Flush(ctx context.Context) error {
	d.mu.Lock()
	d.formLocked(time.Now())
	d.mu.Unlock()
	return d.deliverAll(ctx)
}

// deliverAll delivers the queue head by head until it is empty or ctx ends.
func (d *Dispatcher) deliverAll(ctx context.Context) error {
	d.sendMu.Lock()
	defer d.sendMu.Unlock()
	for {
		d.mu.Lock()
		n, ok := d.popLocked()
		d.queueMetricLocked()
		d.mu.Unlock()
		if !ok {
			return nil
		}
		err := d.deliver(ctx, n)
		d.mu.Lock()
		d.doneLocked(n, err != nil && ctx.Err() != nil)
		last := d.lastErr
		d.mu.Unlock()
		if ctx.Err() != nil {
			if last != nil {
				return fmt.Errorf("delivering notifications: %w (last error: %w)", ctx.Err(), last)
			}
			return fmt.Errorf("delivering notifications: %w", ctx.Err())
		}
	}
}

// deliver is the retry loop for one notification. It returns nil on
// success, the error of a permanent failure (the notification is given up),
// or ctx's error when ctx ended first (the caller requeues).
func (d *Dispatcher) deliver(ctx context.Context, n Notification) error {
	var lastMsg string
	backoff := retryInitial
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// An attempt under way is not cut off when ctx ends (shutdown): an
		// aborted POST that Slack had already accepted would be sent again
		// by the final flush. It is bounded by FlushTimeout instead.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.FlushTimeout)
		rcpt, err := d.n.Notify(actx, n)
		cancel()
		if err == nil {
			d.m.result(d.name, resultSuccess)
			d.setLastErr(nil)
			if attempt > 1 {
				d.logger.Info("notification delivered after retries", "seq", n.Seq, "attempts", attempt)
			} else {
				d.logger.Debug("notification delivered", "seq", n.Seq, "status", n.Status,
					"alerts", len(n.Alerts), "refs", rcpt.Refs)
			}
			return nil
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ctx.Err()
		}
		d.setLastErr(err)
		retry, after := IsRetryable(err)
		if !retry {
			d.m.result(d.name, resultFailed)
			d.logger.Error("notification failed permanently, giving it up",
				"seq", n.Seq, "status", n.Status, "alerts", len(n.Alerts), "attempts", attempt, "err", Redact(err.Error()))
			return err
		}
		d.m.result(d.name, resultRetry)
		wait := after
		if wait <= 0 {
			wait = jitter(backoff)
			backoff = min(backoff*2, retryMax)
		}
		if msg := err.Error(); msg != lastMsg {
			lastMsg = msg
			d.logger.Warn("notification failed, will retry",
				"seq", n.Seq, "attempt", attempt, "retry_in", wait, "err", Redact(msg))
		}
		if err := d.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (d *Dispatcher) setLastErr(err error) {
	d.mu.Lock()
	d.lastErr = err
	d.mu.Unlock()
}

// jitter spreads d by ±10%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}

// sleepCtx waits for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// pendingSet is the alerts of one status waiting to be formed into
// notifications: the latest copy of each alert, in arrival order.
type pendingSet struct {
	byFP  map[string]int // index into alerts
	alert []Alert
}

func (p *pendingSet) len() int { return len(p.alert) }

// add keeps the latest data of an alert submitted again, with its first
// reason (a first notification stays "first" even if it changed meanwhile).
func (p *pendingSet) add(a Alert) {
	if p.byFP == nil {
		p.byFP = make(map[string]int)
	}
	i, had := p.byFP[a.Fingerprint]
	if !had {
		p.byFP[a.Fingerprint] = len(p.alert)
		p.alert = append(p.alert, a)
		return
	}
	if p.alert[i].LastReason == ReasonFirst {
		a.LastReason = ReasonFirst
	}
	p.alert[i] = a
}

// remove drops the alert with fingerprint fp, if pending.
func (p *pendingSet) remove(fp string) {
	i, ok := p.byFP[fp]
	if !ok {
		return
	}
	p.alert = slices.Delete(p.alert, i, i+1)
	delete(p.byFP, fp)
	for j := i; j < len(p.alert); j++ {
		p.byFP[p.alert[j].Fingerprint] = j
	}
}

// take returns the pending alerts and empties the set.
func (p *pendingSet) take() []Alert {
	out := p.alert
	p.alert = nil
	clear(p.byFP)
	return out
}
