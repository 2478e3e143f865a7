package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sync/errgroup"
)

// DefaultConfigNames are the topic configs a Snapshot describes when
// SnapshotOptions.ConfigNames is empty: what the retention and parity checks
// compare between a source topic and its mirror.
var DefaultConfigNames = []string{"retention.ms", "retention.bytes", "cleanup.policy"}

// configBatch is how many topics one DescribeConfigs request carries.
const configBatch = 1000

// configParallel is how many DescribeConfigs batches are in flight at once.
const configParallel = 4

// ErrNoAnswer marks a partition or topic that a request covered but whose
// response did not mention it: unknown, not zero.
var ErrNoAnswer = errors.New("no answer from the broker for this partition")

// SnapshotOptions says what one Snapshot should cover.
type SnapshotOptions struct {
	// Topics selects topics by name from the cluster's topic list; nil
	// selects every topic, internal ones included.
	Topics func(name string) bool
	// Names asks for exactly these topics by name instead of listing the
	// cluster's topics. A topic that does not exist (or that the
	// principal may not describe) is then present with Err set, e.g.
	// kerr.UnknownTopicOrPartition. Topics still applies as a filter.
	Names []string
	// Offsets lists start and end offsets of every partition.
	Offsets bool
	// EndOffsetsOnly, with Offsets, lists end offsets only, for a cluster
	// whose log start offsets nobody reads (the target of a flow: the
	// parity checks compare its end offsets). PartitionOffsets.Start then
	// stays -1, unknown; it saves one ListOffsets request per leader and
	// the brokers' work for every partition.
	EndOffsetsOnly bool
	// MaxTimestamps also lists each partition's largest record timestamp
	// (ListOffsets with timestamp -3, KIP-734), when every broker supports
	// ListOffsets v7 or later; otherwise PartitionOffsets.MaxTimestamp
	// stays zero. Implies nothing about Offsets.
	MaxTimestamps bool
	// Configs describes the topic configs named in ConfigNames.
	Configs bool
	// ConfigNames are the config keys to describe; empty means
	// DefaultConfigNames.
	ConfigNames []string
}

// Snapshot is one look at a cluster. Every request is batched: two
// Metadata requests (one for the broker list, one for the topics), one
// ApiVersions request per broker, one ListOffsets request per partition
// leader per kind of offset, and one DescribeConfigs request per 1000
// topics, whatever the number of topics.
type Snapshot struct {
	Alias     string    // MM2 cluster alias
	ClusterID string    // the cluster id from Metadata ("" before Kafka 0.10.1)
	Taken     time.Time // when the snapshot started
	// Brokers is the number of brokers in the Metadata response.
	Brokers int
	// Controller is the controller's node id, -1 when unknown.
	Controller int32
	// APIs maps an API key to the highest version that every broker
	// advertises. A key missing from the map is not supported by at least
	// one broker, or, when APIsErr is set, unknown. See Supports.
	APIs map[int16]int16
	// APIsErr is set when at least one broker's ApiVersions failed; the
	// message names the brokers.
	APIsErr error
	// Topics maps topic name to what is known about it.
	Topics map[string]*Topic
	// Requests is the number of requests the client wrote while the
	// snapshot ran, including franz-go's own (connection set-up, metadata
	// refreshes) and, if the Client is shared, other callers' requests.
	Requests int
	// RequestsByKey splits Requests by Kafka API key.
	RequestsByKey map[int16]int
	// RequestTime is the summed round-trip time of those requests.
	RequestTime time.Duration
	// Duration is the wall time the snapshot took.
	Duration time.Duration

	answered bool // at least one broker answered ApiVersions
}

// Topic is one topic in a Snapshot.
type Topic struct {
	Name string
	// Partitions is the partition count, or -1 when Err is set: a topic
	// whose metadata failed is unknown, never "0 partitions".
	Partitions int
	// Internal is the broker's is_internal flag (__consumer_offsets,
	// __transaction_state), not MM2's notion of internal topics.
	Internal bool
	// Err is the topic-level Metadata error (a *kerr.Error such as
	// kerr.UnknownTopicOrPartition or kerr.TopicAuthorizationFailed).
	Err error
	// PartitionErrs holds partition-level Metadata errors (for example
	// kerr.LeaderNotAvailable), by partition; nil when there are none.
	PartitionErrs map[int32]error
	// Configs holds the described config values by key. A key whose value
	// is null (or sensitive) is absent. Nil when configs were not asked
	// for or ConfigErr is set.
	Configs map[string]string
	// ConfigErr is the DescribeConfigs error for this topic.
	ConfigErr error
	// Offsets holds the offsets of partition p at index p, one entry for
	// every partition in the metadata (len(Offsets) == Partitions), when
	// offsets or max timestamps were asked for; nil otherwise. Use Offset
	// for a bounds-checked lookup.
	Offsets []PartitionOffsets
}

