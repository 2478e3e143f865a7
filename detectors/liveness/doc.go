// Package liveness holds the cluster detectors that read MM2's own internal
// topics to tell whether each flow is alive and whether its consumer groups
// could move to the target cluster now.
//
// It reads, with direct partition reads (no consumer group, nothing
// committed):
//
//   - heartbeats: MirrorHeartbeatTask writes one record per
//     emit.heartbeats.interval.seconds to partition 0 of `heartbeats` on the
//     herder's target, keyed (source, target), valued with the emit time
//     (MM2-REFERENCE.md §3). For every enabled flow A->B with heartbeats on,
//     the key (A, B) is looked up there. When the flow replicates heartbeats
//     and a herder emits into A (by default the heartbeat-only reverse herder
//     B->A that dedicated mode starts, §5.1), the replicated topic
//     (`A.heartbeats` on B) is read as well: its age is the end-to-end proof
//     that A->B copies records; when it is stale or absent, the heartbeats
//     on A are read to tell a stopped replication from stopped emitters.
//     Rules heartbeat-stalled and heartbeat-missing.
//   - checkpoints: `<A>.checkpoints.internal` on B (MirrorCheckpointTask, §2),
//     newest record per (group, topic, partition) key, joined with the
//     group's committed offsets on A and the offset-syncs topic, into a
//     cut-over readiness report per consumer group: which partitions have a
//     checkpoint, and how many records the group would read again after
//     moving to B. Rule checkpoint-stalled.
//   - offset-syncs: `mm2-offset-syncs.<B>.internal` on A (or
//     `mm2-offset-syncs.<A>.internal` on B with
//     offset-syncs.topic.location=target), whose newest record per partition
//     says how far MirrorSourceTask had replicated when it last emitted a
//     sync; against the source end offsets this gives a replication lag per
//     topic.
//
// Records are decoded with watcher/mm2config, which follows MM2's exact byte
// layout. A record that does not decode (truncated, or a version other than
// 0) is skipped and counted, never fatal.
//
// The package deliberately does not build Kafka clients (it reads through the
// narrow Reader interface, which *cluster.Client implements), does not decide
// when an alert fires, repeats or resolves (package alerts does, per scope),
// does not judge partition parity (package parity does), and never writes to
// a cluster: it does not commit, alter or translate offsets itself.
package liveness
