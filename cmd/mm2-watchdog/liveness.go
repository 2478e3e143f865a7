package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors/liveness"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/parity"
)

// livenessFlags tune the heartbeat, checkpoint and offset-sync checks,
// shared by run and check.
type livenessFlags struct {
	heartbeatMaxAge  time.Duration
	checkpointWindow time.Duration
	maxGroups        int
}

func (l *livenessFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.heartbeatMaxAge, "heartbeat-max-age", 0, "heartbeat-stalled fires when a herder's newest heartbeat is older than this; 0 means 10 x emit.heartbeats.interval.seconds, at least 1m")
	fs.DurationVar(&l.checkpointWindow, "checkpoint-window", 0, "checkpoint-stalled fires when a group's commits on the source moved and no newer checkpoint came for this long; 0 means 3 x emit.checkpoints.interval.seconds, at least 5m")
	fs.IntVar(&l.maxGroups, "max-group-metrics", liveness.DefaultMaxGroups, "consumer groups per flow that get per-group metrics (the first by name); the rest are counted in mm2_watchdog_group_series_dropped")
}

// newLivenessChecker builds the liveness checker from the flags.
func newLivenessChecker(l livenessFlags, readTimeout time.Duration, logger *slog.Logger) *liveness.Checker {
	return liveness.New(liveness.Options{
		HeartbeatMaxAge:  l.heartbeatMaxAge,
		CheckpointWindow: l.checkpointWindow,
		ReadTimeout:      readTimeout,
		Logger:           logger,
	})
}

// checkLiveness runs the liveness checks on the round's snapshots, merges
// their findings and unknown scopes into res (so that the alert state and
// the check report see one result), publishes the metrics and keeps the
// result for /api/groups.
func (r *clusterRunner) checkLiveness(ctx context.Context, round parity.Round, res *parity.Result) {
	t0 := time.Now()
	lr := liveness.Round{Config: round.Config, Snapshots: round.Snapshots, Readers: map[string]liveness.Reader{}, Now: round.Now}
	for alias, cl := range r.clients {
		lr.Readers[alias] = cl
	}
	out := r.live.Check(ctx, lr)
	r.observe("liveness", t0)
	for scope, fs := range out.Findings {
		res.Findings[scope] = fs
	}
	res.Unknown = append(res.Unknown, out.Unknown...)
	if r.liveMetrics != nil {
		r.liveMetrics.Publish(out)
	}
	r.mu.Lock()
	r.lastLive = out
	r.mu.Unlock()
}

// lastLiveness returns the result of the newest round, nil before the first.
func (r *clusterRunner) lastLiveness() *liveness.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastLive
}

