// Package cluster is the only place in mm2-watchdog that builds a Kafka
// client. It turns the client properties MM2 uses for one cluster alias
// (bootstrap.servers, security.protocol, sasl.*, ssl.*) into a franz-go
// client, and reads what the cluster checks need from it:
//
//   - Snapshot: one batched look at a cluster per check cycle: cluster id,
//     brokers, the ApiVersions every broker advertises, topics with their
//     partition counts, start and end offsets per partition, and the few
//     topic configs the checks use. Failures are kept per topic and per
//     partition (Topic.Err, PartitionOffsets.Err) so that a topic whose
//     metadata failed is "unknown", never "0 partitions".
//   - ReadRange, ReadTail and ReadTopic: direct partition reads without a
//     consumer group, for MM2's heartbeats, checkpoints and offset-syncs
//     topics (the target may cap or forbid consumer groups).
//   - GroupOffsets and ListGroups: committed consumer group offsets.
//   - Classify: connection failures (bad credentials, unknown CA,
//     plaintext to a TLS port, refused connections, DNS) named for people.
//
// The package deliberately does not decode MM2's record formats, judge what
// it reads, export metrics or retry on its own schedule: decoders live with
// the MM2 configuration code, detectors judge snapshots, and the detector
// runner instruments the calls (Snapshot carries request counts and
// latencies for it). It never creates, alters or deletes anything on a
// cluster.
//
// Secrets (SASL passwords, keystore passwords) are held in the Secret type,
// which never prints itself; no error from this package contains one.
package cluster
