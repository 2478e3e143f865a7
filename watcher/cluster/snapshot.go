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

// Snapshot is one look at a cluster. Every request is batched: one
// Metadata request, one ApiVersions request per broker, one ListOffsets
// request per partition leader per kind of offset, and one DescribeConfigs
// request per 1000 topics, whatever the number of topics.
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
	// Offsets holds offsets by partition, for every partition in the
	// metadata, when offsets were asked for.
	Offsets map[int32]PartitionOffsets
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
// The whole call is bounded by ctx and the client's APITimeout.
func (c *Client) Snapshot(ctx context.Context, opts SnapshotOptions) (*Snapshot, error) {
	start := c.now()
	mark := c.stats.mark()
	ctx, cancel := c.opContext(ctx)
	defer cancel()

	req := kmsg.NewPtrMetadataRequest()
	if len(opts.Names) > 0 {
		for _, n := range opts.Names {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, rt)
		}
	} // nil Topics: all topics
	resp, err := req.RequestWith(ctx, c.kgo)
	if err != nil {
		return nil, c.wrap("listing metadata", err)
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
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		if rt.Topic == nil {
			continue
		}
		name := *rt.Topic
		if opts.Topics != nil && !opts.Topics(name) {
			continue
		}
		t := &Topic{Name: name, Internal: rt.IsInternal, Partitions: len(rt.Partitions)}
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
	}
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

	var (
		wg                  sync.WaitGroup
		starts, ends, maxTS offsetResults
		configs             map[string]configResult
		apis                map[int16]int16
		apisErr             error
		answered            bool
		wantOffsets         = opts.Offsets
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		apis, answered, apisErr = c.apiVersions(ctx, brokerIDs)
	}()
	if wantOffsets {
		wg.Add(2)
		go func() { defer wg.Done(); starts = c.listOffsets(ctx, s.Topics, -2) }()
		go func() { defer wg.Done(); ends = c.listOffsets(ctx, s.Topics, -1) }()
	}
	if opts.Configs {
		wg.Add(1)
		go func() { defer wg.Done(); configs = c.describeConfigs(ctx, s.Topics, opts.ConfigNames) }()
	}
	wg.Wait()
	s.APIs, s.APIsErr, s.answered = apis, apisErr, answered
	if opts.MaxTimestamps {
		if v, ok := s.APIs[int16(kmsg.ListOffsets)]; ok && v >= 7 && s.APIsErr == nil {
			maxTS = c.listOffsets(ctx, s.Topics, -3)
		}
	}

	for name, t := range s.Topics {
		if t.Err != nil {
			continue
		}
		if wantOffsets || maxTS != nil {
			t.Offsets = make(map[int32]PartitionOffsets, t.Partitions)
			for p := int32(0); p < int32(t.Partitions); p++ {
				po := PartitionOffsets{Start: -1, End: -1}
				if wantOffsets {
					po.Start, po.Err = starts.get(name, p)
					var endErr error
					po.End, endErr = ends.get(name, p)
					if po.Err == nil {
						po.Err = endErr
					}
				}
				if maxTS != nil {
					if r, ok := maxTS[name][p]; ok && r.err == nil && r.timestamp >= 0 {
						po.MaxTimestamp = time.UnixMilli(r.timestamp)
					}
				}
				t.Offsets[p] = po
			}
		}
		if opts.Configs {
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
		err = c.wrap("asking ApiVersions", errors.Join(errs...))
	}
	return apis, apis != nil, err
}

type offsetResult struct {
	offset, timestamp int64
	err               error
}

type offsetResults map[string]map[int32]offsetResult

// get returns the offset for t/p, -1 and an error when unknown.
func (o offsetResults) get(t string, p int32) (int64, error) {
	r, ok := o[t][p]
	switch {
	case !ok:
		return -1, ErrNoAnswer
	case r.err != nil:
		return -1, r.err
	}
	return r.offset, nil
}

// listOffsets issues one ListOffsets request for every partition of every
// topic without a metadata error, with the given special timestamp (-2
// start, -1 end, -3 max timestamp). franz-go splits it by partition leader.
// Shard failures are recorded against every partition the shard carried.
func (c *Client) listOffsets(ctx context.Context, topics map[string]*Topic, timestamp int64) offsetResults {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.TimeoutMillis = int32(c.cfg.RequestTimeout / time.Millisecond)
	for name, t := range topics {
		if t.Err != nil || t.Partitions <= 0 {
			continue
		}
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = name
		rt.Partitions = make([]kmsg.ListOffsetsRequestTopicPartition, t.Partitions)
		for p := range rt.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition = int32(p)
			rp.Timestamp = timestamp
			rt.Partitions[p] = rp
		}
		req.Topics = append(req.Topics, rt)
	}
	return c.issueListOffsets(ctx, req)
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
			err := c.wrap("listing offsets", shard.Err)
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
				err = c.wrap("describing topic configs", err)
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
