package deploy_test

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// manifestDirs are the kustomization directories of the Kubernetes examples.
var manifestDirs = []string{"kubernetes", "kubernetes/monitoring", "kubernetes/strimzi", "kubernetes/strimzi/monitoring", "prometheus"}

// baseDirs are the kustomizations applied by default; they must work on a
// cluster without the Prometheus Operator and without a Slack webhook.
var baseDirs = []string{"kubernetes", "kubernetes/strimzi"}

const watchdogContainer = "mm2-watchdog"

// defaultListenPort is the port of run's documented default --listen (:9464).
const defaultListenPort = 9464

// object is one Kubernetes object read from a manifest, with where it came from.
type object struct {
	file string
	doc  map[string]any
}

func (o object) String() string {
	return o.file + ": " + str(o.doc, "kind") + "/" + str(o.doc, "metadata", "name")
}

// manifests reads every Kubernetes object of the example directories.
func manifests(t *testing.T) []object {
	t.Helper()
	var out []object
	for _, dir := range manifestDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			for _, doc := range readYAMLDocs(t, f) {
				out = append(out, object{file: f, doc: doc})
			}
		}
	}
	return out
}

func TestManifestsAreKubernetesObjects(t *testing.T) {
	objs := manifests(t)
	if len(objs) < 10 {
		t.Fatalf("found %d objects, want the sidecar and Strimzi examples", len(objs))
	}
	for _, o := range objs {
		if str(o.doc, "apiVersion") == "" || str(o.doc, "kind") == "" {
			t.Errorf("%s: apiVersion or kind missing", o)
		}
		if str(o.doc, "kind") != "Kustomization" && str(o.doc, "metadata", "name") == "" {
			t.Errorf("%s: metadata.name missing", o)
		}
	}
}

// TestKustomizations checks that every resource a kustomization lists exists
// and that every manifest of its directory is listed, except examples shown
// for reference (example-*.yaml).
func TestKustomizations(t *testing.T) {
	for _, dir := range manifestDirs {
		k := readYAMLDocs(t, filepath.Join(dir, "kustomization.yaml"))[0]
		listed := map[string]bool{}
		for _, r := range list(k, "resources") {
			name, _ := r.(string)
			p := filepath.Join(dir, name)
			st, err := os.Stat(p)
			if err != nil {
				t.Errorf("%s/kustomization.yaml: resource %q: %v", dir, name, err)
				continue
			}
			if st.IsDir() {
				if _, err := os.Stat(filepath.Join(p, "kustomization.yaml")); err != nil {
					t.Errorf("%s/kustomization.yaml: resource directory %q has no kustomization.yaml", dir, name)
				}
			}
			listed[filepath.Clean(p)] = true
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			base := filepath.Base(f)
			if base == "kustomization.yaml" || strings.HasPrefix(base, "example-") {
				continue
			}
			if !listed[filepath.Clean(f)] {
				t.Errorf("%s is not listed in %s/kustomization.yaml", f, dir)
			}
		}
	}
}

// podTemplate is the pod spec of a workload, with its labels.
type podTemplate struct {
	owner  object
	labels map[string]any
	spec   map[string]any
}

func podTemplates(objs []object) []podTemplate {
	var out []podTemplate
	for _, o := range objs {
		switch str(o.doc, "kind") {
		case "Deployment", "StatefulSet", "DaemonSet":
			out = append(out, podTemplate{owner: o, labels: obj(o.doc, "spec", "template", "metadata", "labels"), spec: obj(o.doc, "spec", "template", "spec")})
		}
	}
	return out
}

func container(spec map[string]any, name string) map[string]any {
	for _, c := range list(spec, "containers") {
		if str(c, "name") == name {
			return c.(map[string]any)
		}
	}
	return nil
}

