package liveness

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
)

// heartbeatPair starts kafka and vast with flow kafka->vast and MM2's
// default heartbeat-only herder vast->kafka. The herder kafka->vast writes
// (kafka,vast) to heartbeats on vast at kvAge before t0; vast->kafka writes
// (vast,kafka) to heartbeats on kafka, replicated to kafka.heartbeats on
// vast, both fresh.
func heartbeatPair(t *testing.T, kvAge time.Duration) (src, tgt *kafkatest.Cluster) {
	t.Helper()
	src, tgt = kafkatest.New(t, "kafka"), kafkatest.New(t, "vast")
	src.CreateTopic(t, "heartbeats", 1, nil)
	tgt.CreateTopic(t, "heartbeats", 1, nil)
	tgt.CreateTopic(t, "kafka.heartbeats", 1, nil)
	for i := 5; i >= 1; i-- {
		ts := t0.Add(-time.Duration(i) * time.Second)
		src.Write(t, heartbeat("heartbeats", "vast", "kafka", ts))
		tgt.Write(t, heartbeat("kafka.heartbeats", "vast", "kafka", ts.Add(-500*time.Millisecond)))
		tgt.Write(t, heartbeat("heartbeats", "kafka", "vast", t0.Add(-kvAge-time.Duration(i)*time.Second)))
	}
	return src, tgt
}

func TestHeartbeatsFresh(t *testing.T) {
	src, tgt := heartbeatPair(t, 0)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	res := check(t, New(Options{}), cfg, t0, src, tgt)
	if got := findings(res); len(got) != 0 {
		t.Fatalf("fresh heartbeats gave findings %v", got)
	}
	kv := heartbeatRow(t, res, "kafka", "vast", false)
	if kv.Status != StatusOK || kv.Age != time.Second || kv.MaxAge != time.Minute || kv.Topic != "heartbeats" {
		t.Errorf("kafka->vast row %+v, want ok, 1s old, threshold 1m", kv)
	}
	repl := heartbeatRow(t, res, "kafka", "vast", true)
	if repl.Status != StatusOK || repl.Topic != "kafka.heartbeats" || repl.Age != 1500*time.Millisecond {
		t.Errorf("replicated row %+v", repl)
	}
	scopes := slices.Sorted(func(yield func(string) bool) {
		for s := range res.Findings {
			if !yield(s) {
				return
			}
		}
	})
	if want := []string{"groups:kafka->vast", "heartbeats:kafka->vast"}; !slices.Equal(scopes, want) {
		t.Errorf("scopes %v, want %v (present even when clean)", scopes, want)
	}
}

func TestHeartbeatsStale(t *testing.T) {
	src, tgt := heartbeatPair(t, 10*time.Minute)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	res := check(t, New(Options{}), cfg, t0, src, tgt)
	got := byRule(res, RuleHeartbeatStalled)
	if len(got) != 1 || len(res.All()) != 1 {
		t.Fatalf("want one heartbeat-stalled, got %v", findings(res))
	}
	f := got[0]
	if f.Source != "kafka" || f.Target != "vast" || f.Topic != "heartbeats" || f.Severity != "critical" {
		t.Errorf("finding %+v", f)
	}
	if f.Values["age_seconds"] != int64(601) || f.Values["max_age_seconds"] != int64(60) {
		t.Errorf("values %v, want age 601 s, threshold 60 s", f.Values)
	}
	if !strings.Contains(f.Summary, "10m1s old") {
		t.Errorf("summary does not give the age: %s", f.Summary)
	}
	if _, ok := res.Findings[HeartbeatScope("kafka", "vast")]; !ok {
		t.Errorf("finding not in its herder's scope: %v", res.Findings)
	}

	// The threshold follows emit.heartbeats.interval.seconds: 10 x 90 s.
	cfg = kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "emit.heartbeats.interval.seconds = 90"))
	res = check(t, New(Options{}), cfg, t0, src, tgt)
	if got := findings(res); len(got) != 0 {
		t.Errorf("10 min old heartbeats with a 15 min threshold gave %v", got)
	}
}

