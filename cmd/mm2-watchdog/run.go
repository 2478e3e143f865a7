package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/mm2-watchdog/mm2-watchdog/alerts"
	slacknotify "github.com/mm2-watchdog/mm2-watchdog/alerts/slack"
	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/lint"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/liveness"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/logrules"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/parity"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/follow"
)

// defaultListen is the documented default HTTP address of run.
const defaultListen = ":9464"

// runOptions is everything run needs, parsed and validated.
type runOptions struct {
	logs           []string
	fromStart      bool
	poll           bool
	followEngine   string
	lintMM2Version int
	flushAfter     time.Duration
	maxLine        int
	log            logFlags
	rules          ruleFlags

	listen string

	slackWebhookURL string
	slackToken      string
	slackChannel    string

	alerts alerts.Config

	cluster         clusterFlags
	checkInterval   time.Duration
	maxTopicMetrics int

	logLevel string
}

// registerRunFlags declares run's flags on fs, writing into o.
func registerRunFlags(fs *flag.FlagSet, o *runOptions) (webhookFile, tokenFile *string) {
	fs.Var((*stringList)(&o.logs), "log", "MM2 worker log to follow, by name through rotation (repeatable; globs; a path that does not exist yet is waited for)")
	fs.BoolVar(&o.fromStart, "from-start", false, "read followed logs from the beginning instead of the end (replays history)")
	fs.BoolVar(&o.poll, "poll", false, "poll files for changes instead of inotify (for NFS or overlay filesystems)")
	fs.StringVar(&o.followEngine, "follow-engine", follow.EngineNative, "how logs are followed: native (drains renamed files, bounded memory, never exits the process) or tail (github.com/nxadm/tail; may lose lines at rotation)")
	fs.IntVar(&o.lintMM2Version, "mm2-version", 4, "major MM2 version the MM2 config is linted for at start (3 or 4)")
	fs.DurationVar(&o.flushAfter, "flush-after", 2*time.Second, "hand over a pending multi-line record after this quiet time")
	fs.IntVar(&o.maxLine, "max-line-bytes", 64<<10, "longest log line kept, in bytes; the rest of a longer line is dropped and counted in mm2_watchdog_log_truncated_lines_total")
	o.log.register(fs)
	o.rules.register(fs)
	fs.StringVar(&o.listen, "listen", defaultListen, "HTTP address for /metrics, /healthz, /readyz, /api/findings and /api/groups")
	fs.StringVar(&o.slackWebhookURL, "slack-webhook-url", "", "Slack incoming webhook URL (secret)")
	webhookFile = fs.String("slack-webhook-url-file", "", "file holding the Slack incoming webhook URL")
	fs.StringVar(&o.slackToken, "slack-token", "", "Slack bot token xoxb-… (secret); needs --slack-channel")
	tokenFile = fs.String("slack-token-file", "", "file holding the Slack bot token")
	fs.StringVar(&o.slackChannel, "slack-channel", "", "Slack channel for the bot token, e.g. #mm2-alerts or C0123456")
	fs.DurationVar(&o.alerts.QuietPeriod, "quiet-period", 30*time.Minute, "a log finding not seen again for this long resolves")
	fs.DurationVar(&o.alerts.RepeatInterval, "repeat-interval", 4*time.Hour, "repeat a still-firing critical alert after this long")
	fs.DurationVar(&o.alerts.GroupWait, "group-wait", 10*time.Second, "wait this long to group alerts that fire together into one message")
	fs.DurationVar(&o.alerts.GroupInterval, "group-interval", 5*time.Minute, "minimum time between messages about the same group")
	fs.IntVar(&o.alerts.QueueSize, "notification-queue-size", 1000, "notifications kept while Slack is unreachable; older ones are dropped past this (counted in a metric)")
	o.cluster.register(fs)
	fs.DurationVar(&o.checkInterval, "check-interval", 30*time.Second, "how often the cluster checks run")
	fs.IntVar(&o.maxTopicMetrics, "max-topic-metrics", parity.DefaultMaxTopicSeries, "source topics per flow that get per-topic metrics (topics with a problem first, then by name; 0 = no limit); the rest are counted in mm2_watchdog_topic_series_dropped")
	fs.StringVar(&o.logLevel, "log-level", "info", "the watchdog's own log level: debug, info, warn, error")
	return webhookFile, tokenFile
}

