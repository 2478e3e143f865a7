package parity

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// In-memory snapshots, for the states a kfake cluster cannot be brought into
// on demand (metadata errors of one topic, failed offset listings) and for
// the benchmarks.

// memTopic is a topic whose partition p holds offsets [starts[p], ends[p]);
// starts may be nil (all 0).
func memTopic(name string, starts []int64, ends ...int64) *cluster.Topic {
	t := &cluster.Topic{Name: name, Partitions: len(ends), Offsets: make([]cluster.PartitionOffsets, len(ends)),
		Configs: map[string]string{"cleanup.policy": "delete", "retention.ms": "604800000"}}
	for p, e := range ends {
		var s int64
		if starts != nil {
			s = starts[p]
		}
		t.Offsets[p] = cluster.PartitionOffsets{Start: s, End: e}
	}
	return t
}

func failedTopic(name string, err error) *cluster.Topic {
	return &cluster.Topic{Name: name, Partitions: -1, Err: err}
}

func memSnap(alias string, topics ...*cluster.Topic) *cluster.Snapshot {
	s := &cluster.Snapshot{Alias: alias, Topics: make(map[string]*cluster.Topic, len(topics)),
		APIs: map[int16]int16{int16(kmsg.CreatePartitions): 3, int16(kmsg.Metadata): 12}}
	for _, t := range topics {
		s.Topics[t.Name] = t
	}
	return s
}

func memConfig(t testing.TB, extra string) *mm2config.Config {
	return kafkatest.ParseConfig(t, "clusters = kafka, vast\nkafka.bootstrap.servers = 127.0.0.1:1\nvast.bootstrap.servers = 127.0.0.1:2\nkafka->vast.enabled = true\n"+extra+"\n")
}

func memRound(cfg *mm2config.Config, at time.Time, src, tgt *cluster.Snapshot) Round {
	return Round{Config: cfg, Now: at, Snapshots: map[string]*cluster.Snapshot{"kafka": src, "vast": tgt}}
}

// TestUnknownMetadataKeepsFindings: a topic whose metadata failed on either
// side keeps the findings of the round before instead of resolving them; an
// unknown offset leaves records_at_risk out instead of writing 0; a target
// topic the broker does not know is missing.
func TestUnknownMetadataKeepsFindings(t *testing.T) {
	cfg := memConfig(t, "")
	c := New(Options{MissingGrace: noGrace})
	ctx := context.Background()
	src := memSnap("kafka", memTopic("orders", nil, 1, 2, 3, 4))

	res := c.Check(ctx, memRound(cfg, t0, src, memSnap("vast", memTopic("kafka.orders", nil, 1, 2))), nil)
	first := byRule(res, flowScope, RuleUnmirrored)
	if len(first) != 1 {
		t.Fatalf("first round: %v", rules(res))
	}
	if n, _ := value(first[0], "records_at_risk"); n != 7 {
		t.Errorf("records_at_risk = %v, want 7", first[0].Values["records_at_risk"])
	}

	for name, r := range map[string]Round{
		"target":            memRound(cfg, t0.Add(time.Minute), src, memSnap("vast", failedTopic("kafka.orders", kerr.LeaderNotAvailable))),
		"source":            memRound(cfg, t0.Add(2*time.Minute), memSnap("kafka", failedTopic("orders", kerr.TopicAuthorizationFailed)), memSnap("vast", memTopic("kafka.orders", nil, 1, 2))),
		"target-no-answer":  memRound(cfg, t0.Add(3*time.Minute), src, memSnap("vast", failedTopic("kafka.orders", cluster.ErrNoAnswer))),
		"target-authorized": memRound(cfg, t0.Add(4*time.Minute), src, memSnap("vast", failedTopic("kafka.orders", kerr.TopicAuthorizationFailed))),
	} {
		res := c.Check(ctx, r, nil)
		got := byRule(res, flowScope, RuleUnmirrored)
		if len(got) != 1 || got[0].Summary != first[0].Summary {
			t.Errorf("%s metadata unknown: findings %v, want the last unmirrored-partitions kept", name, rules(res))
		}
		if row := row(t, res, "kafka", "vast", "orders"); row.Status != StatusUnknown || row.Err == "" || row.RecordsAtRisk != -1 {
			t.Errorf("%s metadata unknown: row %+v", name, row)
		}
	}

	res = c.Check(ctx, memRound(cfg, t0.Add(5*time.Minute), src, memSnap("vast", failedTopic("kafka.orders", kerr.UnknownTopicOrPartition))), nil)
	if got := byRule(res, flowScope, RuleTargetTopicMissing); len(got) != 1 || len(res.All()) != 1 {
		t.Errorf("UNKNOWN_TOPIC_OR_PARTITION on the target: %v, want target-topic-missing only", rules(res))
	}

	broken := memTopic("orders", nil, 1, 2, 3, 4)
	broken.Offsets[3] = cluster.PartitionOffsets{Start: 0, End: -1, Err: kerr.NotLeaderForPartition}
	res = c.Check(ctx, memRound(cfg, t0.Add(6*time.Minute), memSnap("kafka", broken), memSnap("vast", memTopic("kafka.orders", nil, 1, 2))), nil)
	got := byRule(res, flowScope, RuleUnmirrored)
	if len(got) != 1 {
		t.Fatalf("offset unknown: %v", rules(res))
	}
	if _, ok := got[0].Values["records_at_risk"]; ok {
		t.Errorf("records_at_risk = %v with an unknown offset, want absent", got[0].Values["records_at_risk"])
	}
	if row := row(t, res, "kafka", "vast", "orders"); row.RecordsAtRisk != -1 {
		t.Errorf("row = %+v", row)
	}
}

