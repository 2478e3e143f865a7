package parity

import (
	"context"
	"fmt"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
)

// DefaultReadTimeout bounds one ClientTimer read when ClientTimer.Timeout is
// zero.
const DefaultReadTimeout = 10 * time.Second

// ClientTimer is the RecordTimer of the daemon and the one-shot check: it
// reads the one record at an offset with cluster.Client.ReadRange (a direct
// partition read, no consumer group, nothing committed) and returns its
// timestamp (CreateTime, or LogAppendTime when the topic sets it).
//
// Each read opens short-lived connections; the Checker asks for few offsets a
// round and remembers the answers. A read of an offset that no longer holds a
// record (compacted away, or deleted by retention since the snapshot) waits
// for the timeout, so the Checker asks only for topics that delete by time.
type ClientTimer struct {
	// Clients by MM2 cluster alias.
	Clients map[string]*cluster.Client
	// Timeout bounds one read; zero means DefaultReadTimeout.
	Timeout time.Duration
}

// RecordTime implements RecordTimer. It fails when the alias has no client,
// the read fails or times out, or the offset holds a transaction marker
// rather than a record.
func (t ClientTimer) RecordTime(ctx context.Context, alias, topic string, partition int32, offset int64) (time.Time, error) {
	cl := t.Clients[alias]
	if cl == nil {
		return time.Time{}, fmt.Errorf("reading %s/%d at offset %d: no client for cluster %q", topic, partition, offset, alias)
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultReadTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	recs, err := cl.ReadRange(ctx, topic, partition, offset, offset+1)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading %s/%d at offset %d: %w", topic, partition, offset, err)
	}
	for _, r := range recs {
		if r.Offset == offset {
			return r.Timestamp, nil
		}
	}
	return time.Time{}, fmt.Errorf("reading %s/%d at offset %d on cluster %q: no record at that offset", topic, partition, offset, alias)
}