func runCommand(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("run", e.stderr, "run --log PATH [--mm2-config FILE] [flags]")
	var o runOptions
	webhookFile, tokenFile := registerRunFlags(fs, &o)
	if err := parseFlags(fs, args, e.getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(e.stderr, "mm2-watchdog run: %v\n", alerts.Redact(err.Error()))
		return exitUsage
	}
	if err := o.loadSecrets(*webhookFile, *tokenFile); err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog run: %v\n", alerts.Redact(err.Error()))
		return exitUsage
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog run: %v\n", err)
		return exitUsage
	}
	if len(o.logs) == 0 && o.cluster.mm2Config == "" {
		fmt.Fprintln(e.stderr, "mm2-watchdog run: nothing to watch: give --log and/or --mm2-config")
		return exitUsage
	}
	logger, err := newLogger(e.stderr, o.logLevel)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog run: %v\n", err)
		return exitUsage
	}
	d, err := newDaemon(o, e.getenv, logger, prometheus.NewRegistry())
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog run: %v\n", alerts.Redact(err.Error()))
		return exitUsage
	}
	if err := d.run(ctx); err != nil {
		logger.Error("stopped on error", "err", alerts.Redact(err.Error()))
		return exitFindings
	}
	return exitOK
}

// validate checks the options that flag parsing cannot: the listen address,
// the follower engine and the MM2 version.
func (o *runOptions) validate() error {
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (want host:port or :port)", o.listen, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("--listen %q: port %q is not a number from 0 to 65535", o.listen, port)
	}
	if host != "" && net.ParseIP(host) == nil && strings.ContainsAny(host, " /") {
		return fmt.Errorf("--listen %q: bad host %q", o.listen, host)
	}
	if o.followEngine != follow.EngineNative && o.followEngine != follow.EngineTail {
		return fmt.Errorf("--follow-engine %q: want %s or %s", o.followEngine, follow.EngineNative, follow.EngineTail)
	}
	if o.lintMM2Version != 3 && o.lintMM2Version != 4 {
		return fmt.Errorf("--mm2-version %d: want 3 or 4", o.lintMM2Version)
	}
	return nil
}

// loadSecrets reads --slack-*-file flags and checks that one Slack
// destination is complete.
func (o *runOptions) loadSecrets(webhookFile, tokenFile string) error {
	if webhookFile != "" {
		v, err := alerts.LoadSecret(webhookFile)
		if err != nil {
			return fmt.Errorf("--slack-webhook-url-file: %w", err)
		}
		o.slackWebhookURL = v
	}
	if tokenFile != "" {
		v, err := alerts.LoadSecret(tokenFile)
		if err != nil {
			return fmt.Errorf("--slack-token-file: %w", err)
		}
		o.slackToken = v
	}
	if o.slackWebhookURL != "" && o.slackToken != "" {
		return errors.New("give either --slack-webhook-url or --slack-token, not both")
	}
	if o.slackToken != "" && o.slackChannel == "" {
		return errors.New("--slack-token needs --slack-channel")
	}
	return nil
}

func newLogger(w interface{ Write([]byte) (int, error) }, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: readableDurations})), nil
}

// readableDurations writes durations as "1.5s" rather than nanoseconds.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// daemon is the wired program of run: followers → log rules → alert state →
// notifiers, plus the HTTP server. Tests build one with newDaemon and call
// run in-process.
type daemon struct {
	opts     runOptions
	logger   *slog.Logger
	reg      *prometheus.Registry
	state    *alerts.State
	dispatch *alerts.Dispatcher
	follow   *follow.Metrics
	checks   *clusterRunner      // nil without --mm2-config
	lint     []detectors.Finding // lint findings of the MM2 config, reported at start
	ready    readiness
	addr     chan string // receives the bound HTTP address once listening
}

