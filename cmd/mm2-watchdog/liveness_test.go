package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// startLivenessPair starts kafka and vast for flow kafka->vast (default
// policy, topics = orders) with MM2's internal topics written in MM2's byte
// layout, relative to now:
//   - heartbeats on vast: herder kafka->vast, ten minutes old, plus one
//     malformed record;
//   - heartbeats on kafka: the heartbeat-only herder vast->kafka, fresh, and
//     its replica kafka.heartbeats on vast, fresh;
//   - group billing committed 318 (partition 0) and 182 (partition 1) of
//     orders on kafka, never partition 2; offset-syncs on kafka synced
//     partition 0 at 318 -> 318 and partition 1 only at 0 -> 0, so its
//     checkpoints on vast translate 318 -> 318 and 182 -> 1.
func startLivenessPair(t *testing.T, now time.Time) (props string) {
	t.Helper()
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(3, "orders"), kfake.SeedTopics(1, "heartbeats", "mm2-offset-syncs.vast.internal"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(3, "kafka.orders"), kfake.SeedTopics(1, "heartbeats", "kafka.heartbeats", "kafka.checkpoints.internal"))

	hb := func(topic, s, tg string, ts time.Time) *kgo.Record {
		k, v := mm2config.Heartbeat{Source: s, Target: tg, Timestamp: ts}.Encode()
		return &kgo.Record{Topic: topic, Key: k, Value: v, Timestamp: ts}
	}
	cp := func(p int32, up, down int64) *kgo.Record {
		k, v := mm2config.Checkpoint{Group: "billing", Topic: "kafka.orders", Partition: p, UpstreamOffset: up, Offset: down}.Encode()
		return &kgo.Record{Topic: "kafka.checkpoints.internal", Key: k, Value: v, Timestamp: now.Add(-30 * time.Second)}
	}
	sync := func(p int32, up, down int64) *kgo.Record {
		k, v := mm2config.OffsetSync{Topic: "orders", Partition: p, UpstreamOffset: up, Offset: down}.Encode()
		return &kgo.Record{Topic: "mm2-offset-syncs.vast.internal", Key: k, Value: v}
	}
	stale := hb("heartbeats", "kafka", "vast", now.Add(-10*time.Minute))
	tgt.Write(t, stale,
		&kgo.Record{Topic: "heartbeats", Key: stale.Key, Value: stale.Value[:4]}, // truncated
		hb("kafka.heartbeats", "vast", "kafka", now.Add(-2*time.Second)),
		cp(0, 318, 318), cp(1, 182, 1))
	src.Produce(t, "orders", 0, 318, nil)
	src.Produce(t, "orders", 1, 182, nil)
	src.Write(t, hb("heartbeats", "vast", "kafka", now.Add(-time.Second)),
		sync(0, 0, 0), sync(1, 0, 0), sync(0, 318, 318))
	src.Commit(t, "billing", "orders", map[int32]int64{0: 318, 1: 182})

	props = filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(props, []byte(kafkatest.PairConfig(src, tgt, "kafka->vast.topics = orders")), 0o644); err != nil {
		t.Fatal(err)
	}
	return props
}

