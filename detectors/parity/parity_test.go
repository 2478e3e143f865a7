package parity

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

var flowScope = FlowScope("kafka", "vast")

func noGrace(*mm2config.Flow) time.Duration { return 0 }

// withoutCreatePartitions is a broker that advertises neither
// CreatePartitions nor IncrementalAlterConfigs (LIBRARIES.md §1).
func withoutCreatePartitions() kfake.Opt {
	v := kversion.Stable()
	v.SetMaxKeyVersion(int16(kmsg.CreatePartitions), -1)
	v.SetMaxKeyVersion(int16(kmsg.IncrementalAlterConfigs), -1)
	return kfake.MaxVersions(v)
}

// TestUnmirroredPartitions: source orders has 6 partitions, its target 3,
// for each way a target can refuse to add partitions. The finding names
// partitions 3, 4, 5 with the exact records in them, the age of the oldest
// one, and how long retention leaves.
func TestUnmirroredPartitions(t *testing.T) {
	const retention = 7 * 24 * time.Hour
	shapes := []struct {
		name  string
		opts  []kfake.Opt
		setup func(*kafkatest.Cluster)
		lacks bool // the target does not advertise CreatePartitions
	}{
		{name: "max-versions", opts: []kfake.Opt{withoutCreatePartitions()}, lacks: true},
		{name: "fault", setup: func(k *kafkatest.Cluster) {
			k.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreatePartitions, kmsg.IncrementalAlterConfigs}, Err: kerr.UnsupportedVersion, Count: -1})
		}},
		{name: "control-key", setup: func(k *kafkatest.Cluster) {
			k.Fake.ControlKey(int16(kmsg.CreatePartitions), func(kr kmsg.Request) (kmsg.Response, error, bool) {
				k.Fake.KeepControl()
				req := kr.(*kmsg.CreatePartitionsRequest)
				resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
				for _, rt := range req.Topics {
					st := kmsg.NewCreatePartitionsResponseTopic()
					st.Topic = rt.Topic
					st.ErrorCode = kerr.InvalidRequest.Code
					msg := "partition changes are disabled"
					st.ErrorMessage = &msg
					resp.Topics = append(resp.Topics, st)
				}
				return resp, nil, true
			})
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			src := kafkatest.New(t, "kafka")
			tgt := kafkatest.New(t, "vast", append(sh.opts, kfake.SeedTopics(3, "kafka.orders"))...)
			if sh.setup != nil {
				sh.setup(tgt)
			}
			// The shape really refuses to add partitions.
			ctx := context.Background()
			if resp, err := tgt.Admin.CreatePartitions(ctx, 3, "kafka.orders"); err == nil && resp["kafka.orders"].Err == nil {
				t.Fatal("the target added partitions; the refusal shape does not work")
			}

			ret := "604800000"
			src.CreateTopic(t, "orders", 6, map[string]*string{"retention.ms": &ret})
			counts := []int{5, 7, 9, 11, 13, 17}
			ages := []time.Duration{time.Minute, time.Minute, time.Minute, 2 * time.Hour, 3 * time.Hour, time.Hour}
			for p, n := range counts {
				src.Produce(t, "orders", int32(p), n, func(i int) time.Time { return t0.Add(-ages[p] + time.Duration(i)*time.Second) })
			}
			for p := range 3 {
				tgt.Produce(t, "kafka.orders", int32(p), counts[p], nil)
			}

			cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
			res := New(Options{}).Check(ctx, takeRound(t, cfg, t0, src, tgt), timers(src, tgt))

			un := byRule(res, flowScope, RuleUnmirrored)
			if len(un) != 1 {
				t.Fatalf("unmirrored findings = %+v, want one", res.All())
			}
			f := un[0]
			if f.Topic != "kafka.orders" || f.Source != "kafka" || f.Target != "vast" || f.Severity != detectors.Critical {
				t.Errorf("finding = %+v", f)
			}
			if !slices.Equal(f.Partitions, []int32{3, 4, 5}) {
				t.Errorf("partitions = %v, want [3 4 5]", f.Partitions)
			}
			want := map[string]int64{
				"source_partitions":         6,
				"target_partitions":         3,
				"missing_partitions":        3,
				"records_at_risk":           11 + 13 + 17,
				"oldest_record_age_seconds": int64((3 * time.Hour).Seconds()),
				"seconds_until_retention":   int64((retention - 3*time.Hour).Seconds()),
			}
			for k, w := range want {
				if got, ok := value(f, k); !ok || got != w {
					t.Errorf("values[%s] = %v (present %v), want %d", k, f.Values[k], ok, w)
				}
			}
			if !strings.Contains(f.Summary, "partitions 3, 4, 5") {
				t.Errorf("summary %q does not name the partitions", f.Summary)
			}
			r := row(t, res, "kafka", "vast", "orders")
			if r.Status != StatusUnmirrored || r.RecordsAtRisk != 41 || r.SourcePartitions != 6 || r.TargetPartitions != 3 {
				t.Errorf("row = %+v", r)
			}

			lacks := byRule(res, flowScope, RuleLacksCreatePartitions)
			if sh.lacks != (len(lacks) == 1) {
				t.Errorf("target-lacks-create-partitions findings = %+v, want present=%v", lacks, sh.lacks)
			}
			if got := len(res.All()); got != 1+len(lacks) {
				t.Errorf("findings = %v, want only unmirrored-partitions (and lacks)", rules(res))
			}
		})
	}
}

