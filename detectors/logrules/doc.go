// Package logrules turns MirrorMaker 2 worker log records into findings.
//
// The rules are data: one table (rules.go) in which every row names a rule id,
// a severity, the log levels it applies to, an optional logger, a literal
// prefilter that must occur in the message, a regular expression with named
// groups (topic, target, source, connector, taskid, group, partition, …), a
// summary template and a hint. The wording each row matches is the stable part
// of an MM2 or Kafka Connect log template, quoted in MM2-REFERENCE.md with the
// class that logs it; rows tolerate the differences between Kafka 2.4 and 4.1.
//
// The Engine adds what a single line cannot know:
//
//   - the root cause from the attached stack trace, and the rules that are
//     named after a cause (record-too-large, compression-unsupported,
//     idempotence-unsupported, authorization-failed, partition-not-in-metadata,
//     config-sync-unsupported), which take over from the generic task-failed
//     and connector-failed when a task or connector dies of that cause;
//   - incident linking: a failed send followed by "Task threw an uncaught and
//     unrecoverable exception" for the same task is one finding, whichever line
//     comes first;
//   - folding of repeats (count, first and last seen) and a bounded memory of
//     the folded findings;
//   - stateful rules: partitions missing on the target over consecutive
//     refreshes, rebalance storms in a sliding window of record time,
//     replication loops in topic names, and recovery signals (a task started
//     again, a topic's partitions increased);
//   - attribution of the flow (source and target aliases), connector and task
//     from the connector context, client ids, herder prefixes and thread names.
//
// Connector names are reported without a flow prefix: the Connect-mode name
// "legacy->platform.MirrorSourceConnector" becomes connector
// "MirrorSourceConnector" with source "legacy" and target "platform", so that
// dedicated and Connect-mode deployments give the same identities.
//
// The package deliberately does no I/O, keeps no clock of its own (all times
// are record times), does not decide when an alert fires or resolves (package
// alerts does, from the findings and their Recovered marks) and does not read
// log files (package watcher/logparse does).
package logrules
