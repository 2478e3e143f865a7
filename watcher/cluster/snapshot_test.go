package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func TestSnapshotPlaintext(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(3), kfake.ClusterID("source-cluster"),
		kfake.SeedTopics(6, "orders"), kfake.SeedTopics(3, "payments"), kfake.SeedTopics(1, "tiny"))
	if err := c.CreateTopic("compacted", 2, map[string]string{"cleanup.policy": "compact", "retention.ms": "3600000"}); err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	produce(t, c, "orders", 0, 5, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) })
	produce(t, c, "orders", 4, 17, nil)
	produce(t, c, "payments", 2, 3, nil)
	produce(t, c, "compacted", 1, 8, nil)
	if err := c.DeleteRecords("orders", 4, 7); err != nil {
		t.Fatal(err)
	}

	cl := dial(t, plainConfig(c))
	s, err := cl.Snapshot(context.Background(), SnapshotOptions{
		Topics:        func(n string) bool { return n != "tiny" },
		Offsets:       true,
		Configs:       true,
		MaxTimestamps: true,
	})
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if s.Alias != "src" || s.ClusterID != "source-cluster" || s.Brokers != 3 {
		t.Errorf("alias/cluster/brokers = %q/%q/%d", s.Alias, s.ClusterID, s.Brokers)
	}
	if _, ok := s.Topics["tiny"]; ok {
		t.Error("the filter did not exclude tiny")
	}
	wantParts := map[string]int{"orders": 6, "payments": 3, "compacted": 2}
	if len(s.Topics) != len(wantParts) {
		t.Errorf("topics = %v, want %v", s.TopicNames(), wantParts)
	}
	for name, n := range wantParts {
		tp := s.Topics[name]
		if tp == nil || tp.Err != nil || tp.Partitions != n || len(tp.Offsets) != n {
			t.Fatalf("topic %s = %+v, want %d partitions", name, tp, n)
		}
	}
	type so struct{ start, end int64 }
	want := map[string]map[int32]so{
		"orders":    {0: {0, 5}, 1: {0, 0}, 4: {7, 17}, 5: {0, 0}},
		"payments":  {0: {0, 0}, 2: {0, 3}},
		"compacted": {0: {0, 0}, 1: {0, 8}},
	}
	for topic, ps := range want {
		for p, w := range ps {
			got := s.Topics[topic].Offsets[p]
			if got.Err != nil || got.Start != w.start || got.End != w.end {
				t.Errorf("%s/%d offsets = %+v, want start %d end %d", topic, p, got, w.start, w.end)
			}
		}
	}
	if got := s.Topics["orders"].Offsets[0].MaxTimestamp; !got.Equal(base.Add(4 * time.Second)) {
		t.Errorf("orders/0 max timestamp = %v, want %v", got, base.Add(4*time.Second))
	}
	if got := s.Topics["orders"].Offsets[1].MaxTimestamp; !got.IsZero() {
		t.Errorf("empty partition max timestamp = %v, want zero (unknown)", got)
	}
	cc := s.Topics["compacted"].Configs
	if cc["cleanup.policy"] != "compact" || cc["retention.ms"] != "3600000" || cc["retention.bytes"] == "" {
		t.Errorf("compacted configs = %v", cc)
	}
	if s.Topics["orders"].Configs["cleanup.policy"] != "delete" || len(s.Topics["orders"].Configs) != 3 {
		t.Errorf("orders configs = %v, want the three default-named keys", s.Topics["orders"].Configs)
	}

	// Batched: constant request counts whatever the topic count.
	by := s.RequestsByKey
	if by[int16(kmsg.Metadata)] < 1 || by[int16(kmsg.Metadata)] > 2 {
		t.Errorf("metadata requests = %d, want 1 (2 if the client refreshed)", by[int16(kmsg.Metadata)])
	}
	if by[int16(kmsg.DescribeConfigs)] != 1 {
		t.Errorf("DescribeConfigs requests = %d, want 1", by[int16(kmsg.DescribeConfigs)])
	}
	if n := by[int16(kmsg.ListOffsets)]; n != 3*3 {
		t.Errorf("ListOffsets requests = %d, want 3 kinds (start, end, max timestamp) x 3 leaders", n)
	}
	if by[int16(kmsg.ApiVersions)] < 3 {
		t.Errorf("ApiVersions requests = %d, want one per broker", by[int16(kmsg.ApiVersions)])
	}
	sum := 0
	for _, n := range by {
		sum += n
	}
	if s.Requests != sum || s.Requests == 0 || s.Duration <= 0 || s.RequestTime <= 0 {
		t.Errorf("requests = %d (by key %v), duration %v, request time %v", s.Requests, by, s.Duration, s.RequestTime)
	}
	t.Logf("requests by key: %v, duration %v", by, s.Duration)

	// Without offsets and configs nothing but metadata and ApiVersions is sent.
	s2, err := cl.Snapshot(context.Background(), SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.RequestsByKey[int16(kmsg.ListOffsets)] != 0 || s2.RequestsByKey[int16(kmsg.DescribeConfigs)] != 0 {
		t.Errorf("bare snapshot sent %v", s2.RequestsByKey)
	}
	if s2.Topics["tiny"] == nil || s2.Topics["tiny"].Offsets != nil || s2.Topics["tiny"].Configs != nil {
		t.Errorf("bare snapshot tiny = %+v", s2.Topics["tiny"])
	}
}

