package liveness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// Heartbeat row statuses (HeartbeatRow.Status).
const (
	StatusOK      = "ok"
	StatusStalled = "stalled"
	StatusMissing = "missing"
	StatusUnknown = "unknown"
)

// HeartbeatRow is what one heartbeats topic says about one herder or flow.
type HeartbeatRow struct {
	// Source and Target name the herder source->target whose heartbeats
	// these are (Replicated false), or the flow source->target whose
	// replication carried them (Replicated true).
	Source, Target string
	// Topic is the heartbeats topic read, on Target: "heartbeats", or the
	// replicated name the flow's policy gives it ("A.heartbeats").
	Topic string
	// Replicated is set for the replicated heartbeats topic of an enabled
	// flow: it holds the heartbeats written to Source by the herders that
	// target Source, copied by the flow.
	Replicated bool
	// Status is StatusOK, StatusStalled, StatusMissing or StatusUnknown.
	Status string
	// Last is the newest heartbeat timestamp (the value's timestamp field,
	// epoch ms), zero when none was found.
	Last time.Time
	// Age is Now - Last; when AgeAtLeast is set, the herder's newest
	// heartbeat fell out of the records read and Age is a lower bound
	// (the age of the oldest record read). Zero when neither is known.
	Age        time.Duration
	AgeAtLeast bool
	// MaxAge is the threshold past which Status is StatusStalled.
	MaxAge time.Duration
	// Err says why the row is unknown or missing.
	Err string

	// For a replicated row: the herders that emit heartbeats into Source
	// ("B->A"), and, read only when the row is stalled or missing, the
	// newest of their heartbeats in UpstreamTopic on Source (zero when
	// none or not read). A fresh upstream heartbeat with a stale replica
	// puts the fault on the flow's replication, a stale one on the
	// emitting herders.
	Emitters      []string
	UpstreamTopic string
	UpstreamLast  time.Time
}

// key identifies the row across rounds.
func (h HeartbeatRow) key() string {
	return fmt.Sprintf("%s->%s|%s|%t", h.Source, h.Target, h.Topic, h.Replicated)
}

// heartbeatTarget is one heartbeats topic to read and the keys that count.
type heartbeatTarget struct {
	row     HeartbeatRow
	matches func(mm2config.Heartbeat) bool
}

// heartbeatTargets lists what to read: for each enabled flow A->B with
// heartbeats on, `heartbeats` on B (key (A, B)); and when the flow
// replicates heartbeats and some herder emits heartbeats into A (by
// default the heartbeat-only reverse herder B->A, MM2-REFERENCE.md §5.1),
// the replicated topic (`A.heartbeats`) on B, with any key whose target is
// A.
func (c *Checker) heartbeatTargets(cfg *mm2config.Config) []heartbeatTarget {
	var out []heartbeatTarget
	for _, h := range cfg.Flows {
		src, tgt := h.Source, h.Target
		if h.HeartbeatsEnabled {
			out = append(out, heartbeatTarget{
				row:     HeartbeatRow{Source: src, Target: tgt, Topic: h.HeartbeatsTopic(), MaxAge: c.maxAge(h)},
				matches: func(hb mm2config.Heartbeat) bool { return hb.Source == src && hb.Target == tgt },
			})
		}
		if !h.ShouldReplicateTopic(h.HeartbeatsTopic()) {
			continue
		}
		// Herders that write heartbeats into the flow's source.
		var into []string
		rmax := time.Duration(0)
		for _, g := range cfg.Herders {
			if g.Target == src && g.HeartbeatsEnabled {
				into = append(into, g.String())
				rmax = max(rmax, c.maxAge(g))
			}
		}
		if len(into) == 0 {
			continue
		}
		out = append(out, heartbeatTarget{
			row: HeartbeatRow{Source: src, Target: tgt, Topic: h.TargetTopic(h.HeartbeatsTopic()), Replicated: true, MaxAge: rmax,
				UpstreamTopic: h.HeartbeatsTopic(), Emitters: into},
			matches: func(hb mm2config.Heartbeat) bool { return hb.Target == src },
		})
	}
	return out
}

