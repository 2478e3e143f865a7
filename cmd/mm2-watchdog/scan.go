package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/alerts/report"
	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/logrules"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// flowNames lists the enabled flows of cfg as "A->B".
func flowNames(cfg *mm2config.Config) []string {
	var out []string
	for _, f := range cfg.Flows {
		out = append(out, f.String())
	}
	return out
}

// parseFlags shared by scan and run: how log lines are read.
type logFlags struct {
	pattern  string
	layout   string
	timezone string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.pattern, "log-pattern", "", "log4j ConversionPattern of the MM2 log (e.g. '[%d] %p %X{connector.context}%m (%c:%L)%n'); default: detect the layout from the first lines")
	fs.StringVar(&l.layout, "log-layout", "", "force a known layout instead of detecting it: kafka, strimzi, short, colon or json")
	fs.StringVar(&l.timezone, "log-timezone", "UTC", "time zone MM2's timestamps are written in (log4j prints local time without an offset), e.g. UTC or Europe/Berlin")
}

// options validates the flags and returns parser options.
func (l *logFlags) options(logger *slog.Logger) (logparse.Options, error) {
	loc, err := time.LoadLocation(l.timezone)
	if err != nil {
		return logparse.Options{}, fmt.Errorf("--log-timezone %q: %w", l.timezone, err)
	}
	if l.pattern != "" {
		if err := logparse.ValidatePattern(l.pattern); err != nil {
			return logparse.Options{}, fmt.Errorf("--log-pattern: %w", err)
		}
	}
	if l.layout != "" {
		ok := false
		for _, n := range logparse.LayoutNames() {
			ok = ok || n == l.layout
		}
		if !ok {
			return logparse.Options{}, fmt.Errorf("--log-layout %q: unknown layout (known: %v)", l.layout, logparse.LayoutNames())
		}
	}
	return logparse.Options{Layout: l.layout, Pattern: l.pattern, Location: loc, Logger: logger}, nil
}

// ruleFlags tune the stateful log rules.
type ruleFlags struct {
	rebalanceWindow    time.Duration
	rebalanceThreshold int
}

func (r *ruleFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&r.rebalanceWindow, "rebalance-window", 5*time.Minute, "sliding window for rebalance-storm")
	fs.IntVar(&r.rebalanceThreshold, "rebalance-threshold", 5, "'Rebalance started' lines for one group within --rebalance-window that make a rebalance-storm")
}

func (r *ruleFlags) options() logrules.Options {
	return logrules.Options{RebalanceWindow: r.rebalanceWindow, RebalanceThreshold: r.rebalanceThreshold}
}

// reportFlags are the output flags of the one-shot commands.
type reportFlags struct {
	format string
	failOn string
}

func (r *reportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.format, "format", "text", "output: text (a table for people) or json (one finding per line, NDJSON)")
	fs.StringVar(&r.failOn, "fail-on", "critical", "exit 1 when a finding is at or above this severity: info, warning, critical, or none")
}

// validate returns the --fail-on threshold rank (0 for none).
func (r *reportFlags) validate() (int, error) {
	if r.format != "text" && r.format != "json" {
		return 0, fmt.Errorf("--format %q: want text or json", r.format)
	}
	if r.failOn == "none" {
		return 0, nil
	}
	s, err := detectors.ParseSeverity(r.failOn)
	if err != nil {
		return 0, fmt.Errorf("--fail-on %q: want info, warning, critical or none", r.failOn)
	}
	return s.Rank(), nil
}

// print writes the findings and returns the exit code they earn.
func (r *reportFlags) print(e env, fs []detectors.Finding, threshold int) int {
	var err error
	if r.format == "json" {
		err = report.WriteJSON(e.stdout, fs)
	} else {
		err = report.WriteText(e.stdout, fs, isTerminal(e.stdout))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog: writing the report: %v\n", err)
		return exitUsage
	}
	if threshold > 0 {
		for i := range fs {
			if fs[i].Severity.Rank() >= threshold {
				return exitFindings
			}
		}
	}
	return exitOK
}

