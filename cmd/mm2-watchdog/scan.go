package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
	fs.StringVar(&r.failOn, "fail-on", "critical", "exit 1 when a finding still active is at or above this severity: info, warning, critical, or none")
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

// print writes the findings and returns the exit code they earn: only
// findings still active count against --fail-on; a finding whose condition
// ended in the input (Recovered, shown as resolved) is reported but does not.
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
			if !fs[i].Recovered && fs[i].Severity.Rank() >= threshold {
				return exitFindings
			}
		}
	}
	return exitOK
}

// scanUsage is the synopsis of scan -h. It says how inputs become timelines.
const scanUsage = `scan [flags] FILE...  (plain, .gz, or - for stdin)

Each log is read as its own timeline, together with its rotated siblings
(same directory, same name once a rotation suffix is stripped:
connect.log.YYYY-MM-DD-HH, connect-YYYY-MM-DD-HH.log, connect.log.1,
0.log.YYYYMMDD-hhmmss, and .gz), oldest file first by modification time;
so a task failure in connect.log.2026-10-30-18 ends with its restart in
connect.log, while separate logs (two workers, two pods) never mix. stdin is
a timeline of its own. A finding whose condition ended within its timeline
is shown as resolved and does not count for --fail-on.`

func scanCommand(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("scan", e.stderr, scanUsage)
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
	code := exitOK
	var (
		total    logparse.Stats
		findings []detectors.Finding
		evicted  int
		readable int // inputs that were opened (and read at least in part)
	)
	// One rule engine per timeline: stateful rules (recoveries, rebalance
	// windows, task attribution) must only combine lines of one log and its
	// rotated siblings, never lines of unrelated logs given together.
	for _, group := range groupByRotation(files) {
		engine := logrules.New(ropts)
		// Parsing runs on its own goroutine and hands records over in
		// batches, so reading and rule matching use both cores
		// (BENCHMARKS.md).
		emit := func(batch []*watcher.Record) error {
			for _, rec := range batch {
				engine.Observe(rec)
			}
			return nil
		}
		for _, f := range group {
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
			if err == nil || st.Lines > 0 {
				readable++
			}
			if err != nil {
				// Keep going: the other files still count, but the exit
				// code says that an input could not be read.
				fmt.Fprintf(e.stderr, "mm2-watchdog scan: %v\n", err)
				code = exitUsage
			}
		}
		findings = append(findings, engine.Findings()...)
		evicted += engine.Evicted()
	}
	if readable == 0 {
		// Nothing was read: "no findings" would claim a clean log.
		return code
	}
	sortFindings(findings)
	if evicted > 0 {
		fmt.Fprintf(e.stderr, "mm2-watchdog scan: more than %d distinct findings in one log: %d of the lowest severity were dropped\n", logrules.DefaultMaxTracked, evicted)
	}
	if c := out.print(e, findings, threshold); code == exitOK {
		code = c
	}
	if out.format == "text" {
		resolved := 0
		for i := range findings {
			if findings[i].Recovered {
				resolved++
			}
		}
		fmt.Fprintf(e.stderr, "scanned %d lines (%d records) in %d file(s); %d finding(s)", total.Lines, total.Records, len(files), len(findings))
		if resolved > 0 {
			fmt.Fprintf(e.stderr, ", %d of them resolved", resolved)
		}
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

// sortFindings orders the findings of several timelines the way one engine
// orders its own (logrules.Engine.Findings): by FirstSeen, then rule, then
// identity, then evidence file, so the output does not depend on the order
// the inputs were given in.
func sortFindings(fs []detectors.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if !a.FirstSeen.Equal(b.FirstSeen) {
			return a.FirstSeen.Before(b.FirstSeen)
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if ia, ib := a.Identity(), b.Identity(); ia != ib {
			return ia < ib
		}
		return evidenceFile(a) < evidenceFile(b)
	})
}

func evidenceFile(f *detectors.Finding) string {
	if f.Evidence == nil {
		return ""
	}
	return f.Evidence.File
}

// scanInputs expands globs and drops repeats, keeping the order given. "-"
// (stdin) is kept once. A pattern that matches nothing is kept as a literal
// path, so that reading it reports the error. groupByRotation orders the
// files of each log.
func scanInputs(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		if a == "-" {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("bad glob %q: %w", a, err)
		}
		if len(matches) == 0 {
			matches = []string{a}
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// Rotated names, after a trailing ".gz" is removed. MM2 3.9 (log4j 1
// DailyRollingFileAppender, DatePattern '.'yyyy-MM-dd-HH) renames connect.log
// to connect.log.2026-10-30-18; MM2 4.x (log4j2 RollingFile, filePattern
// connect-%d{yyyy-MM-dd-HH}.log) to connect-2026-10-30-18.log; log4j's
// RollingFileAppender to connect.log.1, .2, … (higher is older); the kubelet
// renames a container log 0.log to 0.log.20261030-181856.
var (
	rotKubelet  = regexp.MustCompile(`^(.+\.log)\.(\d{8}-\d{6})$`)
	rotDated3   = regexp.MustCompile(`^(.+)\.(\d{4}-\d{2}-\d{2}(?:-\d{2}(?:-\d{2})?)?)$`)
	rotDated4   = regexp.MustCompile(`^(.+)-(\d{4}-\d{2}-\d{2}(?:-\d{2}(?:-\d{2})?)?(?:-\d+)?)(\.log)$`)
	rotNumbered = regexp.MustCompile(`^(.+)\.(\d{1,4})$`)
)

// rotation is where one file stands among its rotated siblings.
type rotation struct {
	base  string // directory and name with the rotation suffix removed
	class int    // 0 numbered, 1 dated, 2 the live file: older classes first
	stamp string // the date of a dated file; sorts oldest first
	num   int    // the index of a numbered file; higher is older
}

// rotationOf parses the rotation suffix of path.
func rotationOf(path string) rotation {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	name = strings.TrimSuffix(name, ".gz")
	r := rotation{base: filepath.Join(dir, name), class: 2}
	if m := rotKubelet.FindStringSubmatch(name); m != nil {
		r.base, r.class, r.stamp = filepath.Join(dir, m[1]), 1, m[2]
	} else if m := rotDated3.FindStringSubmatch(name); m != nil {
		r.base, r.class, r.stamp = filepath.Join(dir, m[1]), 1, m[2]
	} else if m := rotDated4.FindStringSubmatch(name); m != nil {
		r.base, r.class, r.stamp = filepath.Join(dir, m[1]+m[3]), 1, m[2]
	} else if m := rotNumbered.FindStringSubmatch(name); m != nil {
		n, _ := strconv.Atoi(m[2])
		r.base, r.class, r.num = filepath.Join(dir, m[1]), 0, n
	}
	return r
}

// groupByRotation splits the inputs into timelines: a log with its rotated
// siblings (the same directory and the same name once a rotation suffix and
// ".gz" are stripped, see rotationOf), or stdin alone. Groups keep the order
// in which their first file was given; the files of a group are ordered
// oldest first by modification time, and by their rotation suffix where the
// times are equal (copied files), so stateful rules see each log in the
// order it was written.
func groupByRotation(files []string) [][]string {
	var (
		groups [][]string
		index  = map[string]int{}
		rot    = make(map[string]rotation, len(files))
	)
	for _, f := range files {
		key := "\x00stdin"
		if f != "-" {
			r := rotationOf(f)
			rot[f] = r
			key = r.base
		}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], f)
	}
	for _, g := range groups {
		sortByModTime(g, rot)
	}
	return groups
}

// sortByModTime sorts the files of one log oldest first by modification
// time; equal times fall back to the rotation suffix (numbered backups, then
// dated ones, then the live file). Paths that cannot be stat'ed go to the end.
func sortByModTime(paths []string, rot map[string]rotation) {
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
		if okI && !ti.Equal(tj) {
			return ti.Before(tj)
		}
		ri, rj := rot[paths[i]], rot[paths[j]]
		if ri.class != rj.class {
			return ri.class < rj.class
		}
		if ri.stamp != rj.stamp {
			return ri.stamp < rj.stamp
		}
		return ri.num > rj.num
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