// containerFlags splits a watchdog container's args after "run" into flag
// names and values; both --name=value and --name value are accepted.
func containerFlags(t *testing.T, who string, c map[string]any) map[string][]string {
	t.Helper()
	args := list(c, "args")
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("%s: args must start with the run sub-command (the image's entrypoint is the binary), got %v", who, args)
	}
	flags := map[string][]string{}
	for i := 1; i < len(args); i++ {
		a, _ := args[i].(string)
		if !strings.HasPrefix(a, "--") {
			t.Errorf("%s: argument %q is not a --flag", who, a)
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok && i+1 < len(args) {
			if next, _ := args[i+1].(string); !strings.HasPrefix(next, "--") {
				value = next
				i++
			}
		}
		flags[name] = append(flags[name], value)
	}
	return flags
}

// listenPort is the port of the container's --listen (or MM2_WATCHDOG_LISTEN,
// or the default).
func listenPort(t *testing.T, who string, flags map[string][]string, c map[string]any) int {
	t.Helper()
	addr := ""
	for _, e := range list(c, "env") {
		if str(e, "name") == "MM2_WATCHDOG_LISTEN" {
			addr = str(e, "value")
		}
	}
	if v := flags["listen"]; len(v) > 0 {
		addr = v[len(v)-1]
	}
	if addr == "" {
		return defaultListenPort
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s: --listen %q: %v", who, addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("%s: --listen %q: port is not a number", who, addr)
	}
	return n
}

// resolvePort turns a probe's or Service's port (a number or a port name of
// the container) into a number, or -1.
func resolvePort(c map[string]any, port any) int {
	switch p := port.(type) {
	case float64:
		return int(p)
	case string:
		for _, cp := range list(c, "ports") {
			if str(cp, "name") == p {
				n, _ := get(cp, "containerPort").(float64)
				return int(n)
			}
		}
	}
	return -1
}

// mountFor returns the volumeMount of c whose path holds file, the longest
// match, or nil.
func mountFor(c map[string]any, file string) map[string]any {
	var best map[string]any
	for _, m := range list(c, "volumeMounts") {
		mp := strings.TrimSuffix(str(m, "mountPath"), "/")
		if strings.HasPrefix(file, mp+"/") && (best == nil || len(mp) > len(str(best, "mountPath"))) {
			best = m.(map[string]any)
		}
	}
	return best
}

