package deploy_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mm2-watchdog/mm2-watchdog/detectors/logrules"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/parity"
)

const (
	rulesFile      = "prometheus/mm2-watchdog.rules.yml"
	promRuleFile   = "prometheus/prometheusrule.yaml"
	ruleTestsFile  = "prometheus/tests.yml"
	readmeFile     = repoRoot + "/README.md"
	runbookPrefix  = "https://github.com/mm2-watchdog/mm2-watchdog#"
	ruleLabelValue = `\{\{ \$labels.rule \}\}`
)

// alertRule is one rule of a rule group.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type ruleGroup struct {
	Name  string      `json:"name"`
	Rules []alertRule `json:"rules"`
}

func readRuleGroups(t *testing.T) []ruleGroup {
	t.Helper()
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []ruleGroup `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if len(f.Groups) == 0 {
		t.Fatalf("%s: no groups", rulesFile)
	}
	return f.Groups
}

func allRules(t *testing.T) []alertRule {
	var out []alertRule
	for _, g := range readRuleGroups(t) {
		out = append(out, g.Rules...)
	}
	return out
}

// TestPrometheusRuleMatchesRulesFile keeps the PrometheusRule CR and the
// plain rules file identical: same groups, same rules, same fields.
func TestPrometheusRuleMatchesRulesFile(t *testing.T) {
	docs := readYAMLDocs(t, promRuleFile)
	if len(docs) != 1 || str(docs[0], "kind") != "PrometheusRule" || str(docs[0], "apiVersion") != "monitoring.coreos.com/v1" {
		t.Fatalf("%s: want one monitoring.coreos.com/v1 PrometheusRule", promRuleFile)
	}
	plain, cr := readYAMLDocs(t, rulesFile)[0], docs[0]
	if reflect.DeepEqual(plain["groups"], get(cr, "spec", "groups")) {
		return
	}
	// Say where they differ.
	pg, cg := list(plain, "groups"), list(cr, "spec", "groups")
	if len(pg) != len(cg) {
		t.Fatalf("%s has %d groups, %s has %d", rulesFile, len(pg), promRuleFile, len(cg))
	}
	for i := range pg {
		if str(pg[i], "name") != str(cg[i], "name") {
			t.Errorf("group %d: %q in %s, %q in %s", i, str(pg[i], "name"), rulesFile, str(cg[i], "name"), promRuleFile)
		}
		pr, cr := list(pg[i], "rules"), list(cg[i], "rules")
		if len(pr) != len(cr) {
			t.Errorf("group %s: %d rules in %s, %d in %s", str(pg[i], "name"), len(pr), rulesFile, len(cr), promRuleFile)
			continue
		}
		for j := range pr {
			if !reflect.DeepEqual(pr[j], cr[j]) {
				a, _ := yaml.Marshal(pr[j])
				b, _ := yaml.Marshal(cr[j])
				t.Errorf("group %s rule %d differs:\n%s:\n%s\n%s:\n%s", str(pg[i], "name"), j, rulesFile, a, promRuleFile, b)
			}
		}
	}
	if !t.Failed() {
		t.Errorf("%s and %s differ outside the groups' names and rules", rulesFile, promRuleFile)
	}
}

func TestAlertRulesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	rules := allRules(t)
	for _, r := range rules {
		if r.Alert == "" {
			t.Errorf("a rule without alert (recording rules do not belong here): %+v", r)
			continue
		}
		if seen[r.Alert] {
			t.Errorf("%s: alert name used twice", r.Alert)
		}
		seen[r.Alert] = true
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity label %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: needs summary and description annotations", r.Alert)
		}
	}
	// The alerts this file promises, by the metric each is about.
	for metric, want := range map[string]string{
		"mm2_watchdog_unmirrored_partitions":             "MM2UnmirroredPartitions",
		"mm2_watchdog_records_at_risk":                   "MM2RecordsAtRisk",
		"mm2_watchdog_target_topic_missing":              "MM2TargetTopicMissing",
		"mm2_watchdog_stalled_partitions":                "MM2ReplicationStalled",
		"mm2_watchdog_heartbeat_age_seconds":             "MM2HeartbeatStale",
		"mm2_watchdog_alerts_firing":                     "MM2TaskOrConnectorFailed",
		"mm2_watchdog_cluster_up":                        "MM2ClusterUnreachable",
		"up":                                             "MM2WatchdogDown",
		"mm2_watchdog_log_last_record_timestamp_seconds": "MM2LogSilent",
		"mm2_watchdog_notifications_dropped_total":       "MM2WatchdogNotificationsDropped",
	} {
		ok := false
		for _, r := range rules {
			if r.Alert == want && strings.Contains(r.Expr, metric) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no alert %s over %s", want, metric)
		}
	}
}

// TestAlertRulesNameExposedMetrics checks every metric an expression selects
// against the names the program registers (found in its Go sources), and
// every rule id in a rule= matcher against the rule tables.
func TestAlertRulesNameExposedMetrics(t *testing.T) {
	known := knownMetrics(t)
	ids := ruleIDs()
	for _, r := range allRules(t) {
		for _, name := range promqlNames(r.Expr) {
			if !known[name] {
				t.Errorf("%s: %s is not a metric mm2-watchdog exposes", r.Alert, name)
			}
		}
		for _, id := range matcherRuleIDs(r.Expr) {
			if !ids[id] {
				t.Errorf("%s: rule %q is not a rule id of mm2-watchdog", r.Alert, id)
			}
		}
	}
}

// ruleIDs lists the ids of the log and cluster rules.
func ruleIDs() map[string]bool {
	ids := map[string]bool{}
	for _, r := range logrules.Rules() {
		ids[r.ID] = true
	}
	for _, r := range parity.Rules() {
		ids[r.ID] = true
	}
	return ids
}

var ruleMatcher = regexp.MustCompile(`\brule\s*=~?\s*"([^"]*)"`)

