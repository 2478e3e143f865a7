package alerts

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// Status is the state of an alert: "firing" or "resolved".
type Status string

const (
	// Firing means the condition holds, as far as the watchdog knows.
	Firing Status = "firing"
	// Resolved means the condition ended: a recovery was observed, a
	// snapshot no longer reports it, or an event source was quiet for the
	// quiet period.
	Resolved Status = "resolved"
)

// Reason is the outcome of one alert decision: why (or whether) an
// observation leads to a notification.
type Reason string

const (
	// ReasonNone means nothing to notify.
	ReasonNone Reason = "none"
	// ReasonFirst means the alert started firing.
	ReasonFirst Reason = "first"
	// ReasonChanged means a firing alert changed materially: its severity
	// went up, or its partitions or a rule-marked value changed
	// (Config.MaterialValues).
	ReasonChanged Reason = "changed"
	// ReasonRepeat means a critical alert is still firing and the repeat
	// interval passed since its last notification.
	ReasonRepeat Reason = "repeat"
	// ReasonResolved means a firing alert resolved.
	ReasonResolved Reason = "resolved"
)

// Alert is one condition that fires and resolves over time: the latest
// finding for it, plus its alerting state. Its JSON form is the finding
// object of CONTRACT.md with the alert fields added, which is what
// /api/findings serves.
type Alert struct {
	detectors.Finding
	// Fingerprint is Finding.Fingerprint(): 16 hex digits, the alert id.
	Fingerprint string `json:"fingerprint"`
	// Status is Firing or Resolved.
	Status Status `json:"status"`
	// Scope is the snapshot scope that reports this alert (e.g. "parity"),
	// or empty for an alert from an event source (log rules).
	Scope string `json:"scope,omitempty"`
	// Unknown is set while the alert's scope reports that its check could
	// not run: the alert is kept firing as it was last known.
	Unknown bool `json:"unknown,omitempty"`
	// StartedAt is when the alert started firing (watchdog clock).
	StartedAt time.Time `json:"started_at"`
	// EndedAt is when the alert resolved; zero while firing.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// LastNotified is when the alert was last handed to dispatch (first,
	// changed, repeat or resolved); zero if never.
	LastNotified time.Time `json:"last_notified,omitzero"`
	// LastReason is the reason of the last notification.
	LastReason Reason `json:"-"`

	// lastObserved is when an observation of the condition last arrived
	// (watchdog clock); the quiet period counts from it.
	lastObserved time.Time
	// notifiedRank and notifiedMaterial are the severity rank and material
	// key the last notification showed.
	notifiedRank     int
	notifiedMaterial string
}

// decide is the whole alert state machine as a pure function. prev is the
// alert as it stands (nil if there is none); cur is the new observation, or
// nil when there is none (a periodic evaluation). A cur with Recovered set
// says the condition ended; snapshot sources pass such a finding for an alert
// their scope no longer reports.
//
//   - no firing alert: cur present and not recovered gives ReasonFirst,
//     anything else ReasonNone;
//   - firing, cur recovered: ReasonResolved;
//   - firing, cur nil: ReasonResolved for an event alert (Scope == "") whose
//     last observation is QuietPeriod or more ago, else the repeat check;
//   - firing, cur present: ReasonChanged if the severity rank rose above what
//     was last notified or the material key (partitions, marked values)
//     differs from what was last notified, else the repeat check;
//   - repeat check: ReasonRepeat if the alert (cur when given, else prev) is
//     critical and RepeatInterval or more passed since LastNotified, else
//     ReasonNone.
//
// cfg must already have its defaults applied.
func decide(prev *Alert, cur *detectors.Finding, now time.Time, cfg Config) Reason {
	if prev == nil || prev.Status != Firing {
		if cur != nil && !cur.Recovered {
			return ReasonFirst
		}
		return ReasonNone
	}
	sev := prev.Severity
	switch {
	case cur != nil && cur.Recovered:
		return ReasonResolved
	case cur == nil:
		if prev.Scope == "" && !now.Before(prev.lastObserved.Add(cfg.QuietPeriod)) {
			return ReasonResolved
		}
	default:
		if cur.Severity.Rank() > prev.notifiedRank {
			return ReasonChanged
		}
		if materialKey(cur, cfg) != prev.notifiedMaterial {
			return ReasonChanged
		}
		sev = cur.Severity
	}
	if sev == detectors.Critical && !now.Before(prev.LastNotified.Add(cfg.RepeatInterval)) {
		return ReasonRepeat
	}
	return ReasonNone
}

// materialKey renders the parts of f whose change is worth a new
// notification: the sorted partition set and the values under the keys that
// cfg.MaterialValues marks for f.Rule.
func materialKey(f *detectors.Finding, cfg Config) string {
	var b strings.Builder
	if len(f.Partitions) > 0 {
		ps := slices.Clone(f.Partitions)
		slices.Sort(ps)
		ps = slices.Compact(ps)
		b.WriteString("p=")
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(p)))
		}
	}
	for _, k := range cfg.MaterialValues[f.Rule] {
		v, ok := f.Values[k]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, ";%s=%v", k, v)
	}
	return b.String()
}

// cloneFinding returns a copy of f that shares no mutable memory with it, so
// that a detector folding into its own copy later cannot race with readers of
// the alert. Values are copied one level deep (they are scalars by contract).
func cloneFinding(f detectors.Finding) detectors.Finding {
	f.Partitions = slices.Clone(f.Partitions)
	f.Values = maps.Clone(f.Values)
	if f.Task != nil {
		f.Task = detectors.TaskPtr(*f.Task)
	}
	if f.Evidence != nil {
		e := *f.Evidence
		f.Evidence = &e
	}
	return f
}

// clone returns a deep copy of a.
func (a *Alert) clone() Alert {
	c := *a
	c.Finding = cloneFinding(a.Finding)
	return c
}

// less orders alerts for people: critical first, then by rule, flow, topic
// and fingerprint, so that the order is stable.
func less(a, b *Alert) int {
	if r := b.Severity.Rank() - a.Severity.Rank(); r != 0 {
		return r
	}
	for _, c := range [][2]string{
		{a.Rule, b.Rule}, {a.Source, b.Source}, {a.Target, b.Target},
		{a.Cluster, b.Cluster}, {a.Topic, b.Topic}, {a.Fingerprint, b.Fingerprint},
	} {
		if r := strings.Compare(c[0], c[1]); r != 0 {
			return r
		}
	}
	return 0
}
