package alerts

import (
	"slices"
	"sync"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// State holds the firing alerts and applies the decisions of decide to
// them. It is safe for concurrent use. Notifications it decides on are
// handed to its Dispatcher, which never blocks the caller.
//
// A resolved alert is removed at once: Active lists what fires now, and the
// history lives in the notifications and in the metrics. An alert that fires
// again after it resolved starts afresh (new StartedAt, ReasonFirst).
//
// An alert belongs to the source that first fired it: an event alert
// resolves by a recovery or the quiet period, a snapshot alert only by its
// scope's Sync. Time is the injected clock's.
type State struct {
	cfg Config
	d   *Dispatcher
	m   *Metrics
	now func() time.Time

	mu     sync.Mutex
	alerts map[string]*Alert // by fingerprint; firing only
	// gauge holds every rule/severity pair mm2_watchdog_alerts_firing was
	// set for, so that pairs that stop firing go back to 0.
	gauge map[RuleSeverity]struct{}
}

// NewState returns an empty State. d and m may be nil (then nothing is
// notified or measured); now nil means time.Now.
func NewState(cfg Config, d *Dispatcher, m *Metrics, now func() time.Time) *State {
	if now == nil {
		now = time.Now
	}
	return &State{
		cfg:    cfg.withDefaults(),
		d:      d,
		m:      m,
		now:    now,
		alerts: make(map[string]*Alert),
		gauge:  make(map[RuleSeverity]struct{}),
	}
}

// Observe applies one observation from an event source (a log rule): f was
// seen again (the detector folded its count and first/last seen), or, with
// f.Recovered, the condition ended. It counts the observation in
// mm2_watchdog_findings_total unless f.Recovered.
func (s *State) Observe(f detectors.Finding) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Alert
	if !f.Recovered {
		s.m.observed(f.Rule, f.Severity)
	}
	if a := s.applyLocked(cloneFinding(f), "", now); a != nil {
		out = append(out, *a)
	}
	s.updateGaugeLocked()
	s.d.submit(out...)
}

// Sync applies a complete snapshot of the findings of scope (e.g.
// "parity"): each finding fires or updates its alert, and every alert the
// scope fired before that is absent from fs resolves. Findings with
// Recovered set are ignored. Alerts that fire together here go out in one
// notification (subject to the dispatcher's grouping).
func (s *State) Sync(scope string, fs []detectors.Finding) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Alert
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		if f.Recovered {
			continue
		}
		s.m.observed(f.Rule, f.Severity)
		seen[f.Fingerprint()] = true
		if a := s.applyLocked(cloneFinding(f), scope, now); a != nil {
			out = append(out, *a)
		}
	}
	for _, fp := range s.sortedLocked() {
		a := s.alerts[fp]
		if a.Scope != scope || seen[fp] {
			continue
		}
		gone := a.Finding
		gone.Recovered = true
		if r := s.applyLocked(gone, scope, now); r != nil {
			out = append(out, *r)
		}
	}
	s.updateGaugeLocked()
	s.d.submit(out...)
}

// SyncUnknown records that scope's check could not run this round: its
// alerts neither resolve nor fire anew, and are marked Unknown until the
// next Sync of the scope. A still-firing critical alert keeps repeating.
func (s *State) SyncUnknown(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.alerts {
		if a.Scope == scope {
			a.Unknown = true
		}
	}
}

// Tick applies the passage of time: event alerts quiet for the quiet period
// resolve, and critical alerts due for a repeat are notified again. Call it
// every few seconds.
func (s *State) Tick() {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Alert
	for _, fp := range s.sortedLocked() {
		a := s.alerts[fp]
		switch decide(a, nil, now, s.cfg) {
		case ReasonResolved:
			out = append(out, s.resolveLocked(a, now))
		case ReasonRepeat:
			s.notedLocked(a, ReasonRepeat, now)
			out = append(out, a.clone())
		}
	}
	s.updateGaugeLocked()
	s.d.submit(out...)
}

// Active returns copies of the firing alerts, critical first, then by rule,
// flow, topic and fingerprint.
func (s *State) Active() []Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Alert, 0, len(s.alerts))
	for _, a := range s.alerts {
		out = append(out, a.clone())
	}
	slices.SortFunc(out, func(a, b Alert) int { return less(&a, &b) })
	return out
}

// applyLocked decides on one observation and applies it. It returns a copy of
// the alert to notify, or nil.
func (s *State) applyLocked(f detectors.Finding, scope string, now time.Time) *Alert {
	fp := f.Fingerprint()
	prev := s.alerts[fp]
	reason := decide(prev, &f, now, s.cfg)
	switch reason {
	case ReasonFirst:
		a := &Alert{
			Finding:     f,
			Fingerprint: fp,
			Status:      Firing,
			Scope:       scope,
			StartedAt:   now,
		}
		a.lastObserved = now
		s.alerts[fp] = a
		s.notedLocked(a, reason, now)
		c := a.clone()
		return &c
	case ReasonResolved:
		c := s.resolveLocked(prev, now)
		return &c
	}
	if prev == nil || f.Recovered {
		return nil
	}
	prev.Finding = f
	prev.lastObserved = now
	if scope != "" && prev.Scope == scope {
		prev.Unknown = false
	}
	if reason == ReasonNone {
		return nil
	}
	s.notedLocked(prev, reason, now)
	c := prev.clone()
	return &c
}

// notedLocked records that a is being notified for reason.
func (s *State) notedLocked(a *Alert, reason Reason, now time.Time) {
	a.LastNotified = now
	a.LastReason = reason
	a.notifiedRank = a.Severity.Rank()
	a.notifiedMaterial = materialKey(&a.Finding, s.cfg)
}

// resolveLocked removes a and returns its resolved copy.
func (s *State) resolveLocked(a *Alert, now time.Time) Alert {
	delete(s.alerts, a.Fingerprint)
	a.Status = Resolved
	a.EndedAt = now
	a.Unknown = false
	s.notedLocked(a, ReasonResolved, now)
	return a.clone()
}

// sortedLocked returns the fingerprints in a stable order, so that the
// notifications of one call are formed deterministically.
func (s *State) sortedLocked() []string {
	fps := make([]string, 0, len(s.alerts))
	for fp := range s.alerts {
		fps = append(fps, fp)
	}
	slices.Sort(fps)
	return fps
}

// updateGaugeLocked sets mm2_watchdog_alerts_firing for every pair ever set.
func (s *State) updateGaugeLocked() {
	if s.m == nil {
		return
	}
	counts := make(map[RuleSeverity]int)
	for _, a := range s.alerts {
		k := RuleSeverity{Rule: a.Rule, Severity: a.Severity}
		counts[k]++
		s.gauge[k] = struct{}{}
	}
	for k := range s.gauge {
		s.m.setFiring(k.Rule, k.Severity, counts[k])
	}
}