// matcherRuleIDs returns the rule ids a rule="…" or rule=~"a|b" matcher names.
func matcherRuleIDs(expr string) []string {
	var out []string
	for _, m := range ruleMatcher.FindAllStringSubmatch(expr, -1) {
		out = append(out, strings.Split(m[1], "|")...)
	}
	return out
}

// TestRunbookLinksExist checks that every runbook_url anchor is a heading of
// README.md (GitHub's anchor of "#### task-failed" is #task-failed). A
// templated {{ $labels.rule }} anchor stands for every rule its expression
// matches.
func TestRunbookLinksExist(t *testing.T) {
	raw, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			anchors[githubAnchor(strings.TrimLeft(h, "# "))] = true
		}
	}
	for _, r := range allRules(t) {
		u := r.Annotations["runbook_url"]
		if u == "" {
			continue
		}
		anchor, ok := strings.CutPrefix(u, runbookPrefix)
		if !ok {
			t.Errorf("%s: runbook_url %q is not under %s", r.Alert, u, runbookPrefix)
			continue
		}
		targets := []string{anchor}
		if regexp.MustCompile(ruleLabelValue).MatchString(anchor) {
			targets = matcherRuleIDs(r.Expr)
		}
		for _, a := range targets {
			if !anchors[a] {
				t.Errorf("%s: runbook anchor #%s is no heading of README.md", r.Alert, a)
			}
		}
	}
}

// githubAnchor is GitHub's heading anchor: lower case, spaces to dashes,
// punctuation other than - and _ dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestRuleTestsCoverEveryAlert checks tests.yml: every alert is evaluated at
// least once expecting it to fire and once expecting it not to.
func TestRuleTestsCoverEveryAlert(t *testing.T) {
	doc := readYAMLDocs(t, ruleTestsFile)[0]
	if files := list(doc, "rule_files"); len(files) != 1 || files[0] != filepath.Base(rulesFile) {
		t.Errorf("%s: rule_files %v, want [%s]", ruleTestsFile, files, filepath.Base(rulesFile))
	}
	firing, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range list(doc, "tests") {
		for _, at := range list(tc, "alert_rule_test") {
			if len(list(at, "exp_alerts")) > 0 {
				firing[str(at, "alertname")] = true
			} else {
				quiet[str(at, "alertname")] = true
			}
		}
	}
	for _, r := range allRules(t) {
		if !firing[r.Alert] {
			t.Errorf("%s: no test expects it to fire", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no test expects it not to fire", r.Alert)
		}
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, nil, "check", "rules", rulesFile)
	// The PrometheusRule's groups, as a rules file.
	groups := readYAMLDocs(t, promRuleFile)[0]["spec"]
	out, err := yaml.Marshal(groups)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "prometheusrule.rules.yml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, nil, "check", "rules", f)
}

func TestPromtoolTestRules(t *testing.T) {
	out := runPromtool(t, nil, "test", "rules", ruleTestsFile)
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules printed no SUCCESS:\n%s", out)
	}
}
