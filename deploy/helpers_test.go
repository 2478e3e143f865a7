package deploy_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"sigs.k8s.io/yaml"
)

// repoRoot is the module root, seen from this package's directory (go test
// runs a package's tests in its source directory).
const repoRoot = ".."

// requirePromtoolEnv, when set to any non-empty value, turns a missing
// promtool into a test failure instead of a skip. .ci/run sets it.
const requirePromtoolEnv = "REQUIRE_PROMTOOL"

// promtool returns the path of promtool, skipping the test when it is not on
// PATH (failing instead when REQUIRE_PROMTOOL is set).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool is not on PATH; install it (Debian: apt-get install prometheus) to run the Prometheus checks"
		if os.Getenv(requirePromtoolEnv) != "" {
			t.Fatalf("%s, and %s is set", msg, requirePromtoolEnv)
		}
		t.Skip(msg)
	}
	return p
}

// runPromtool runs promtool with args (and stdin, when not nil) and fails the
// test with its output when it exits non-zero.
func runPromtool(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// docSep splits a multi-document YAML file.
var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// readYAMLDocs decodes every non-empty document of a YAML file into generic
// values (maps are map[string]any, through sigs.k8s.io/yaml's JSON view).
func readYAMLDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for i, part := range docSep.Split(string(raw), -1) {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(part), &doc); err != nil {
			t.Fatalf("%s: document %d: %v", path, i+1, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s: no YAML document", path)
	}
	return docs
}

// get walks nested maps and lists: a string key indexes a map, an int a list.
// It returns nil when any step is missing.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		default:
			panic(fmt.Sprintf("get: bad path element %T", p))
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }

func list(v any, path ...any) []any { l, _ := get(v, path...).([]any); return l }

func obj(v any, path ...any) map[string]any { m, _ := get(v, path...).(map[string]any); return m }

// watchdogBuild is the binary built once for the tests that run it.
var watchdogBuild struct {
	once sync.Once
	path string
	err  error
}

// watchdogBinary builds ./cmd/mm2-watchdog once per test process into a
// directory that is removed when the process ends (TestMain).
func watchdogBinary(t *testing.T) string {
	t.Helper()
	watchdogBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "mm2-watchdog-deploy-test-")
		if err != nil {
			watchdogBuild.err = err
			return
		}
		buildDirs = append(buildDirs, dir)
		bin := filepath.Join(dir, "mm2-watchdog")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			goTool = "go"
		}
		cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/mm2-watchdog")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			watchdogBuild.err = fmt.Errorf("go build ./cmd/mm2-watchdog: %v\n%s", err, out)
			return
		}
		watchdogBuild.path = bin
	})
	if watchdogBuild.err != nil {
		t.Fatal(watchdogBuild.err)
	}
	return watchdogBuild.path
}

// buildDirs are removed by TestMain after the tests.
var buildDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range buildDirs {
		_ = os.RemoveAll(d)
	}
	os.Exit(code)
}

// runFlagsCache holds the flags of `mm2-watchdog run`, read once.
var runFlagsCache struct {
	once  sync.Once
	flags map[string]bool
	err   error
}

var usageFlag = regexp.MustCompile(`(?m)^  --([a-z0-9][a-z0-9-]*)`)

// runFlags returns the flags `mm2-watchdog run` defines, read from its -h
// output, which lists every flag of the flag set as "  --name".
func runFlags(t *testing.T) map[string]bool {
	t.Helper()
	bin := watchdogBinary(t)
	runFlagsCache.once.Do(func() {
		out, err := exec.Command(bin, "run", "-h").CombinedOutput()
		if err != nil {
			runFlagsCache.err = fmt.Errorf("mm2-watchdog run -h: %v\n%s", err, out)
			return
		}
		flags := map[string]bool{}
		for _, m := range usageFlag.FindAllStringSubmatch(string(out), -1) {
			flags[m[1]] = true
		}
		for _, must := range []string{"log", "mm2-config", "listen", "slack-webhook-url"} {
			if !flags[must] {
				runFlagsCache.err = fmt.Errorf("mm2-watchdog run -h does not list --%s; the usage format changed?\n%s", must, out)
				return
			}
		}
		runFlagsCache.flags = flags
	})
	if runFlagsCache.err != nil {
		t.Fatal(runFlagsCache.err)
	}
	return runFlagsCache.flags
}