func TestWatchdogContainers(t *testing.T) {
	known := runFlags(t)
	objs := manifests(t)
	pods := podTemplates(objs)
	found := 0
	for _, p := range pods {
		c := container(p.spec, watchdogContainer)
		if c == nil {
			continue
		}
		found++
		who := p.owner.String()
		flags := containerFlags(t, who, c)
		for name := range flags {
			if !known[name] {
				t.Errorf("%s: --%s is not a flag of mm2-watchdog run", who, name)
			}
		}
		for _, e := range list(c, "env") {
			name := str(e, "name")
			if !strings.HasPrefix(name, "MM2_WATCHDOG_") {
				continue
			}
			flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "MM2_WATCHDOG_")), "_", "-")
			if !known[flag] {
				t.Errorf("%s: %s names no flag of mm2-watchdog run (--%s)", who, name, flag)
			}
			if strings.Contains(flag, "slack-webhook-url") || strings.Contains(flag, "slack-token") {
				if get(e, "value") != nil || str(e, "valueFrom", "secretKeyRef", "name") == "" {
					t.Errorf("%s: %s must come from a Secret (valueFrom.secretKeyRef), not a literal value", who, name)
				}
			}
		}
		for _, secret := range []string{"slack-webhook-url", "slack-token"} {
			if _, ok := flags[secret]; ok {
				t.Errorf("%s: --%s in args puts a secret in the pod spec; use the environment from a Secret or --%s-file", who, secret, secret)
			}
		}
		if len(flags["log"]) == 0 || len(flags["mm2-config"]) == 0 {
			t.Errorf("%s: the example should show both --log and --mm2-config", who)
		}

		// The files the watchdog reads are on read-only mounts.
		for _, f := range append(slices.Clone(flags["log"]), flags["mm2-config"]...) {
			m := mountFor(c, f)
			if m == nil {
				t.Errorf("%s: %s is on no volumeMount of the watchdog", who, f)
			} else if get(m, "readOnly") != true {
				t.Errorf("%s: the watchdog's mount %s (for %s) is not readOnly", who, str(m, "mountPath"), f)
			}
		}

		// Ports: probes and container port are the --listen port.
		port := listenPort(t, who, flags, c)
		portDeclared := false
		for _, cp := range list(c, "ports") {
			if n, _ := get(cp, "containerPort").(float64); int(n) == port {
				portDeclared = true
			}
		}
		if !portDeclared {
			t.Errorf("%s: no containerPort %d (the --listen port)", who, port)
		}
		for probe, path := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
			if got := str(c, probe, "httpGet", "path"); got != path {
				t.Errorf("%s: %s path %q, want %q", who, probe, got, path)
			}
			if got := resolvePort(c, get(c, probe, "httpGet", "port")); got != port {
				t.Errorf("%s: %s port %d, want the --listen port %d", who, probe, got, port)
			}
		}

		// Services that select this pod target the --listen port, and a
		// ServiceMonitor of the opt-in monitoring/ kustomization next to
		// them scrapes one of them by port name.
		var svcPorts []string
		for _, svc := range objs {
			if str(svc.doc, "kind") != "Service" || filepath.Dir(svc.file) != filepath.Dir(p.owner.file) || !selects(obj(svc.doc, "spec", "selector"), p.labels) {
				continue
			}
			for _, sp := range list(svc.doc, "spec", "ports") {
				if got := resolvePort(c, get(sp, "targetPort")); got != port {
					t.Errorf("%s: port %s targets %d, want the --listen port %d", svc, str(sp, "name"), got, port)
				}
				svcPorts = append(svcPorts, str(sp, "name"))
				monitored := false
				for _, sm := range objs {
					if str(sm.doc, "kind") != "ServiceMonitor" || filepath.Dir(sm.file) != filepath.Join(filepath.Dir(svc.file), "monitoring") || !selects(obj(sm.doc, "spec", "selector", "matchLabels"), obj(svc.doc, "metadata", "labels")) {
						continue
					}
					for _, ep := range list(sm.doc, "spec", "endpoints") {
						if str(ep, "port") == str(sp, "name") && str(ep, "path") == "/metrics" {
							monitored = true
						}
					}
				}
				if !monitored {
					t.Errorf("%s: no ServiceMonitor in its directory's monitoring/ scrapes port %q at /metrics", svc, str(sp, "name"))
				}
			}
		}
		if len(svcPorts) == 0 {
			t.Errorf("%s: no Service in its directory selects the pod", who)
		}

		if str(c, "resources", "requests", "cpu") == "" || str(c, "resources", "requests", "memory") == "" || str(c, "resources", "limits", "memory") == "" {
			t.Errorf("%s: the watchdog needs cpu and memory requests and a memory limit", who)
		}
	}
	if found != 2 {
		t.Errorf("found the watchdog container in %d workloads, want 2 (sidecar and Strimzi)", found)
	}
}

