package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// TestUnresolvablePlaceholdersAreWarnings lints the shipped SASL_SSL example
// on a machine without its secrets file and environment: each placeholder
// is a lint-syntax warning naming its key, line and the checks that could
// not use it, never a critical "MM2 would refuse this file", and the other
// rules still run.
func TestUnresolvablePlaceholdersAreWarnings(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "mm2", "sasl-ssl.properties")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, fs := Parse(path, data, mm2config.Options{LookupEnv: noEnv,
		ReadFile: func(name string) ([]byte, error) { return nil, fmt.Errorf("open %s: %w", name, os.ErrNotExist) }})
	if cfg == nil {
		t.Fatalf("not recovered:%s", describe(fs))
	}
	lines := map[int]string{13: "vast.sasl.jaas.config", 18: "vast.ssl.truststore.password", 19: "vast.admin.request.timeout.ms"}
	if len(fs) != len(lines) {
		t.Fatalf("want %d findings:%s", len(lines), describe(fs))
	}
	for _, f := range fs {
		key := lines[lineOf(&f)]
		if f.Rule != RuleSyntax || f.Severity != detectors.Warning || f.Values["kind"] != kindPlaceholder || f.Values["key"] != key || f.Cluster != "vast" {
			t.Errorf("finding %+v", f)
		}
		if strings.Contains(f.Summary, "refuse") || !strings.Contains(f.Summary, "could not be resolved here") ||
			!strings.Contains(f.Summary, key) || !strings.Contains(f.Summary, fmt.Sprintf("line %d", lineOf(&f))) ||
			!strings.Contains(f.Summary, "Checks that could not use the value") {
			t.Errorf("summary %q", f.Summary)
		}
		if strings.Contains(f.Hint, "regex") {
			t.Errorf("placeholder hint talks about regexes: %q", f.Hint)
		}
	}
	if !strings.Contains(fs[0].Summary, "does not exist on this machine") {
		t.Errorf("missing file not said: %q", fs[0].Summary)
	}
	if !strings.Contains(fs[2].Summary, "environment variable not set") {
		t.Errorf("unset variable not said: %q", fs[2].Summary)
	}
	all := Check(cfg, Options{})
	if slices.ContainsFunc(all, func(f detectors.Finding) bool { return f.Rule == RuleSyntax || f.Rule == RuleMissingBootstrap }) {
		t.Errorf("the unresolved values leaked into other findings:%s", describe(all))
	}
	if !slices.ContainsFunc(all, func(f detectors.Finding) bool { return f.Rule == RuleConfigSync }) {
		t.Errorf("the other rules did not run:%s", describe(all))
	}
}