// Offset returns the offsets of partition p; ok is false when the snapshot
// has no offsets for it (not asked for, topic unknown, p out of range).
func (t *Topic) Offset(p int32) (po PartitionOffsets, ok bool) {
	if t == nil || p < 0 || int(p) >= len(t.Offsets) {
		return PartitionOffsets{}, false
	}
	return t.Offsets[p], true
}

// PartitionOffsets are the offsets of one partition.
type PartitionOffsets struct {
	// Start is the log start offset, End the high watermark (the offset
	// the next record will get). Both are -1 when unknown; End-Start is
	// the number of offsets retained (an upper bound on records for
	// compacted or transactional topics).
	Start, End int64
	// MaxTimestamp is the largest record timestamp in the partition, zero
	// when not asked for, not supported, or the partition is empty.
	MaxTimestamp time.Time
	// Err is the first error listing this partition's offsets; Start or
	// End (whichever failed) is then -1.
	Err error
}

// Supports reports whether every broker of the cluster advertises key in
// its ApiVersions. known is false when some broker's ApiVersions failed and
// the key is not already ruled out by the brokers that answered.
//
// This is how to tell, up front, that a target cannot add partitions
// (kmsg.CreatePartitions, 37) or take incremental config changes
// (kmsg.IncrementalAlterConfigs, 44): franz-go refuses such a request on
// the client side with an unexported "broker is too old" error, so matching
// errors is not an option (LIBRARIES.md §1).
func (s *Snapshot) Supports(key kmsg.Key) (supported bool, known bool) {
	if s == nil || s.APIs == nil {
		return false, false
	}
	if _, ok := s.APIs[int16(key)]; ok {
		return s.APIsErr == nil, s.APIsErr == nil
	}
	// Absent: some broker that answered lacks it, or nobody answered.
	return false, s.answered
}