// TestRecordTimes: the timer is asked once per log start offset, only for
// topics that delete by time, at most MaxRecordReads times a round; a failed
// read leaves the age out.
func TestRecordTimes(t *testing.T) {
	cfg := memConfig(t, "")
	ctx := context.Background()
	tgt := memSnap("vast", memTopic("kafka.orders", nil, 10, 10), memTopic("kafka.log", nil, 5))
	timer := &mapTimer{times: map[string]time.Time{
		"kafka/orders/2/0": t0.Add(-2 * time.Hour),
		"kafka/orders/3/5": t0.Add(-3 * time.Hour),
		"kafka/orders/3/6": t0.Add(-90 * time.Minute),
	}}
	c := New(Options{})
	srcAt := func(start3 int64) *cluster.Snapshot {
		log := memTopic("log", nil, 5, 5)
		log.Configs["cleanup.policy"] = "compact"
		return memSnap("kafka", memTopic("orders", []int64{0, 0, 0, start3}, 10, 10, 10, 10), log)
	}
	age := func(res *Result) (int64, int64) {
		t.Helper()
		un := byRule(res, flowScope, RuleUnmirrored)
		for _, f := range un {
			if f.Topic == "kafka.log" {
				if _, ok := f.Values["oldest_record_age_seconds"]; ok {
					t.Errorf("age reported for a compacted topic: %v", f.Values)
				}
				continue
			}
			a, _ := value(f, "oldest_record_age_seconds")
			left, _ := value(f, "seconds_until_retention")
			return a, left
		}
		t.Fatalf("no unmirrored finding for orders: %v", rules(res))
		return 0, 0
	}

	a, left := age(c.Check(ctx, memRound(cfg, t0, srcAt(5), tgt), timer))
	if a != 3*3600 || left != 7*86400-3*3600 || timer.calls != 2 {
		t.Errorf("round 1: age %d, left %d, calls %d; want %d, %d, 2", a, left, timer.calls, 3*3600, 7*86400-3*3600)
	}
	a, _ = age(c.Check(ctx, memRound(cfg, t0.Add(time.Minute), srcAt(5), tgt), timer))
	if a != 3*3600+60 || timer.calls != 2 {
		t.Errorf("round 2: age %d, calls %d; want %d from the remembered timestamps", a, timer.calls, 3*3600+60)
	}
	a, _ = age(c.Check(ctx, memRound(cfg, t0.Add(2*time.Minute), srcAt(6), tgt), timer))
	if a != 2*3600+120 || timer.calls != 3 {
		t.Errorf("round 3 (start offset moved): age %d, calls %d; want %d, 3", a, timer.calls, 2*3600+120)
	}

	// One read a round: the cache fills over rounds.
	timer.calls = 0
	c = New(Options{MaxRecordReads: 1})
	c.Check(ctx, memRound(cfg, t0, srcAt(5), tgt), timer)
	c.Check(ctx, memRound(cfg, t0, srcAt(5), tgt), timer)
	c.Check(ctx, memRound(cfg, t0, srcAt(5), tgt), timer)
	if timer.calls != 2 {
		t.Errorf("MaxRecordReads 1: %d calls over three rounds, want 2", timer.calls)
	}

	// Failed reads are not retried at once, and leave the age out.
	timer = &mapTimer{}
	c = New(Options{})
	res := c.Check(ctx, memRound(cfg, t0, srcAt(5), tgt), timer)
	for _, f := range byRule(res, flowScope, RuleUnmirrored) {
		if _, ok := f.Values["oldest_record_age_seconds"]; ok {
			t.Errorf("age without a timestamp: %v", f.Values)
		}
	}
	c.Check(ctx, memRound(cfg, t0.Add(time.Minute), srcAt(5), tgt), timer)
	if timer.calls != 2 {
		t.Errorf("failed reads retried at once: %d calls", timer.calls)
	}
	c.Check(ctx, memRound(cfg, t0.Add(DefaultReadRetry), srcAt(5), tgt), timer)
	if timer.calls != 4 {
		t.Errorf("failed reads not retried after %v: %d calls", DefaultReadRetry, timer.calls)
	}

	// Past retention, the time left is 0, never negative.
	old := memTopic("orders", nil, 10, 10, 10, 10)
	old.Configs["retention.ms"] = strconv.Itoa(3600 * 1000)
	timer = &mapTimer{times: map[string]time.Time{"kafka/orders/2/0": t0.Add(-2 * time.Hour), "kafka/orders/3/0": t0.Add(-time.Hour)}}
	res = New(Options{}).Check(ctx, memRound(cfg, t0, memSnap("kafka", old), tgt), timer)
	if un := byRule(res, flowScope, RuleUnmirrored); len(un) != 1 || un[0].Values["seconds_until_retention"] != int64(0) {
		t.Errorf("past retention: %+v", un)
	}
}

