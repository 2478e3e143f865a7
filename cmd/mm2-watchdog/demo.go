package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mm2-watchdog/mm2-watchdog/alerts"
	"github.com/mm2-watchdog/mm2-watchdog/demo"
)

// demoOptions are the flags of demo.
type demoOptions struct {
	listen   string
	duration time.Duration
	pace     float64
	dir      string
	logLevel string

	slackWebhookURL string
	slackToken      string
	slackChannel    string
}

// watchdogLogName is the file in the demo directory that receives the
// daemon's own JSON log (and, without Slack, its notifications).
const watchdogLogName = "watchdog.log"

// demoCommand runs the whole loop with no infrastructure: two in-process
// Kafka-protocol clusters, a simulated MirrorMaker 2 between them (package
// demo), and the daemon of run, unchanged, watching both clusters and the
// simulated worker log. It narrates the timeline and every alert that fires
// or resolves on stdout, and exits 0 after --duration or on a signal.
func demoCommand(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("demo", e.stderr, "demo [--listen ADDR] [--duration D] [--pace F] [--dir DIR] [--slack-webhook-url URL | --slack-token T --slack-channel C]")
	var do demoOptions
	fs.StringVar(&do.listen, "listen", "127.0.0.1:9464", "HTTP address of the watchdog's /metrics, /readyz, /api/findings and /api/groups")
	fs.DurationVar(&do.duration, "duration", 0, "stop after this long; 0 runs until Ctrl-C or SIGTERM")
	fs.Float64Var(&do.pace, "pace", 1, "multiply every pause and interval of the demo by this (0.5 runs twice as fast), between 0.05 and 10")
	fs.StringVar(&do.dir, "dir", "", "keep the demo's files (MM2 worker log, MM2 properties, watchdog log) in this existing directory; default a temporary directory removed at exit")
	fs.StringVar(&do.logLevel, "log-level", "info", "level of the watchdog's own log (in watchdog.log): debug, info, warn, error")
	fs.StringVar(&do.slackWebhookURL, "slack-webhook-url", "", "send the alerts to this Slack incoming webhook URL instead of watchdog.log (secret)")
	webhookFile := fs.String("slack-webhook-url-file", "", "file holding the Slack incoming webhook URL")
	fs.StringVar(&do.slackToken, "slack-token", "", "send the alerts with this Slack bot token xoxb-… instead of watchdog.log (secret); needs --slack-channel")
	tokenFile := fs.String("slack-token-file", "", "file holding the Slack bot token")
	fs.StringVar(&do.slackChannel, "slack-channel", "", "Slack channel for the bot token, e.g. #mm2-alerts")
	if err := parseFlags(fs, args, e.getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", alerts.Redact(err.Error()))
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if !(do.pace >= 0.05 && do.pace <= 10) { // also rejects NaN
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: --pace %g: want a factor between 0.05 and 10\n", do.pace)
		return exitUsage
	}
	if do.duration < 0 {
		fmt.Fprintln(e.stderr, "mm2-watchdog demo: --duration must not be negative")
		return exitUsage
	}
	o, err := demoRunOptions(do)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", err)
		return exitUsage
	}
	if err := o.loadSecrets(*webhookFile, *tokenFile); err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", alerts.Redact(err.Error()))
		return exitUsage
	}

	dir := do.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "mm2-watchdog-demo-"); err != nil {
			fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", err)
			return exitUsage
		}
		defer os.RemoveAll(dir)
	} else if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: --dir %s: not an existing directory\n", dir)
		return exitUsage
	}
	logFile, err := os.OpenFile(filepath.Join(dir, watchdogLogName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", err)
		return exitUsage
	}
	defer logFile.Close()
	logger, err := newLogger(logFile, do.logLevel)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", err)
		return exitUsage
	}

	narr := demo.NewNarrator(e.stdout, nil)
	timing := demo.DefaultTiming().Scaled(do.pace)
	dm, err := demo.New(demo.Options{Dir: dir, Timing: timing, Narrator: narr, Logger: logger.With("component", "demo")})
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", err)
		return exitFindings
	}
	defer dm.Close()
	o.logs = []string{dm.LogFile()}
	o.cluster.mm2Config = dm.PropertiesFile()
	d, err := newDaemon(o, e.getenv, logger, prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", alerts.Redact(err.Error()))
		return exitFindings
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if do.duration > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, do.duration)
		defer cancelT()
	}
	daemonDone := make(chan error, 1)
	go func() { daemonDone <- d.run(ctx) }()
	var addr string
	select {
	case addr = <-d.addr:
	case err := <-daemonDone:
		if err == nil {
			return exitOK // stopped before it listened
		}
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", alerts.Redact(err.Error()))
		return exitFindings
	}
	printIntro(narr, dm, addr, dir, do, o)

	demoDone := make(chan error, 1)
	go func() { demoDone <- dm.Run(ctx) }()
	w := &alertWatch{narr: narr, seen: map[string]alerts.Alert{}, firedRules: map[string]bool{}}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	var demoErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case demoErr = <-demoDone:
			if demoErr != nil {
				break loop
			}
			demoDone = nil // the timeline ended cleanly only because ctx is done
		case <-t.C:
			w.poll(d.state.Active())
		}
	}
	w.poll(d.state.Active())
	cancel()
	if demoDone != nil {
		if err := <-demoDone; demoErr == nil {
			demoErr = err
		}
	}
	runErr := <-daemonDone
	printSummary(narr, dm, w, dir, do.dir != "")
	switch {
	case demoErr != nil:
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", demoErr)
		return exitFindings
	case runErr != nil:
		fmt.Fprintf(e.stderr, "mm2-watchdog demo: %v\n", alerts.Redact(runErr.Error()))
		return exitFindings
	}
	return exitOK
}