// TopicNames returns the snapshot's topic names, sorted.
func (s *Snapshot) TopicNames() []string {
	names := make([]string, 0, len(s.Topics))
	for n := range s.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Snapshot takes one batched look at the cluster. It returns an error (an
// *Error with a Reason) only when the cluster could not be reached at all,
// i.e. the Metadata request failed; every later failure is kept in the
// snapshot: APIsErr, Topic.ConfigErr, PartitionOffsets.Err.
//
// The topic metadata is asked of one broker directly, not through
// franz-go's client-level path, which would also deep-copy every topic and
// partition into the client's metadata cache (several times the size of
// the response at 10,000 topics, and most of a snapshot's CPU time). The
// ListOffsets requests are split by the partition leaders of that same
// response and sent to each leader directly; only partitions whose leader
// answers NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION (the leader
// moved since the metadata) are asked again through franz-go's sharded
// path, which looks the new leader up. A partition whose metadata carries
// an error (LEADER_NOT_AVAILABLE, ...) or no leader is not asked: its
// offsets are unknown, with that error.
//
// The whole call is bounded by ctx and the client's APITimeout.
func (c *Client) Snapshot(ctx context.Context, opts SnapshotOptions) (*Snapshot, error) {
	start := c.now()
	mark := c.stats.mark()
	ctx, cancel := c.opContext(ctx)
	defer cancel()

	resp, err := c.topicMetadata(ctx, opts.Names)
	if err != nil {
		return nil, err
	}

	s := &Snapshot{
		Alias:      c.cfg.Alias,
		Taken:      start,
		Brokers:    len(resp.Brokers),
		Controller: resp.ControllerID,
		Topics:     make(map[string]*Topic, len(resp.Topics)),
	}
	if resp.ClusterID != nil {
		s.ClusterID = *resp.ClusterID
	}
	// One allocation for every Topic; the map points into it.
	slab := make([]Topic, 0, len(resp.Topics)+len(opts.Names))
	plan := offsetPlan{byLeader: map[int32][]partLoc{}}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		if rt.Topic == nil {
			continue
		}
		name := *rt.Topic
		if opts.Topics != nil && !opts.Topics(name) {
			continue
		}
		slab = append(slab, Topic{Name: name, Internal: rt.IsInternal, Partitions: len(rt.Partitions)})
		t := &slab[len(slab)-1]
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			t.Err = err
			t.Partitions = -1
		}
		for _, p := range rt.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				if t.PartitionErrs == nil {
					t.PartitionErrs = make(map[int32]error)
				}
				t.PartitionErrs[p.Partition] = err
			}
		}
		s.Topics[name] = t
		if t.Err == nil && t.Partitions > 0 {
			plan.add(t, rt.Partitions)
		}
	}
	plan.finish()
	// Names asked for but not answered at all are unknown too.
	for _, n := range opts.Names {
		if _, ok := s.Topics[n]; !ok && (opts.Topics == nil || opts.Topics(n)) {
			s.Topics[n] = &Topic{Name: n, Partitions: -1, Err: ErrNoAnswer}
		}
	}

	brokerIDs := make([]int32, 0, len(resp.Brokers))
	for _, b := range resp.Brokers {
		brokerIDs = append(brokerIDs, b.NodeID)
	}
	resp = nil // the topics are copied out; let the response go

	var (
		wg                  sync.WaitGroup
		starts, ends, maxTS []offsetResult
		configs             map[string]configResult
		apis                map[int16]int16
		apisErr             error
		answered            bool
	)
	wg.Go(func() { apis, answered, apisErr = c.apiVersions(ctx, brokerIDs) })
	if opts.Offsets {
		if !opts.EndOffsetsOnly {
			wg.Go(func() { starts = c.listOffsets(ctx, &plan, -2) })
		}
		wg.Go(func() { ends = c.listOffsets(ctx, &plan, -1) })
	}
	if opts.Configs {
		wg.Go(func() { configs = c.describeConfigs(ctx, s.Topics, opts.ConfigNames) })
	}
	wg.Wait()
	s.APIs, s.APIsErr, s.answered = apis, apisErr, answered
	if opts.MaxTimestamps {
		if v, ok := s.APIs[int16(kmsg.ListOffsets)]; ok && v >= 7 && s.APIsErr == nil {
			maxTS = c.listOffsets(ctx, &plan, -3)
		}
	}

	if opts.Offsets || maxTS != nil {
		// One allocation for every partition's offsets; each topic's
		// Offsets is its window of it.
		all := make([]PartitionOffsets, plan.total)
		for i, t := range plan.topics {
			base := plan.bases[i]
			t.Offsets = all[base : base+t.Partitions : base+t.Partitions]
		}
		for i := range all {
			po := PartitionOffsets{Start: -1, End: -1}
			if opts.Offsets {
				if starts != nil {
					po.Start, po.Err = starts[i].get()
				}
				var endErr error
				po.End, endErr = ends[i].get()
				if po.Err == nil {
					po.Err = endErr
				}
			}
			if maxTS != nil {
				if r := maxTS[i]; r.err == nil && r.timestamp >= 0 {
					po.MaxTimestamp = time.UnixMilli(r.timestamp)
				}
			}
			all[i] = po
		}
	}
	if opts.Configs {
		for name, t := range s.Topics {
			if t.Err != nil {
				continue
			}
			if r, ok := configs[name]; ok {
				t.Configs, t.ConfigErr = r.configs, r.err
			} else {
				t.ConfigErr = ErrNoAnswer
			}
		}
	}

	s.Requests, s.RequestsByKey, s.RequestTime = c.stats.since(mark)
	s.Duration = c.now().Sub(start)
	return s, nil
}

