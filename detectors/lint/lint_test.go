package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

func noEnv(string) (string, bool) { return "", false }

// lintFile parses and checks a fixture the way the lint command does.
func lintFile(t *testing.T, path string, opts Options) []detectors.Finding {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, fs := Parse(path, data, mm2config.Options{LookupEnv: noEnv})
	return append(fs, Check(cfg, opts)...)
}

func fixture(name string) string { return filepath.Join("..", "..", "testdata", "lint", name) }

// atLeastWarning drops info findings.
func atLeastWarning(fs []detectors.Finding) []detectors.Finding {
	var out []detectors.Finding
	for _, f := range fs {
		if f.Severity.Rank() >= detectors.Warning.Rank() {
			out = append(out, f)
		}
	}
	return out
}

// want is one expected finding: rule, severity, the property and its line
// (0: not in the file), and the value to set.
type want struct {
	rule string
	sev  detectors.Severity
	key  string
	line int
	fix  string
}

func (w want) matches(f detectors.Finding) bool {
	if f.Rule != w.rule || f.Severity != w.sev || f.Values["key"] != w.key {
		return false
	}
	if w.fix != "" && f.Values["want"] != w.fix {
		return false
	}
	if w.line == 0 {
		_, has := f.Values["line"]
		return !has
	}
	return f.Values["line"] == w.line && f.Evidence != nil && f.Evidence.Line == int64(w.line) &&
		strings.HasPrefix(f.Evidence.Text, w.key+" = ") && f.Evidence.File != ""
}

func describe(fs []detectors.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %s %s", f.Severity, f.Rule, f.Summary)
		for _, k := range slices.Sorted(maps.Keys(f.Values)) {
			fmt.Fprintf(&b, " %s=%v", k, f.Values[k])
		}
	}
	return b.String()
}

// assertExactly checks that the warning and critical findings are exactly
// wants, in any order.
func assertExactly(t *testing.T, fs []detectors.Finding, wants ...want) {
	t.Helper()
	got := atLeastWarning(fs)
	used := make([]bool, len(got))
	for _, w := range wants {
		found := false
		for i, f := range got {
			if !used[i] && w.matches(f) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing %+v; got:%s", w, describe(got))
		}
	}
	for i, f := range got {
		if !used[i] {
			t.Errorf("unexpected finding: %s", describe([]detectors.Finding{f}))
		}
	}
}

func TestShippedExamplesAreClean(t *testing.T) {
	for _, name := range []string{"kafka-to-limited.properties", "limited-to-kafka.properties"} {
		path := filepath.Join("..", "..", "testdata", "mm2", name)
		for _, opts := range []Options{{}, {Limits: map[string]Limits{"vast": LimitedBroker("test")}, OthersFull: true}, {MM2Version: 3}} {
			fs := lintFile(t, path, opts)
			if bad := atLeastWarning(fs); len(bad) > 0 {
				t.Errorf("%s %+v: want no warning or critical, got:%s", name, opts, describe(bad))
			}
			if !slices.ContainsFunc(fs, func(f detectors.Finding) bool {
				return f.Rule == RuleLimits && f.Cluster == "vast" && f.Values["limited"] == true
			}) {
				t.Errorf("%s: vast not reported as limited:%s", name, describe(fs))
			}
		}
	}
}