// TestCheckHeartbeatStalledAndGroups: check reports heartbeat-stalled for
// kafka->vast only, with its age, and --groups shows the 181 records group
// billing would re-read.
func TestCheckHeartbeatStalledAndGroups(t *testing.T) {
	props := startLivenessPair(t, time.Now())
	code, out, stderr := runMain(t, nil, "", "check", "--mm2-config", props, "--format", "json")
	if code != exitFindings {
		t.Fatalf("code %d, stderr %s\n%s", code, stderr, out)
	}
	fs := decodeFindings(t, out)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	f := fs[0]
	if f.Rule != "heartbeat-stalled" || f.Source != "kafka" || f.Target != "vast" || f.Topic != "heartbeats" || f.Severity != "critical" {
		t.Errorf("finding %+v", f)
	}
	if age, _ := f.Values["age_seconds"].(float64); age < 600 || age > 660 {
		t.Errorf("age_seconds %v, want about 600", f.Values["age_seconds"])
	}

	code, out, _ = runMain(t, nil, "", "check", "--mm2-config", props, "--groups")
	if code != exitFindings {
		t.Fatalf("text: code %d\n%s", code, out)
	}
	t.Logf("check --groups:\n%s", out)
	for _, want := range []string{
		"consumer groups kafka->vast",
		"billing",
		"heartbeat-stalled",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	rows := map[string]*regexp.Regexp{
		"partition 1 re-reads 181":  regexp.MustCompile(`orders\s+1\s+182\s+182\s+1\s+1\s+181\s+rereads`),
		"partition 0 comes over":    regexp.MustCompile(`orders\s+0\s+318\s+318\s+318\s+318\s+0\s+ok`),
		"partition 2 uncommitted":   regexp.MustCompile(`orders\s+2\s+-\s+-\s+-\s+-\s+-\s+uncommitted`),
		"group total 181 and ready": regexp.MustCompile(`billing\s+\(all\)\s+181\s+ready, last checkpoint \d+s ago`),
		"checkpointed partitions":   regexp.MustCompile(`(?m)^  billing: partitions with a checkpoint: 2 of 2 committed$`),
		"legend under the table":    regexp.MustCompile(`(?s)orders\s+2\s.*\ncolumns:\n  COMMITTED .*\n  CHECKPOINT .*\n  TRANSLATED .*\n  RESUMES AT .*\n  RE-READ .*`),
		"stale herder in table":     regexp.MustCompile(`kafka->vast\s+vast\s+heartbeats\s+\S+\s+10m\d+s\s+1m0s\s+stalled`),
		"replica fresh":             regexp.MustCompile(`via kafka->vast\s+vast\s+kafka.heartbeats\s+\S+\s+\d+s\s+1m0s\s+ok`),
	}
	for what, re := range rows {
		if !re.MatchString(out) {
			t.Errorf("%s: no match for %s in\n%s", what, re, out)
		}
	}

	code, out, _ = runMain(t, nil, "", "check", "--mm2-config", props, "--groups", "--format", "json")
	if code != exitFindings {
		t.Fatalf("json: code %d", code)
	}
	var group map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not NDJSON: %q: %v", line, err)
		}
		if m["kind"] == "group" {
			group = m
		}
	}
	if group == nil || group["group"] != "billing" || group["reread_records"] != float64(181) || group["cutover_ready"] != true {
		t.Fatalf("group line %v", group)
	}
	parts := group["partitions"].([]any)
	p2 := parts[2].(map[string]any)
	if p2["status"] != "uncommitted" || p2["committed"] != nil {
		t.Errorf("partition 2 %v: want uncommitted, no committed offset", p2)
	}
}

// TestRunLivenessMetrics: the daemon exposes heartbeat ages, readiness and
// the malformed-record count on /metrics and the readiness on /api/groups,
// and fires heartbeat-stalled.
func TestRunLivenessMetrics(t *testing.T) {
	props := startLivenessPair(t, time.Now())
	o := runOptions{
		log:           logFlags{timezone: "UTC"},
		listen:        "127.0.0.1:0",
		checkInterval: 200 * time.Millisecond,
		cluster:       clusterFlags{mm2Config: props, stallWindow: time.Minute, timeout: 5 * time.Second, live: livenessFlags{maxGroups: 100}},
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

	ageRe := regexp.MustCompile(`(?m)^mm2_watchdog_heartbeat_age_seconds\{source="kafka",target="vast"\} (\S+)$`)
	var body string
	waitFor(t, "liveness series on /metrics", func() bool {
		_, body = httpGet(t, base+"/metrics")
		return ageRe.MatchString(body) &&
			strings.Contains(body, `mm2_watchdog_group_cutover_ready{group="billing",source="kafka",target="vast"} 1`) &&
			strings.Contains(body, `mm2_watchdog_alerts_firing{rule="heartbeat-stalled",severity="critical"} 1`)
	})
	if v, _ := strconv.ParseFloat(ageRe.FindStringSubmatch(body)[1], 64); v < 600 || v > 660 {
		t.Errorf("heartbeat age %v, want about 600", v)
	}
	for _, want := range []string{
		`mm2_watchdog_group_reread_records{group="billing",source="kafka",target="vast"} 181`,
		`mm2_watchdog_malformed_records{cluster="vast",topic="heartbeats"} 1`,
		`mm2_watchdog_offset_sync_lag_records{source="kafka",target="vast",topic="orders"} 181`,
		`mm2_watchdog_findings_total{rule="checkpoint-stalled",severity="warning"} 0`,
		`mm2_watchdog_replicated_heartbeat_age_seconds{source="kafka",target="vast"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	code, groups := httpGet(t, base+"/api/groups")
	var flows []struct {
		Source string `json:"source"`
		Groups []struct {
			Group  string `json:"group"`
			Reread int64  `json:"reread_records"`
			Ready  bool   `json:"cutover_ready"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(groups), &flows); code != 200 || err != nil {
		t.Fatalf("/api/groups: %d %v %s", code, err, groups)
	}
	if len(flows) != 1 || len(flows[0].Groups) != 1 || flows[0].Groups[0].Reread != 181 || !flows[0].Groups[0].Ready {
		t.Errorf("/api/groups %s", groups)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