func TestSupportsWithoutCreatePartitions(t *testing.T) {
	old := kversion.Stable()
	old.SetMaxKeyVersion(int16(kmsg.CreatePartitions), -1)
	old.SetMaxKeyVersion(int16(kmsg.IncrementalAlterConfigs), -1)
	tgt := newCluster(t, kfake.NumBrokers(2), kfake.MaxVersions(old), kfake.SeedTopics(2, "source.orders"))
	full := newCluster(t, kfake.NumBrokers(1))

	s, err := dial(t, plainConfig(tgt)).Snapshot(context.Background(), SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key             kmsg.Key
		supported, know bool
	}{
		{kmsg.CreatePartitions, false, true},
		{kmsg.IncrementalAlterConfigs, false, true},
		{kmsg.AlterConfigs, true, true},
		{kmsg.InitProducerID, true, true},
		{kmsg.DescribeACLs, true, true},
		{kmsg.CreateACLs, true, true},
	} {
		sup, known := s.Supports(tc.key)
		if sup != tc.supported || known != tc.know {
			t.Errorf("target Supports(%s) = %v, %v; want %v, %v", tc.key.Name(), sup, known, tc.supported, tc.know)
		}
	}
	s2, err := dial(t, plainConfig(full)).Snapshot(context.Background(), SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sup, known := s2.Supports(kmsg.CreatePartitions); !sup || !known {
		t.Errorf("full cluster Supports(CreatePartitions) = %v, %v", sup, known)
	}
	if v := s2.APIs[int16(kmsg.CreatePartitions)]; v != 3 {
		t.Errorf("CreatePartitions max version = %d, want kfake's 3", v)
	}
}

func TestSupportsUnknown(t *testing.T) {
	partial := &Snapshot{APIs: map[int16]int16{37: 3}, APIsErr: errors.New("broker 2: timeout"), answered: true}
	for _, tc := range []struct {
		name            string
		s               *Snapshot
		key             kmsg.Key
		supported, know bool
	}{
		{"nil snapshot", nil, kmsg.CreatePartitions, false, false},
		{"nobody answered", &Snapshot{APIsErr: errors.New("x")}, kmsg.CreatePartitions, false, false},
		{"present but one broker silent", partial, kmsg.CreatePartitions, false, false},
		{"absent on a broker that answered", partial, kmsg.IncrementalAlterConfigs, false, true},
		{"all answered", &Snapshot{APIs: map[int16]int16{37: 3}, answered: true}, kmsg.CreatePartitions, true, true},
	} {
		sup, known := tc.s.Supports(tc.key)
		if sup != tc.supported || known != tc.know {
			t.Errorf("%s: Supports = %v, %v; want %v, %v", tc.name, sup, known, tc.supported, tc.know)
		}
	}
}

func TestSnapshotKeepsPerTopicErrors(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.SeedTopics(3, "orders", "payments", "refunds"))
	produce(t, c, "orders", 1, 4, nil)
	produce(t, c, "payments", 0, 2, nil)
	c.Fault(
		kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "payments", Err: kerr.KafkaStorageError, Count: -1},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Metadata}, Topic: "refunds", Partitions: []int32{2}, Err: kerr.LeaderNotAvailable, Count: -1},
		kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeConfigs}, Resource: "orders", Err: kerr.PolicyViolation, Count: -1},
	)
	cl := dial(t, plainConfig(c))
	s, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true, Configs: true})
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		po := s.Topics["payments"].Offsets[p]
		if !errors.Is(po.Err, kerr.KafkaStorageError) || po.End != -1 || po.Start != -1 {
			t.Errorf("payments/%d = %+v, want KAFKA_STORAGE_ERROR and -1 offsets", p, po)
		}
	}
	if po := s.Topics["orders"].Offsets[1]; po.Err != nil || po.End != 4 {
		t.Errorf("orders/1 = %+v, want end 4", po)
	}
	ref := s.Topics["refunds"]
	if ref.Partitions != 3 || !errors.Is(ref.PartitionErrs[2], kerr.LeaderNotAvailable) || len(ref.PartitionErrs) != 1 {
		t.Errorf("refunds = %+v, want 3 partitions with partition 2 LEADER_NOT_AVAILABLE", ref)
	}
	if po := ref.Offsets[2]; po.Err == nil || po.End != -1 {
		t.Errorf("refunds/2 offsets = %+v, want an error, not zero", po)
	}
	if !errors.Is(s.Topics["orders"].ConfigErr, kerr.PolicyViolation) || s.Topics["orders"].Configs != nil {
		t.Errorf("orders configs = %v, %v; want POLICY_VIOLATION", s.Topics["orders"].Configs, s.Topics["orders"].ConfigErr)
	}
	if s.Topics["payments"].ConfigErr != nil || s.Topics["payments"].Configs["cleanup.policy"] == "" {
		t.Errorf("payments configs = %v, %v", s.Topics["payments"].Configs, s.Topics["payments"].ConfigErr)
	}

	// Topic-level errors: asking for names shows a failed and a missing topic
	// as unknown, with the broker's error.
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Metadata}, Topic: "orders", Err: kerr.TopicAuthorizationFailed, Count: -1})
	s, err = cl.Snapshot(context.Background(), SnapshotOptions{Names: []string{"orders", "refunds", "missing"}, Offsets: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{"orders": kerr.TopicAuthorizationFailed, "missing": kerr.UnknownTopicOrPartition} {
		tp := s.Topics[name]
		if tp == nil || !errors.Is(tp.Err, want) || tp.Partitions != -1 || tp.Offsets != nil {
			t.Errorf("%s = %+v, want Err %v and Partitions -1", name, tp, want)
		}
	}
	if s.Topics["refunds"].Err != nil || s.Topics["refunds"].Partitions != 3 {
		t.Errorf("refunds = %+v", s.Topics["refunds"])
	}
}

func TestSnapshotUnreachable(t *testing.T) {
	cfg := Config{Alias: "gone", Seeds: []string{closedPort(t)}, RequestTimeout: time.Second, APITimeout: 2 * time.Second}
	cl, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	s, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true})
	took := time.Since(start)
	if err == nil || s != nil {
		t.Fatalf("Snapshot of a closed port = %v, %v; want an error", s, err)
	}
	if r := Classify(err); r != ReasonConnRefused {
		t.Errorf("Classify = %q, want %q (err: %v)", r, ReasonConnRefused, err)
	}
	if took > 3*time.Second {
		t.Errorf("took %v, want within the 2s APITimeout", took)
	}
	t.Logf("closed port: %v after %v", err, took)

	start = time.Now()
	_, err = Dial(context.Background(), cfg, testLogger(t))
	if Classify(err) != ReasonConnRefused || time.Since(start) > 3*time.Second {
		t.Errorf("Dial = %v after %v", err, time.Since(start))
	}
}