func TestOneMistakePerFixture(t *testing.T) {
	for _, tc := range []struct {
		file  string
		opts  Options
		wants []want
	}{
		{"idempotence-on.properties", Options{}, []want{{RuleIdempotence, detectors.Critical, "vast.producer.enable.idempotence", 8, "false"}}},
		{"compression-lz4.properties", Options{}, []want{{RuleCompression, detectors.Critical, "vast.producer.compression.type", 9, "none"}}},
		{"exactly-once.properties", Options{}, []want{{RuleExactlyOnce, detectors.Critical, "vast.exactly.once.source.support", 12, "disabled"}}},
		{"acl-sync-on.properties", Options{}, []want{{RuleACLSync, detectors.Warning, "sync.topic.acls.enabled", 10, "false"}}},
		{"config-sync-on.properties", Options{}, []want{{RuleConfigSync, detectors.Critical, "kafka->vast.sync.topic.configs.enabled", 12, "false"}}},
		{"config-sync-on.properties", Options{MM2Version: 3}, []want{{RuleConfigSync, detectors.Warning, "kafka->vast.sync.topic.configs.enabled", 12, "false"}}},
		{"identity-both-ways.properties", Options{}, []want{{RuleIdentityLoop, detectors.Critical, "replication.policy.class", 5, ""}}},
		{"identity-disjoint.properties", Options{}, nil},
		{"offset-syncs-on-limited.properties", Options{}, []want{{RuleOffsetSyncsLocation, detectors.Warning, "offset-syncs.topic.location", 0, "target"}}},
		{"missing-bootstrap.properties", Options{}, []want{
			{RuleMissingBootstrap, detectors.Critical, "vast.bootstrap.servers", 0, ""},
			{RuleUnknownKey, detectors.Warning, "vst.bootstrap.servers", 4, "vast.bootstrap.servers"},
		}},
		{"bad-regex.properties", Options{}, []want{
			{RuleSyntax, detectors.Critical, "kafka->vast.topics", 6, ""},
			// The rest of the file is still linted.
			{RuleIdempotence, detectors.Critical, "vast.producer.enable.idempotence", 7, "false"},
		}},
		{"unknown-keys.properties", Options{}, []want{
			{RuleUnknownKey, detectors.Warning, "kafak->vast.enabled", 6, "kafka->vast.enabled"},
			{RuleUnknownKey, detectors.Warning, "kafka->vast.topic", 7, "kafka->vast.topics"},
			{RuleUnknownKey, detectors.Warning, "vast.producer.enable.idempotance", 8, "vast.producer.enable.idempotence"},
			{RuleUnknownKey, detectors.Warning, "producer.compression.type", 11, "<alias>.producer.compression.type"},
			{RuleUnknownKey, detectors.Warning, "offset.flush.interval.ms", 14, "<alias>.offset.flush.interval.ms"},
			{RuleUnknownKey, detectors.Warning, "vast.sync.topic.acls.enabled", 15, "sync.topic.acls.enabled"},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fs := lintFile(t, fixture(tc.file), tc.opts)
			assertExactly(t, fs, tc.wants...)
		})
	}
}

func TestAllMistakes(t *testing.T) {
	fs := lintFile(t, fixture("all-mistakes.properties"), Options{Limits: map[string]Limits{"vast": LimitedBroker("test")}, OthersFull: true})
	assertExactly(t, fs,
		want{RuleIdempotence, detectors.Critical, "vast.producer.enable.idempotence", 9, "false"},
		// vast->kafka keeps offset-syncs on vast, written idempotently.
		want{RuleIdempotence, detectors.Critical, "vast.producer.enable.idempotence", 9, "false"},
		want{RuleCompression, detectors.Critical, "vast.producer.compression.type", 10, "none"},
		want{RuleExactlyOnce, detectors.Critical, "vast.exactly.once.source.support", 11, "disabled"},
		want{RuleACLSync, detectors.Warning, "sync.topic.acls.enabled", 0, "false"},
		want{RuleConfigSync, detectors.Critical, "sync.topic.configs.enabled", 0, "false"},
		want{RuleIdentityLoop, detectors.Critical, "replication.policy.class", 8, ""},
		want{RuleOffsetSyncsLocation, detectors.Warning, "offset-syncs.topic.location", 0, "target"},
	)
	// The offset-syncs producer finding names the topic, so it is a
	// different condition from the data producers'.
	ids := map[string]bool{}
	for _, f := range fs {
		if ids[f.Identity()] {
			t.Errorf("two findings with identity %q", f.Identity())
		}
		ids[f.Identity()] = true
	}

	// Without flags (strict profile) both clusters are flow targets, so
	// both are limited; the rules fire for both directions.
	strict := atLeastWarning(lintFile(t, fixture("all-mistakes.properties"), Options{}))
	for _, rule := range []string{RuleACLSync, RuleConfigSync} {
		n := 0
		for _, f := range strict {
			if f.Rule == rule {
				n++
			}
		}
		if n != 2 {
			t.Errorf("strict profile: %s %d times, want 2 (one per direction):%s", rule, n, describe(strict))
		}
	}
}

func TestConfigSyncVersions(t *testing.T) {
	cases := []struct {
		extra   string
		version int
		sev     detectors.Severity
	}{
		{"", 0, detectors.Critical},
		{"", 4, detectors.Critical},
		{"", 3, detectors.Warning},
		{"use.incremental.alter.configs = required\n", 3, detectors.Critical},
		{"use.incremental.alter.configs = never\n", 3, detectors.Warning},
	}
	for _, tc := range cases {
		data := "clusters = kafka, vast\nkafka.bootstrap.servers = k:9092\nvast.bootstrap.servers = v:9092\nkafka->vast.enabled = true\n" + tc.extra
		cfg, fs := Parse("mm2.properties", []byte(data), mm2config.Options{LookupEnv: noEnv})
		if cfg == nil {
			t.Fatalf("parse: %s", describe(fs))
		}
		fs = Check(cfg, Options{MM2Version: tc.version})
		i := slices.IndexFunc(fs, func(f detectors.Finding) bool { return f.Rule == RuleConfigSync })
		if i < 0 || fs[i].Severity != tc.sev {
			t.Errorf("%q v%d: want %s lint-config-sync:%s", tc.extra, tc.version, tc.sev, describe(fs))
		}
	}
}

