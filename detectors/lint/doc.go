// Package lint checks an MM2 dedicated-mode properties file, before MM2
// starts, against the limits of the clusters it writes to: a
// Kafka-compatible broker that lacks CreatePartitions,
// IncrementalAlterConfigs, idempotent and transactional producing
// (InitProducerId), ACLs and compression needs settings that Apache Kafka
// does not, and MM2's defaults are wrong for it.
//
// Check takes a parsed *mm2config.Config, which aliases are limited (Limits,
// by alias: given explicitly, decided from a probe snapshot's ApiVersions,
// or from a profile: the aliases whose producers the file itself pins to no
// idempotence and no compression, else every target of an enabled flow)
// and optional cluster snapshots, and returns findings with rule ids `lint-*` (see Rules). Every
// finding names the property, its line in the file, the value found and the
// value to set, in Finding.Values ("key", "line", "found", "want") and
// Finding.Evidence. Parse wraps mm2config.Parse so that a file MM2 would
// reject (a topic regex that does not compile, a missing `clusters`) becomes
// lint-syntax findings instead of an error, and the other rules still run.
//
// The facts come from MM2-REFERENCE.md: where `<target>.producer.*` lands
// (MirrorMakerConfig.workerConfig, §5.3), the offset-syncs producer that
// keeps the Kafka client's default enable.idempotence=true
// (OffsetSyncWriter, §1.9), config sync in 3.9 and 4.x
// (MirrorSourceConnector.syncTopicConfigs, §1.6), ACL sync (§1.7), and
// IdentityReplicationPolicy's blindness to cycles (§4.3).
//
// What the package deliberately does not do: it opens no file and no
// connection (the caller reads the file and takes the snapshots), it does
// not decide how findings are printed or which exit code they earn, and it
// does not model custom ReplicationPolicy classes beyond what mm2config
// offers.
package lint
