package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// startPair starts a source cluster with orders (6 partitions) and payments
// and a target without CreatePartitions and IncrementalAlterConfigs with
// orders at 3 partitions, and returns an MM2 properties file for kafka->vast
// with IdentityReplicationPolicy.
func startPair(t *testing.T) (props string, src, tgt *kafkatest.Cluster) {
	t.Helper()
	src = kafkatest.New(t, "kafka", kfake.SeedTopics(6, "orders"), kfake.SeedTopics(2, "payments"), kfake.SeedTopics(1, "healthy"))
	limited := kversion.Stable()
	limited.SetMaxKeyVersion(int16(kmsg.CreatePartitions), -1)
	limited.SetMaxKeyVersion(int16(kmsg.IncrementalAlterConfigs), -1)
	tgt = kafkatest.New(t, "vast", kfake.MaxVersions(limited), kfake.SeedTopics(3, "orders"), kfake.SeedTopics(1, "healthy"))

	// 7 records in each of partitions 0..5 of orders, so the 3 missing
	// partitions hold exactly 21 records.
	for p := int32(0); p < 6; p++ {
		src.Produce(t, "orders", p, 7, nil)
	}

	props = filepath.Join(t.TempDir(), "mm2.properties")
	text := kafkatest.PairConfig(src, tgt,
		"vast->kafka.enabled = false",
		"kafka->vast.topics = orders, payments, healthy",
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy")
	if err := os.WriteFile(props, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return props, src, tgt
}

func TestCheckAgainstLimitedTarget(t *testing.T) {
	props, _, tgt := startPair(t)
	code, out, stderr := runMain(t, nil, "", "check", "--mm2-config", props, "--format", "json")
	if code != exitFindings {
		t.Fatalf("code %d, stderr %s", code, stderr)
	}
	byRule := map[string][]string{}
	for _, f := range decodeFindings(t, out) {
		byRule[f.Rule] = append(byRule[f.Rule], f.Topic)
		switch f.Rule {
		case "unmirrored-partitions":
			if f.Topic != "orders" || fmt.Sprint(f.Partitions) != "[3 4 5]" {
				t.Errorf("unmirrored: %+v", f)
			}
			if got := f.Values["records_at_risk"]; fmt.Sprint(got) != "21" {
				t.Errorf("records_at_risk = %v, want 21", got)
			}
		case "target-topic-missing":
			if f.Topic != "payments" {
				t.Errorf("target-topic-missing for %q, want payments", f.Topic)
			}
		}
	}
	for _, rule := range []string{"unmirrored-partitions", "target-topic-missing", "target-lacks-create-partitions"} {
		if len(byRule[rule]) != 1 {
			t.Errorf("want one %s finding, got %v (all: %v)", rule, byRule[rule], byRule)
		}
	}
	for _, topics := range byRule {
		for _, topic := range topics {
			if topic == "healthy" {
				t.Errorf("finding for the healthy topic: %v", byRule)
			}
		}
	}

	// The table for people names the missing partitions and the records.
	code, out, _ = runMain(t, nil, "", "check", "--mm2-config", props)
	if code != exitFindings || !strings.Contains(out, "flow kafka->vast") || !strings.Contains(out, "3,4,5") || !strings.Contains(out, "21") {
		t.Errorf("text table: code %d\n%s", code, out)
	}

	// With the target down: cluster-unreachable and no parity finding.
	tgt.Fake.Close()
	code, out, _ = runMain(t, nil, "", "check", "--mm2-config", props, "--format", "json", "--cluster-timeout", "5s")
	if code != exitFindings {
		t.Fatalf("target down: code %d", code)
	}
	fs := decodeFindings(t, out)
	if len(fs) != 1 || fs[0].Rule != "cluster-unreachable" || fs[0].Cluster != "vast" {
		t.Errorf("target down: want only cluster-unreachable for vast, got %+v", fs)
	}
}

func TestCheckBadConfig(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(bad, []byte("clusters = a, b\na.bootstrap.servers = x:1\nb.bootstrap.servers = y:1\na->b.enabled = true\na->b.topics = orders(\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runMain(t, nil, "", "check", "--mm2-config", bad)
	if code != exitUsage || !strings.Contains(stderr, "mm2.properties:5") || !strings.Contains(stderr, "a->b.topics") {
		t.Errorf("bad regex: code %d stderr %q", code, stderr)
	}
	code, _, stderr = runMain(t, nil, "", "check", "--mm2-config", filepath.Join(t.TempDir(), "missing.properties"))
	if code != exitUsage || !strings.Contains(stderr, "missing.properties") {
		t.Errorf("missing file: code %d stderr %q", code, stderr)
	}
}

// TestRunClusterChecks runs the daemon with --mm2-config: the unmirrored
// partitions reach /metrics and Slack, and resolve once the target topic is
// recreated with the source's partition count.
func TestRunClusterChecks(t *testing.T) {
	props, _, tgt := startPair(t)
	slack := &slackRecorder{}
	srv := httptest.NewServer(slack)
	defer srv.Close()

	o := runOptions{
		log:             logFlags{timezone: "UTC"},
		listen:          "127.0.0.1:0",
		slackWebhookURL: srv.URL + "/services/T0001/B0001/XXXX",
		checkInterval:   200 * time.Millisecond,
		cluster:         clusterFlags{mm2Config: props, stallWindow: time.Minute, timeout: 5 * time.Second},
	}
	o.alerts.GroupWait = 50 * time.Millisecond
	o.alerts.GroupInterval = 100 * time.Millisecond
	d, err := newDaemon(o, noEnv, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx) }()
	base := "http://" + <-d.addr

	waitFor(t, "/readyz", func() bool { c, _ := httpGet(t, base+"/readyz"); return c == 200 })
	series := `mm2_watchdog_unmirrored_partitions{source="kafka",target="vast",topic="orders"} `
	waitFor(t, "unmirrored partitions on /metrics", func() bool {
		_, b := httpGet(t, base+"/metrics")
		return strings.Contains(b, series+"3") && strings.Contains(b, `mm2_watchdog_records_at_risk{source="kafka",target="vast",topic="orders"} 21`) &&
			strings.Contains(b, `mm2_watchdog_cluster_up{cluster="vast"} 1`)
	})
	waitFor(t, "unmirrored partitions in Slack", func() bool { return slack.count("unmirrored-partitions") >= 1 })
	assertReadmeMetrics(t, base)
	// run lints the MM2 config once at start: config sync left on for a
	// target without IncrementalAlterConfigs is an alert like any other.
	if _, b := httpGet(t, base+"/api/findings"); !strings.Contains(b, `"rule":"lint-config-sync"`) {
		t.Errorf("/api/findings lacks the lint finding: %s", b)
	}

	// Repair: recreate the target topic with 6 partitions.
	tgt.DeleteTopic(t, "orders")
	tgt.CreateTopic(t, "orders", 6, nil)
	waitFor(t, "resolved on /metrics", func() bool {
		_, b := httpGet(t, base+"/metrics")
		return strings.Contains(b, series+"0") && strings.Contains(b, `mm2_watchdog_alerts_firing{rule="unmirrored-partitions",severity="critical"} 0`)
	})
	waitFor(t, "resolved in Slack", func() bool { return slack.count("esolved") >= 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// assertReadmeMetrics checks that every mm2_watchdog_ metric the daemon
// exposes is in README.md's metrics table, and the reverse for those the
// daemon has series of.
func assertReadmeMetrics(t *testing.T, base string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body := httpGet(t, base+"/metrics")
	exposed := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "# TYPE mm2_watchdog_") {
			exposed[strings.Fields(l)[2]] = true
		}
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`(mm2_watchdog_[a-z_]+)`").FindAllStringSubmatch(string(readme), -1) {
		documented[m[1]] = true
	}
	for name := range exposed {
		if !documented[name] {
			t.Errorf("metric %s is exposed but not in README.md", name)
		}
	}
	for _, name := range []string{"mm2_watchdog_unmirrored_partitions", "mm2_watchdog_records_at_risk", "mm2_watchdog_cluster_up", "mm2_watchdog_check_duration_seconds", "mm2_watchdog_build_info"} {
		if !exposed[name] {
			t.Errorf("metric %s is not exposed", name)
		}
	}
}

// TestSnapshotOptionsPerRole: only a flow's source needs start offsets and
// topic configs; a cluster that is only a target gets end offsets alone.
func TestSnapshotOptionsPerRole(t *testing.T) {
	cfg, err := mm2config.Parse("mm2.properties", []byte("clusters = a, b, c\na.bootstrap.servers = x:1\nb.bootstrap.servers = y:1\nc.bootstrap.servers = z:1\na->b.enabled = true\nb->c.enabled = true\n"), mm2config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for alias, want := range map[string]cluster.SnapshotOptions{
		"a": {Offsets: true, Configs: true},
		"b": {Offsets: true, Configs: true}, // source of b->c
		"c": {Offsets: true, EndOffsetsOnly: true},
	} {
		got := snapshotOptions(cfg, alias)
		if got.Offsets != want.Offsets || got.Configs != want.Configs || got.EndOffsetsOnly != want.EndOffsetsOnly {
			t.Errorf("%s: %+v, want %+v", alias, got, want)
		}
	}
}

// Every error about a client setting names the file, the line and the key
// that set it (the top-level key when an alias inherits it), and an
// impossible bootstrap.servers is a configuration error, not an
// unreachable cluster.
func TestCheckClientSettingErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "truststore.jks")
	if err := os.WriteFile(garbage, []byte("not a store\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	head := "clusters = a, b\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:2\na->b.enabled = true\n"
	for _, tc := range []struct {
		name, extra string
		want        []string
	}{
		{"port out of range", "b.bootstrap.servers = 127.0.0.1:99999\n", []string{`mm2.properties:5: key "b.bootstrap.servers": entry "127.0.0.1:99999": port "99999" is not a number from 1 to 65535`}},
		{"empty entry", "a.bootstrap.servers = x:1,,y:2\n", []string{`mm2.properties:5: key "a.bootstrap.servers": entry 2 is empty`}},
		{"jaas", "b.security.protocol = SASL_PLAINTEXT\nb.sasl.mechanism = PLAIN\nb.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"Canary-1\"\n",
			[]string{`mm2.properties:7: key "b.sasl.jaas.config": parsing: login module entry is not terminated by ';'`}},
		{"inherited truststore", "security.protocol = SSL\nssl.truststore.location = " + garbage + "\n",
			[]string{`mm2.properties:6: key "ssl.truststore.location" (inherited by cluster "a"): ` + garbage + `: ssl.truststore.type is not set`}},
		{"admin override", "b.security.protocol = SSL\nb.ssl.truststore.location = " + garbage + "\nb.admin.ssl.truststore.location = /nonexistent/ts.p12\n",
			[]string{`mm2.properties:7: key "b.admin.ssl.truststore.location": reading truststore: open /nonexistent/ts.p12`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := filepath.Join(t.TempDir(), "mm2.properties")
			if err := os.WriteFile(props, []byte(head+tc.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runMain(t, nil, "", "check", "--mm2-config", props)
			if code != exitUsage {
				t.Errorf("code %d, want %d", code, exitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q\ndoes not contain %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "Canary-1") {
				t.Errorf("stderr holds the password: %q", stderr)
			}
		})
	}

	// An empty bootstrap.servers is said once, at its line.
	props := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(props, []byte(head+"b.bootstrap.servers = \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runMain(t, nil, "", "check", "--mm2-config", props)
	if code != exitUsage || strings.Count(stderr, `cluster "b" has`) != 1 || !strings.Contains(stderr, `mm2.properties:5: key "b.bootstrap.servers": cluster "b" has an empty bootstrap.servers`) {
		t.Errorf("empty bootstrap: code %d stderr %q", code, stderr)
	}
}

// SASL against a plaintext listener (which closes the connection on the
// SASL exchange) is an authentication failure found at once, not a
// timeout after --cluster-timeout.
func TestCheckSASLAgainstPlaintext(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(1, "orders"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(1, "orders"))
	props := filepath.Join(t.TempDir(), "mm2.properties")
	text := kafkatest.PairConfig(src, tgt,
		"vast.security.protocol = SASL_PLAINTEXT",
		"vast.sasl.mechanism = PLAIN",
		`vast.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="Canary-2";`)
	if err := os.WriteFile(props, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, out, stderr := runMain(t, nil, "", "check", "--mm2-config", props, "--format", "json", "--cluster-timeout", "20s")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("check took %v: it retried an authentication failure until the timeout", took)
	}
	if code != exitFindings {
		t.Fatalf("code %d, stderr %s", code, stderr)
	}
	var found bool
	for _, f := range decodeFindings(t, out) {
		if f.Rule == "cluster-unreachable" && f.Cluster == "vast" {
			found = true
			if !strings.Contains(f.Summary, "SASL authentication failed") {
				t.Errorf("summary %q does not name the authentication failure", f.Summary)
			}
		}
	}
	if !found || strings.Contains(out+stderr, "Canary-2") {
		t.Errorf("want cluster-unreachable for vast without the password, got %s", out)
	}
}