// TestTargetTopicMissing: a filtered topic absent on the target fires at once
// in the one-shot check, and only after refresh.topics.interval + 60 s in the
// daemon; creating it resolves the finding.
func TestTargetTopicMissing(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(3, "orders"), kfake.SeedTopics(2, "payments"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(3, "kafka.orders"))
	src.Produce(t, "payments", 0, 4, nil)
	src.Produce(t, "payments", 1, 6, nil)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "refresh.topics.interval.seconds = 30"))
	ctx := context.Background()

	t.Run("one-shot", func(t *testing.T) {
		res := New(Options{MissingGrace: noGrace}).Check(ctx, takeRound(t, cfg, t0, src, tgt), nil)
		got := byRule(res, flowScope, RuleTargetTopicMissing)
		if len(got) != 1 || got[0].Topic != "kafka.payments" {
			t.Fatalf("findings = %+v", res.All())
		}
		if n, _ := value(got[0], "records_at_risk"); n != 10 {
			t.Errorf("records_at_risk = %v, want 10", got[0].Values["records_at_risk"])
		}
		if r := row(t, res, "kafka", "vast", "payments"); r.Status != StatusMissing || r.TargetPartitions != 0 || r.RecordsAtRisk != 10 {
			t.Errorf("row = %+v", r)
		}
		if len(res.All()) != 1 {
			t.Errorf("findings = %v", rules(res))
		}
	})

	t.Run("grace", func(t *testing.T) {
		c := New(Options{}) // grace = 30 s + 60 s
		for _, d := range []time.Duration{0, 30 * time.Second, 89 * time.Second} {
			res := c.Check(ctx, takeRound(t, cfg, t0.Add(d), src, tgt), nil)
			if fs := res.All(); len(fs) != 0 {
				t.Fatalf("at +%v: findings %v, want none within the grace period", d, rules(res))
			}
			if r := row(t, res, "kafka", "vast", "payments"); r.Status != StatusPending {
				t.Errorf("at +%v: row = %+v, want pending", d, r)
			}
		}
		res := c.Check(ctx, takeRound(t, cfg, t0.Add(90*time.Second), src, tgt), nil)
		got := byRule(res, flowScope, RuleTargetTopicMissing)
		if len(got) != 1 {
			t.Fatalf("after the grace period: findings %v", rules(res))
		}
		if s, _ := value(got[0], "missing_for_seconds"); s != 90 {
			t.Errorf("missing_for_seconds = %v, want 90", got[0].Values["missing_for_seconds"])
		}

		tgt.CreateTopic(t, "kafka.payments", 2, nil)
		res = c.Check(ctx, takeRound(t, cfg, t0.Add(100*time.Second), src, tgt), nil)
		if fs := res.All(); len(fs) != 0 {
			t.Errorf("after creating the target topic: findings %v", rules(res))
		}
		if r := row(t, res, "kafka", "vast", "payments"); r.Status != StatusOK || r.TargetPartitions != 2 || r.RecordsAtRisk != 0 {
			t.Errorf("row = %+v", r)
		}
	})
}