// TestUnresolvedPlaceholderOfTypedAndStringKeys: a placeholder standing for
// bootstrap.servers keeps the cluster configured (no lint-missing-bootstrap),
// one standing for a boolean is dropped without a second finding, and with
// the variables set nothing is reported.
func TestUnresolvedPlaceholderOfTypedAndStringKeys(t *testing.T) {
	data := "clusters = kafka, vast\nconfig.providers = env\n" +
		"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\n" +
		"kafka.bootstrap.servers = ${env:KAFKA_BOOTSTRAP}\nvast.bootstrap.servers = v:9092\n" +
		"kafka->vast.enabled = true\nkafka->vast.sync.topic.acls.enabled = ${env:ACL_SYNC}\n" +
		"vast.producer.enable.idempotence = false\nvast.producer.compression.type = none\nsync.topic.configs.enabled = false\n"
	cfg, fs := Parse("mm2.properties", []byte(data), mm2config.Options{LookupEnv: noEnv})
	if cfg == nil || len(fs) != 2 {
		t.Fatalf("want two findings and a config:%s", describe(fs))
	}
	if fs[0].Values["key"] != "kafka.bootstrap.servers" || fs[0].Cluster != "kafka" || !strings.Contains(fs[0].Summary, "lint-missing-bootstrap") {
		t.Errorf("bootstrap placeholder: %+v", fs[0])
	}
	if fs[1].Values["key"] != "kafka->vast.sync.topic.acls.enabled" || fs[1].Source != "kafka" || fs[1].Target != "vast" || !strings.Contains(fs[1].Summary, RuleACLSync) {
		t.Errorf("boolean placeholder: %+v", fs[1])
	}
	all := Check(cfg, Options{})
	if slices.ContainsFunc(all, func(f detectors.Finding) bool { return f.Rule == RuleMissingBootstrap || f.Rule == RuleSyntax }) {
		t.Errorf("unexpected:%s", describe(all))
	}

	env := map[string]string{"KAFKA_BOOTSTRAP": "k:9092", "ACL_SYNC": "false"}
	cfg, fs = Parse("mm2.properties", []byte(data), mm2config.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if cfg == nil || len(fs) != 0 {
		t.Fatalf("with the variables set:%s", describe(fs))
	}
	if bad := atLeastWarning(Check(cfg, Options{})); len(bad) > 0 {
		t.Errorf("with the variables set:%s", describe(bad))
	}
}

// TestSyntaxHintsByKind: each kind of syntax problem gets its own hint, and
// only the regex one talks about regexes.
func TestSyntaxHintsByKind(t *testing.T) {
	base := "clusters = kafka, vast\nkafka.bootstrap.servers = k:9092\nvast.bootstrap.servers = v:9092\n"
	for _, tc := range []struct {
		name, data, kind, hintHas string
	}{
		{"regex", base + "kafka->vast.enabled = true\nkafka->vast.topics = a(b\n", kindRegex, "regex"},
		{"boolean", base + "kafka->vast.enabled = yes\n", kindBoolean, "true or false"},
		{"clusters", "kafka.bootstrap.servers = k:9092\n", kindClusters, "clusters ="},
		{"escape", base + "kafka->vast.topics = a\\u00zz\n", kindProperties, "backslash"},
	} {
		_, fs := Parse("mm2.properties", []byte(tc.data), mm2config.Options{LookupEnv: noEnv})
		i := slices.IndexFunc(fs, func(f detectors.Finding) bool { return f.Rule == RuleSyntax })
		if i < 0 {
			t.Errorf("%s: no lint-syntax:%s", tc.name, describe(fs))
			continue
		}
		f := fs[i]
		if f.Severity != detectors.Critical || f.Values["kind"] != tc.kind || !strings.Contains(f.Hint, tc.hintHas) {
			t.Errorf("%s: %s kind %v hint %q", tc.name, f.Severity, f.Values["kind"], f.Hint)
		}
		if tc.kind != kindRegex && strings.Contains(f.Hint, "regex") {
			t.Errorf("%s: hint %q talks about regexes", tc.name, f.Hint)
		}
		if tc.kind == kindClusters && !strings.Contains(f.Summary, "clusters is not set") {
			t.Errorf("%s: summary %q", tc.name, f.Summary)
		}
	}
}

// TestEveryFindingHasHintAndKey: across the fixtures, every finding has a
// hint, and every finding about a key names the key in its summary, its
// line when it has one, and says "not set" when the file does not set it.
func TestEveryFindingHasHintAndKey(t *testing.T) {
	names, err := filepath.Glob(fixture("*.properties"))
	if err != nil || len(names) == 0 {
		t.Fatal(names, err)
	}
	for _, path := range names {
		for _, f := range lintFile(t, path, Options{}) {
			if f.Hint == "" {
				t.Errorf("%s: %s has no hint: %s", filepath.Base(path), f.Rule, f.Summary)
			}
			key, _ := f.Values["key"].(string)
			if key == "" {
				continue
			}
			if !strings.Contains(f.Summary, key) && !strings.Contains(f.Summary, strings.TrimPrefix(key, f.Cluster+".")) {
				t.Errorf("%s: %s does not name %s: %s", filepath.Base(path), f.Rule, key, f.Summary)
			}
			if line, _ := f.Values["line"].(int); line > 0 && !strings.Contains(f.Summary, fmt.Sprintf("line %d", line)) {
				t.Errorf("%s: %s does not give line %d: %s", filepath.Base(path), f.Rule, line, f.Summary)
			}
			if _, set := f.Values["found"]; !set && f.Evidence == nil && f.Values["want"] != nil && !strings.Contains(f.Summary, "not set") {
				t.Errorf("%s: %s about unset %s does not say so: %s", filepath.Base(path), f.Rule, key, f.Summary)
			}
			if f.Source == "" && f.Target == "" && f.Cluster == "" && (strings.HasPrefix(key, "kafka->vast.") || strings.HasPrefix(key, "vast.") || strings.HasPrefix(key, "kafka.")) {
				t.Errorf("%s: %s about %s has no WHERE", filepath.Base(path), f.Rule, key)
			}
		}
	}
}
