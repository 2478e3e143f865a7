package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/mm2-watchdog/mm2-watchdog/detectors/liveness"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/parity"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// clusterFlags are the flags of the cluster checks, shared by run and check.
type clusterFlags struct {
	mm2Config      string
	targetTemplate string
	stallWindow    time.Duration
	timeout        time.Duration
	live           livenessFlags
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.mm2Config, "mm2-config", "", "MM2 properties file (connect-mirror-maker.properties): clusters, flows, topic filters, replication policy, security")
	fs.StringVar(&c.targetTemplate, "target-topic-template", "", "target topic name for a custom replication.policy.class the watchdog does not know, e.g. '{source}.{topic}' or '{topic}'")
	fs.DurationVar(&c.stallWindow, "stall-window", 5*time.Minute, "replication-stalled fires when a source end offset moves for this long while the target end offset does not")
	fs.DurationVar(&c.timeout, "cluster-timeout", 30*time.Second, "time limit of one snapshot of a cluster")
	c.live.register(fs)
}

// loadConfig reads and validates the MM2 properties file.
func (c *clusterFlags) loadConfig(getenv func(string) (string, bool)) (*mm2config.Config, error) {
	cfg, err := mm2config.Load(c.mm2Config, mm2config.Options{LookupEnv: getenv, TargetTopicTemplate: c.targetTemplate})
	if err != nil {
		return nil, err
	}
	if len(cfg.Flows) == 0 {
		return nil, fmt.Errorf("%s: no enabled flow (set A->B.enabled = true for at least one pair of clusters)", c.mm2Config)
	}
	return cfg, nil
}

// clusterRunner owns the Kafka clients of every alias the flows use, takes
// one snapshot of each per round, and hands the round to the parity checker.
type clusterRunner struct {
	cfg      *mm2config.Config
	opts     clusterFlags
	clients  map[string]*cluster.Client
	checker  *parity.Checker
	metrics  *parity.Metrics // nil in check
	duration *prometheus.HistogramVec
	logger   *slog.Logger
	trigger  chan struct{}

	live        *liveness.Checker
	liveMetrics *liveness.Metrics // nil in check

	mu       sync.Mutex
	last     *parity.Result
	lastLive *liveness.Result
}

// newClusterRunner builds (but does not connect) a client per alias used by
// an enabled flow. Errors name the file, line and key (settingError); they
// never hold secrets.
func newClusterRunner(cfg *mm2config.Config, opts clusterFlags, grace func(*mm2config.Flow) time.Duration, logger *slog.Logger) (*clusterRunner, error) {
	r := &clusterRunner{
		cfg:     cfg,
		opts:    opts,
		clients: map[string]*cluster.Client{},
		checker: parity.New(parity.Options{StallWindow: opts.stallWindow, MissingGrace: grace}),
		live:    newLivenessChecker(opts.live, opts.timeout, logger.With("component", "liveness")),
		logger:  logger.With("component", "checks"),
		trigger: make(chan struct{}, 1),
	}
	for _, alias := range usedAliases(cfg) {
		settings, err := cfg.Client(alias)
		if err != nil {
			r.close()
			return nil, err
		}
		ccfg, err := cluster.FromProps(alias, settings.For(mm2config.RoleAdmin))
		if err != nil {
			r.close()
			return nil, settingError(cfg, alias, err)
		}
		cl, err := cluster.New(ccfg, logger)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("%s: %w", cfg.File, err)
		}
		r.clients[alias] = cl
	}
	return r, nil
}