// TestHealthy: every replicated topic mirrored with its partitions, internal
// topics and cycles left alone: no finding, every row ok.
func TestHealthy(t *testing.T) {
	src := kafkatest.New(t, "kafka",
		kfake.SeedTopics(3, "orders"), kfake.SeedTopics(2, "payments"), kfake.SeedTopics(1, "heartbeats"),
		kfake.SeedTopics(1, "mm2-offsets.vast.internal", "vast.checkpoints.internal", "__private", "vast.orders"))
	tgt := kafkatest.New(t, "vast",
		kfake.SeedTopics(3, "kafka.orders"), kfake.SeedTopics(4, "kafka.payments"), kfake.SeedTopics(1, "kafka.heartbeats"))
	src.Produce(t, "orders", 1, 3, nil)
	tgt.Produce(t, "kafka.orders", 1, 3, nil)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	res := New(Options{MissingGrace: noGrace}).Check(context.Background(), takeRound(t, cfg, t0, src, tgt), nil)
	if fs := res.All(); len(fs) != 0 {
		t.Fatalf("findings %v, want none", rules(res))
	}
	if len(res.Unknown) != 0 {
		t.Errorf("unknown = %v", res.Unknown)
	}
	if _, ok := res.Findings[flowScope]; !ok {
		t.Errorf("the judged flow's scope is absent from Findings: %v", res.Findings)
	}
	want := []string{"heartbeats->kafka.heartbeats", "orders->kafka.orders", "payments->kafka.payments"}
	if got := rowTopics(res, "kafka", "vast"); !slices.Equal(got, want) {
		t.Errorf("rows = %v, want %v", got, want)
	}
	for _, fr := range res.Flows {
		for _, r := range fr.Rows {
			if r.Status != StatusOK || r.RecordsAtRisk != 0 {
				t.Errorf("row = %+v", r)
			}
		}
	}
}

// TestTargetUnreachable: with the target closed, the round reports
// cluster-unreachable and no parity finding, and the flow scope is unknown.
func TestTargetUnreachable(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(6, "orders"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(3, "kafka.orders"))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	c := New(Options{MissingGrace: noGrace})
	ctx := context.Background()
	res := c.Check(ctx, takeRound(t, cfg, t0, src, tgt), nil)
	if len(byRule(res, flowScope, RuleUnmirrored)) != 1 {
		t.Fatalf("first round: %v", rules(res))
	}

	tgt.Fake.Close()
	r := takeRound(t, cfg, t0.Add(time.Minute), src, tgt)
	if r.Failures["vast"] == nil {
		t.Fatal("snapshot of the closed cluster succeeded")
	}
	res = c.Check(ctx, r, nil)
	un := res.Findings[ClusterScope]
	if len(un) != 1 || un[0].Rule != RuleClusterUnreachable || un[0].Cluster != "vast" || un[0].Severity != detectors.Critical {
		t.Fatalf("cluster findings = %+v", un)
	}
	if un[0].Cause == "" || un[0].Values["reason"] == "" {
		t.Errorf("cluster-unreachable without a cause or reason: %+v", un[0])
	}
	if _, judged := res.Findings[flowScope]; judged {
		t.Errorf("the flow with an unreachable target was judged: %v", res.Findings[flowScope])
	}
	if !slices.Equal(res.Unknown, []string{flowScope}) {
		t.Errorf("unknown = %v, want [%s]", res.Unknown, flowScope)
	}
	if len(res.Flows) != 1 || res.Flows[0].Unknown == "" || len(res.Flows[0].Rows) != 0 {
		t.Errorf("flow report = %+v", res.Flows)
	}
	if got := rules(res); len(got) != 1 {
		t.Errorf("findings = %v, want only cluster-unreachable", got)
	}
}

