package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultReadLimit caps how many records ReadTopic returns when its limit
// is not positive.
const DefaultReadLimit = 100_000

// ErrTooManyRecords is returned by ReadTopic when the topic holds more
// records than the limit allows.
var ErrTooManyRecords = errors.New("topic holds more records than the read limit")

// ReadRange reads the records with offsets in [from, to) of one partition,
// directly (kgo.ConsumePartitions, no consumer group, nothing committed), so
// that it works on clusters that cap or forbid consumer groups. Offsets
// that no longer exist (compacted away, or below the log start offset after
// retention) are skipped; transaction markers are not returned. The read
// stops when offset to-1 has been seen, and fails with an *Error when ctx or
// the APITimeout ends first: a partial read is an error, never a short
// answer.
//
// Each call opens its own connections (a short-lived consumer client with
// the same security settings), so it suits a few reads per check cycle,
// not a hot loop.
func (c *Client) ReadRange(ctx context.Context, topic string, partition int32, from, to int64) ([]*kgo.Record, error) {
	if from < 0 {
		from = 0
	}
	if from >= to {
		return nil, nil
	}
	return c.read(ctx, topic, map[int32][2]int64{partition: {from, to}}, 0)
}

// RecordTime returns the timestamp of the record at offset in one
// partition (CreateTime, or LogAppendTime when the topic sets it).
//
// It first asks the partition leader, on the client's own connections, for
// the first record with a timestamp at or after 0 (ListOffsets v1+,
// KIP-79): the leader scans from the log start offset, so for offset = the
// log start offset the answer is that very record, in one round trip, with
// nothing fetched. When the answer is another offset (offset is not the
// log start, or the log start moved, or the record carries no timestamp)
// it reads the record with ReadRange instead, whose cost it then has (a
// short-lived consumer with its own connections). Errors are *Error values;
// an offset that holds a transaction marker, or no record, is an error.
func (c *Client) RecordTime(ctx context.Context, topic string, partition int32, offset int64) (time.Time, error) {
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	one := map[string]*Topic{topic: {Name: topic, Partitions: int(partition) + 1}}
	r, ok := c.listOffsetsOf(ctx, one, partition, 0)[topic][partition]
	if ok && r.err == nil && r.offset == offset && r.timestamp >= 0 {
		return time.UnixMilli(r.timestamp), nil
	}
	recs, err := c.ReadRange(ctx, topic, partition, offset, offset+1)
	if err != nil {
		return time.Time{}, err
	}
	for _, rec := range recs {
		if rec.Offset == offset {
			return rec.Timestamp, nil
		}
	}
	return time.Time{}, c.wrap(ctx, fmt.Sprintf("reading %s/%d at offset %d", topic, partition, offset), errNoRecord)
}

// errNoRecord says that an offset holds no record: a transaction marker,
// or compacted away.
var errNoRecord = errors.New("no record at that offset")

// ReadTail reads the records among the newest n offsets of a partition
// (from max(start, end-n) to the end offset at the time of the call),
// oldest first. For MM2's heartbeats topic, whose partition 0 gets one
// record per flow per emit.heartbeats.interval.seconds (MirrorHeartbeatTask),
// a tail of a few hundred offsets holds the newest heartbeat of every
// active flow. An empty partition gives no records and no error.
func (c *Client) ReadTail(ctx context.Context, topic string, partition int32, n int) ([]*kgo.Record, error) {
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	start, end, err := c.PartitionBounds(ctx, topic, partition)
	if err != nil {
		return nil, err
	}
	from := max(start, end-int64(n))
	return c.ReadRange(ctx, topic, partition, from, end)
}

// ReadTopic reads every record of every partition of a small topic, from
// each partition's start offset to its end offset at the time of the call,
// ordered by partition and then offset. It is meant for MM2's compacted
// internal topics (checkpoints, offset-syncs). More than limit records
// (DefaultReadLimit when limit <= 0) fails with ErrTooManyRecords before
// anything is read.
func (c *Client) ReadTopic(ctx context.Context, topic string, limit int) ([]*kgo.Record, error) {
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	s, err := c.Snapshot(ctx, SnapshotOptions{Names: []string{topic}, Offsets: true})
	if err != nil {
		return nil, err
	}
	t := s.Topics[topic]
	if t.Err != nil {
		return nil, c.wrap(ctx, fmt.Sprintf("reading topic %q", topic), t.Err)
	}
	ranges := make(map[int32][2]int64, len(t.Offsets))
	var total int64
	for i, o := range t.Offsets {
		p := int32(i)
		if o.Err != nil {
			return nil, c.wrap(ctx, fmt.Sprintf("listing offsets of %s/%d", topic, p), o.Err)
		}
		if o.End > o.Start {
			ranges[p] = [2]int64{o.Start, o.End}
			total += o.End - o.Start
		}
	}
	if total > int64(limit) {
		return nil, fmt.Errorf("cluster %q: reading topic %q: %d offsets, limit %d: %w", c.cfg.Alias, topic, total, limit, ErrTooManyRecords)
	}
	if len(ranges) == 0 {
		return nil, nil
	}
	return c.read(ctx, topic, ranges, limit)
}