func (c *Checker) maxAge(f *mm2config.Flow) time.Duration {
	if c.opts.HeartbeatMaxAge > 0 {
		return c.opts.HeartbeatMaxAge
	}
	return DefaultHeartbeatMaxAge(f)
}

// checkHeartbeats reads every heartbeats topic and judges each row.
func (c *Checker) checkHeartbeats(ctx context.Context, r Round, res *Result, mal *malformed) {
	judged := map[string]bool{}
	unknown := map[string]bool{}
	unknownKey := map[string]bool{} // rows of unreachable clusters keep their memory
	for _, ht := range c.heartbeatTargets(r.Config) {
		row := ht.row
		reader := r.Readers[row.Target]
		if reader == nil {
			continue // a cluster the watchdog has no client for
		}
		scope := HeartbeatScope(row.Source, row.Target)
		if _, ok := res.Findings[scope]; !ok && !unknown[scope] {
			res.Findings[scope] = nil
		}
		snap := r.Snapshots[row.Target]
		if snap == nil {
			unknown[scope] = true
			row.Status, row.Err = StatusUnknown, fmt.Sprintf("cluster %s was not reached this round", row.Target)
			unknownKey[row.key()] = true
			mal.keep(row.Target, row.Topic)
			if row.Replicated {
				mal.keep(row.Source, row.UpstreamTopic)
			}
			res.Heartbeats = append(res.Heartbeats, row)
			continue
		}
		row = c.judgeHeartbeat(ctx, r, reader, ht, mal)
		if row.Replicated && (row.Status == StatusStalled || row.Status == StatusMissing) {
			row.UpstreamLast = c.upstreamHeartbeat(ctx, r, row, mal)
		} else if row.Replicated {
			mal.keep(row.Source, row.UpstreamTopic) // read only while the flow looks stalled
		}
		res.Heartbeats = append(res.Heartbeats, row)
		k := row.key()
		judged[k] = true
		var f *detectors.Finding
		if row.Status == StatusUnknown {
			f = c.lastHB[k] // keep what the round before said
		} else {
			f = heartbeatFinding(row, r.Now)
			c.lastHB[k] = f
		}
		if f != nil {
			res.Findings[scope] = append(res.Findings[scope], *f)
		}
	}
	for k := range c.lastHB {
		if !judged[k] && !unknownKey[k] {
			delete(c.lastHB, k)
		}
	}
	for k := range c.lastBeat {
		if !judged[k] && !unknownKey[k] {
			delete(c.lastBeat, k)
		}
	}
	for scope := range unknown {
		delete(res.Findings, scope)
		res.Unknown = append(res.Unknown, scope)
	}
}