// TestStateForgotten: a topic that leaves the filter, and a flow that leaves
// the configuration, are forgotten; a flow that cannot be checked is not.
func TestStateForgotten(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	both := memConfig(t, "kafka->vast.topics = orders, payments")
	src := memSnap("kafka", memTopic("orders", nil, 1), memTopic("payments", nil, 1))
	tgt := memSnap("vast", memTopic("kafka.orders", nil, 1))
	c.Check(ctx, memRound(both, t0, src, tgt), nil) // payments pending since t0
	if n := len(c.flows[flowKey{"kafka", "vast"}].topics); n != 2 {
		t.Fatalf("%d topics tracked, want 2", n)
	}
	down := Round{Config: both, Now: t0.Add(5 * time.Minute), Snapshots: map[string]*cluster.Snapshot{"kafka": src},
		Failures: map[string]error{"vast": errors.New("connection refused")}}
	c.Check(ctx, down, nil)
	if n := len(c.flows[flowKey{"kafka", "vast"}].topics); n != 2 {
		t.Errorf("%d topics tracked while the target is down, want 2 kept", n)
	}
	// The grace period ran across the outage: payments has been missing
	// since t0.
	res := c.Check(ctx, memRound(both, t0.Add(11*time.Minute), src, tgt), nil)
	if len(byRule(res, flowScope, RuleTargetTopicMissing)) != 1 {
		t.Errorf("grace timer lost across the outage: %v", rules(res))
	}
	one := memConfig(t, "kafka->vast.topics = orders")
	c.Check(ctx, memRound(one, t0.Add(12*time.Minute), src, tgt), nil)
	if n := len(c.flows[flowKey{"kafka", "vast"}].topics); n != 1 {
		t.Errorf("%d topics tracked after payments left the filter, want 1", n)
	}
	none := kafkatest.ParseConfig(t, "clusters = kafka, vast\nkafka.bootstrap.servers = 127.0.0.1:1\nvast.bootstrap.servers = 127.0.0.1:2\nvast->kafka.enabled = true\n")
	c.Check(ctx, Round{Config: none, Now: t0, Snapshots: map[string]*cluster.Snapshot{"kafka": src, "vast": tgt}}, nil)
	if _, ok := c.flows[flowKey{"kafka", "vast"}]; ok {
		t.Error("state of a flow that left the configuration kept")
	}
}

// memLarge builds source and target snapshots of n topics of parts
// partitions, all mirrored except every 100th topic, which lacks its last
// partition on the target.
func memLarge(n, parts int) (src, tgt *cluster.Snapshot) {
	src, tgt = memSnap("kafka"), memSnap("vast")
	ends := make([]int64, parts)
	for p := range ends {
		ends[p] = int64(1000 + p)
	}
	for i := range n {
		name := fmt.Sprintf("topic-%05d", i)
		src.Topics[name] = memTopic(name, nil, ends...)
		tp := parts
		if i%100 == 0 {
			tp--
		}
		tgt.Topics["kafka."+name] = memTopic("kafka."+name, nil, ends[:tp]...)
	}
	return src, tgt
}