func TestSnapshotEndOffsetsOnly(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(3), kfake.SeedTopics(6, "orders"))
	produce(t, c, "orders", 2, 9, nil)
	if err := c.DeleteRecords("orders", 2, 4); err != nil {
		t.Fatal(err)
	}
	cl := dial(t, plainConfig(c))
	full, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true, EndOffsetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Topics["orders"]
	if len(o.Offsets) != 6 {
		t.Fatalf("orders has %d partitions of offsets, want 6", len(o.Offsets))
	}
	if po := o.Offsets[2]; po.Err != nil || po.End != 9 || po.Start != -1 {
		t.Errorf("orders/2 = %+v, want end 9 and start -1 (unknown, not asked)", po)
	}
	if n, all := s.RequestsByKey[int16(kmsg.ListOffsets)], full.RequestsByKey[int16(kmsg.ListOffsets)]; 2*n != all {
		t.Errorf("ListOffsets requests = %d, want half of the %d of start and end offsets", n, all)
	}
	if _, ok := o.Offset(6); ok {
		t.Error("Offset(6) of a 6-partition topic is ok")
	}
}

// A leader that says it no longer leads a partition (it moved after the
// metadata was taken) is not the last word: the partition is asked again
// through the client's sharded path and its offsets are known.
func TestSnapshotLeaderMoved(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(3), kfake.SeedTopics(3, "orders"))
	produce(t, c, "orders", 1, 4, nil)
	cl := dial(t, plainConfig(c))
	before, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "orders", Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: 2})
	s, err := cl.Snapshot(context.Background(), SnapshotOptions{Offsets: true})
	if err != nil {
		t.Fatal(err)
	}
	if po := s.Topics["orders"].Offsets[1]; po.Err != nil || po.Start != 0 || po.End != 4 {
		t.Errorf("orders/1 = %+v, want 0..4 after the retry", po)
	}
	if n, n0 := s.RequestsByKey[int16(kmsg.ListOffsets)], before.RequestsByKey[int16(kmsg.ListOffsets)]; n <= n0 {
		t.Errorf("ListOffsets requests = %d, want more than the %d without the fault (a retry)", n, n0)
	}
}