// TestPolicies: the target topic name comes from the flow's replication
// policy; heartbeats keep DefaultReplicationPolicy names under Identity.
func TestPolicies(t *testing.T) {
	cases := []struct {
		name, extra       string
		target, heartbeat string
	}{
		{"default", "", "kafka.orders", "kafka.heartbeats"},
		{"separator", "replication.policy.separator = _", "kafka_orders", "kafka_heartbeats"},
		{"identity", "replication.policy.class = " + mm2config.IdentityPolicyClass, "orders", "kafka.heartbeats"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := kafkatest.New(t, "kafka", kfake.SeedTopics(4, "orders"), kfake.SeedTopics(1, "heartbeats"))
			tgt := kafkatest.New(t, "vast", kfake.SeedTopics(2, tc.target), kfake.SeedTopics(1, tc.heartbeat))
			src.Produce(t, "orders", 3, 8, nil)
			cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, tc.extra))
			res := New(Options{MissingGrace: noGrace}).Check(context.Background(), takeRound(t, cfg, t0, src, tgt), nil)
			want := []string{"heartbeats->" + tc.heartbeat, "orders->" + tc.target}
			if got := rowTopics(res, "kafka", "vast"); !slices.Equal(got, want) {
				t.Errorf("rows = %v, want %v", got, want)
			}
			un := byRule(res, flowScope, RuleUnmirrored)
			if len(un) != 1 || un[0].Topic != tc.target || !slices.Equal(un[0].Partitions, []int32{2, 3}) {
				t.Fatalf("findings = %+v", res.All())
			}
			if n, _ := value(un[0], "records_at_risk"); n != 8 {
				t.Errorf("records_at_risk = %v, want 8", un[0].Values["records_at_risk"])
			}
			if len(res.All()) != 1 {
				t.Errorf("findings = %v", rules(res))
			}
		})
	}
}

// TestTopicFilters: regex entries, literal entries and excludes select the
// topics, with MM2's full-match semantics.
func TestTopicFilters(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(1,
		"orders", "orders-eu", "orders-old", "orders.tmp", "payments", "pay1", "audit", "audit-log", "other"))
	tgt := kafkatest.New(t, "vast")
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt,
		`kafka->vast.topics = orders.*, pay[a-z]+, audit`,
		`kafka->vast.topics.exclude = .*\\.tmp, orders-old`))
	res := New(Options{MissingGrace: noGrace}).Check(context.Background(), takeRound(t, cfg, t0, src, tgt), nil)
	var got []string
	for _, f := range byRule(res, flowScope, RuleTargetTopicMissing) {
		got = append(got, f.Topic)
	}
	want := []string{"kafka.audit", "kafka.orders", "kafka.orders-eu", "kafka.payments"}
	if !slices.Equal(got, want) {
		t.Errorf("target-topic-missing for %v, want %v", got, want)
	}
}

// TestSourceGainsPartitions: partitions added to a source topic between
// rounds show up as unmirrored with the records produced into them, and the
// finding is gone once the target topic is recreated with enough partitions.
func TestSourceGainsPartitions(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(3, "orders"))
	tgt := kafkatest.New(t, "vast", withoutCreatePartitions(), kfake.SeedTopics(3, "kafka.orders"))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	c := New(Options{})
	ctx := context.Background()
	unmirrored := func(at time.Time) (*Result, []detectors.Finding) {
		t.Helper()
		res := c.Check(ctx, takeRound(t, cfg, at, src, tgt), nil)
		return res, byRule(res, flowScope, RuleUnmirrored)
	}

	res, un := unmirrored(t0)
	if len(un) != 0 || len(byRule(res, flowScope, RuleLacksCreatePartitions)) != 1 {
		t.Fatalf("first round: %v", rules(res))
	}

	src.AddPartitions(t, "orders", 3)
	src.Produce(t, "orders", 3, 2, nil)
	src.Produce(t, "orders", 4, 3, nil)
	src.Produce(t, "orders", 5, 4, nil)
	src.Produce(t, "orders", 0, 50, nil) // not at risk
	_, un = unmirrored(t0.Add(time.Minute))
	if len(un) != 1 || !slices.Equal(un[0].Partitions, []int32{3, 4, 5}) {
		t.Fatalf("after adding partitions: %+v", un)
	}
	if n, _ := value(un[0], "records_at_risk"); n != 9 {
		t.Errorf("records_at_risk = %v, want 9", un[0].Values["records_at_risk"])
	}

	src.Produce(t, "orders", 5, 1, nil)
	_, un = unmirrored(t0.Add(2 * time.Minute))
	if len(un) != 1 {
		t.Fatalf("third round: %+v", un)
	}
	if n, _ := value(un[0], "records_at_risk"); n != 10 {
		t.Errorf("records_at_risk = %v, want 10 after one more record", un[0].Values["records_at_risk"])
	}

	tgt.DeleteTopic(t, "kafka.orders")
	tgt.CreateTopic(t, "kafka.orders", 6, nil)
	res, un = unmirrored(t0.Add(3 * time.Minute))
	if len(un) != 0 {
		t.Errorf("after recreating the target topic: %+v", un)
	}
	if r := row(t, res, "kafka", "vast", "orders"); r.Status != StatusOK || r.TargetPartitions != 6 {
		t.Errorf("row = %+v", r)
	}
}

