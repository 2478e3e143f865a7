// Package report renders findings for the one-shot commands (scan, check,
// lint): NDJSON for machines, an aligned table for people.
//
// It only formats; it does not filter findings or decide exit codes. The only
// ordering it imposes is the table's: active findings before resolved ones,
// most severe first. The JSON is exactly the finding object of CONTRACT.md,
// one per line, with "resolved":true on a finding whose condition ended.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// WriteJSON writes one JSON object per finding per line (NDJSON). It writes
// nothing for no findings.
func WriteJSON(w io.Writer, fs []detectors.Finding) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range fs {
		if err := enc.Encode(&fs[i]); err != nil {
			return fmt.Errorf("encoding finding %s: %w", fs[i].Rule, err)
		}
	}
	return bw.Flush()
}

// ANSI colours for severities, used only when writing to a terminal.
const (
	colRed    = "\x1b[31m"
	colYellow = "\x1b[33m"
	colBlue   = "\x1b[34m"
	colGrey   = "\x1b[90m" // resolved: the same width as the others keeps the columns aligned
	colReset  = "\x1b[0m"
)

// WriteText writes a table for people: state, severity, rule, count, where
// (flow, topic, partitions, connector/task, group) and the summary, then each
// finding's cause and hint below the table. The state is "active", or
// "resolved" for a finding with Recovered set (the input showed the condition
// ending); active findings come first, each group most severe first. With
// color, severities of active findings are coloured and those of resolved
// ones grey (use only on a terminal).
// It writes "no findings" for none.
func WriteText(w io.Writer, fs []detectors.Finding, color bool) error {
	bw := bufio.NewWriter(w)
	if len(fs) == 0 {
		fmt.Fprintln(bw, "no findings")
		return bw.Flush()
	}
	sorted := make([]detectors.Finding, len(fs))
	copy(sorted, fs)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := &sorted[i], &sorted[j]
		if a.Recovered != b.Recovered {
			return !a.Recovered
		}
		return a.Severity.Rank() > b.Severity.Rank()
	})
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tSEVERITY\tRULE\tCOUNT\tWHERE\tSUMMARY")
	for i := range sorted {
		f := &sorted[i]
		sev := strings.ToUpper(string(f.Severity))
		if color {
			col := colorFor(f.Severity)
			if f.Recovered {
				col = colGrey
			}
			sev = col + sev + colReset
		}
		count := "-"
		if f.Count > 0 {
			count = strconv.Itoa(f.Count)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", State(f), sev, f.Rule, count, Where(f), oneLine(f.Summary))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i := range sorted {
		f := &sorted[i]
		if f.Cause == "" && f.Hint == "" && f.Evidence == nil {
			continue
		}
		fmt.Fprintf(bw, "\n%s %s", f.Rule, Where(f))
		if f.Recovered {
			fmt.Fprint(bw, " (resolved)")
		}
		fmt.Fprintln(bw)
		if f.Evidence != nil && f.Evidence.File != "" {
			fmt.Fprintf(bw, "  at:    %s:%d\n", f.Evidence.File, f.Evidence.Line)
		}
		if f.Cause != "" {
			fmt.Fprintf(bw, "  cause: %s\n", oneLine(f.Cause))
		}
		if f.Hint != "" {
			fmt.Fprintf(bw, "  hint:  %s\n", oneLine(f.Hint))
		}
	}
	return bw.Flush()
}

// State is "resolved" for a finding whose condition ended (Recovered set)
// and "active" otherwise.
func State(f *detectors.Finding) string {
	if f.Recovered {
		return "resolved"
	}
	return "active"
}

func colorFor(s detectors.Severity) string {
	switch s {
	case detectors.Critical:
		return colRed
	case detectors.Warning:
		return colYellow
	}
	return colBlue
}

// Where renders the identifying fields of a finding compactly, e.g.
// "kafka->vast topic=orders partitions=[3 4] MirrorSourceConnector/task-0".
func Where(f *detectors.Finding) string {
	var parts []string
	switch {
	case f.Source != "" || f.Target != "":
		parts = append(parts, orQ(f.Source)+"->"+orQ(f.Target))
	case f.Cluster != "":
		parts = append(parts, "cluster="+f.Cluster)
	}
	if f.Topic != "" {
		parts = append(parts, "topic="+f.Topic)
	}
	if len(f.Partitions) > 0 {
		parts = append(parts, fmt.Sprintf("partitions=%v", f.Partitions))
	}
	if f.Connector != "" {
		c := f.Connector
		if f.Task != nil {
			c += "/task-" + strconv.Itoa(*f.Task)
		}
		parts = append(parts, c)
	} else if f.Task != nil {
		parts = append(parts, "task-"+strconv.Itoa(*f.Task))
	}
	if f.Group != "" {
		parts = append(parts, "group="+f.Group)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// oneLine folds line breaks and tabs so one finding stays on one table row.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
