package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// rulesAtLeast returns the rules of the findings at or above sev, sorted.
func rulesAtLeast(fs []detectors.Finding, sev detectors.Severity) []string {
	var out []string
	for _, f := range fs {
		if f.Severity.Rank() >= sev.Rank() {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return out
}

func TestLintShippedExamples(t *testing.T) {
	for _, name := range []string{"kafka-to-limited.properties", "limited-to-kafka.properties"} {
		code, out, stderr := runMain(t, nil, "", "lint", "--format", "json", "--fail-on", "warning", "../../testdata/mm2/"+name)
		if code != exitOK {
			t.Errorf("%s: exit %d, want 0 (stderr %s, out %s)", name, code, stderr, out)
		}
		fs := decodeFindings(t, out)
		if len(fs) == 0 || len(rulesAtLeast(fs, detectors.Warning)) != 0 {
			t.Errorf("%s: want only info findings, got %s", name, out)
		}
	}
}

func TestLintAllMistakes(t *testing.T) {
	code, out, stderr := runMain(t, nil, "", "lint", "--format", "json", "--limited", "vast", "../../testdata/lint/all-mistakes.properties")
	if code != exitFindings {
		t.Fatalf("exit %d, want 1 (stderr %s)", code, stderr)
	}
	got := rulesAtLeast(decodeFindings(t, out), detectors.Warning)
	want := []string{"lint-acl-sync", "lint-compression", "lint-config-sync", "lint-exactly-once", "lint-idempotence", "lint-idempotence", "lint-identity-loop", "lint-offset-syncs-location"}
	if !slices.Equal(got, want) {
		t.Errorf("rules %v, want %v\n%s", got, want, out)
	}
	for _, f := range decodeFindings(t, out) {
		if f.Rule == "lint-compression" && (f.Evidence == nil || f.Evidence.Line != 10 || f.Evidence.Text != "vast.producer.compression.type = lz4" || f.Values["want"] != "none") {
			t.Errorf("lint-compression evidence: %+v %v", f.Evidence, f.Values)
		}
	}
	// Text output names the file and line.
	code, out, _ = runMain(t, nil, "", "lint", "--limited", "vast", "../../testdata/lint/all-mistakes.properties")
	if code != exitFindings || !strings.Contains(out, "all-mistakes.properties:10") {
		t.Errorf("text output (exit %d) lacks file:line:\n%s", code, out)
	}
}

func TestLintVersionAndEnvironment(t *testing.T) {
	file := "../../testdata/lint/config-sync-on.properties"
	if code, out, stderr := runMain(t, nil, "", "lint", "--format", "json", file); code != exitFindings {
		t.Errorf("4.x: exit %d, want 1 (%s %s)", code, out, stderr)
	}
	code, out, stderr := runMain(t, nil, "", "lint", "--format", "json", "--mm2-version", "3.9", file)
	if code != exitOK {
		t.Errorf("3.x: exit %d, want 0 (%s %s)", code, out, stderr)
	}
	if got := rulesAtLeast(decodeFindings(t, out), detectors.Warning); !slices.Equal(got, []string{"lint-config-sync"}) {
		t.Errorf("3.x: rules %v", got)
	}
	env := func(k string) (string, bool) {
		v, ok := map[string]string{"MM2_WATCHDOG_MM2_VERSION": "3", "MM2_WATCHDOG_FAIL_ON": "warning", "MM2_WATCHDOG_FORMAT": "json"}[k]
		return v, ok
	}
	if code, out, stderr := runMain(t, env, "", "lint", file); code != exitFindings || !strings.Contains(out, `"severity":"warning"`) {
		t.Errorf("from the environment: exit %d (%s %s)", code, out, stderr)
	}
}

func TestLintUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.properties")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lint", missing}, "nope.properties"},
		{[]string{"lint"}, "no input"},
		{[]string{"lint", "a", "b"}, "one MM2 properties file"},
		{[]string{"lint", "--mm2-version", "2", "../../testdata/mm2/kafka-to-limited.properties"}, "--mm2-version"},
		{[]string{"lint", "--limited", "vsat", "../../testdata/mm2/kafka-to-limited.properties"}, `"vsat"`},
		{[]string{"lint", "--limited", "vast", "--kafka", "vast", "../../testdata/mm2/kafka-to-limited.properties"}, "both"},
		{[]string{"lint", "--format", "yaml", "../../testdata/mm2/kafka-to-limited.properties"}, "--format"},
	} {
		code, _, stderr := runMain(t, nil, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestLintSyntaxIsAFinding(t *testing.T) {
	code, out, stderr := runMain(t, nil, "", "lint", "--format", "json", "../../testdata/lint/bad-regex.properties")
	if code != exitFindings {
		t.Fatalf("exit %d, want 1 (stderr %s)", code, stderr)
	}
	fs := decodeFindings(t, out)
	i := slices.IndexFunc(fs, func(f detectors.Finding) bool { return f.Rule == "lint-syntax" })
	if i < 0 || fs[i].Evidence == nil || fs[i].Evidence.Line != 6 {
		t.Errorf("no lint-syntax on line 6: %s", out)
	}
}

// TestLintProbe runs --probe against two kfake clusters over TCP: a full
// Kafka and a broker built without CreatePartitions, IncrementalAlterConfigs,
// InitProducerId and DescribeAcls.
func TestLintProbe(t *testing.T) {
	kafka, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	if err := kafka.CreateTopic("clicks", 2, nil); err != nil {
		t.Fatal(err)
	}
	old := kversion.Stable()
	for _, k := range []kmsg.Key{kmsg.CreatePartitions, kmsg.IncrementalAlterConfigs, kmsg.InitProducerID, kmsg.DescribeACLs} {
		old.SetMaxKeyVersion(int16(k), -1)
	}
	vast, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(old), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer vast.Close()

	// Flows both ways, nothing pinned: the strict profile would call both
	// clusters limited; the probe tells them apart.
	path := filepath.Join(t.TempDir(), "mm2.properties")
	props := fmt.Sprintf(`clusters = kafka, vast
kafka.bootstrap.servers = %s
vast.bootstrap.servers = %s
kafka->vast.enabled = true
kafka->vast.topics = orders, clicks
vast->kafka.enabled = true
vast->kafka.topics = returns
offset-syncs.topic.location = target
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
vast.producer.enable.idempotence = false
vast.producer.compression.type = none
sync.topic.acls.enabled = false
sync.topic.configs.enabled = false
`, strings.Join(kafka.ListenAddrs(), ","), strings.Join(vast.ListenAddrs(), ","))
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runMain(t, nil, "", "lint", "--format", "json", "--probe", "--probe-timeout", "20s", path)
	if code != exitFindings {
		t.Fatalf("exit %d, want 1 (stderr %s)", code, stderr)
	}
	fs := decodeFindings(t, out)
	if got := rulesAtLeast(fs, detectors.Warning); !slices.Equal(got, []string{"lint-precreate", "lint-precreate"}) {
		t.Fatalf("rules %v, want two lint-precreate:\n%s", got, out)
	}
	for _, f := range fs {
		switch {
		case f.Rule == "lint-precreate" && f.Topic == "orders":
			if !slices.Equal(f.Partitions, []int32{3, 4, 5}) {
				t.Errorf("orders partitions %v", f.Partitions)
			}
		case f.Rule == "lint-precreate" && f.Topic == "clicks":
		case f.Rule == "lint-limits" && f.Cluster == "vast":
			if f.Values["limited"] != true || !strings.HasPrefix(f.Values["basis"].(string), "probe:") {
				t.Errorf("vast limits: %v", f.Values)
			}
		case f.Rule == "lint-limits" && f.Cluster == "kafka":
			if f.Values["limited"] != false {
				t.Errorf("kafka limits: %v", f.Values)
			}
		case f.Rule == "lint-precreate":
			t.Errorf("unexpected: %+v", f)
		}
	}

	// An unreachable cluster is a lint-probe-failed warning, not an error.
	vast.Close()
	code, out, stderr = runMain(t, nil, "", "lint", "--format", "json", "--probe", "--probe-timeout", "2s", "--fail-on", "none", path)
	if code != exitOK || !strings.Contains(out, `"rule":"lint-probe-failed"`) {
		t.Errorf("unreachable vast: exit %d, out %s, stderr %s", code, out, stderr)
	}
}