// TestReplicationStalled: over injected times, partitions present on both
// sides whose source moves while the target does not are reported once the
// window has passed, next to the unmirrored partitions of the same topic.
func TestReplicationStalled(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(6, "orders"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(3, "kafka.orders"))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	c := New(Options{StallWindow: 5 * time.Minute})
	ctx := context.Background()
	check := func(at time.Time) (*Result, []int32) {
		t.Helper()
		res := c.Check(ctx, takeRound(t, cfg, at, src, tgt), nil)
		st := byRule(res, flowScope, RuleReplicationStalled)
		if len(st) > 1 {
			t.Fatalf("%d stall findings", len(st))
		}
		if len(byRule(res, flowScope, RuleUnmirrored)) != 1 {
			t.Errorf("unmirrored-partitions missing: %v", rules(res))
		}
		if len(st) == 0 {
			return res, nil
		}
		if st[0].Topic != "kafka.orders" {
			t.Errorf("stall finding topic = %q", st[0].Topic)
		}
		return res, st[0].Partitions
	}
	for p := range int32(6) {
		src.Produce(t, "orders", p, 2, nil)
	}
	if _, got := check(t0); got != nil {
		t.Fatalf("first round stalled %v", got)
	}
	t1 := t0.Add(time.Minute)
	for p := range int32(6) {
		src.Produce(t, "orders", p, 2, nil)
	}
	tgt.Produce(t, "kafka.orders", 0, 2, nil) // partition 0 keeps up
	if _, got := check(t1); got != nil {
		t.Fatalf("at t1 stalled %v", got)
	}
	if _, got := check(t1.Add(4*time.Minute + 59*time.Second)); got != nil {
		t.Fatalf("within the window stalled %v", got)
	}
	res, got := check(t1.Add(5 * time.Minute))
	if !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("after the window stalled %v, want [1 2]", got)
	}
	if r := row(t, res, "kafka", "vast", "orders"); !slices.Equal(r.Stalled, []int32{1, 2}) || r.Status != StatusUnmirrored {
		t.Errorf("row = %+v", r)
	}

	tgt.Produce(t, "kafka.orders", 1, 1, nil) // partition 1 moves again
	if _, got := check(t1.Add(6 * time.Minute)); !slices.Equal(got, []int32{2}) {
		t.Errorf("after partition 1 moved: stalled %v, want [2]", got)
	}
}

// TestReplicationLoopChained: target topics that chain the source alias twice
// are a loop; aliases that are not clusters are not.
func TestReplicationLoopChained(t *testing.T) {
	src := kafkatest.New(t, "peer", kfake.SeedTopics(1, "orders"))
	tgt := kafkatest.New(t, "local", kfake.SeedTopics(1, "peer.orders", "peer.peer.orders", "peer.local.peer.audit", "peer.v1.v1.events"))
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt))
	res := New(Options{MissingGrace: noGrace}).Check(context.Background(), takeRound(t, cfg, t0, src, tgt), nil)
	loops := byRule(res, FlowScope("peer", "local"), RuleReplicationLoop)
	if len(loops) != 1 {
		t.Fatalf("findings = %v", rules(res))
	}
	if n, _ := value(loops[0], "chained_topics"); n != 2 {
		t.Errorf("chained_topics = %v, want 2 (%s)", loops[0].Values["chained_topics"], loops[0].Summary)
	}
	if !strings.Contains(loops[0].Summary, "peer.local.peer.audit, peer.peer.orders") || strings.Contains(loops[0].Summary, "v1") {
		t.Errorf("summary = %q", loops[0].Summary)
	}
	if len(res.All()) != 1 {
		t.Errorf("findings = %v", rules(res))
	}
}