// read consumes [from, to) of each partition in ranges with a short-lived
// group-less consumer.
func (c *Client) read(ctx context.Context, topic string, ranges map[int32][2]int64, limit int) ([]*kgo.Record, error) {
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	op := fmt.Sprintf("reading %s", topic)

	offsets := make(map[int32]kgo.Offset, len(ranges))
	pending := make(map[int32]int64, len(ranges)) // partition -> last offset wanted
	for p, r := range ranges {
		offsets[p] = kgo.NewOffset().At(r[0])
		pending[p] = r[1] - 1
	}
	opts := append([]kgo.Opt{}, c.opts...)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.KeepControlRecords(), // so a trailing transaction marker ends the read
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, c.wrap(ctx, op, err)
	}
	defer cl.Close()

	var out []*kgo.Record
	for len(pending) > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, c.wrap(ctx, op, fmt.Errorf("%d partitions not read to their end: %w", len(pending), err))
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("partition %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return nil, c.wrap(ctx, op, ferr)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			last, ok := pending[r.Partition]
			if !ok || r.Offset > last {
				return
			}
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
			if r.Offset == last {
				delete(pending, r.Partition)
			}
		})
		if limit > 0 && len(out) > limit {
			return nil, fmt.Errorf("cluster %q: %s: %w", c.cfg.Alias, op, ErrTooManyRecords)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out, nil
}

// PartitionBounds returns the log start offset and the end offset (high
// watermark) of one partition, with two ListOffsets requests to its leader.
func (c *Client) PartitionBounds(ctx context.Context, topic string, partition int32) (start, end int64, err error) {
	one := map[string]*Topic{topic: {Name: topic, Partitions: int(partition) + 1}}
	op := fmt.Sprintf("listing offsets of %s/%d", topic, partition)
	starts := c.listOffsetsOf(ctx, one, partition, -2)
	ends := c.listOffsetsOf(ctx, one, partition, -1)
	if start, err = starts.get(topic, partition); err != nil {
		return -1, -1, c.wrap(ctx, op, err)
	}
	if end, err = ends.get(topic, partition); err != nil {
		return -1, -1, c.wrap(ctx, op, err)
	}
	return start, end, nil
}

// listOffsetsOf lists one partition's offset.
func (c *Client) listOffsetsOf(ctx context.Context, topics map[string]*Topic, partition int32, timestamp int64) offsetResults {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.TimeoutMillis = int32(c.cfg.RequestTimeout / time.Millisecond)
	for name := range topics {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = name
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = partition
		rp.Timestamp = timestamp
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return c.issueListOffsets(ctx, req)
}

// GroupOffsets are the committed offsets of one consumer group.
type GroupOffsets struct {
	Group string
	// Err is the group-level OffsetFetch error (for example
	// kerr.GroupAuthorizationFailed or kerr.CoordinatorNotAvailable).
	Err error
	// Offsets maps topic and partition to the committed offset. A
	// partition without a commit is absent.
	Offsets map[string]map[int32]CommittedOffset
}

// CommittedOffset is one committed offset.
type CommittedOffset struct {
	Offset      int64  // the next offset the group will consume
	LeaderEpoch int32  // -1 when the commit carried none
	Metadata    string // the commit's metadata string
	Err         error  // a partition-level OffsetFetch error
}

// ListGroups returns the names of every consumer group on the cluster
// (ListGroups sent to every broker), sorted.
func (c *Client) ListGroups(ctx context.Context) ([]string, error) {
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return nil, c.wrap(ctx, "listing consumer groups", err)
	}
	return listed.Groups(), nil
}

// GroupOffsets fetches the committed offsets of the given consumer groups
// (OffsetFetch, batched per group coordinator); with no groups it lists
// every group first. Failures of single groups are kept in
// GroupOffsets.Err; the error is for a failed group listing only.
func (c *Client) GroupOffsets(ctx context.Context, groups []string) (map[string]*GroupOffsets, error) {
	ctx, cancel := c.opContext(ctx)
	defer cancel()
	if len(groups) == 0 {
		var err error
		if groups, err = c.ListGroups(ctx); err != nil {
			return nil, err
		}
	}
	out := make(map[string]*GroupOffsets, len(groups))
	if len(groups) == 0 {
		return out, nil
	}
	for g, r := range c.adm.FetchManyOffsets(ctx, groups...) {
		gos := &GroupOffsets{Group: g, Offsets: make(map[string]map[int32]CommittedOffset)}
		if r.Err != nil {
			gos.Err = c.wrap(ctx, fmt.Sprintf("fetching offsets of group %q", g), r.Err)
		}
		for t, ps := range r.Fetched {
			m := make(map[int32]CommittedOffset, len(ps))
			for p, o := range ps {
				m[p] = CommittedOffset{Offset: o.At, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, Err: o.Err}
			}
			gos.Offsets[t] = m
		}
		out[g] = gos
	}
	for _, g := range groups {
		if _, ok := out[g]; !ok {
			out[g] = &GroupOffsets{Group: g, Err: ErrNoAnswer}
		}
	}
	return out, nil
}