func TestParseUnrecoverable(t *testing.T) {
	cfg, fs := Parse("mm2.properties", []byte("kafka.bootstrap.servers = k:9092\n"), mm2config.Options{LookupEnv: noEnv})
	if cfg != nil {
		t.Fatal("want no config without clusters")
	}
	if len(fs) != 1 || fs[0].Rule != RuleSyntax || fs[0].Severity != detectors.Critical || fs[0].Values["key"] != "clusters" {
		t.Fatalf("got:%s", describe(fs))
	}
	if Check(nil, Options{}) != nil {
		t.Fatal("Check(nil) returned findings")
	}
}

func TestParseRecoversContinuedAndBooleanLines(t *testing.T) {
	data := "clusters = kafka, vast\nkafka.bootstrap.servers = k:9092\nvast.bootstrap.servers = v:9092\n" +
		"kafka->vast.enabled = true\nkafka->vast.topics = a, \\\n  (b\nsync.topic.acls.enabled = yes\nvast.producer.compression.type = gzip\n"
	cfg, fs := Parse("mm2.properties", []byte(data), mm2config.Options{LookupEnv: noEnv})
	if cfg == nil {
		t.Fatalf("not recovered:%s", describe(fs))
	}
	var lines []int
	for _, f := range fs {
		if f.Rule == RuleSyntax {
			lines = append(lines, f.Values["line"].(int))
		}
	}
	slices.Sort(lines)
	if !slices.Equal(lines, []int{5, 7}) {
		t.Errorf("syntax findings on lines %v, want [5 7]:%s", lines, describe(fs))
	}
	// Line numbers after the blanked lines still match the file.
	fs = Check(cfg, Options{})
	i := slices.IndexFunc(fs, func(f detectors.Finding) bool { return f.Rule == RuleCompression })
	if i < 0 || fs[i].Values["line"] != 8 {
		t.Errorf("compression finding not on line 8:%s", describe(fs))
	}
	// The broken filter matches nothing after recovery.
	if cfg.Flows[0].ShouldReplicateTopic("a") {
		t.Error("a broken topics list must match nothing")
	}
}

func TestSampleFor(t *testing.T) {
	for re, want := range map[string]string{
		`orders`:         "orders",
		`orders.*`:       "ordersa",
		`pay\.[a-z]+`:    "pay.a",
		`audit-\d{2}`:    "audit-0",
		`.*`:             "",
		`(a|b)`:          "",
		`[^x]+`:          "",
		`^clicks$`:       "clicks",
		`x\Q.\E`:         "",
		`metrics-[0-9]?`: "metrics-0",
	} {
		if got := sampleFor(re); got != want {
			t.Errorf("sampleFor(%q) = %q, want %q", re, got, want)
		}
	}
}

func TestNearest(t *testing.T) {
	if got := nearest("topic", connectorNames, 3); got != "topics" {
		t.Errorf("nearest(topic) = %q", got)
	}
	if got := nearest("topics", connectorNames, 3); got != "" {
		t.Errorf("an exact name must not get a suggestion, got %q", got)
	}
	if got := nearest("bootstrap.servers", connectorNames, 3); got != "" {
		t.Errorf("far names must not get a suggestion, got %q", got)
	}
}

func TestRulesDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if !strings.HasPrefix(r.ID, "lint-") || r.Summary == "" || r.Why == "" || r.Fix == "" || r.Severity.Rank() == 0 {
			t.Errorf("incomplete rule %+v", r)
		}
		if seen[r.ID] {
			t.Errorf("duplicate rule %s", r.ID)
		}
		seen[r.ID] = true
	}
}

func TestUnknownKeysLeaveClientKeysAlone(t *testing.T) {
	fs := lintFile(t, fixture("unknown-keys.properties"), Options{})
	for _, f := range fs {
		switch f.Values["key"] {
		case "vast.producer.linger.ms", "vast.consumer.max.poll.records", "vast.offset.flush.interval.ms", "kafka.ssl.endpoint.identification.algorithm":
			t.Errorf("valid client or worker key flagged: %s", describe([]detectors.Finding{f}))
		}
	}
}

