package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestClusterHelpers writes through every helper and reads the result back
// through the admin client and the watchdog's client.
func TestClusterHelpers(t *testing.T) {
	src := New(t, "kafka", kfake.SeedTopics(1, "seeded"))
	tgt := New(t, "vast")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	retention := "1048576"
	src.CreateTopic(t, "orders", 2, map[string]*string{"retention.bytes": &retention})
	src.AddPartitions(t, "orders", 1)
	t0 := time.Date(2026, 10, 30, 18, 0, 0, 0, time.UTC)
	src.Produce(t, "orders", 2, 5, func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) })
	src.Produce(t, "orders", 0, 0, nil)
	src.Commit(t, "billing", "orders", map[int32]int64{2: 3})
	src.DeleteTopic(t, "seeded")

	ends, err := src.Admin.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 0, 1: 0, 2: 5} {
		if o, ok := ends.Lookup("orders", p); !ok || o.Offset != want {
			t.Errorf("end offset of orders/%d = %+v (ok=%v), want %d", p, o, ok, want)
		}
	}
	ts, err := src.Client.RecordTime(ctx, "orders", 2, 4)
	if err != nil || !ts.Equal(t0.Add(4*time.Second)) {
		t.Errorf("record time of orders/2@4 = %v, %v; want %v", ts, err, t0.Add(4*time.Second))
	}
	committed, err := src.Admin.FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := committed.Lookup("orders", 2); !ok || o.At != 3 {
		t.Errorf("committed offset of billing on orders/2 = %+v (ok=%v), want 3", o, ok)
	}
	topics, err := src.Admin.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("seeded") || !topics.Has("orders") {
		t.Errorf("topics after delete: %v", topics.Names())
	}

	cfg := ParseConfig(t, PairConfig(src, tgt, "kafka->vast.topics = orders"))
	if f := cfg.Flow("kafka", "vast"); f == nil || !f.Enabled {
		t.Fatalf("flow kafka->vast not enabled in %+v", cfg.Flows)
	}
	if f := cfg.Flow("vast", "kafka"); f != nil && f.Enabled {
		t.Errorf("flow vast->kafka enabled")
	}
}