// topicMetadata fetches the metadata of the named topics (every topic when
// names is empty). A client-level Metadata request for no topics (which
// franz-go does not cache) refreshes the client's broker list and finds a
// live broker; the topic metadata is then asked of the brokers in turn,
// directly, until one answers. Errors are *Error values.
func (c *Client) topicMetadata(ctx context.Context, names []string) (*kmsg.MetadataResponse, error) {
	brokersOnly := kmsg.NewPtrMetadataRequest()
	brokersOnly.Topics = []kmsg.MetadataRequestTopic{}
	bresp, err := brokersOnly.RequestWith(ctx, c.kgo)
	if err != nil {
		return nil, c.wrap(ctx, "listing metadata", err)
	}
	req := kmsg.NewPtrMetadataRequest()
	if len(names) > 0 {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(names))
		for _, n := range names {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, rt)
		}
	} // nil Topics: all topics
	if len(bresp.Brokers) == 0 {
		// No broker listed (never from a real broker): the client-level
		// path still finds one.
		resp, err := req.RequestWith(ctx, c.kgo)
		if err != nil {
			return nil, c.wrap(ctx, "listing metadata", err)
		}
		return resp, nil
	}
	var errs []error
	for i, b := range bresp.Brokers {
		br := c.kgo.Broker(int(b.NodeID))
		var kresp kmsg.Response
		if i == len(bresp.Brokers)-1 {
			kresp, err = br.RetriableRequest(ctx, req)
		} else {
			kresp, err = br.Request(ctx, req)
		}
		if err == nil {
			return kresp.(*kmsg.MetadataResponse), nil
		}
		errs = append(errs, fmt.Errorf("broker %d: %w", b.NodeID, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, c.wrap(ctx, "listing metadata", errors.Join(errs...))
}

// apiVersions asks every broker for its ApiVersions, one request each, in
// parallel, and keeps the keys every answering broker advertises with the
// lowest of their max versions. answered is true when at least one broker
// answered.
func (c *Client) apiVersions(ctx context.Context, brokers []int32) (map[int16]int16, bool, error) {
	type result struct {
		id   int32
		keys map[int16]int16
		err  error
	}
	results := make([]result, len(brokers))
	var wg sync.WaitGroup
	for i, id := range brokers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName = "mm2-watchdog"
			req.ClientSoftwareVersion = "0"
			resp, err := req.RequestWith(ctx, c.kgo.Broker(int(id)))
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			r := result{id: id, err: err}
			if err == nil {
				r.keys = make(map[int16]int16, len(resp.ApiKeys))
				for _, k := range resp.ApiKeys {
					r.keys[k.ApiKey] = k.MaxVersion
				}
			}
			results[i] = r
		}()
	}
	wg.Wait()

	var apis map[int16]int16
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("broker %d: %w", r.id, r.err))
			continue
		}
		if apis == nil {
			apis = r.keys
			continue
		}
		for k, v := range apis {
			bv, ok := r.keys[k]
			switch {
			case !ok:
				delete(apis, k)
			case bv < v:
				apis[k] = bv
			}
		}
	}
	var err error
	if len(errs) > 0 {
		err = c.wrap(ctx, "asking ApiVersions", errors.Join(errs...))
	}
	return apis, apis != nil, err
}

type offsetResult struct {
	offset, timestamp int64
	err               error
}

// get returns the offset, -1 and an error when unknown.
func (r offsetResult) get() (int64, error) {
	if r.err != nil {
		return -1, r.err
	}
	return r.offset, nil
}

type offsetResults map[string]map[int32]offsetResult

// get returns the offset for t/p, -1 and an error when unknown.
func (o offsetResults) get(t string, p int32) (int64, error) {
	r, ok := o[t][p]
	if !ok {
		return -1, ErrNoAnswer
	}
	return r.get()
}

// partLoc is one partition to list: the index of its topic in
// offsetPlan.topics and the partition number.
type partLoc struct {
	topic, partition int32
}

// offsetPlan lays out the partitions of a snapshot for ListOffsets: the
// partitions of topics[i] are at bases[i] .. bases[i]+Partitions-1 of the
// flat result slices, byLeader lists what each partition leader is asked,
// and failed holds the partitions not asked, with their metadata error.
type offsetPlan struct {
	topics   []*Topic
	bases    []int
	index    map[string]int32 // topic name -> index in topics
	owner    []int32          // flat index -> the leader asked, -1 when none
	total    int
	byLeader map[int32][]partLoc
	failed   []failedPart
}

type failedPart struct {
	at  int // index in the flat results
	err error
}