// settingError points an error from cluster.FromProps at the line of the
// file that set the property: "<file>:<line>: key "<key>": <what is
// wrong>", the key being the one that wins for the admin client (see
// mm2config.ClientSettings.For): `<alias>.admin.<k>`, `<alias>.<k>`, then
// the top-level `<k>` that every cluster inherits. A property set nowhere
// (a required one) keeps the file name only.
func settingError(cfg *mm2config.Config, alias string, err error) error {
	var ke *cluster.KeyError
	if !errors.As(err, &ke) {
		return fmt.Errorf("%s: %w", cfg.File, err)
	}
	keys := []string{alias + "." + mm2config.RoleAdmin + "." + ke.Key, alias + "." + ke.Key}
	if ke.Key == "bootstrap.servers" || ke.Key == "security.protocol" || strings.HasPrefix(ke.Key, "ssl.") || strings.HasPrefix(ke.Key, "sasl.") {
		keys = append(keys, ke.Key) // MirrorClientConfig's keys: top-level values are every cluster's defaults
	}
	for _, k := range keys {
		_, line, ok := cfg.Value(k)
		if !ok || line == 0 {
			continue
		}
		if k == ke.Key {
			return fmt.Errorf("%s:%d: key %q (inherited by cluster %q): %w", cfg.File, line, k, alias, ke.Err)
		}
		return fmt.Errorf("%s:%d: key %q: %w", cfg.File, line, k, ke.Err)
	}
	return fmt.Errorf("%s: %w", cfg.File, err)
}

// usedAliases lists the aliases that an enabled flow reads or writes.
func usedAliases(cfg *mm2config.Config) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range cfg.Flows {
		for _, a := range []string{f.Source, f.Target} {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (r *clusterRunner) close() {
	for _, c := range r.clients {
		c.Close()
	}
}

// round snapshots every cluster concurrently and runs the parity checks.
func (r *clusterRunner) round(ctx context.Context) (parity.Round, *parity.Result) {
	start := time.Now()
	round := parity.Round{
		Config:    r.cfg,
		Snapshots: map[string]*cluster.Snapshot{},
		Failures:  map[string]error{},
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for alias, cl := range r.clients {
		g.Go(func() error {
			sctx, cancel := context.WithTimeout(gctx, r.opts.timeout)
			defer cancel()
			t0 := time.Now()
			snap, err := cl.Snapshot(sctx, snapshotOptions(r.cfg, alias))
			r.observe("snapshot", t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				round.Failures[alias] = err
				r.logger.Warn("cluster snapshot failed", "cluster", alias, "err", err)
				return nil
			}
			round.Snapshots[alias] = snap
			return nil
		})
	}
	_ = g.Wait()
	round.Now = time.Now()
	t0 := time.Now()
	res := r.checker.Check(ctx, round, parity.ClientTimer{Clients: r.clients})
	r.observe("parity", t0)
	r.checkLiveness(ctx, round, res)
	r.observe("round", start)
	if r.metrics != nil {
		r.metrics.Publish(round, res)
	}
	r.mu.Lock()
	r.last = res
	r.mu.Unlock()
	return round, res
}

// snapshotOptions says what a round needs of alias: end offsets everywhere
// (the parity checks compare them); log start offsets and the topic configs
// (retention.ms, cleanup.policy) only on the source of an enabled flow,
// where records at risk are counted and their retention judged (parity)
// and the offset-sync lag is summed (liveness). A pure target skips one
// ListOffsets request per leader and every DescribeConfigs request.
func snapshotOptions(cfg *mm2config.Config, alias string) cluster.SnapshotOptions {
	source := false
	for _, f := range cfg.Flows {
		source = source || f.Source == alias
	}
	return cluster.SnapshotOptions{Offsets: true, EndOffsetsOnly: !source, Configs: source}
}

func (r *clusterRunner) observe(check string, since time.Time) {
	if r.duration != nil {
		r.duration.WithLabelValues(check).Observe(time.Since(since).Seconds())
	}
}

// Trigger asks for a round now (when the log says a partition was not
// created); a trigger already pending absorbs this one.
func (r *clusterRunner) Trigger() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

// loop runs a round at start, then every interval and on each trigger, until
// ctx is done. Every round's findings replace the previous ones per scope in
// the alert state; a scope that could not be checked is marked unknown.
func (r *clusterRunner) loop(ctx context.Context, interval time.Duration, sync func(*parity.Result), started func()) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	// Ready once the first check has started (CONTRACT.md): a cluster that
	// accepts connections but never answers must not hold /readyz for the
	// whole --cluster-timeout.
	started()
	for {
		_, res := r.round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		sync(res)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.trigger:
		}
	}
}

// checkDurationMetric is mm2_watchdog_check_duration_seconds{check}.
func checkDurationMetric(reg prometheus.Registerer) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mm2_watchdog_check_duration_seconds",
		Help:    "Duration of the cluster checks: snapshot (one cluster), parity (the comparison), round (everything).",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"check"})
	reg.MustRegister(h)
	return h
}