// TestHeartbeatOutOfTail: a herder whose last heartbeat has scrolled out of
// the records read, behind another herder's fresh ones, is stalled with a
// lower bound, then with the exact age once remembered.
func TestHeartbeatOutOfTail(t *testing.T) {
	src, tgt := heartbeatPair(t, 10*time.Minute)
	var recs []*kgo.Record
	for i := 100; i >= 1; i-- {
		recs = append(recs, heartbeat("heartbeats", "other", "vast", t0.Add(-time.Duration(i)*2*time.Second)))
	}
	tgt.Write(t, recs...)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	c := New(Options{HeartbeatTail: 50})
	res := check(t, c, cfg, t0, src, tgt)
	row := heartbeatRow(t, res, "kafka", "vast", false)
	if row.Status != StatusStalled || !row.AgeAtLeast || row.Age != 100*time.Second {
		t.Errorf("row %+v, want stalled, at least 100 s", row)
	}
	// With the whole tail read first, the checker remembers the heartbeat.
	c = New(Options{})
	check(t, c, cfg, t0, src, tgt)
	c.opts.HeartbeatTail = 50
	res = check(t, c, cfg, t0.Add(time.Minute), src, tgt)
	row = heartbeatRow(t, res, "kafka", "vast", false)
	if row.Status != StatusStalled || row.AgeAtLeast || row.Age != 11*time.Minute+time.Second {
		t.Errorf("remembered row %+v, want stalled, 11m1s", row)
	}
}

func TestHeartbeatsAbsent(t *testing.T) {
	src, tgt := kafkatest.New(t, "kafka"), kafkatest.New(t, "vast")
	src.CreateTopic(t, "heartbeats", 1, nil)
	src.Write(t, heartbeat("heartbeats", "vast", "kafka", t0.Add(-time.Second)))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	res := check(t, New(Options{}), cfg, t0, src, tgt)
	got := findings(res)
	want := []string{"heartbeat-missing kafka->vast heartbeats", "heartbeat-missing kafka->vast kafka.heartbeats"}
	if !slices.Equal(got, want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
	for _, f := range res.All() {
		if f.Severity != "warning" {
			t.Errorf("severity %s", f.Severity)
		}
	}

	// An empty heartbeats topic is missing too.
	tgt.CreateTopic(t, "heartbeats", 1, nil)
	res = check(t, New(Options{}), cfg, t0, src, tgt)
	if row := heartbeatRow(t, res, "kafka", "vast", false); row.Status != StatusMissing || !strings.Contains(row.Err, "no records") {
		t.Errorf("empty topic row %+v", row)
	}

	// Heartbeats off: nothing is read or reported.
	cfg = kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "emit.heartbeats.enabled = false"))
	res = check(t, New(Options{}), cfg, t0, src, tgt)
	if len(res.Heartbeats) != 0 || len(byRule(res, RuleHeartbeatMissing)) != 0 {
		t.Errorf("heartbeats disabled: rows %+v findings %v", res.Heartbeats, findings(res))
	}
}