// add plans the partitions of t, as listed in its metadata.
func (pl *offsetPlan) add(t *Topic, parts []kmsg.MetadataResponseTopicPartition) {
	ti := int32(len(pl.topics))
	pl.topics = append(pl.topics, t)
	pl.bases = append(pl.bases, pl.total)
	base := pl.total
	pl.total += t.Partitions
	for _, p := range parts {
		if p.Partition < 0 || int(p.Partition) >= t.Partitions {
			continue // left unanswered: unknown
		}
		err := kerr.ErrorForCode(p.ErrorCode)
		if errors.Is(err, kerr.ReplicaNotAvailable) && p.Leader >= 0 {
			err = nil // a follower is down; the leader answers
		}
		if err == nil && p.Leader < 0 {
			err = kerr.LeaderNotAvailable
		}
		if err != nil {
			pl.failed = append(pl.failed, failedPart{at: base + int(p.Partition), err: err})
			continue
		}
		pl.byLeader[p.Leader] = append(pl.byLeader[p.Leader], partLoc{topic: ti, partition: p.Partition})
	}
}

// finish indexes the planned topics by name and each partition by the
// leader it is asked of; call it once, after the last add.
func (pl *offsetPlan) finish() {
	pl.index = make(map[string]int32, len(pl.topics))
	for i, t := range pl.topics {
		pl.index[t.Name] = int32(i)
	}
	pl.owner = make([]int32, pl.total)
	for i := range pl.owner {
		pl.owner[i] = -1
	}
	for leader, locs := range pl.byLeader {
		for _, l := range locs {
			pl.owner[pl.bases[l.topic]+int(l.partition)] = leader
		}
	}
}

// at returns the flat index of a partition of a topic named in a response,
// or -1.
func (pl *offsetPlan) at(topic string, p int32) int {
	if pl.index == nil {
		return -1
	}
	ti, ok := pl.index[topic]
	if !ok || p < 0 || int(p) >= pl.topics[ti].Partitions {
		return -1
	}
	return pl.bases[ti] + int(p)
}

// offsetsRequest builds a ListOffsets request for locs with the given
// special timestamp; the locs of one topic must be adjacent.
func (c *Client) offsetsRequest(pl *offsetPlan, locs []partLoc, timestamp int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.TimeoutMillis = int32(c.cfg.RequestTimeout / time.Millisecond)
	// One allocation for every partition; each topic's Partitions is
	// its window of it.
	parts := make([]kmsg.ListOffsetsRequestTopicPartition, len(locs))
	for i, l := range locs {
		rp := &parts[i]
		rp.Default() // CurrentLeaderEpoch -1, MaxNumOffsets 1
		rp.Partition = l.partition
		rp.Timestamp = timestamp
		if i == 0 || l.topic != locs[i-1].topic {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = pl.topics[l.topic].Name
			rt.Partitions = parts[i : i+1]
			req.Topics = append(req.Topics, rt)
			continue
		}
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = rt.Partitions[:len(rt.Partitions)+1]
	}
	return req
}

// listOffsets lists one kind of offset (timestamp -2 start, -1 end, -3 max
// timestamp, KIP-734) of every planned partition: one request per
// partition leader, in parallel, sent to the leader directly. A failed
// request is recorded against every partition it carried; partitions whose
// leader moved are asked again through franz-go's sharded path. The result
// is indexed like the plan.
func (c *Client) listOffsets(ctx context.Context, pl *offsetPlan, timestamp int64) []offsetResult {
	out := make([]offsetResult, pl.total)
	for i := range out {
		out[i] = offsetResult{offset: -1, timestamp: -1, err: ErrNoAnswer}
	}
	for _, f := range pl.failed {
		out[f.at].err = f.err
	}
	var wg sync.WaitGroup
	for leader, locs := range pl.byLeader {
		wg.Go(func() {
			req := c.offsetsRequest(pl, locs, timestamp)
			kresp, err := c.kgo.Broker(int(leader)).RetriableRequest(ctx, req)
			if err != nil {
				err = c.wrap(ctx, "listing offsets", fmt.Errorf("broker %d: %w", leader, err))
				for _, l := range locs {
					out[pl.bases[l.topic]+int(l.partition)] = offsetResult{offset: -1, timestamp: -1, err: err}
				}
				return
			}
			resp := kresp.(*kmsg.ListOffsetsResponse)
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					// Only partitions this leader was asked for:
					// another goroutine owns the rest of out.
					if at := pl.at(rt.Topic, rp.Partition); at >= 0 && pl.owner[at] == leader {
						out[at] = offsetResult{offset: rp.Offset, timestamp: rp.Timestamp, err: kerr.ErrorForCode(rp.ErrorCode)}
					}
				}
			}
		})
	}
	wg.Wait()

	// Partitions whose leader moved since the metadata: franz-go's
	// sharded path looks the new leader up.
	var moved []partLoc
	for _, locs := range pl.byLeader {
		for _, l := range locs {
			err := out[pl.bases[l.topic]+int(l.partition)].err
			if errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.UnknownTopicOrPartition) {
				moved = append(moved, l)
			}
		}
	}
	if len(moved) > 0 {
		sort.Slice(moved, func(i, j int) bool { return moved[i].topic < moved[j].topic })
		again := c.issueListOffsets(ctx, c.offsetsRequest(pl, moved, timestamp))
		for _, l := range moved {
			if r, ok := again[pl.topics[l.topic].Name][l.partition]; ok {
				out[pl.bases[l.topic]+int(l.partition)] = r
			}
		}
	}
	return out
}