func scanCommand(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("scan", e.stderr, "scan [flags] FILE...  (plain, .gz, or - for stdin; rotated siblings welcome)")
	var (
		logs  stringList
		lf    logFlags
		rf    ruleFlags
		out   reportFlags
		debug bool
	)
	fs.Var(&logs, "log", "log file or glob to scan (repeatable); positional arguments are added to these")
	lf.register(fs)
	rf.register(fs)
	out.register(fs)
	fs.BoolVar(&debug, "debug", false, "log parser decisions (layout detected, lines cut) to stderr")
	mm2Config := fs.String("mm2-config", "", "optional MM2 properties file: with a single enabled flow, findings whose line names no flow are attributed to it")
	if err := parseFlags(fs, args, e.getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
		return exitUsage
	}
	threshold, err := out.validate()
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
		return exitUsage
	}
	level := slog.LevelWarn
	if debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	popts, err := lf.options(logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
		return exitUsage
	}
	files, err := scanInputs(append(logs, fs.Args()...))
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
		return exitUsage
	}
	if len(files) == 0 {
		fmt.Fprintln(e.stderr, "mm2-watchdog scan: no input: give one or more log files, or - for stdin")
		fs.Usage()
		return exitUsage
	}

	ropts := rf.options()
	if *mm2Config != "" {
		cfg, err := mm2config.Load(*mm2Config, mm2config.Options{LookupEnv: e.getenv})
		if err != nil {
			fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
			return exitUsage
		}
		ropts.Flows = flowNames(cfg)
	}
	engine := logrules.New(ropts)
	code := exitOK
	var total logparse.Stats
	// Parsing runs on its own goroutine and hands records over in batches,
	// so reading and rule matching use both cores (BENCHMARKS.md).
	emit := func(batch []*watcher.Record) error {
		for _, rec := range batch {
			engine.Observe(rec)
		}
		return nil
	}
	for _, f := range files {
		var st logparse.Stats
		if f == "-" {
			st, err = logparse.ScanReaderBatched(ctx, e.stdin, "-", popts, logparse.DefaultBatchRecords, emit)
		} else {
			st, err = logparse.ScanFileBatched(ctx, f, popts, logparse.DefaultBatchRecords, emit)
		}
		total.Lines += st.Lines
		total.Records += st.Records
		total.TruncatedLines += st.TruncatedLines
		total.DroppedLines += st.DroppedLines
		total.LayoutWarnings += st.LayoutWarnings
		if err != nil {
			// Keep going: the other files still count, but the exit code says
			// that an input could not be read.
			fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
			code = exitUsage
		}
	}
	findings := engine.Findings()
	if n := engine.Evicted(); n > 0 {
		fmt.Fprintf(e.stderr, "mm2-watchdog scan: more than %d distinct findings: %d of the lowest severity were dropped\n", logrules.DefaultMaxTracked, n)
	}
	if c := out.print(e, findings, threshold); code == exitOK {
		code = c
	}
	if out.format == "text" {
		fmt.Fprintf(e.stderr, "scanned %d lines (%d records) in %d file(s); %d finding(s)", total.Lines, total.Records, len(files), len(findings))
		if total.LayoutWarnings > 0 {
			fmt.Fprintf(e.stderr, "; %d file(s) in a layout not recognised (see the warning above; --log-pattern may help)", total.LayoutWarnings)
		}
		if total.TruncatedLines > 0 || total.DroppedLines > 0 {
			fmt.Fprintf(e.stderr, "; %d over-long line(s) cut, %d continuation line(s) dropped", total.TruncatedLines, total.DroppedLines)
		}
		fmt.Fprintln(e.stderr)
	}
	return code
}

// scanInputs expands globs and orders rotated siblings oldest first (by
// modification time), so stateful rules see the log in the order it was
// written. "-" (stdin) stays where it was given. A pattern that matches
// nothing is kept as a literal path, so that reading it reports the error.
func scanInputs(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("bad glob %q: %w", a, err)
		}
		if len(matches) == 0 {
			matches = []string{a}
		}
		sortByModTime(matches)
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// sortByModTime sorts paths oldest first; paths that cannot be stat'ed keep
// their place at the end.
func sortByModTime(paths []string) {
	mt := make(map[string]time.Time, len(paths))
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			mt[p] = fi.ModTime()
		}
	}
	sort.SliceStable(paths, func(i, j int) bool {
		ti, okI := mt[paths[i]]
		tj, okJ := mt[paths[j]]
		if okI != okJ {
			return okI
		}
		return ti.Before(tj)
	})
}

// isTerminal reports whether w is a character device (colour only there).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
