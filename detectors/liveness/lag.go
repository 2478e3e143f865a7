package liveness

import (
	"maps"
	"slices"
)

// SyncLagRow is the replication lag of one mirrored source topic as the
// offset-syncs show it: per partition, the source end offset minus the
// offset after the newest synced upstream offset, summed over the topic's
// partitions.
//
// MirrorSourceTask emits an offset-sync only once offset.lag.max records
// (default 100) have passed since the previous one, or when the mapping
// jumps, so the newest sync trails what the task has really written by up
// to offset.lag.max records per partition: Lag over-states the true lag by
// at most Partitions x offset.lag.max, and a partition at rest may keep
// showing that remainder. Read it as "at most this far behind, give or take
// offset.lag.max per partition"; a figure that keeps growing is the signal.
type SyncLagRow struct {
	Source, Target string
	// Topic is the source topic.
	Topic string
	// Lag is in records; see the type's comment for its granularity.
	Lag int64
	// Partitions is the number of partitions summed; Unsynced counts those
	// without any offset-sync, whose whole retained range (end - start)
	// counts as lag.
	Partitions, Unsynced int
	// OffsetLagMax is the flow's offset.lag.max, the granularity of Lag per
	// partition.
	OffsetLagMax int64
}

// syncLag computes the lag rows from the offset-syncs of each flow and the
// source snapshot's end offsets. Topics whose offsets are unknown, and flows
// whose offset-syncs are unknown, have no row.
func (c *Checker) syncLag(r Round, res *Result, all []flowSyncs) {
	for _, fs := range all {
		f := fs.flow
		src := r.Snapshots[f.Source]
		if fs.idx == nil || src == nil {
			res.keepLag[[2]string{f.Source, f.Target}] = true
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(src.Topics)) {
			t := src.Topics[name]
			if t.Err != nil || t.Offsets == nil || !f.ShouldReplicateTopic(name) {
				continue
			}
			row := SyncLagRow{Source: f.Source, Target: f.Target, Topic: name, OffsetLagMax: f.OffsetLagMax}
			known := true
			for i, o := range t.Offsets {
				p := int32(i)
				if o.Err != nil || o.End < 0 {
					known = false
					break
				}
				row.Partitions++
				syncs := fs.idx[syncKey{name, p}]
				if len(syncs) == 0 {
					if o.Start >= 0 && o.End > o.Start {
						row.Lag += o.End - o.Start
					}
					row.Unsynced++
					continue
				}
				newest := syncs[len(syncs)-1]
				row.Lag += max(0, o.End-(newest.UpstreamOffset+1))
			}
			if known {
				res.SyncLag = append(res.SyncLag, row)
			} else {
				res.keepLag[[2]string{f.Source, f.Target}] = true
			}
		}
	}
}
