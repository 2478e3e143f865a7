package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/lint"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// lintCommand checks an MM2 properties file against the limits of the
// clusters it writes to (package detectors/lint); with --probe it asks every
// cluster's ApiVersions and topics first.
func lintCommand(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("lint", e.stderr, "lint [flags] MM2_PROPERTIES")
	var (
		limited, kafka stringList
		probe          bool
		probeTimeout   time.Duration
		mm2Version     string
		mm2Config      string
		out            reportFlags
		debug          bool
	)
	fs.Var(&limited, "limited", "cluster alias to check as a limited Kafka-compatible broker (no CreatePartitions, IncrementalAlterConfigs, idempotence, ACLs, compression); repeatable; aliases not named are then full Kafka")
	fs.Var(&kafka, "kafka", "cluster alias to check as a full Apache Kafka cluster; repeatable")
	fs.BoolVar(&probe, "probe", false, "connect to every cluster of the file, decide its limits from ApiVersions and compare the topics to mirror (lint-precreate)")
	fs.DurationVar(&probeTimeout, "probe-timeout", 30*time.Second, "how long --probe may take per cluster")
	fs.StringVar(&mm2Version, "mm2-version", "4", "version of the MirrorMaker 2 that will run the file: 3 (3.x) or 4 (4.x); decides lint-config-sync's severity")
	fs.StringVar(&mm2Config, "mm2-config", "", "MM2 properties file, when not given as the argument")
	out.register(fs)
	fs.BoolVar(&debug, "debug", false, "log the probe's client activity to stderr")
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "mm2-watchdog lint: %v\n", err)
		return exitUsage
	}
	if err := parseFlags(fs, args, e.getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return fail(err)
	}
	threshold, err := out.validate()
	if err != nil {
		return fail(err)
	}
	major, err := parseMM2Version(mm2Version)
	if err != nil {
		return fail(err)
	}
	path := mm2Config
	switch fs.NArg() {
	case 0:
	case 1:
		path = fs.Arg(0)
	default:
		return fail(fmt.Errorf("one MM2 properties file expected, got %d arguments", fs.NArg()))
	}
	if path == "" {
		fmt.Fprintln(e.stderr, "mm2-watchdog lint: no input: give the MM2 properties file")
		fs.Usage()
		return exitUsage
	}
	for _, a := range limited {
		if slices.Contains(kafka, a) {
			return fail(fmt.Errorf("alias %q is given both as --limited and --kafka", a))
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(fmt.Errorf("reading MM2 properties %q: %w", path, err))
	}
	cfg, findings := lint.Parse(path, data, mm2config.Options{LookupEnv: e.getenv})
	if cfg != nil {
		opts := lint.Options{MM2Version: major, Limits: map[string]lint.Limits{}, OthersFull: len(limited) > 0}
		for _, group := range []struct {
			aliases stringList
			flag    string
			limits  func(string) lint.Limits
		}{{limited, "--limited", lint.LimitedBroker}, {kafka, "--kafka", lint.FullKafka}} {
			for _, a := range group.aliases {
				if !slices.Contains(cfg.Clusters, a) {
					return fail(fmt.Errorf("%s %q: not a cluster alias of %s (clusters: %s)", group.flag, a, path, strings.Join(cfg.Clusters, ", ")))
				}
				opts.Limits[a] = group.limits(group.flag)
			}
		}
		if probe {
			level := slog.LevelWarn
			if debug {
				level = slog.LevelDebug
			}
			logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
			var failed []detectors.Finding
			opts.Snapshots, failed = probeClusters(ctx, cfg, lint.ProbeConfigNames(opts), probeTimeout, logger)
			findings = append(findings, failed...)
		}
		findings = append(findings, lint.Check(cfg, opts)...)
	}
	code := out.print(e, findings, threshold)
	if out.format == "text" {
		n := 0
		for i := range findings {
			if findings[i].Severity.Rank() >= detectors.Warning.Rank() {
				n++
			}
		}
		fmt.Fprintf(e.stderr, "linted %s: %d warning or critical finding(s)\n", path, n)
	}
	return code
}

// parseMM2Version reads "3", "3.9", "4", "4.1.0", ... and returns the major
// version, 3 or 4.
func parseMM2Version(v string) (int, error) {
	head, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 3 || n > 4 {
		return 0, fmt.Errorf("--mm2-version %q: want 3 or 4", v)
	}
	return n, nil
}

// probeClusters snapshots every cluster a herder uses: ApiVersions, topics
// and the topic configs lint-precreate compares. A cluster that cannot be
// probed yields a lint-probe-failed finding and no snapshot, so the lint
// falls back to the flags or the profile for it.
func probeClusters(ctx context.Context, cfg *mm2config.Config, configNames []string, timeout time.Duration, logger *slog.Logger) (map[string]*cluster.Snapshot, []detectors.Finding) {
	used := map[string]bool{}
	for _, h := range cfg.Herders {
		used[h.Source], used[h.Target] = true, true
	}
	snaps := map[string]*cluster.Snapshot{}
	var failed []detectors.Finding
	for _, alias := range cfg.Clusters {
		if !used[alias] {
			continue
		}
		snap, err := probeCluster(ctx, cfg, alias, configNames, timeout, logger)
		if err != nil {
			failed = append(failed, detectors.Finding{Rule: lint.RuleProbeFailed, Severity: detectors.Warning, Cluster: alias,
				Summary: fmt.Sprintf("Could not probe cluster %s: %v", alias, err),
				Hint:    "Check its bootstrap.servers and security settings; the lint used the flags or the profile for it."})
			continue
		}
		snaps[alias] = snap
	}
	return snaps, failed
}

func probeCluster(ctx context.Context, cfg *mm2config.Config, alias string, configNames []string, timeout time.Duration, logger *slog.Logger) (*cluster.Snapshot, error) {
	cs, err := cfg.Client(alias)
	if err != nil {
		return nil, err
	}
	ccfg, err := cluster.FromProps(alias, cs.For(mm2config.RoleAdmin))
	if err != nil {
		return nil, settingError(cfg, alias, err) // file:line: key "…": …
	}
	ccfg.APITimeout = timeout
	cl, err := cluster.New(ccfg, logger)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return cl.Snapshot(ctx, cluster.SnapshotOptions{Configs: true, ConfigNames: configNames})
}