// judgeHeartbeat reads one heartbeats topic and fills in the row.
func (c *Checker) judgeHeartbeat(ctx context.Context, r Round, reader Reader, ht heartbeatTarget, mal *malformed) HeartbeatRow {
	row := ht.row
	state, t := lookupTopic(r.Snapshots[row.Target], row.Topic)
	switch state {
	case topicUnknown:
		row.Status = StatusUnknown
		if t != nil && t.Err != nil {
			row.Err = t.Err.Error()
		}
		mal.keep(row.Target, row.Topic)
		return row
	case topicAbsent:
		row.Status = StatusMissing
		row.Err = fmt.Sprintf("topic %s does not exist on %s", row.Topic, row.Target)
		return row
	}
	rctx, cancel := c.readCtx(ctx)
	recs, err := reader.ReadTail(rctx, row.Topic, 0, c.opts.HeartbeatTail)
	cancel()
	if err != nil {
		if isUnknownTopic(err) {
			row.Status = StatusMissing
			row.Err = fmt.Sprintf("topic %s does not exist on %s", row.Topic, row.Target)
			return row
		}
		c.logger.Debug("reading heartbeats failed", "cluster", row.Target, "topic", row.Topic, "err", err)
		row.Status, row.Err = StatusUnknown, err.Error()
		mal.keep(row.Target, row.Topic)
		return row
	}
	mal.touch(row.Target, row.Topic)
	var newest, oldest time.Time
	bad := 0
	var firstErr error
	for _, rec := range recs {
		if oldest.IsZero() || rec.Timestamp.Before(oldest) {
			oldest = rec.Timestamp
		}
		hb, err := mm2config.DecodeHeartbeat(rec.Key, rec.Value)
		if err != nil {
			bad++
			mal.add(row.Target, row.Topic)
			if firstErr == nil {
				firstErr = fmt.Errorf("offset %d: %w", rec.Offset, err)
			}
			continue
		}
		if ht.matches(hb) && hb.Timestamp.After(newest) {
			newest = hb.Timestamp
		}
	}
	if bad > 0 {
		c.logger.Debug("skipped heartbeat records that do not decode", "cluster", row.Target, "topic", row.Topic,
			"records", bad, "first_err", firstErr)
	}
	k := row.key()
	if !newest.IsZero() {
		if prev := c.lastBeat[k]; prev.After(newest) {
			newest = prev
		}
		c.lastBeat[k] = newest
	} else if prev, ok := c.lastBeat[k]; ok {
		newest = prev
	}
	if !newest.IsZero() {
		row.Last = newest
		row.Age = max(0, r.Now.Sub(newest))
		row.Status = StatusOK
		if row.Age > row.MaxAge {
			row.Status = StatusStalled
		}
		return row
	}
	// No heartbeat of this herder among the records read.
	if len(recs) > 0 && !oldest.IsZero() && r.Now.Sub(oldest) > row.MaxAge {
		row.Age, row.AgeAtLeast = r.Now.Sub(oldest), true
		row.Status = StatusStalled
		row.Err = fmt.Sprintf("no heartbeat of %s among the newest %d records", row.herder(), len(recs))
		return row
	}
	row.Status = StatusMissing
	if len(recs) == 0 {
		row.Err = fmt.Sprintf("topic %s on %s holds no records", row.Topic, row.Target)
	} else {
		row.Err = fmt.Sprintf("no heartbeat of %s among the newest %d records of %s", row.herder(), len(recs), row.Topic)
	}
	return row
}

// upstreamHeartbeat reads the newest heartbeat emitted into the flow's
// source (the records the replicated topic copies); zero when unknown or
// none.
func (c *Checker) upstreamHeartbeat(ctx context.Context, r Round, row HeartbeatRow, mal *malformed) time.Time {
	reader := r.Readers[row.Source]
	if reader == nil {
		return time.Time{}
	}
	switch st, _ := lookupTopic(r.Snapshots[row.Source], row.UpstreamTopic); st {
	case topicAbsent:
		return time.Time{}
	case topicUnknown:
		mal.keep(row.Source, row.UpstreamTopic)
		return time.Time{}
	}
	rctx, cancel := c.readCtx(ctx)
	recs, err := reader.ReadTail(rctx, row.UpstreamTopic, 0, c.opts.HeartbeatTail)
	cancel()
	if err != nil {
		c.logger.Debug("reading upstream heartbeats failed", "cluster", row.Source, "topic", row.UpstreamTopic, "err", err)
		mal.keep(row.Source, row.UpstreamTopic)
		return time.Time{}
	}
	mal.touch(row.Source, row.UpstreamTopic)
	var newest time.Time
	for _, rec := range recs {
		hb, err := mm2config.DecodeHeartbeat(rec.Key, rec.Value)
		if err != nil {
			mal.add(row.Source, row.UpstreamTopic)
			continue
		}
		if hb.Target == row.Source && hb.Timestamp.After(newest) {
			newest = hb.Timestamp
		}
	}
	return newest
}

// upstreamText says what the upstream heartbeats show, for a replicated
// row's summary.
func (h HeartbeatRow) upstreamText(now time.Time) string {
	emitters := strings.Join(h.Emitters, ", ")
	switch {
	case h.UpstreamLast.IsZero():
		return fmt.Sprintf(" No heartbeat of %s was found in %s on %s either: the emitting herders are down, not only the replication.", emitters, h.UpstreamTopic, h.Source)
	case now.Sub(h.UpstreamLast) > h.MaxAge:
		return fmt.Sprintf(" The newest heartbeat in %s on %s is %s old too: the emitting herders (%s) are down, not only the replication.",
			h.UpstreamTopic, h.Source, now.Sub(h.UpstreamLast).Round(time.Second), emitters)
	}
	return fmt.Sprintf(" %s on %s has a heartbeat %s old: the emitting herders (%s) run, so the replication is at fault.",
		h.UpstreamTopic, h.Source, now.Sub(h.UpstreamLast).Round(time.Second), emitters)
}