// selects reports whether every key of selector has the same value in labels.
func selects(selector, labels map[string]any) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestSecurityContexts checks every container of the examples' workloads:
// non-root, no privilege escalation, read-only root filesystem, every
// capability dropped, and the runtime's default seccomp profile.
func TestSecurityContexts(t *testing.T) {
	for _, p := range podTemplates(manifests(t)) {
		for _, c := range list(p.spec, "containers") {
			who := p.owner.String() + " container " + str(c, "name")
			either := func(field string) any {
				if v := get(c, "securityContext", field); v != nil {
					return v
				}
				return get(p.spec, "securityContext", field)
			}
			if either("runAsNonRoot") != true {
				t.Errorf("%s: runAsNonRoot is not true", who)
			}
			if uid, ok := either("runAsUser").(float64); !ok || uid == 0 {
				t.Errorf("%s: runAsUser must be a non-zero uid, got %v", who, either("runAsUser"))
			}
			if str(either("seccompProfile"), "type") != "RuntimeDefault" {
				t.Errorf("%s: seccompProfile.type is not RuntimeDefault", who)
			}
			if get(c, "securityContext", "allowPrivilegeEscalation") != false {
				t.Errorf("%s: allowPrivilegeEscalation is not false", who)
			}
			if get(c, "securityContext", "readOnlyRootFilesystem") != true {
				t.Errorf("%s: readOnlyRootFilesystem is not true", who)
			}
			if !slices.Contains(list(c, "securityContext", "capabilities", "drop"), any("ALL")) {
				t.Errorf("%s: capabilities.drop does not contain ALL", who)
			}
		}
		if get(p.spec, "automountServiceAccountToken") != false {
			t.Errorf("%s: the pod needs no Kubernetes API token; set automountServiceAccountToken: false", p.owner)
		}
	}
}

// TestSidecarSharesTheLog checks the sidecar example's wiring: MM2 writes
// connect.log (LOG_DIR, log4j2's ${sys:kafka.logs.dir}) into a volume that the
// watchdog mounts read-only, and both read the same properties file.
func TestSidecarSharesTheLog(t *testing.T) {
	var pod *podTemplate
	for _, p := range podTemplates(manifests(t)) {
		if container(p.spec, "mm2") != nil && container(p.spec, watchdogContainer) != nil {
			pod = &p
		}
	}
	if pod == nil {
		t.Fatal("no workload with both an mm2 and an mm2-watchdog container")
	}
	mm2, wd := container(pod.spec, "mm2"), container(pod.spec, watchdogContainer)
	flags := containerFlags(t, pod.owner.String(), wd)
	logFile := flags["log"][0]
	env := map[string]string{}
	for _, e := range list(mm2, "env") {
		env[str(e, "name")] = str(e, "value")
	}
	if dir := env["LOG_DIR"]; dir != filepath.Dir(logFile) {
		t.Errorf("MM2 LOG_DIR %q, but the watchdog follows %s", dir, logFile)
	}
	if !strings.Contains(env["KAFKA_LOG4J_OPTS"], "log4j2.configurationFile=") {
		t.Errorf("KAFKA_LOG4J_OPTS %q does not name a log4j2 configuration", env["KAFKA_LOG4J_OPTS"])
	}
	mw, mm := mountFor(wd, logFile), mountFor(mm2, logFile)
	if mw == nil || mm == nil || str(mw, "name") != str(mm, "name") {
		t.Fatalf("%s is not on a volume both containers mount", logFile)
	}
	if get(mm, "readOnly") == true {
		t.Errorf("MM2 mounts its log volume read-only; it cannot write connect.log")
	}
	cmd := list(mm2, "command")
	if len(cmd) == 0 || !strings.HasSuffix(cmd[0].(string), "connect-mirror-maker.sh") || cmd[len(cmd)-1] != flags["mm2-config"][0] {
		t.Errorf("MM2 runs %v; want connect-mirror-maker.sh with the file the watchdog reads (%s)", cmd, flags["mm2-config"][0])
	}
	var cfg map[string]any
	for _, o := range manifests(t) {
		if str(o.doc, "kind") == "ConfigMap" && str(o.doc, "metadata", "name") == "mm2-config" {
			cfg = o.doc
		}
	}
	log4j := str(cfg, "data", "log4j2.properties")
	if !strings.Contains(log4j, "${sys:kafka.logs.dir}/"+filepath.Base(logFile)) {
		t.Errorf("log4j2.properties does not write ${sys:kafka.logs.dir}/%s", filepath.Base(logFile))
	}
	if !strings.Contains(str(cfg, "data", "mm2.properties"), "->") {
		t.Errorf("mm2.properties declares no flow")
	}
}