// metricLiteral is a metric name written as a Go string literal.
var metricLiteral = regexp.MustCompile(`"(mm2_watchdog_[a-z0-9_]+)"`)

// knownMetrics returns every metric name the program can expose: the
// mm2_watchdog_* names written as string literals in the module's non-test Go
// sources, the Go and process collectors' names (the collectors run.go
// registers, gathered from a fresh registry), and up, which Prometheus adds
// to every scrape. Histogram names also stand for their _bucket, _sum and
// _count series.
func knownMetrics(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{"up": true}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range metricLiteral.FindAllSubmatch(src, -1) {
			known[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !known["mm2_watchdog_findings_total"] || !known["mm2_watchdog_cluster_up"] {
		t.Fatalf("metric names not found in the Go sources under %s (found %d)", repoRoot, len(known))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		known[mf.GetName()] = true
	}
	for name := range known {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			known[name+suffix] = true
		}
	}
	return known
}

// promqlNames returns the metric names an expression selects. It is a small
// lexer, not a PromQL parser: it drops string literals, label matchers,
// grouping clauses and ranges, then keeps the identifiers that are not
// function names, keywords, numbers, durations or Grafana variables. (promtool
// checks the syntax separately.)
func promqlNames(expr string) []string {
	for _, re := range promqlDrop {
		expr = re.ReplaceAllString(expr, " ")
	}
	seen := map[string]bool{}
	var out []string
	for _, loc := range promqlToken.FindAllStringIndex(expr, -1) {
		tok := expr[loc[0]:loc[1]]
		if tok[0] == '$' || (tok[0] >= '0' && tok[0] <= '9') || tok[0] == '.' || promqlKeywords[strings.ToLower(tok)] {
			continue
		}
		if rest := strings.TrimLeft(expr[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function or an aggregation
		}
		if !seen[tok] {
			seen[tok] = true
			out = append(out, tok)
		}
	}
	sort.Strings(out)
	return out
}

var (
	promqlDrop = []*regexp.Regexp{
		regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`"),
		regexp.MustCompile(`\{[^{}]*\}`),
		regexp.MustCompile(`\[[^\]]*\]`),
		regexp.MustCompile(`(?i)\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
	}
	promqlToken    = regexp.MustCompile(`[$A-Za-z0-9_:.]+`)
	promqlKeywords = map[string]bool{
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"bool": true, "and": true, "or": true, "unless": true, "offset": true, "inf": true, "nan": true, "atan2": true,
	}
)

func TestPromqlNames(t *testing.T) {
	for expr, want := range map[string]string{
		`max by (source, target) (mm2_watchdog_heartbeat_age_seconds{a="b"}) > 300`:          "mm2_watchdog_heartbeat_age_seconds",
		`absent(up{job="x"}) or up{job="x"} == 0`:                                            "up",
		`sum(increase(a_total[15m])) / on(instance) group_left(x) b`:                         "a_total b",
		`histogram_quantile(0.9, sum by (le) (rate(c_bucket{l=~"$v|w"}[$__rate_interval])))`: "c_bucket",
		`time() - max(d) > 1.5e3`: "d",
		`label_replace(e{cluster="$target"}, "topic", "$1", "topic", "$source\\.(.+)") unless ignoring(z) f`: "e f",
	} {
		if got := strings.Join(promqlNames(expr), " "); got != want {
			t.Errorf("promqlNames(%q) = %q, want %q", expr, got, want)
		}
	}
}