// TestHeartbeatsMalformed: truncated records and an unknown version are
// skipped and counted, the valid heartbeat still counts.
func TestHeartbeatsMalformed(t *testing.T) {
	src, tgt := heartbeatPair(t, 0)
	good := heartbeat("heartbeats", "kafka", "vast", t0)
	v1 := append([]byte{0, 1}, good.Value[2:]...)
	tgt.Write(t,
		&kgo.Record{Topic: "heartbeats", Key: good.Key, Value: good.Value[:5], Timestamp: t0},      // truncated value
		&kgo.Record{Topic: "heartbeats", Key: []byte{0, 9, 'k'}, Value: good.Value, Timestamp: t0}, // truncated key
		&kgo.Record{Topic: "heartbeats", Key: good.Key, Value: v1, Timestamp: t0.Add(time.Hour)},   // version 1
		&kgo.Record{Topic: "heartbeats", Key: nil, Value: nil, Timestamp: t0},                      // tombstone-like
	)
	var logs bytes.Buffer
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	c := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	res := check(t, c, cfg, t0, src, tgt)
	if got := findings(res); len(got) != 0 {
		t.Errorf("findings %v", got)
	}
	if row := heartbeatRow(t, res, "kafka", "vast", false); row.Status != StatusOK || row.Age != time.Second {
		t.Errorf("row %+v: the version-1 record must not count", row)
	}
	var n int
	for _, m := range res.Malformed {
		if m.Cluster == "vast" && m.Topic == "heartbeats" {
			n = m.Records
		}
	}
	if n != 4 {
		t.Errorf("malformed count %d, want 4 (%+v)", n, res.Malformed)
	}
	if !strings.Contains(logs.String(), "record truncated") || !strings.Contains(logs.String(), "records=4") {
		t.Errorf("debug log does not name the skipped records: %s", logs.String())
	}
}

// TestHeartbeatUnknownKeepsFindings: when the target cannot be reached, the
// herder's scope is unknown (alerts kept), not clean.
func TestHeartbeatUnknownKeepsFindings(t *testing.T) {
	src, tgt := heartbeatPair(t, 10*time.Minute)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	c := New(Options{})
	r := round(t, cfg, t0, src, tgt)
	delete(r.Snapshots, "vast")
	res := c.Check(t.Context(), r)
	if !slices.Contains(res.Unknown, HeartbeatScope("kafka", "vast")) {
		t.Errorf("unknown %v", res.Unknown)
	}
	if _, ok := res.Findings[HeartbeatScope("kafka", "vast")]; ok {
		t.Errorf("an unknown scope must not be synced as clean")
	}
	if len(byRule(res, RuleHeartbeatStalled)) != 0 {
		t.Errorf("findings without data: %v", findings(res))
	}
}

// TestReplicatedHeartbeatStale: the replica on vast is ten minutes old. With
// fresh heartbeats on kafka the replication is blamed; with stale ones, the
// herders emitting into kafka.
func TestReplicatedHeartbeatStale(t *testing.T) {
	src, tgt := kafkatest.New(t, "kafka"), kafkatest.New(t, "vast")
	src.CreateTopic(t, "heartbeats", 1, nil)
	tgt.CreateTopic(t, "heartbeats", 1, nil)
	tgt.CreateTopic(t, "kafka.heartbeats", 1, nil)
	tgt.Write(t, heartbeat("heartbeats", "kafka", "vast", t0.Add(-time.Second)),
		heartbeat("kafka.heartbeats", "vast", "kafka", t0.Add(-10*time.Minute)))
	src.Write(t, heartbeat("heartbeats", "vast", "kafka", t0.Add(-9*time.Minute)))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	res := check(t, New(Options{}), cfg, t0, src, tgt)
	got := byRule(res, RuleHeartbeatStalled)
	if len(got) != 1 || got[0].Topic != "kafka.heartbeats" || !strings.Contains(got[0].Summary, "9m0s old too") {
		t.Fatalf("findings %+v", got)
	}
	src.Write(t, heartbeat("heartbeats", "vast", "kafka", t0.Add(-2*time.Second)))
	res = check(t, New(Options{}), cfg, t0, src, tgt)
	got = byRule(res, RuleHeartbeatStalled)
	if len(got) != 1 || !strings.Contains(got[0].Summary, "replication is at fault") {
		t.Fatalf("findings %+v", got)
	}
	row := heartbeatRow(t, res, "kafka", "vast", true)
	if row.Age != 10*time.Minute || !row.UpstreamLast.Equal(t0.Add(-2*time.Second)) || !slices.Equal(row.Emitters, []string{"vast->kafka"}) {
		t.Errorf("row %+v", row)
	}
}
