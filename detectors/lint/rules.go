package lint

import "github.com/mm2-watchdog/mm2-watchdog/detectors"

// Rule ids. They are part of the external contract (CONTRACT.md, `lint-*`).
const (
	RuleIdempotence         = "lint-idempotence"
	RuleCompression         = "lint-compression"
	RuleExactlyOnce         = "lint-exactly-once"
	RuleACLSync             = "lint-acl-sync"
	RuleConfigSync          = "lint-config-sync"
	RuleIdentityLoop        = "lint-identity-loop"
	RuleOffsetSyncsLocation = "lint-offset-syncs-location"
	RulePrecreate           = "lint-precreate"
	RuleUnknownKey          = "lint-unknown-key"
	RuleSyntax              = "lint-syntax"
	RuleMissingBootstrap    = "lint-missing-bootstrap"
	RuleLimits              = "lint-limits"
	RuleProbeFailed         = "lint-probe-failed"
)

// Rule describes one lint rule for documentation (README, --help).
type Rule struct {
	ID string
	// Severity is the usual severity; Severities lists every one the rule
	// can have when it depends on the value or the MM2 version.
	Severity   detectors.Severity
	Severities string
	Summary    string // what it means
	Why        string // why it matters
	Fix        string // what to set
}

// Rules returns the lint rules in a stable order. The slice is new on
// every call.
func Rules() []Rule {
	return []Rule{
		{RuleIdempotence, detectors.Critical, "critical when true; warning when not set",
			"A producer that writes to a limited cluster has enable.idempotence on, or it is not set.",
			"An idempotent producer first sends InitProducerId, which the limited broker does not offer: the producer fails fatally and the task dies. Connect turns idempotence off for its source-task producers, but a `<target>.producer.enable.idempotence=true` turns it back on, and MM2's offset-syncs producer (OffsetSyncWriter) is a plain KafkaProducer with the client default true (MM2-REFERENCE.md §1.9, §7).",
			"Set `<limited>.producer.enable.idempotence = false`; when offset-syncs.topic.location puts the offset-syncs topic on the limited cluster, that line also covers the offset-syncs producer."},
		{RuleCompression, detectors.Critical, "critical when not none; warning when not set",
			"The producers that write to a limited cluster compress, or compression.type is not set explicitly.",
			"A broker without compression support answers UNSUPPORTED_COMPRESSION_TYPE, which is not retriable: the batch fails and the task dies (AbstractWorkerSourceTask).",
			"Set `<limited>.producer.compression.type = none`."},
		{RuleExactlyOnce, detectors.Critical, "critical when enabled; warning when preparing",
			"exactly.once.source.support is on for a herder that writes to a limited cluster.",
			"Exactly-once source support makes every Connect producer transactional, which needs InitProducerId and the transaction APIs.",
			"Remove `<limited>.exactly.once.source.support` or set it to disabled."},
		{RuleACLSync, detectors.Warning, "warning",
			"sync.topic.acls.enabled is not false for a flow into a limited cluster.",
			"MM2 calls CreateAcls on the target every sync.topic.acls.interval.seconds; a broker without ACLs fails each call with a WARN `Could not sync ACL of topic` (MM2-REFERENCE.md §1.7).",
			"Set `sync.topic.acls.enabled = false` (or `<source>-><limited>.sync.topic.acls.enabled = false`)."},
		{RuleConfigSync, detectors.Critical, "critical for MM2 4.x (and 3.x with use.incremental.alter.configs=required); warning for 3.x",
			"sync.topic.configs.enabled is not false for a flow into a cluster without IncrementalAlterConfigs.",
			"MM2 4.x syncs topic configs only with IncrementalAlterConfigs and puts MirrorSourceConnector into FAILED on the first sync, right at start; 3.9 falls back to the deprecated AlterConfigs with a WARN (MM2-REFERENCE.md §1.6).",
			"Set `sync.topic.configs.enabled = false`; on 3.x leave `use.incremental.alter.configs` at requested if you must keep config sync."},
		{RuleIdentityLoop, detectors.Critical, "critical",
			"IdentityReplicationPolicy is used by flows in both directions whose topic filters accept the same topic.",
			"Identity keeps topic names, so MM2 cannot tell a mirrored topic from a local one (isCycle never fires): every record of such a topic is copied back and forth forever (MM2-REFERENCE.md §4.3).",
			"Make the two flows' `topics` lists disjoint, or disable one direction."},
		{RuleOffsetSyncsLocation, detectors.Warning, "warning",
			"A flow from a limited cluster to Kafka keeps its offset-syncs topic on the limited source (offset-syncs.topic.location=source, the default).",
			"MM2 then creates `mm2-offset-syncs.<target>.internal` on the limited broker and writes to it with an idempotent producer, the one thing the flow otherwise never does to the limited side.",
			"Set `offset-syncs.topic.location = target` (or `<limited>-><kafka>.offset-syncs.topic.location = target`)."},
		{RulePrecreate, detectors.Critical, "critical (warning for a config the target may reject)",
			"With --probe: a topic the flow mirrors is missing on a target without CreatePartitions, has fewer partitions there than on the source, or has a source config the target rejects when MM2 creates the topic.",
			"A target without CreatePartitions can never gain partitions: records of the extra source partitions cannot be written and the task that owns them blocks silently (MM2-REFERENCE.md §1.2, §1.5). A source config such as an explicit retention.bytes is copied into CreateTopics and fails the whole creation (§1.3).",
			"Create the target topic before MM2 starts, with at least the source's partition count (leave head-room for growth), or add the config to `config.properties.exclude`."},
		{RuleUnknownKey, detectors.Warning, "warning",
			"A property MM2 does not know or ignores: a misspelt connector key, a flow or cluster alias that is not in `clusters`, a top-level key dedicated mode ignores, or a connector key under a cluster prefix.",
			"MM2 ignores such keys silently, so the setting you meant never applies.",
			"Fix the spelling, or move the key where MM2 reads it (the hint says where)."},
		{RuleSyntax, detectors.Critical, "critical when MM2 would refuse the file; warning for a placeholder that cannot be resolved where lint runs, and for what MM2 tolerates but misreads; info for the rest",
			"The file has a value MM2 rejects (a topics or groups regex that does not compile, a boolean that is not true/false, no `clusters`, a broken continuation or escape), a `${file:...}`, `${env:...}` or `${directory:...}` placeholder that cannot be resolved on the machine running lint (the file or variable exists only on the MM2 host), or something MM2 accepts but a reader should know (a key set twice, a regex of a disabled flow). The finding's values.kind says which: regex, boolean, number, enum, clusters, properties, placeholder, replication-policy or value.",
			"MM2 fails to start, or a flow does not do what the file seems to say. An unresolvable placeholder does not stop MM2 (it resolves it on its host, or leaves it as written), but the rules that read that key run without its value; the summary names them.",
			"Fix the value on the named line; for a placeholder, run lint where the file or variable exists (or export the variable) to check with its value."},
		{RuleMissingBootstrap, detectors.Critical, "critical",
			"A cluster used by a herder has no bootstrap.servers.",
			"MM2 falls back to localhost:9092 for that cluster.",
			"Set `<alias>.bootstrap.servers`."},
		{RuleLimits, detectors.Info, "info",
			"Which clusters the lint treated as limited, and why (profile, flag or probe).",
			"Every other rule depends on it.",
			"Use --limited ALIAS / --kafka ALIAS, or --probe, if the guess is wrong."},
		{RuleProbeFailed, detectors.Warning, "warning",
			"--probe could not ask a cluster its ApiVersions.",
			"The lint fell back to the flags or the strict profile for that cluster, and lint-precreate did not run for its flows.",
			"Check the cluster's bootstrap.servers and security settings, or run without --probe."},
	}
}