func TestNoSecretInFindings(t *testing.T) {
	const canary = "hunter2-canary"
	data := "clusters = kafka, vast\nkafka.bootstrap.servers = k:9092\nvast.bootstrap.servers = v:9092\nkafka->vast.enabled = true\n" +
		"kafak.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"" + canary + "\";\n" +
		"kafak.ssl.truststore.passwrd = " + canary + "\n" +
		"vast.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"" + canary + "\";\n" +
		"vast.sasl.jaas.config = again " + canary + "\n" +
		"kafka->vast.sasl.secret.enabled = " + canary + "\n"
	cfg, fs := Parse("mm2.properties", []byte(data), mm2config.Options{LookupEnv: noEnv})
	fs = append(fs, Check(cfg, Options{})...)
	if len(atLeastWarning(fs)) == 0 {
		t.Fatal("expected unknown-key findings")
	}
	for _, f := range fs {
		b, _ := json.Marshal(f)
		if strings.Contains(string(b), canary) {
			t.Errorf("secret in finding: %s", b)
		}
	}
}

// TestJavaOnlyRegexIsNotAnError lints filters that Java accepts but Go's
// RE2 engine cannot express (lookaround, backreferences, possessive
// quantifiers, Java POSIX classes): MM2 starts with them, so lint reports
// at most an info that they are matched by the backtracking engine.
func TestJavaOnlyRegexIsNotAnError(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"javaregex.properties": "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\na->b.enabled = true\n" +
			"a->b.topics = (?!internal).*\nb->a.enabled=true\n" +
			"b->a.topics = \\\\p{Alpha}++ , (?<name>x)\\\\1, (?i)Orders, \\\\Qa.b\\\\E\n",
		"look.properties": "clusters = a, b\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:1\na->b.enabled = true\n" +
			"a->b.topics = orders\\\\d++\n",
		"groups.properties": "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\na->b.enabled = true\na->b.groups = (?!console-).*(?<!-tmp), (g)\\\\1\n" +
			"a->b.groups.exclude = (?>connect-.*)\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		// Both clusters full Kafka, so that only the filters can be at fault.
		fs := lintFile(t, path, Options{OthersFull: true})
		infos := 0
		for _, f := range fs {
			if f.Rule == RuleSyntax && f.Severity != detectors.Info {
				t.Errorf("%s: %s %s", name, f.Severity, f.Summary)
			}
			if f.Rule == RuleSyntax && strings.Contains(f.Summary, "backtracking engine") {
				infos++
			}
			if f.Severity == detectors.Critical {
				t.Errorf("%s: critical %s %s", name, f.Rule, f.Summary)
			}
		}
		if infos == 0 {
			t.Errorf("%s: no info about the backtracking engine:%s", name, describe(fs))
		}
	}
}

// TestFlowAliasSuggestion checks that a misspelt alias in a flow key is
// never "corrected" into a flow from a cluster to itself.
func TestFlowAliasSuggestion(t *testing.T) {
	for _, tc := range []struct{ clusters, key, want string }{
		{"a, b", "a->c.enabled", "a->b.enabled"}, // c is one edit from both a and b; a->a is no flow
		{"a, b", "c->a.enabled", "b->a.enabled"},
		{"a", "a->c.enabled", ""}, // the only alias is the source
		{"kafka, vast", "kafak->vast.enabled", "kafka->vast.enabled"},
		{"kafka, vast", "kafak->vats.topics", "kafka->vast.topics"},
		{"kafka, vast", "vast->vats.topics", ""}, // vats is nearest vast, a self-flow; kafka is too far
		{"kafka, vast", "vast->kafak.topics", "vast->kafka.topics"},
		{"kafka, vast", "kafka->kafak.topics", ""}, // kafka->kafka is no flow; vast is too far
	} {
		text := "clusters = " + tc.clusters + "\n" + tc.key + " = true\n"
		cfg, fs := Parse("mm2.properties", []byte(text), mm2config.Options{LookupEnv: noEnv})
		fs = append(fs, Check(cfg, Options{})...)
		found := false
		for _, f := range fs {
			if f.Rule != RuleUnknownKey || f.Values["key"] != tc.key {
				continue
			}
			found = true
			got, _ := f.Values["want"].(string)
			if got != tc.want {
				t.Errorf("%s with clusters %s: suggestion %q (hint %q), want %q", tc.key, tc.clusters, got, f.Hint, tc.want)
			}
			if tc.want == "" && strings.Contains(f.Hint, "Did you mean") {
				t.Errorf("%s: hint %q", tc.key, f.Hint)
			}
		}
		if !found {
			t.Errorf("%s: no lint-unknown-key finding:%s", tc.key, describe(fs))
		}
	}
}