// serveGroups serves /api/groups: the cut-over readiness of every flow's
// consumer groups from the newest round, as a JSON array of flows.
func (d *daemon) serveGroups(w http.ResponseWriter, _ *http.Request) {
	var flows []liveness.FlowGroups
	if d.checks != nil {
		if res := d.checks.lastLiveness(); res != nil {
			flows = res.Groups
		}
	}
	if flows == nil {
		flows = []liveness.FlowGroups{}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(flows)
}

// writeHeartbeatTable prints one row per heartbeats topic read.
func writeHeartbeatTable(w io.Writer, res *liveness.Result) {
	if res == nil || len(res.Heartbeats) == 0 {
		return
	}
	fmt.Fprintln(w, "heartbeats")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  HERDER\tCLUSTER\tTOPIC\tNEWEST\tAGE\tTHRESHOLD\tSTATUS")
	for _, h := range res.Heartbeats {
		herder := h.Source + "->" + h.Target
		if h.Replicated {
			herder = "via " + herder
		}
		newest, age := "-", "-"
		if !h.Last.IsZero() {
			newest = h.Last.UTC().Format(time.RFC3339)
		}
		if h.Age > 0 || !h.Last.IsZero() {
			age = h.Age.Round(time.Second).String()
			if h.AgeAtLeast {
				age = ">" + age
			}
		}
		status := h.Status
		if h.Err != "" && h.Status != liveness.StatusOK {
			status += " (" + h.Err + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", herder, h.Target, h.Topic, newest, age, h.MaxAge, status)
	}
	_ = tw.Flush()
}

// groupsLegend explains the columns of the groups table in plain words,
// one line per column, printed once under the tables.
var groupsLegend = []string{
	"COMMITTED   the offset the group last committed on the source cluster",
	"CHECKPOINT  the source offset of MM2's newest checkpoint for the partition",
	"TRANSLATED  the target offset that checkpoint translates to",
	"RESUMES AT  where on the source the group would resume after moving to the target",
	"RE-READ     how many records the group would read again after moving (\"skips n\": records it would miss)",
	"(all)       the group's row: its total RE-READ and its cut-over verdict",
}

// writeGroupsTable prints the cut-over readiness of every flow's groups:
// one line per group (records re-read in total, verdict) and one per
// partition, then per group how many committed partitions have a
// checkpoint, and a legend of the columns.
func writeGroupsTable(w io.Writer, res *liveness.Result) {
	if res == nil {
		return
	}
	tables := 0
	defer func() {
		if tables == 0 {
			return
		}
		fmt.Fprintln(w, "columns:")
		for _, l := range groupsLegend {
			fmt.Fprintln(w, "  "+l)
		}
	}()
	for _, fg := range res.Groups {
		fmt.Fprintf(w, "consumer groups %s->%s\n", fg.Source, fg.Target)
		if fg.Unknown != "" {
			fmt.Fprintf(w, "  unknown: %s\n", fg.Unknown)
			continue
		}
		if fg.SyncsUnknown != "" {
			fmt.Fprintf(w, "  offset-syncs unknown (%s): re-read counts are lower bounds\n", fg.SyncsUnknown)
		}
		if len(fg.Groups) == 0 {
			fmt.Fprintln(w, "  no group passes the flow's group filter with commits on a mirrored topic or checkpoints")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  GROUP\tTOPIC\tPARTITION\tCOMMITTED\tCHECKPOINT\tTRANSLATED\tRESUMES AT\tRE-READ\tSTATUS")
		for _, g := range fg.Groups {
			reread := strconv.FormatInt(g.Reread, 10)
			if g.RereadAtLeast {
				reread = ">=" + reread
			}
			verdict := g.Status
			if g.Err != "" {
				verdict += " (" + g.Err + ")"
			}
			if g.LastCheckpoint.IsZero() {
				verdict += ", no checkpoint"
			} else {
				verdict += ", last checkpoint " + res.Now.Sub(g.LastCheckpoint).Round(time.Second).String() + " ago"
			}
			fmt.Fprintf(tw, "  %s\t(all)\t\t\t\t\t\t%s\t%s\n", g.Group, reread, verdict)
			for _, p := range g.Partitions {
				fmt.Fprintf(tw, "  \t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, offsetText(p.Committed),
					offsetText(p.CheckpointUpstream), offsetText(p.CheckpointDownstream), offsetText(p.Resumes), rereadText(p), p.Status)
			}
		}
		_ = tw.Flush()
		tables++
		for _, g := range fg.Groups {
			fmt.Fprintf(w, "  %s: partitions with a checkpoint: %d of %d committed\n", g.Group, g.Checkpointed, g.Committed)
		}
	}
}

// offsetText prints an offset, "-" when absent.
func offsetText(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}

// rereadText prints a partition's re-read count: "-" when not applicable,
// ">=n" for a lower bound, "skips n" when the group would skip records.
func rereadText(p liveness.GroupPartition) string {
	switch {
	case p.Status == liveness.PartitionSkips:
		return "skips " + strconv.FormatInt(-p.Reread, 10)
	case p.Reread < 0:
		return "-"
	case p.Resumes < 0:
		return ">=" + strconv.FormatInt(p.Reread, 10)
	}
	return strconv.FormatInt(p.Reread, 10)
}

// groupLine is one NDJSON line of check --groups --format json.
type groupLine struct {
	Kind   string `json:"kind"` // always "group"
	Source string `json:"source"`
	Target string `json:"target"`
	liveness.GroupReport
}

// unknownGroupsLine is the NDJSON line of a flow whose groups could not be
// judged this round: no group line is written for it, and silence must not
// read as "no groups".
type unknownGroupsLine struct {
	Kind    string `json:"kind"` // always "groups-unknown"
	Source  string `json:"source"`
	Target  string `json:"target"`
	Unknown string `json:"unknown"`
}

// writeGroupsJSON writes one JSON object per group per line, each with
// "kind":"group" so that the lines can be told apart from findings, and one
// "kind":"groups-unknown" line per flow that could not be judged.
func writeGroupsJSON(w io.Writer, res *liveness.Result) error {
	if res == nil {
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, fg := range res.Groups {
		if fg.Unknown != "" {
			if err := enc.Encode(unknownGroupsLine{Kind: "groups-unknown", Source: fg.Source, Target: fg.Target, Unknown: fg.Unknown}); err != nil {
				return err
			}
			continue
		}
		for _, g := range fg.Groups {
			if err := enc.Encode(groupLine{Kind: "group", Source: fg.Source, Target: fg.Target, GroupReport: g}); err != nil {
				return err
			}
		}
	}
	return nil
}