// TestReplicationLoopIdentity: IdentityReplicationPolicy both ways with
// filters that overlap loops; disjoint filters do not.
func TestReplicationLoopIdentity(t *testing.T) {
	a := kafkatest.New(t, "a", kfake.SeedTopics(2, "orders", "billing"))
	b := kafkatest.New(t, "b", kfake.SeedTopics(2, "orders", "billing"))
	base := []string{
		"clusters = a, b",
		"a.bootstrap.servers = " + a.Bootstrap(),
		"b.bootstrap.servers = " + b.Bootstrap(),
		"a->b.enabled = true",
		"b->a.enabled = true",
		"replication.policy.class = " + mm2config.IdentityPolicyClass,
	}
	ctx := context.Background()

	cfg := kafkatest.ParseConfig(t, strings.Join(append(base, "a->b.topics = orders, billing", "b->a.topics = orders"), "\n"))
	res := New(Options{MissingGrace: noGrace}).Check(ctx, takeRound(t, cfg, t0, a, b), nil)
	loops := byRule(res, FlowScope("a", "b"), RuleReplicationLoop)
	if len(loops) != 1 {
		t.Fatalf("findings = %v", rules(res))
	}
	if n, _ := value(loops[0], "overlapping_topics"); n != 1 || !strings.Contains(loops[0].Summary, "orders") {
		t.Errorf("loop = %+v", loops[0])
	}
	if got := rules(res); len(got) != 1 {
		t.Errorf("findings = %v, want the one loop", got)
	}

	cfg = kafkatest.ParseConfig(t, strings.Join(append(base, "a->b.topics = orders", "b->a.topics = billing"), "\n"))
	res = New(Options{MissingGrace: noGrace}).Check(ctx, takeRound(t, cfg, t0, a, b), nil)
	if got := rules(res); len(got) != 0 {
		t.Errorf("disjoint filters: findings %v", got)
	}
}

// TestClientTimer: ClientTimer returns the timestamp of the record at an
// offset over a real Kafka-protocol read, and fails for an unknown alias.
func TestClientTimer(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(1, "orders"))
	want := t0.Add(-42 * time.Minute).Truncate(time.Millisecond)
	src.Produce(t, "orders", 0, 3, func(i int) time.Time { return want.Add(time.Duration(i) * time.Second) })
	ct := timers(src)
	got, err := ct.RecordTime(context.Background(), "kafka", "orders", 0, 1)
	if err != nil || !got.Equal(want.Add(time.Second)) {
		t.Errorf("RecordTime = %v, %v; want %v", got, err, want.Add(time.Second))
	}
	if _, err := ct.RecordTime(context.Background(), "nowhere", "orders", 0, 0); err == nil {
		t.Error("RecordTime on an unknown alias did not fail")
	}
}

// TestCustomPolicyGuess: with a custom replication.policy.class and no
// --target-topic-template, target names are a guess (DefaultReplicationPolicy
// naming). A target found under the guessed name is judged; one not found is
// unknown, never target-topic-missing.
func TestCustomPolicyGuess(t *testing.T) {
	src := kafkatest.New(t, "kafka", kfake.SeedTopics(4, "orders"), kfake.SeedTopics(2, "clicks"))
	tgt := kafkatest.New(t, "vast", kfake.SeedTopics(2, "kafka.orders"), kfake.SeedTopics(2, "clicks-mirror"))
	src.Produce(t, "orders", 3, 5, nil)
	cfg := kafkatest.ParseConfig(t, kafkatest.PairConfig(src, tgt, "replication.policy.class = com.acme.FancyPolicy"))
	res := New(Options{MissingGrace: noGrace}).Check(context.Background(), takeRound(t, cfg, t0, src, tgt), nil)
	if got := byRule(res, flowScope, RuleTargetTopicMissing); len(got) != 0 {
		t.Errorf("a guessed target name that does not exist made %+v", got)
	}
	if r := row(t, res, "kafka", "vast", "clicks"); r.Status != StatusUnknown || !strings.Contains(r.Err, "--target-topic-template") {
		t.Errorf("clicks row = %+v, want unknown with advice", r)
	}
	un := byRule(res, flowScope, RuleUnmirrored)
	if len(un) != 1 || un[0].Topic != "kafka.orders" {
		t.Errorf("the guessed name that exists should still be judged: %+v", res.All())
	}
}
