// Package demo is the world of `mm2-watchdog demo`: two Kafka-protocol
// clusters in the process, an application writing to one of them, and a
// simulated MirrorMaker 2 mirroring it to the other, writing the worker log
// and the internal topics a real MM2 writes, so that the watchdog's daemon
// can be watched at work with no infrastructure at all.
//
// What it builds:
//
//   - Source "kafka" and target "vast", two kfake clusters on 127.0.0.1
//     (StartClusters). Both hold orders (6 partitions) and clicks (3). vast
//     leaves CreatePartitions and IncrementalAlterConfigs out of its
//     ApiVersions, like managed or Kafka-compatible services with a reduced
//     admin API, so a partition increase on the source cannot be mirrored.
//   - An MM2 properties file for the flow kafka->vast with
//     IdentityReplicationPolicy (Clusters.Properties), which the watchdog
//     reads exactly as it reads a real connect-mirror-maker.properties.
//   - One MM2 herder (MM2) with tasks.max=1: the MirrorSourceConnector's topic
//     refresh (Found … topic-partitions missing on vast, the WARN Could not
//     create topic-partitions for orders. with UnsupportedVersionException,
//     refreshing topics took N ms), one MirrorSourceTask that reads the
//     source partitions directly and writes each record to the target
//     partition of the same number, its offset-commit line (Committing
//     offsets for N acknowledged messages), heartbeats on vast every
//     interval, offset syncs to mm2-offset-syncs.vast.internal on kafka, and
//     checkpoints of the consumer group orders-app to
//     kafka.checkpoints.internal on vast, all in MM2's binary layouts
//     (watcher/mm2config). The message templates, logger names and
//     connector contexts are MM2 3.9's (MM2-REFERENCE.md).
//   - The worker log (WorkerLog) in MM2 3.9's layout
//     `[%d] %p %X{connector.context}%m (%c:%L)%n`, UTC timestamps, rolled
//     over the way log4j 1.x's DailyRollingFileAppender does it (rename to
//     connect.log.YYYY-MM-DD-HH, create a new connect.log).
//   - The timeline (Demo.Run), told by a Narrator: healthy; partitions added
//     to kafka/orders; the task blocks on the first record for a partition
//     vast does not have, as Connect's producer does with
//     max.block.ms=Long.MAX_VALUE, which stalls every partition of the task;
//     the log rolls over; the operator deletes vast/orders, creates it again
//     with the source's partition count and restarts the task; healthy
//     again. Timing compresses MM2's 10-minute topic refresh and 60-second
//     offset flush and checkpoint intervals to seconds; Timing.Scaled
//     shrinks everything further for tests.
//
// What it deliberately does not do:
//
//   - It is not MirrorMaker 2. There is no Connect worker, no herder group,
//     no REST API, no exactly-once support, no topic or ACL or config sync,
//     no reverse herder, no consumer-group offset sync, and offsets are not
//     stored: the task resumes from its consumer's position. Offset
//     translation is MM2's simple rule (a sync's downstream offset, plus one
//     past it), not OffsetSyncStore's history.
//   - After the repair it logs "Increased size of orders to 9 partitions.",
//     the line MirrorSourceConnector.createNewPartitions logs when its own
//     CreatePartitions succeeds. A real MM2 logs nothing when the target
//     topic is recreated by hand; the watchdog then resolves
//     partitions-not-created after its quiet period instead. The demo logs
//     the line so that the recovery is visible within the timeline.
//   - The exception of the WARN is one line: Kafka's ApiException subclasses
//     skip their stack trace (ApiException.fillInStackTrace returns this),
//     so log4j prints just "class: message".
//   - It has no security (no TLS, no SASL), one broker per cluster, and does
//     not persist anything: every run starts from empty clusters.
//   - It does not start or configure the watchdog: the demo command wires
//     the daemon of `mm2-watchdog run` to these files and clusters. Only this
//     package imports kfake; the run code path never does.
package demo
