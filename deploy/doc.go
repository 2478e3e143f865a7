// Package deploy holds the deployment files of mm2-watchdog, not code:
// Kubernetes manifests (kubernetes/: MirrorMaker 2 in dedicated mode with the
// watchdog as a sidecar, and kubernetes/strimzi/: the watchdog next to a
// Strimzi KafkaMirrorMaker2), Prometheus alert rules with their promtool unit
// tests (prometheus/), and a Grafana dashboard (grafana/). The default
// kustomizations need no Prometheus Operator and send no Slack messages: the
// ServiceMonitor and PrometheusRule are in the opt-in monitoring/
// kustomizations, and the Slack webhook Secret is an example-*.yaml to copy.
//
// The tests of this package keep those files honest against the program: the
// watchdog container's flags and MM2_WATCHDOG_* variables must be flags that
// `mm2-watchdog run` defines, probe and Service ports must be the --listen
// port, every metric an alert rule or dashboard query names must be one the
// program registers, the rule files must pass promtool and their unit tests,
// and a live /metrics scrape must pass promtool check metrics.
//
// What it deliberately does not do: it does not template manifests (no
// Helm, no generator; the files are plain YAML and JSON to read and copy), and
// it does not apply anything to a cluster.
package deploy
