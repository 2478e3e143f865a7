package deploy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kustomized returns the objects a kustomization directory applies: its
// resources, following resource directories.
func kustomized(t *testing.T, dir string) []object {
	t.Helper()
	k := readYAMLDocs(t, filepath.Join(dir, "kustomization.yaml"))[0]
	var out []object
	for _, r := range list(k, "resources") {
		name, _ := r.(string)
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: resource %q: %v", dir, name, err)
		}
		if st.IsDir() {
			out = append(out, kustomized(t, p)...)
			continue
		}
		for _, doc := range readYAMLDocs(t, p) {
			out = append(out, object{file: p, doc: doc})
		}
	}
	return out
}

// TestBaseNeedsNoOperatorAndNoSlack: `kubectl apply -k` of a base
// kustomization creates no Prometheus Operator resources (which fail
// without their CRDs) and no Slack Secret (a placeholder webhook would take
// notifications away from the log); the watchdog's reference to that
// Secret is optional, so the pod starts without it.
func TestBaseNeedsNoOperatorAndNoSlack(t *testing.T) {
	for _, dir := range baseDirs {
		objs := kustomized(t, dir)
		if len(objs) == 0 {
			t.Fatalf("%s applies nothing", dir)
		}
		refs := 0
		for _, o := range objs {
			if strings.HasPrefix(str(o.doc, "apiVersion"), "monitoring.coreos.com/") {
				t.Errorf("%s applies %s, which needs the Prometheus Operator's CRDs", dir, o)
			}
			if str(o.doc, "kind") == "Secret" && str(o.doc, "metadata", "name") == "mm2-watchdog-slack" {
				t.Errorf("%s applies the Slack Secret %s; it must be opt-in", dir, o)
			}
			if strings.Contains(string(mustRead(t, o.file)), "hooks.slack.com") {
				t.Errorf("%s applies %s, which holds a Slack webhook", dir, o.file)
			}
		}
		for _, p := range podTemplates(objs) {
			c := container(p.spec, watchdogContainer)
			if c == nil {
				continue
			}
			for _, e := range list(c, "env") {
				if str(e, "valueFrom", "secretKeyRef", "name") != "mm2-watchdog-slack" {
					continue
				}
				refs++
				if get(e, "valueFrom", "secretKeyRef", "optional") != true {
					t.Errorf("%s: %s reads mm2-watchdog-slack without optional: true, so the pod cannot start without it", p.owner, str(e, "name"))
				}
			}
		}
		if refs != 1 {
			t.Errorf("%s: %d references to mm2-watchdog-slack, want the watchdog's one", dir, refs)
		}

		// The opt-in parts exist: the example Secret to copy, and the
		// monitoring kustomization with the ServiceMonitor and the rules.
		ex := readYAMLDocs(t, filepath.Join(dir, "example-slack-secret.yaml"))
		if len(ex) != 1 || str(ex[0], "kind") != "Secret" || str(ex[0], "metadata", "name") != "mm2-watchdog-slack" || str(ex[0], "stringData", "webhook-url") == "" {
			t.Errorf("%s/example-slack-secret.yaml: want the Secret mm2-watchdog-slack with webhook-url, got %v", dir, ex)
		}
		var kinds []string
		for _, o := range kustomized(t, filepath.Join(dir, "monitoring")) {
			kinds = append(kinds, str(o.doc, "kind"))
		}
		slices.Sort(kinds)
		if !slices.Equal(kinds, []string{"PrometheusRule", "ServiceMonitor"}) {
			t.Errorf("%s/monitoring applies %v, want a PrometheusRule and a ServiceMonitor", dir, kinds)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