func newDaemon(o runOptions, getenv func(string) (string, bool), logger *slog.Logger, reg *prometheus.Registry) (*daemon, error) {
	popts, err := o.log.options(logger.With("component", "logparse"))
	if err != nil {
		return nil, err
	}
	o.log = logFlags{pattern: popts.Pattern, layout: popts.Layout, timezone: o.log.timezone}

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	am := alerts.NewMetrics(reg, ruleSeverities())
	ver, rev, gov := buildVersion()
	am.SetBuildInfo(ver, gov, rev)

	notifier, err := newNotifier(o, logger)
	if err != nil {
		return nil, err
	}
	var checks *clusterRunner
	var lintFindings []detectors.Finding
	if o.cluster.mm2Config != "" {
		cfg, err := o.cluster.loadConfig(getenv)
		if err != nil {
			return nil, err
		}
		for _, w := range cfg.Warnings {
			logger.Warn("MM2 config", "warning", w.String())
		}
		// Lint once at start with the default profile (every flow target
		// limited unless the file says otherwise); warnings and criticals
		// become alerts like any other finding.
		for _, f := range lint.Check(cfg, lint.Options{MM2Version: o.lintMM2Version}) {
			if f.Severity.Rank() >= detectors.Warning.Rank() {
				lintFindings = append(lintFindings, f)
			}
		}
		if checks, err = newClusterRunner(cfg, o.cluster, nil, logger); err != nil {
			return nil, err
		}
		checks.metrics = parity.NewMetrics(reg, parity.WithMaxTopicSeries(o.maxTopicMetrics))
		checks.liveMetrics = liveness.NewMetrics(reg, o.cluster.live.maxGroups)
		checks.duration = checkDurationMetric(reg)
	}
	disp := alerts.NewDispatcher(notifier, am, o.alerts, logger.With("component", "notify"))
	d := &daemon{
		checks:   checks,
		lint:     lintFindings,
		opts:     o,
		logger:   logger,
		reg:      reg,
		dispatch: disp,
		state:    alerts.NewState(o.alerts, disp, am, time.Now),
		follow:   follow.NewMetrics(reg),
		addr:     make(chan string, 1),
	}
	return d, nil
}

// ruleSeverities lists every rule with the severities it can fire at, so the
// findings_total and alerts_firing series exist at 0 from the start.
func ruleSeverities() []alerts.RuleSeverity {
	var out []alerts.RuleSeverity
	for _, r := range logrules.Rules() {
		out = append(out, alerts.RuleSeverity{Rule: r.ID, Severity: r.Severity})
	}
	for _, r := range lint.Rules() {
		for _, sev := range []detectors.Severity{detectors.Critical, detectors.Warning} {
			if sev == r.Severity || strings.Contains(r.Severities, string(sev)) {
				out = append(out, alerts.RuleSeverity{Rule: r.ID, Severity: sev})
			}
		}
	}
	for _, r := range parity.Rules() {
		out = append(out, alerts.RuleSeverity{Rule: r.ID, Severity: r.Severity})
	}
	for _, r := range liveness.Rules() {
		out = append(out, alerts.RuleSeverity{Rule: r.ID, Severity: r.Severity})
	}
	return out
}

// newNotifier picks Slack (webhook or bot) or the process log.
func newNotifier(o runOptions, logger *slog.Logger) (alerts.Notifier, error) {
	switch {
	case o.slackWebhookURL != "":
		hc := &http.Client{Timeout: 15 * time.Second}
		n, err := slacknotify.NewWebhook(o.slackWebhookURL, hc, logger.With("component", "slack"))
		if err != nil {
			return nil, err
		}
		return n, nil
	case o.slackToken != "":
		n, err := slacknotify.NewBot(o.slackToken, o.slackChannel)
		if err != nil {
			return nil, err
		}
		return n, nil
	}
	return alerts.NewLogNotifier(logger.With("component", "notify")), nil
}