// herder names whose heartbeats the row looks for.
func (h HeartbeatRow) herder() string {
	if h.Replicated {
		return "a herder targeting " + h.Source
	}
	return h.Source + "->" + h.Target
}

// heartbeatFinding turns a judged row into its finding, or nil when fine.
func heartbeatFinding(row HeartbeatRow, now time.Time) *detectors.Finding {
	switch row.Status {
	case StatusStalled:
		age := seconds(row.Age)
		values := map[string]any{"age_seconds": age, "max_age_seconds": seconds(row.MaxAge)}
		if !row.Last.IsZero() {
			values["last_heartbeat"] = row.Last.UTC().Format(time.RFC3339)
		}
		if row.AgeAtLeast {
			values["age_is_lower_bound"] = true
		}
		ageText := fmt.Sprintf("%s old", row.Age.Round(time.Second))
		if row.AgeAtLeast {
			ageText = fmt.Sprintf("more than %s old", row.Age.Round(time.Second))
		}
		f := &detectors.Finding{
			Rule: RuleHeartbeatStalled, Severity: detectors.Critical,
			Source: row.Source, Target: row.Target, Topic: row.Topic, Values: values,
		}
		if row.Replicated {
			f.Summary = fmt.Sprintf("The newest heartbeat replicated by %s->%s (topic %s on %s) is %s (threshold %s).",
				row.Source, row.Target, row.Topic, row.Target, ageText, row.MaxAge) + row.upstreamText(now)
			f.Hint = fmt.Sprintf("Check the MirrorSourceConnector tasks of %s->%s and the heartbeat herders writing to %s; compare with the unreplicated heartbeats topic on %s.",
				row.Source, row.Target, row.Source, row.Source)
		} else {
			f.Summary = fmt.Sprintf("The newest heartbeat of %s->%s in %s on %s is %s (threshold %s): the herder's MirrorHeartbeatConnector is not running or cannot write to %s.",
				row.Source, row.Target, row.Topic, row.Target, ageText, row.MaxAge, row.Target)
			f.Hint = fmt.Sprintf("Check that the MM2 workers of %s->%s are up and that the heartbeat task is RUNNING (look for task failures in the worker log).",
				row.Source, row.Target)
		}
		return f
	case StatusMissing:
		f := &detectors.Finding{
			Rule: RuleHeartbeatMissing, Severity: detectors.Warning,
			Source: row.Source, Target: row.Target, Topic: row.Topic,
		}
		if row.Replicated {
			f.Summary = fmt.Sprintf("No replicated heartbeat on %s for %s->%s: %s.", row.Target, row.Source, row.Target, row.Err) + row.upstreamText(now)
			f.Hint = fmt.Sprintf("Heartbeats written to %s should be mirrored to %s as %s; check the flow's tasks, and heartbeats.replication.enabled on 4.x.",
				row.Source, row.Target, row.Topic)
		} else {
			f.Summary = fmt.Sprintf("No heartbeat of %s->%s on %s while emit.heartbeats.enabled is on: %s.", row.Source, row.Target, row.Target, row.Err)
			f.Hint = fmt.Sprintf("The MirrorHeartbeatConnector of %s->%s creates %s on %s when it starts; check that the herder runs and may create and write that topic.",
				row.Source, row.Target, row.Topic, row.Target)
		}
		return f
	}
	return nil
}

// seconds is d in whole seconds, for finding values.
func seconds(d time.Duration) int64 { return int64(math.Round(d.Seconds())) }

func isUnknownTopic(err error) bool {
	return errors.Is(err, kerr.UnknownTopicOrPartition)
}