// demoRunOptions returns run's options with every default of run's flags,
// then the demo's: short intervals so that the story plays in seconds.
func demoRunOptions(do demoOptions) (runOptions, error) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registerRunFlags(fs, &o)
	if err := fs.Parse(nil); err != nil {
		return o, err
	}
	scale := func(d time.Duration) time.Duration {
		return max(50*time.Millisecond, time.Duration(float64(d)*do.pace))
	}
	o.listen = do.listen
	o.fromStart = true
	o.flushAfter = scale(500 * time.Millisecond)
	o.log.timezone = "UTC" // demo.WorkerLog writes UTC timestamps
	o.checkInterval = scale(2 * time.Second)
	o.cluster.stallWindow = scale(10 * time.Second)
	o.cluster.timeout = 10 * time.Second
	o.alerts.QuietPeriod = scale(20 * time.Second)
	o.alerts.GroupWait = scale(time.Second)
	o.alerts.GroupInterval = scale(5 * time.Second)
	o.logLevel = do.logLevel
	o.slackWebhookURL, o.slackToken, o.slackChannel = do.slackWebhookURL, do.slackToken, do.slackChannel
	return o, nil
}

func printIntro(n *demo.Narrator, dm *demo.Demo, addr, dir string, do demoOptions, o runOptions) {
	c := dm.Clusters()
	base := "http://" + addr
	notify := "the watchdog log (" + watchdogLogName + ")"
	switch {
	case o.slackWebhookURL != "":
		notify = "Slack (incoming webhook)"
	case o.slackToken != "":
		notify = "Slack channel " + o.slackChannel
	}
	n.Sayf("mm2-watchdog demo: two in-process Kafka clusters, a simulated MirrorMaker 2 between them, and the real watchdog watching.\n"+
		"  source  %-5s %s  topics %s (%d partitions), %s (%d)\n"+
		"  target  %-5s %s  same topics and partitions (IdentityReplicationPolicy); no CreatePartitions, no IncrementalAlterConfigs\n"+
		"  files   %s: connect.log (MM2 worker log), %s (MM2 config), %s\n"+
		"  watch   %s/metrics   %s/api/findings   (check every %s, stall window %s)\n"+
		"  alerts  below as they fire and resolve; notifications go to %s.\n"+
		"          target-lacks-create-partitions fires at once and stays: vast really lacks CreatePartitions.",
		demo.SourceAlias, strings.Join(c.Source.ListenAddrs(), ","), demo.TopicOrders, demo.OrdersPartitions, demo.TopicClicks, demo.ClicksPartitions,
		demo.TargetAlias, strings.Join(c.Target.ListenAddrs(), ","),
		dir, demo.PropertiesName, watchdogLogName,
		base, base, o.checkInterval, o.cluster.stallWindow, notify)
}