// run runs every stage until ctx is cancelled, then shuts down in order:
// followers flush their last records, the rules drain, the alert state hands
// its pending notifications to the dispatcher, which sends them, and the HTTP
// server stops last.
func (d *daemon) run(ctx context.Context) error {
	if d.checks != nil {
		defer d.checks.close() // on every return, early errors included
	}
	ln, err := net.Listen("tcp", d.opts.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", d.opts.listen, err)
	}
	d.addr <- ln.Addr().String()
	d.logger.Info("mm2-watchdog started", "listen", ln.Addr().String(), "logs", d.opts.logs, "mm2_config", d.opts.cluster.mm2Config)

	srv := &http.Server{
		Handler:           d.handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	// Notifications outlive the pipeline: they are flushed after the last
	// finding has been handed over, so dispatch gets its own context.
	dispatchCtx, stopDispatch := context.WithCancel(context.WithoutCancel(ctx))
	dispatchDone := make(chan error, 1)
	go func() { dispatchDone <- d.dispatch.Run(dispatchCtx) }()

	d.state.Sync("lint", d.lint)
	g, gctx := errgroup.WithContext(ctx)
	records := make(chan *watcher.Record, 1024)
	if len(d.opts.logs) > 0 {
		popts, _ := d.opts.log.options(d.logger.With("component", "logparse"))
		popts.MaxLineBytes = d.opts.maxLine
		fopts := follow.Options{
			Globs:        d.opts.logs,
			FromStart:    d.opts.fromStart,
			Poll:         d.opts.poll,
			FlushAfter:   d.opts.flushAfter,
			Engine:       d.opts.followEngine,
			MaxLineBytes: d.opts.maxLine,
			Parse:        popts,
			Logger:       d.logger, // follow names itself
			Metrics:      d.follow,
		}
		f, err := follow.New(fopts)
		if err != nil {
			stopDispatch()
			<-dispatchDone
			_ = srv.Close()
			return err
		}
		g.Go(func() error {
			select {
			case <-f.Ready():
				d.ready.set("logs")
			case <-gctx.Done():
			}
			return nil
		})
		g.Go(func() error {
			defer close(records)
			return f.Run(gctx, records)
		})
	} else {
		close(records)
	}
	ropts := d.opts.rules.options()
	if d.checks != nil {
		ropts.Flows = flowNames(d.checks.cfg)
	}
	engine := logrules.New(ropts)
	g.Go(func() error {
		for rec := range records {
			for _, f := range engine.Observe(rec) {
				d.state.Observe(f)
				if d.checks != nil && !f.Recovered && (f.Rule == "partitions-not-created" || f.Rule == "partition-not-in-metadata") {
					d.checks.Trigger()
				}
			}
		}
		return nil
	})
	if d.checks != nil {
		g.Go(func() error {
			return d.checks.loop(gctx, d.opts.checkInterval, d.syncChecks, func() { d.ready.set("checks") })
		})
	} else {
		d.ready.set("checks")
	}
	g.Go(func() error {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-gctx.Done():
				return nil
			case <-t.C:
				d.state.Tick()
			}
		}
	})
	runErr := g.Wait()
	if errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	d.state.Tick()
	stopDispatch()
	if err := <-dispatchDone; err != nil && !errors.Is(err, context.Canceled) {
		d.logger.Warn("flushing notifications at shutdown", "err", alerts.Redact(err.Error()))
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) && runErr == nil {
		runErr = fmt.Errorf("http server: %w", err)
	}
	d.logger.Info("mm2-watchdog stopped")
	return runErr
}

// handler serves /metrics, /healthz, /readyz, /api/findings and /api/groups.
func (d *daemon) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{Registry: d.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if missing := d.ready.missing(d.opts); len(missing) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: waiting for %s\n", strings.Join(missing, ", "))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("GET /api/groups", d.serveGroups)
	mux.HandleFunc("GET /api/findings", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		active := d.state.Active()
		out := make([]any, 0, len(active))
		for _, a := range active {
			out = append(out, a)
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(out)
	})
	return mux
}

// readiness records which parts of the daemon have started.
type readiness struct {
	mu      sync.Mutex
	started map[string]bool
}

func (r *readiness) set(part string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started == nil {
		r.started = map[string]bool{}
	}
	r.started[part] = true
}

// missing lists the configured parts that have not started yet.
func (r *readiness) missing(o runOptions) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	if len(o.logs) > 0 && !r.started["logs"] {
		out = append(out, "log followers")
	}
	if o.cluster.mm2Config != "" && !r.started["checks"] {
		out = append(out, "first cluster check")
	}
	return out
}

// syncChecks hands one round's findings to the alert state, scope by scope.
func (d *daemon) syncChecks(res *parity.Result) {
	for scope, fs := range res.Findings {
		d.state.Sync(scope, fs)
	}
	for _, scope := range res.Unknown {
		d.state.SyncUnknown(scope)
	}
}
