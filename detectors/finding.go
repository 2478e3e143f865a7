package detectors

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Severity ranks a finding. The values and their meaning are part of the
// external contract (CONTRACT.md).
type Severity string

const (
	// Info is worth knowing; nothing is broken.
	Info Severity = "info"
	// Warning is a degraded state, or one that will break.
	Warning Severity = "warning"
	// Critical means data is not being mirrored or MM2 stopped.
	Critical Severity = "critical"
)

// Rank orders severities: info 1, warning 2, critical 3, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Info:
		return 1
	case Warning:
		return 2
	case Critical:
		return 3
	}
	return 0
}

// ParseSeverity reads "info", "warning" or "critical" (case-insensitive; "warn"
// and "crit" accepted). It returns an error naming the value otherwise.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "critical", "crit":
		return Critical, nil
	}
	return "", fmt.Errorf("unknown severity %q (want info, warning or critical)", s)
}

// Evidence points at the log line that shows a finding.
type Evidence struct {
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// Finding is one detected condition, in the JSON shape of CONTRACT.md. Fields
// that are not known are left empty and are absent from the JSON: unknown is
// never written as a zero.
type Finding struct {
	// Rule is the stable kebab-case rule id, e.g. "partitions-not-created".
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Summary is one sentence for a person.
	Summary string `json:"summary"`
	// Source and Target are MM2 cluster aliases of the flow.
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
	// Cluster is the alias a cluster-level finding speaks of (e.g.
	// cluster-unreachable), when it is not a flow.
	Cluster string `json:"cluster,omitempty"`
	// Topic is the topic name on the cluster the rule speaks of; MM2's own log
	// messages name the target-side topic.
	Topic      string  `json:"topic,omitempty"`
	Partitions []int32 `json:"partitions,omitempty"`
	Connector  string  `json:"connector,omitempty"`
	// Task is the Connect task index; nil when unknown (0 is a real task).
	Task  *int   `json:"task,omitempty"`
	Group string `json:"group,omitempty"`
	// Cause is the root cause from the attached stack trace: the innermost
	// "Caused by:" or the first exception line, class and message.
	Cause string `json:"cause,omitempty"`
	// Count is how many times the condition was seen (repeats fold).
	Count     int       `json:"count,omitempty"`
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	Evidence  *Evidence `json:"evidence,omitempty"`
	// Values carries rule-specific figures (counts, ages in seconds, ...).
	Values map[string]any `json:"values,omitempty"`
	// Hint says what to do, in one or two sentences.
	Hint string `json:"hint,omitempty"`

	// Recovered (JSON "resolved", absent when false) says that the condition
	// ended: for example a failed task was started again, or MM2 logged that
	// it added the missing partitions. In a detector's folded findings (and
	// so in scan's output) it means the log showed the condition ending after
	// its last occurrence; on an observation handed to the alert state it is
	// the instruction to resolve the alert. Both say the same thing: not
	// active any more.
	Recovered bool `json:"resolved,omitempty"`
}

// TaskPtr returns a pointer to n, for Finding.Task.
func TaskPtr(n int) *int { return &n }

// Identity is the string of the fields that make two findings "the same
// condition": rule, flow, cluster, topic, connector, task and group. Counts,
// times, evidence, values and text are not part of it.
func (f *Finding) Identity() string {
	var b strings.Builder
	b.Grow(64)
	for i, s := range []string{f.Rule, f.Source, f.Target, f.Cluster, f.Topic, f.Connector, f.Group} {
		if i > 0 {
			b.WriteByte(0x1f)
		}
		b.WriteString(s)
	}
	b.WriteByte(0x1f)
	if f.Task != nil {
		b.WriteString(strconv.Itoa(*f.Task))
	}
	return b.String()
}

// Fingerprint is a stable 16-hex-digit hash of Identity, used as the alert id.
func (f *Finding) Fingerprint() string {
	h := fnv.New64a()
	h.Write([]byte(f.Identity()))
	return fmt.Sprintf("%016x", h.Sum64())
}

// Fold merges a repeat of the same condition into f: the count adds up, the
// first/last seen times widen, and the newer text, evidence and values win.
// The caller guarantees that next.Identity() == f.Identity().
func (f *Finding) Fold(next Finding) {
	n := next.Count
	if n <= 0 {
		n = 1
	}
	if f.Count <= 0 {
		f.Count = 1
	}
	f.Count += n
	if !next.FirstSeen.IsZero() && (f.FirstSeen.IsZero() || next.FirstSeen.Before(f.FirstSeen)) {
		f.FirstSeen = next.FirstSeen
	}
	if next.LastSeen.After(f.LastSeen) {
		f.LastSeen = next.LastSeen
	}
	if next.Severity.Rank() > f.Severity.Rank() {
		f.Severity = next.Severity
	}
	if next.Summary != "" {
		f.Summary = next.Summary
	}
	if next.Cause != "" {
		f.Cause = next.Cause
	}
	if next.Evidence != nil {
		f.Evidence = next.Evidence
	}
	if len(next.Partitions) > 0 {
		f.Partitions = next.Partitions
	}
	for k, v := range next.Values {
		if f.Values == nil {
			f.Values = make(map[string]any, len(next.Values))
		}
		f.Values[k] = v
	}
	if next.Hint != "" {
		f.Hint = next.Hint
	}
}

// RuleInfo names a rule and the severity it fires at, as the detector
// packages list them (for metric pre-initialisation and docs).
type RuleInfo struct {
	ID       string
	Severity Severity
}
