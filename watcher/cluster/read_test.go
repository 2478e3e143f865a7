package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRecordTime(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(2), kfake.SeedTopics(2, "orders"))
	base := time.UnixMilli(1_700_000_000_000)
	// Timestamps out of order, as CreateTime allows: 10 s, 5 s, 20 s, ...
	at := func(i int) time.Time { return base.Add(time.Duration([]int{10, 5, 20, 1, 30}[i]) * time.Second) }
	produce(t, c, "orders", 1, 5, at)
	cl := dial(t, plainConfig(c))
	ctx := context.Background()

	// The log start offset: one ListOffsets, nothing fetched.
	mark := cl.stats.mark()
	got, err := cl.RecordTime(ctx, "orders", 1, 0)
	if err != nil || !got.Equal(at(0)) {
		t.Errorf("RecordTime(0) = %v, %v; want %v", got, err, at(0))
	}
	if _, by, _ := cl.stats.since(mark); by[int16(kmsg.Fetch)] != 0 || by[int16(kmsg.ListOffsets)] != 1 {
		t.Errorf("RecordTime at the log start sent %v, want one ListOffsets and no Fetch", by)
	}
	// Another offset: read, with its own (earlier) timestamp.
	if got, err := cl.RecordTime(ctx, "orders", 1, 3); err != nil || !got.Equal(at(3)) {
		t.Errorf("RecordTime(3) = %v, %v; want %v", got, err, at(3))
	}
	// After retention moved the log start, the new start is answered
	// directly too.
	if err := c.DeleteRecords("orders", 1, 2); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.RecordTime(ctx, "orders", 1, 2); err != nil || !got.Equal(at(2)) {
		t.Errorf("RecordTime(2) after DeleteRecords = %v, %v; want %v", got, err, at(2))
	}
	// An empty partition has no record to time: an error, not zero.
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if got, err := cl.RecordTime(short, "orders", 0, 0); err == nil {
		t.Errorf("RecordTime of an empty partition = %v, want an error", got)
	}
}

func TestReadTailAndRange(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(2), kfake.SeedTopics(3, "heartbeats"))
	produce(t, c, "heartbeats", 2, 50, nil)
	produce(t, c, "heartbeats", 0, 3, nil)
	cl := dial(t, plainConfig(c))
	ctx := context.Background()

	recs, err := cl.ReadTail(ctx, "heartbeats", 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Fatalf("ReadTail(10) returned %d records", len(recs))
	}
	for i, r := range recs {
		want := int64(40 + i)
		if r.Offset != want || string(r.Value) != recordValue("heartbeats", 2, int(want)) {
			t.Errorf("record %d = offset %d value %q, want offset %d", i, r.Offset, r.Value, want)
		}
	}
	if recs, err := cl.ReadTail(ctx, "heartbeats", 0, 100); err != nil || len(recs) != 3 || recs[0].Offset != 0 {
		t.Errorf("ReadTail beyond the start = %d records, %v", len(recs), err)
	}
	if recs, err := cl.ReadTail(ctx, "heartbeats", 1, 5); err != nil || len(recs) != 0 {
		t.Errorf("ReadTail of an empty partition = %d records, %v", len(recs), err)
	}
	if recs, err := cl.ReadRange(ctx, "heartbeats", 2, 5, 8); err != nil || len(recs) != 3 || recs[0].Offset != 5 || recs[2].Offset != 7 {
		t.Errorf("ReadRange(5, 8) = %v, %v", recs, err)
	}
	if _, err := cl.ReadTail(ctx, "missing", 0, 5); err == nil {
		t.Error("ReadTail of a missing topic succeeded")
	}

	// Records deleted below the new log start are skipped, not waited for.
	if err := c.DeleteRecords("heartbeats", 2, 45); err != nil {
		t.Fatal(err)
	}
	if recs, err := cl.ReadTail(ctx, "heartbeats", 2, 10); err != nil || len(recs) != 5 || recs[0].Offset != 45 {
		t.Errorf("ReadTail after DeleteRecords = %d records, %v", len(recs), err)
	}

	all, err := cl.ReadTopic(ctx, "heartbeats", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 || all[0].Partition != 0 || all[3].Partition != 2 || all[3].Offset != 45 {
		t.Errorf("ReadTopic returned %d records, first partitions %d/%d", len(all), all[0].Partition, all[3].Partition)
	}
	if _, err := cl.ReadTopic(ctx, "heartbeats", 4); !errors.Is(err, ErrTooManyRecords) {
		t.Errorf("ReadTopic over the limit: %v", err)
	}
}

func TestGroupOffsets(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	produce(t, c, "orders", 0, 10, nil)
	cl := dial(t, plainConfig(c))
	ctx := context.Background()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 7, LeaderEpoch: -1, Metadata: "m"})
	if err := cl.Admin().CommitAllOffsets(ctx, "billing", os); err != nil {
		t.Fatal(err)
	}
	got, err := cl.GroupOffsets(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := got["billing"]
	if g == nil || g.Err != nil || g.Offsets["orders"][0].Offset != 7 || g.Offsets["orders"][0].Metadata != "m" {
		t.Fatalf("GroupOffsets = %+v", g)
	}
	if _, ok := g.Offsets["orders"][1]; ok {
		t.Errorf("partition 1 has no commit but is present: %+v", g.Offsets["orders"])
	}
	groups, err := cl.ListGroups(ctx)
	if err != nil || len(groups) != 1 || groups[0] != "billing" {
		t.Errorf("ListGroups = %v, %v", groups, err)
	}
}