// alertWatch turns successive lists of active alerts into narration.
type alertWatch struct {
	narr       *demo.Narrator
	seen       map[string]alerts.Alert // by fingerprint
	fired      int
	resolved   int
	firedRules map[string]bool
}

func (w *alertWatch) poll(active []alerts.Alert) {
	cur := make(map[string]bool, len(active))
	for _, a := range active {
		cur[a.Fingerprint] = true
		prev, ok := w.seen[a.Fingerprint]
		w.seen[a.Fingerprint] = a
		switch {
		case !ok:
			w.fired++
			w.firedRules[a.Rule] = true
			w.narr.Sayf("FIRING    %-8s %s%s\n%s", a.Severity, alertSubject(a), atRisk(a), a.Summary)
		case prev.Severity != a.Severity:
			w.narr.Sayf("ESCALATED %-8s %s (was %s)", a.Severity, alertSubject(a), prev.Severity)
		}
	}
	fps := make([]string, 0, len(w.seen))
	for fp := range w.seen {
		if !cur[fp] {
			fps = append(fps, fp)
		}
	}
	sort.Strings(fps)
	for _, fp := range fps {
		a := w.seen[fp]
		delete(w.seen, fp)
		w.resolved++
		w.narr.Sayf("RESOLVED  %-8s %s after %s%s", a.Severity, alertSubject(a), time.Since(a.StartedAt).Round(time.Second), atRisk(a))
	}
}

// alertSubject is "rule flow/topic [partitions]" for one line of narration.
func alertSubject(a alerts.Alert) string {
	s := a.Rule
	if a.Source != "" {
		s += "  " + a.Source + "->" + a.Target
	} else if a.Cluster != "" {
		s += "  " + a.Cluster
	}
	if a.Topic != "" {
		s += " " + a.Topic
	}
	if len(a.Partitions) > 0 {
		s += fmt.Sprintf(" partitions %v", a.Partitions)
	}
	return s
}

// atRisk is " (N records at risk)" for a finding that counts them, as of
// the latest round seen.
func atRisk(a alerts.Alert) string {
	if v, ok := a.Values["records_at_risk"]; ok {
		if n := fmt.Sprint(v); n != "0" {
			return " (" + n + " records at risk)"
		}
		return " (no records at risk yet)"
	}
	return ""
}

func printSummary(n *demo.Narrator, dm *demo.Demo, w *alertWatch, dir string, kept bool) {
	st := dm.Stats()
	rules := make([]string, 0, len(w.firedRules))
	for r := range w.firedRules {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	stillSet := map[string]bool{}
	for _, a := range w.seen {
		stillSet[a.Rule] = true
	}
	still := make([]string, 0, len(stillSet))
	for r := range stillSet {
		still = append(still, r)
	}
	sort.Strings(still)
	var b strings.Builder
	fmt.Fprintf(&b, "Summary after %s:\n", n.Elapsed().Round(time.Second))
	fmt.Fprintf(&b, "  records: %d produced to kafka, %d mirrored to vast; %d heartbeats, %d checkpoints, %d offset syncs written\n",
		st.Produced, st.MM2.Mirrored, st.MM2.Heartbeats, st.MM2.Checkpoints, st.MM2.OffsetSyncs)
	fmt.Fprintf(&b, "  worker log: %d lines, rolled over %d time(s)\n", st.LogLines, len(st.Rolled))
	fmt.Fprintf(&b, "  alerts: %d fired, %d resolved; rules seen: %s\n", w.fired, w.resolved, orNone(rules))
	fmt.Fprintf(&b, "  still firing: %s", orNone(still))
	if len(still) == 1 && still[0] == "target-lacks-create-partitions" {
		b.WriteString(" (true: vast still has no CreatePartitions)")
	}
	if kept {
		fmt.Fprintf(&b, "\n  files kept in %s", dir)
	}
	n.Sayf("%s", b.String())
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
