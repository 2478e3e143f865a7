package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const dashboardFile = "grafana/mm2-watchdog.json"

// dashboardQuery is one PromQL expression of the dashboard and where it is.
type dashboardQuery struct {
	where, expr string
}

func readDashboard(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// dashboardQueries collects the panel targets' expressions (rows included)
// and the query variables' definitions.
func dashboardQueries(t *testing.T, d map[string]any) []dashboardQuery {
	t.Helper()
	var out []dashboardQuery
	var walk func(panels []any)
	walk = func(panels []any) {
		for _, p := range panels {
			for _, tg := range list(p, "targets") {
				out = append(out, dashboardQuery{fmt.Sprintf("panel %q target %s", str(p, "title"), str(tg, "refId")), str(tg, "expr")})
			}
			walk(list(p, "panels"))
		}
	}
	walk(list(d, "panels"))
	for _, v := range list(d, "templating", "list") {
		if str(v, "type") == "query" {
			out = append(out, dashboardQuery{fmt.Sprintf("variable %s", str(v, "name")), str(v, "definition")})
		}
	}
	return out
}

// labelValues matches Grafana's label_values(selector, label) variable query.
func labelValuesSelector(q string) (string, bool) {
	inner, ok := strings.CutPrefix(strings.TrimSpace(q), "label_values(")
	if !ok {
		return q, false
	}
	i := strings.LastIndex(inner, ",")
	if i < 0 {
		return q, false
	}
	return strings.TrimSpace(inner[:i]), true
}

// grafanaVars are the variables the dashboard's expressions may use, with a
// value that makes the expression plain PromQL.
var grafanaVars = strings.NewReplacer(
	"${datasource}", "prom",
	"$__rate_interval", "5m",
	"$__interval", "1m",
	"$source", "a",
	"$target", "b",
)

func TestDashboardShape(t *testing.T) {
	d := readDashboard(t)
	if str(d, "uid") == "" || str(d, "title") == "" {
		t.Error("the dashboard needs a uid and a title")
	}
	vars := map[string]bool{}
	for _, v := range list(d, "templating", "list") {
		vars[str(v, "name")] = true
	}
	for _, v := range []string{"datasource", "source", "target"} {
		if !vars[v] {
			t.Errorf("no %s variable", v)
		}
	}
	ids := map[float64]bool{}
	var walk func(panels []any)
	walk = func(panels []any) {
		for _, p := range panels {
			id, _ := get(p, "id").(float64)
			if ids[id] {
				t.Errorf("panel %q: id %v used twice", str(p, "title"), id)
			}
			ids[id] = true
			if obj(p, "gridPos") == nil {
				t.Errorf("panel %q: no gridPos", str(p, "title"))
			}
			if str(p, "type") != "row" && str(p, "datasource", "uid") != "${datasource}" {
				t.Errorf("panel %q: datasource is not the ${datasource} variable", str(p, "title"))
			}
			walk(list(p, "panels"))
		}
	}
	walk(list(d, "panels"))
	// The panels the dashboard promises, by the metric each shows.
	var all strings.Builder
	for _, q := range dashboardQueries(t, d) {
		all.WriteString(q.expr + "\n")
	}
	for _, m := range []string{
		"mm2_watchdog_topic_partitions", "mm2_watchdog_unmirrored_partitions", "mm2_watchdog_records_at_risk",
		"mm2_watchdog_heartbeat_age_seconds", "mm2_watchdog_stalled_partitions", "mm2_watchdog_findings_total",
		"mm2_watchdog_alerts_firing", "mm2_watchdog_log_lines_total", "mm2_watchdog_cluster_up",
		"mm2_watchdog_check_duration_seconds_bucket",
	} {
		if !strings.Contains(all.String(), m) {
			t.Errorf("no dashboard query uses %s", m)
		}
	}
}

// TestDashboardNamesExposedMetrics checks that every query selects only
// metrics the program registers.
func TestDashboardNamesExposedMetrics(t *testing.T) {
	known := knownMetrics(t)
	for _, q := range dashboardQueries(t, readDashboard(t)) {
		expr, _ := labelValuesSelector(q.expr)
		names := promqlNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", q.where, q.expr)
		}
		for _, name := range names {
			if !known[name] {
				t.Errorf("%s: %s is not a metric mm2-watchdog exposes", q.where, name)
			}
		}
	}
}

// TestDashboardQueriesParse has promtool parse every query (Grafana's
// variables replaced by values), as the expressions of a rules file.
func TestDashboardQueriesParse(t *testing.T) {
	promtool(t)
	var rules []map[string]any
	for i, q := range dashboardQueries(t, readDashboard(t)) {
		expr, _ := labelValuesSelector(q.expr)
		rules = append(rules, map[string]any{"alert": fmt.Sprintf("DashboardQuery%d", i), "expr": grafanaVars.Replace(expr)})
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, nil, "check", "rules", f)
}