// checkCommand runs one round of the cluster checks and prints the findings
// and a per-flow parity table.
func checkCommand(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("check", e.stderr, "check --mm2-config FILE [flags]")
	var (
		cf     clusterFlags
		out    reportFlags
		groups bool
	)
	cf.register(fs)
	fs.BoolVar(&groups, "groups", false, "also print the cut-over readiness of every consumer group (text table, or one JSON object per group with \"kind\":\"group\")")
	out.register(fs)
	if err := parseFlags(fs, args, e.getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(e.stderr, "mm2-watchdog check: %v\n", err)
		return exitUsage
	}
	threshold, err := out.validate()
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog check: %v\n", err)
		return exitUsage
	}
	if cf.mm2Config == "" {
		fmt.Fprintln(e.stderr, "mm2-watchdog check: --mm2-config is required")
		return exitUsage
	}
	cfg, err := cf.loadConfig(e.getenv)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog check: %v\n", err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	for _, w := range cfg.Warnings {
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
	r, err := newClusterRunner(cfg, cf, func(*mm2config.Flow) time.Duration { return 0 }, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "mm2-watchdog check: %v\n", err)
		return exitUsage
	}
	defer r.close()
	_, res := r.round(ctx)
	findings := res.All()
	if out.format == "text" {
		writeParityTable(e.stdout, res)
		fmt.Fprintln(e.stdout)
		writeHeartbeatTable(e.stdout, r.lastLiveness())
		fmt.Fprintln(e.stdout)
		if groups {
			writeGroupsTable(e.stdout, r.lastLiveness())
			fmt.Fprintln(e.stdout)
		}
	}
	code := out.print(e, findings, threshold)
	if groups && out.format == "json" {
		if err := writeGroupsJSON(e.stdout, r.lastLiveness()); err != nil {
			fmt.Fprintf(e.stderr, "mm2-watchdog check: writing the groups: %v\n", err)
			return exitUsage
		}
	}
	return code
}

// writeParityTable prints, per flow, one row per mirrored topic.
func writeParityTable(w io.Writer, res *parity.Result) {
	for i, fr := range res.Flows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "flow %s->%s\n", fr.Source, fr.Target)
		if fr.Unknown != "" {
			fmt.Fprintf(w, "  unknown: %s\n", fr.Unknown)
			continue
		}
		if len(fr.Rows) == 0 {
			fmt.Fprintln(w, "  no source topic passes this flow's topic filter")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  SOURCE TOPIC\tTARGET TOPIC\tSOURCE\tTARGET\tMISSING\tRECORDS AT RISK\tSTATUS")
		for _, row := range fr.Rows {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.SourceTopic, row.TargetTopic,
				count(row.SourcePartitions), targetCount(row), partList(row.Missing), count64(row.RecordsAtRisk), statusText(row))
		}
		_ = tw.Flush()
	}
}

func statusText(row parity.TopicRow) string {
	if row.Err != "" {
		return row.Status + " (" + row.Err + ")"
	}
	if len(row.Stalled) > 0 {
		return row.Status + " (stalled " + partList(row.Stalled) + ")"
	}
	return row.Status
}

// targetCount shows the target partitions, "none" when the target topic
// does not exist (never a zero that reads like a count).
func targetCount(row parity.TopicRow) string {
	if row.Status == parity.StatusMissing || row.Status == parity.StatusPending {
		return "none"
	}
	return count(row.TargetPartitions)
}

func count(n int) string {
	if n < 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

func count64(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

func partList(ps []int32) string {
	if len(ps) == 0 {
		return "-"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}
