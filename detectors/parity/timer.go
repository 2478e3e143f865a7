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
// returns the timestamp (CreateTime, or LogAppendTime when the topic sets it)
// of the record at an offset with cluster.Client.RecordTime.
//
// The Checker asks for log start offsets, which RecordTime answers with one
// ListOffsets request on the client's own connections; any other offset is
// read directly (a short-lived consumer, no consumer group, nothing
// committed). The Checker asks for few offsets a round and remembers the
// answers. A read of an offset that no longer holds a record (compacted
// away, or deleted by retention since the snapshot) waits for the timeout,
// so the Checker asks only for topics that delete by time.
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
	at, err := cl.RecordTime(ctx, topic, partition, offset)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading %s/%d at offset %d: %w", topic, partition, offset, err)
	}
	return at, nil
}