// issueListOffsets sends req, split by partition leader, and collects
// per-partition results. A failed shard is recorded against every
// partition it carried.
func (c *Client) issueListOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) offsetResults {
	out := make(offsetResults, len(req.Topics))
	if len(req.Topics) == 0 {
		return out
	}
	set := func(t string, p int32, r offsetResult) {
		m := out[t]
		if m == nil {
			m = make(map[int32]offsetResult)
			out[t] = m
		}
		m[p] = r
	}
	for _, shard := range c.kgo.RequestSharded(ctx, req) {
		if shard.Err != nil {
			err := c.wrap(ctx, "listing offsets", shard.Err)
			if sreq, ok := shard.Req.(*kmsg.ListOffsetsRequest); ok {
				for _, rt := range sreq.Topics {
					for _, rp := range rt.Partitions {
						set(rt.Topic, rp.Partition, offsetResult{offset: -1, timestamp: -1, err: err})
					}
				}
			}
			continue
		}
		resp := shard.Resp.(*kmsg.ListOffsetsResponse)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				set(rt.Topic, rp.Partition, offsetResult{offset: rp.Offset, timestamp: rp.Timestamp, err: kerr.ErrorForCode(rp.ErrorCode)})
			}
		}
	}
	return out
}

type configResult struct {
	configs map[string]string
	err     error
}

// describeConfigs describes the named configs of every topic without a
// metadata error, in batches of configBatch topics, configParallel batches
// at a time.
func (c *Client) describeConfigs(ctx context.Context, topics map[string]*Topic, names []string) map[string]configResult {
	if len(names) == 0 {
		names = DefaultConfigNames
	}
	all := make([]string, 0, len(topics))
	for name, t := range topics {
		if t.Err == nil {
			all = append(all, name)
		}
	}
	sort.Strings(all)
	out := make(map[string]configResult, len(all))
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(configParallel)
	for lo := 0; lo < len(all); lo += configBatch {
		batch := all[lo:min(lo+configBatch, len(all))]
		g.Go(func() error {
			req := kmsg.NewPtrDescribeConfigsRequest()
			for _, name := range batch {
				rr := kmsg.NewDescribeConfigsRequestResource()
				rr.ResourceType = kmsg.ConfigResourceTypeTopic
				rr.ResourceName = name
				rr.ConfigNames = names
				req.Resources = append(req.Resources, rr)
			}
			resp, err := req.RequestWith(ctx, c.kgo)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				err = c.wrap(ctx, "describing topic configs", err)
				for _, name := range batch {
					out[name] = configResult{err: err}
				}
				return nil
			}
			for _, r := range resp.Resources {
				if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
					if r.ErrorMessage != nil && *r.ErrorMessage != "" {
						err = fmt.Errorf("%w: %s", err, *r.ErrorMessage)
					}
					out[r.ResourceName] = configResult{err: err}
					continue
				}
				m := make(map[string]string, len(r.Configs))
				for _, cfg := range r.Configs {
					if cfg.Value != nil && !cfg.IsSensitive {
						m[cfg.Name] = *cfg.Value
					}
				}
				out[r.ResourceName] = configResult{configs: m}
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines record errors per topic and return nil
	return out
}
