package logrules

import (
	"regexp"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// Rule is one row of the log rule table: which records it applies to and what
// finding it gives. Several rows may share an ID when MM2 logs the same
// condition in several wordings (versions, classes).
type Rule struct {
	// ID is the stable kebab-case rule id of the findings this row produces
	// (CONTRACT.md). A cause-specific row may hand its finding to a more
	// specific rule (see Carrier).
	ID string
	// Severity is the severity of the finding this row produces.
	Severity detectors.Severity
	// Levels are the log4j levels the row applies to ("INFO", "WARN",
	// "ERROR"; "ERROR" includes "FATAL"). A record without a level matches
	// every row.
	Levels []string
	// Logger, when set, is the simple class name the record's logger must end
	// with. Records without a logger (layouts that do not print %c) pass.
	Logger string
	// Prefilter is a literal that must occur in the record's message (or, for
	// a Cause row, in the message or an exception line of the stack) before
	// Pattern runs. It is chosen to be stable across MM2 versions.
	Prefilter string
	// Pattern is a regular expression (RE2 syntax) with named groups: topic,
	// source, target, flow ("A->B"), cluster, connector, taskid
	// ("MirrorSourceConnector-0"), task, group, partition, tp ("topic-3"),
	// job; any other named group becomes an entry of Finding.Values (integers
	// when the text is a number). Empty means the prefilter alone decides.
	Pattern string
	// Summary is the template of Finding.Summary: {topic}, {source},
	// {target}, {flow}, {cluster}, {connector}, {task}, {group}, {cause} and
	// the names of value groups are replaced.
	Summary string
	// Hint says what to do, in one or two sentences.
	Hint string
	// From names the MM2 or Kafka class that logs the matched line, and the
	// versions where the wording differs.
	From string
	// Cause marks a row matched against the root cause and the exception lines
	// of the stack as well as the message; such rows also take over Carrier
	// rows.
	Cause bool
	// Carrier marks a row whose finding is replaced by a Cause row when the
	// record's exception matches one (a task or connector that died of a cause
	// with its own rule).
	Carrier bool

	levels  levelMask
	re      *regexp.Regexp
	kind    incidentKind
	handler handlerKind
	// requireCause drops the match when the record has no exception attached.
	requireCause bool
	// quietCause drops the match when the root cause contains this literal.
	quietCause string
	// warnCause lowers the severity to warning when the root cause contains
	// this literal.
	warnCause string
	// topicList keeps topics out of the identity and lists them in
	// Values["topics"] instead (conditions that are per flow, not per topic).
	topicList bool
	// standalone lets a Cause row match a record that no message row matched.
	standalone bool
	// optional: a Cause row's Pattern only extracts groups; the prefilter
	// alone decides the match.
	optional bool
}

// incidentKind groups rows whose findings may describe one incident.
type incidentKind uint8

const (
	kindPlain incidentKind = iota
	// kindTask: a task died (failed send, uncaught exception, init failure).
	kindTask
	// kindConnector: a connector failed.
	kindConnector
)

// handlerKind selects the stateful handling of a row.
type handlerKind uint8

const (
	hPlain handlerKind = iota
	// hMissing: "Found … topic-partitions missing on B." (streaks, resolve on 0).
	hMissing
	// hRebalance: "Rebalance started" (sliding window per group).
	hRebalance
	// hTopicName: a line naming topics that may show a replication loop.
	hTopicName
	// hReplicating: "… replicating N topic-partitions A->B: […]".
	hReplicating
	// hIncreased: "Increased size of T to N partitions." (resolves).
	hIncreased
	// hTaskStart: a task was started again (resolves task deaths).
	hTaskStart
	// hRefreshDone: "refreshing topics took N ms" (a refresh without missing partitions).
	hRefreshDone
	// hAliases: a line that names cluster aliases and nothing else.
	hAliases
	// hScheduler: a Scheduler error; the rule follows from the job description.
	hScheduler
	// hAuthMap: a client "{topic=TOPIC_AUTHORIZATION_FAILED}" metadata error.
	hAuthMap
)

// levelMask is a set of log levels.
type levelMask uint8

const (
	lvTrace levelMask = 1 << iota
	lvDebug
	lvInfo
	lvWarn
	lvError
	lvAll = lvTrace | lvDebug | lvInfo | lvWarn | lvError
)

// Fragments shared by the patterns.
const (
	// reTopic is a Kafka topic name (legal characters only), lazily matched so
	// that a sentence's final period is not taken into the name.
	reTopic = `(?P<topic>[A-Za-z0-9._\-]+?)`
	// reAlias is an MM2 cluster alias.
	reAlias = `[^\s.|,>\[\]{}()'":=]+`
	// reTaskID is a Connect task's toString, "WorkerSourceTask{id=conn-0}".
	reTaskID = `\{id=(?P<taskid>[^}]+-\d+)\}`
)

// table builds the rule table. It is a function, not a package variable, so
// that nothing in the package is global and mutable.
func table() []Rule {
	var (
		info      = []string{"INFO"}
		warn      = []string{"WARN"}
		errorOnly = []string{"ERROR"}
		warnError = []string{"WARN", "ERROR"}
		infoUp    = []string{"INFO", "WARN", "ERROR"}
	)
	rows := []Rule{
		// ── Signals: lines that change state but are not findings by themselves.
		{Levels: info, Prefilter: "Increased size of ", Pattern: `Increased size of ` + reTopic + ` to (?P<partitions>\d+) partitions`,
			From: "MirrorSourceConnector.createNewPartitions, success", handler: hIncreased},
		{Levels: info, Prefilter: "Creating task ", Pattern: `Creating task (?P<taskid>\S+-\d+)\s*$`,
			From: "Worker.startTask", handler: hTaskStart},
		{Levels: info, Prefilter: " Executing source task", Pattern: reTaskID + ` Executing source task`,
			From: "AbstractWorkerSourceTask.execute (WorkerSourceTask.execute before 3.2)", handler: hTaskStart},
		{Levels: info, Prefilter: "previously uncommitted partitions", From: "MirrorSourceTask.start", handler: hTaskStart},
		{Levels: info, Prefilter: " took ", Logger: "Scheduler", Pattern: `^refreshing topics took \d+ ms`,
			From: "Scheduler.executeThread after MirrorSourceConnector.refreshTopicPartitions", handler: hRefreshDone},
		{Levels: info, Prefilter: "topic-partitions on ", Pattern: `Found \d+ topic-partitions on (?P<source>` + reAlias + `)\. \d+ are new\.`,
			From: "MirrorSourceConnector.refreshTopicPartitions, Kafka 2.4–2.8 wording (no missing count)", handler: hAliases},
		{Levels: info, Prefilter: " consumer groups ", Pattern: `checkpointing \d+ consumer groups (?P<flow>` + reAlias + `->` + reAlias + `)`,
			From: "MirrorCheckpointTask.start", handler: hAliases},

		// ── Partitions and topics on the target (MirrorSourceConnector).
		{ID: "partitions-missing-on-target", Severity: detectors.Warning, Levels: info, Prefilter: "topic-partitions missing on ",
			Pattern: `(?:Found (?P<new_partitions>\d+) new topic-partitions on (?P<source>` + reAlias + `)\. )?(?:Found (?P<deleted_partitions>\d+) deleted topic-partitions on ` + reAlias + `\. )?Found (?P<missing_partitions>\d+) topic-partitions missing on (?P<target>` + reAlias + `)`,
			Summary: "{missing_partitions} source topic-partitions have no partition on {target}{flow}; MM2 cannot mirror them until the target topics gain partitions.",
			Hint:    "Compare partition counts of the source topics and their remote topics on the target. If the target lacks CreatePartitions (UnsupportedVersionException / CREATE_PARTITIONS), recreate the remote topics with the source's partition count (or pre-create them with enough partitions) and restart the MirrorSourceConnector tasks; otherwise add the partitions on the target.",
			From:    "MirrorSourceConnector.refreshTopicPartitions (3.0+ wording)", handler: hMissing},
		{ID: "partitions-not-created", Severity: detectors.Critical, Levels: warnError, Prefilter: "Could not create topic-partitions for ",
			Pattern: `Could not create topic-partitions for ` + reTopic + `\.?\s*$`,
			Summary: "MM2 could not add partitions to target topic {topic} on {target}{flow}: records of the extra source partitions are not mirrored{cause}.",
			Hint:    "If the cause is UnsupportedVersionException / CREATE_PARTITIONS (the target lacks the API), recreate the target topic with the source's partition count (or pre-create target topics with enough partitions) and restart the MirrorSourceConnector tasks; otherwise add the partitions on the target (kafka-topics --alter --partitions) after fixing the cause (e.g. MM2's Alter rights).",
			From:    "MirrorSourceConnector.createNewPartitions (all versions)"},
		{ID: "topic-not-created", Severity: detectors.Critical, Levels: warnError, Prefilter: "Could not create topic ",
			Pattern: `Could not create topic ` + reTopic + `\.?\s*$`,
			Summary: "MM2 could not create target topic {topic} on {target}{flow}, so its source topic is not mirrored{cause}.",
			Hint:    "Fix what the cause names (often a topic config the target rejects, a policy or missing CreateTopics rights) or create the topic on the target yourself; exclude the offending config with config.properties.exclude.",
			From:    "MirrorSourceConnector.createNewTopics (all versions)", warnCause: "TopicExistsException"},
		{ID: "replication-loop", Severity: detectors.Critical, Levels: infoUp, Prefilter: "Created remote topic ",
			Pattern: `Created remote topic ` + reTopic + ` with \d+ partitions`,
			Summary: "Topic names carry the alias {alias} more than once{topics}: MM2 is mirroring its own remote topics in a loop.",
			Hint:    "Exclude remote topics from the flow (topics.exclude for the other side's prefix) or check that both directions use DefaultReplicationPolicy with the right aliases; delete the chained topics once the loop is broken.",
			From:    "MirrorSourceConnector.createNewTopics, success", handler: hTopicName},
		{ID: "replication-loop", Severity: detectors.Critical, Levels: infoUp, Prefilter: " topic-partitions on ",
			Pattern: `Found (?:new|missing|deleted) topic-partitions on (?P<cluster>` + reAlias + `): `,
			Summary: "Topic names carry the alias {alias} more than once{topics}: MM2 is mirroring its own remote topics in a loop.",
			Hint:    "Exclude remote topics from the flow (topics.exclude for the other side's prefix) or check that both directions use DefaultReplicationPolicy with the right aliases; delete the chained topics once the loop is broken.",
			From:    "MirrorSourceConnector.refreshTopicPartitions (TRACE detail lines)", handler: hTopicName},
		{ID: "replication-loop", Severity: detectors.Critical, Levels: infoUp, Prefilter: " topic-partitions ",
			Pattern: `replicating \d+ topic-partitions (?P<flow>` + reAlias + `->` + reAlias + `): `,
			Summary: "Topic names carry the alias {alias} more than once{topics}: MM2 is mirroring its own remote topics in a loop.",
			Hint:    "Exclude remote topics from the flow (topics.exclude for the other side's prefix) or check that both directions use DefaultReplicationPolicy with the right aliases; delete the chained topics once the loop is broken.",
			From:    "MirrorSourceTask.start", handler: hReplicating},

		// ── Internal topics.
		{ID: "internal-topic-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "Unable to create topic",
			Pattern: `Unable to create topic '?(?P<topic>[A-Za-z0-9._\-]+)`,
			Summary: "MM2/Connect could not create internal topic {topic}{flow}{cause}.",
			Hint:    "Create the internal topic yourself (compacted, replication factor the cluster allows) or grant CreateTopics; check the *.replication.factor settings against the number of brokers.",
			From:    "MirrorUtils.createCompactedTopic, TopicAdmin", quietCause: "TopicExistsException"},

		// ── Topic configs and ACLs.
		{ID: "config-sync-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "with IncrementalAlterConfigs API",
			Pattern: `Failed to sync configs for topic ` + reTopic + ` on cluster (?P<target>` + reAlias + `) with IncrementalAlterConfigs API`,
			Summary: "{target} does not support IncrementalAlterConfigs: topic config sync fails and MirrorSourceConnector is FAILED on Kafka 4.x{topics}{cause}.",
			Hint:    "Set sync.topic.configs.enabled=false for this flow, or upgrade the target to a broker that supports IncrementalAlterConfigs (Kafka 2.3+).",
			From:    "MirrorSourceConnector.syncTopicConfigs: 4.x always, 3.x with use.incremental.alter.configs=required", topicList: true},
		{ID: "config-sync-unsupported", Severity: detectors.Warning, Levels: warnError, Prefilter: "is not compatible with IncrementalAlterConfigs",
			Pattern: `target cluster (?P<target>` + reAlias + `) is not compatible with IncrementalAlterConfigs API\. Therefore using deprecated AlterConfigs API for syncing configs for topic ` + reTopic + `\s*$`,
			Summary: "{target} does not support IncrementalAlterConfigs; MM2 3.x falls back to the deprecated AlterConfigs API, which Kafka 4.x MM2 no longer does{topics}.",
			Hint:    "Before moving MM2 to Kafka 4.x, upgrade the target or set sync.topic.configs.enabled=false; until then configs are synced with AlterConfigs.",
			From:    "MirrorSourceConnector.syncTopicConfigs, 3.x fallback", topicList: true},
		{ID: "config-sync-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Could not alter configuration of topic ",
			Pattern: `Could not alter configuration of topic ` + reTopic + `\.?\s*$`,
			Summary: "MM2 could not sync the configuration of target topic {topic} on {target}{flow}{cause}.",
			Hint:    "Fix the config the target rejects (exclude it with config.properties.exclude) or grant AlterConfigs on the topic; the 4.0/4.1 WARN without a stack trace is harmless and is not reported.",
			From:    "MirrorSourceConnector.updateTopicConfigs (without an exception it is KAFKA-20017, 4.0/4.1)", requireCause: true},
		{ID: "acl-sync-disabled", Severity: detectors.Info, Levels: infoUp, Prefilter: "No ACL authorizer is configured on the source",
			Summary: "The source cluster{flow} has no ACL authorizer, so MM2 syncs no topic ACLs.",
			Hint:    "Set sync.topic.acls.enabled=false for this flow to stop the periodic DescribeAcls calls.",
			From:    "MirrorSourceConnector.listTopicAclBindings"},
		{ID: "acl-sync-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Could not sync ACL of topic ",
			Pattern: `Could not sync ACL of topic ` + reTopic + `\.?\s*$`,
			Summary: "MM2 could not create topic ACLs on {target}{flow}{topics}{cause}.",
			Hint:    "Enable an authorizer and grant Alter on the cluster to MM2's principal on the target, or set sync.topic.acls.enabled=false.",
			From:    "MirrorSourceConnector.updateTopicAcls", topicList: true},

		// ── Authorization reported by MM2 or the clients.
		{ID: "authorization-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "AuthorizationException occurred while trying to ",
			Pattern: `(?P<code>\w*AuthorizationException) occurred while trying to (?P<operation>.+?)(?: on (?P<cluster>` + reAlias + `) cluster)?\s*$`,
			Summary: "MM2 is not authorized to {operation} on {cluster}{flow} ({code}){cause}.",
			Hint:    "Grant MM2's principal the ACL the operation needs on that cluster (see the MM2 ACL list in the Kafka docs).",
			From:    "MirrorUtils.adminCall"},
		{ID: "authorization-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "_AUTHORIZATION_FAILED",
			Pattern: `(?P<code>(?:TOPIC|GROUP|CLUSTER|TRANSACTIONAL_ID)_AUTHORIZATION_FAILED)`,
			Summary: "A client of MM2{flow} is not authorized for {topic} ({code}).",
			Hint:    "Grant MM2's principal the ACLs it needs on that topic (Describe/Read on the source, Describe/Write/Create on the target) or on its internal topics.",
			From:    "NetworkClient / KafkaAdminClient metadata errors", handler: hAuthMap},
		{ID: "authorization-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "Not authorized to access",
			Pattern: `Not authorized to access (?:topics: \[(?P<topic>[^\],]+)|group: (?P<group>\S+))`,
			Summary: "MM2{flow} is not authorized to access {topic}{cause}.",
			Hint:    "Grant MM2's principal the ACLs it needs (Describe/Read on the source topics and groups, Describe/Write/Create/Alter on the target) and restart the failed task or connector.",
			From:    "client exceptions (TopicAuthorizationException, GroupAuthorizationException)"},

		// ── Worker and herder.
		{ID: "worker-died", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Uncaught exception in herder work thread",
			Summary: "The Connect herder{flow} exited and MM2 stopped replicating{cause}.",
			Hint:    "Fix the cause (often ACLs or settings of the Connect internal topics mm2-configs/offsets/status) and restart MM2.",
			From:    "DistributedHerder.run"},
		{ID: "worker-died", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Failed to start MirrorMaker",
			Summary: "MirrorMaker failed to start{cause}.",
			Hint:    "Fix the cause named in the stack trace (configuration, connectivity, ACLs) and start MM2 again.",
			From:    "MirrorMaker.main"},
		{ID: "worker-died", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Stopping due to error",
			Summary: "The MM2/Connect process stopped because of an error{cause}.",
			Hint:    "Fix the cause named in the stack trace and start MM2 again.",
			From:    "MirrorMaker.main, ConnectDistributed"},
		{ID: "rebalance-storm", Severity: detectors.Warning, Levels: info, Prefilter: "Rebalance started",
			Pattern: `\[Worker clientId=(?P<client>[^,\]]+), groupId=(?P<group>[^\]]+)\] Rebalance started`,
			Summary: "The Connect worker group {groupname}{flow} started {rebalances} rebalances within {window}: tasks keep stopping and restarting.",
			Hint:    "Look for workers joining and leaving (restarts, long GC, session.timeout.ms/rebalance.timeout.ms too low) or a connector whose task configs keep changing.",
			From:    "WorkerCoordinator / DistributedHerder", handler: hRebalance},
		{ID: "task-reconfiguration-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "reconfigure connector tasks failed",
			Summary: "A follower{flow} could not forward a task reconfiguration to the leader: new topics and partitions are not picked up{cause}.",
			Hint:    "Check that workers can reach the leader's REST endpoint (dedicated.mode.enable.internal.rest=true in dedicated mode, listeners, TLS) and restart the connector.",
			From:    "DistributedHerder.reconfigureConnector"},
		{ID: "task-reconfiguration-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "Failed to reconfigure connector's tasks",
			Pattern: `Failed to reconfigure connector's tasks \((?P<connector>[^)]+)\)`,
			Summary: "Connect{flow} could not reconfigure the tasks of {connector}: new topics and partitions are not picked up{cause}.",
			Hint:    "Fix the cause; Connect retries with backoff, and a restart of the connector forces a new task configuration.",
			From:    "DistributedHerder.reconfigureConnectorTasksWithRetry"},
		{ID: "task-reconfiguration-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "Task reconfiguration for ",
			Pattern: `Task reconfiguration for (?P<connector>\S+) failed`,
			Summary: "Connect{flow} gave up reconfiguring the tasks of {connector}: it will not be reconfigured until restarted{cause}.",
			Hint:    "Restart the connector after fixing the cause.",
			From:    "DistributedHerder.reconfigureConnectorTasksWithExponentialBackoffRetries"},
		{ID: "connector-unresponsive", Severity: detectors.Warning, Levels: warnError, Prefilter: "failed to properly shut down",
			Pattern: `(?:Connector )?'?(?P<connector>[^'\s]+)'? failed to properly shut down`,
			Summary: "{connector}{flow} did not stop cleanly and has become unresponsive; its work may no longer be done.",
			Hint:    "Restart the MM2 worker if the connector does not come back; check for blocked sends to the target.",
			From:    "Worker.stopAndAwaitConnector"},
		{ID: "connector-unresponsive", Severity: detectors.Warning, Levels: warnError, Prefilter: "Graceful stop of ",
			Pattern: `Graceful stop of (?:task (?P<taskid>\S+-\d+)|connector (?P<connector>\S+)) failed`,
			Summary: "{task}{flow} did not stop within the graceful timeout; its partitions may no longer be mirrored.",
			Hint:    "A task that cannot stop is usually blocked sending to the target (for example a partition missing on the target); check the partition counts and restart the worker.",
			From:    "Worker.awaitStopTask / awaitStopConnector"},
		{ID: "eos-fencing-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "ombie fencing",
			Pattern: `(?i)fail.*zombie fencing(?: for (?:source )?connector (?P<connector>\S+))?`,
			Summary: "Connect{flow} could not fence zombie tasks of {connector}, so exactly-once source tasks cannot start{cause}.",
			Hint:    "Grant the transactional-id and IdempotentWrite ACLs the fencing needs on the target and check that the target supports transactions.",
			From:    "DistributedHerder.fenceZombieSourceTasks (exactly.once.source.support=enabled)"},

		// ── Task deaths (carriers: a cause with its own rule takes over).
		{ID: "task-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "failed to send record to ",
			Pattern: reTaskID + `? ?failed to send record to ` + reTopic + `:?\s*$`,
			Summary: "{task}{flow} failed to send a record to target topic {topic}; the task stops{cause}.",
			Hint:    "Fix the cause and restart the task (PUT /connectors/<name>/tasks/<n>/restart or restart MM2).",
			From:    "AbstractWorkerSourceTask producer callback (WorkerSourceTask before 3.2)", Carrier: true, kind: kindTask},
		{ID: "task-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "due to an unrecoverable exception",
			Pattern: `Failed to send record to topic '` + reTopic + `' and partition '(?P<partition>-?\d+)' due to an unrecoverable exception`,
			Summary: "{task}{flow} failed to send a record to target topic {topic}; the task stops{cause}.",
			Hint:    "Fix the cause and restart the task (PUT /connectors/<name>/tasks/<n>/restart or restart MM2).",
			From:    "AbstractWorkerSourceTask.sendRecords", Carrier: true, kind: kindTask},
		{ID: "task-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Task threw an uncaught and unrecoverable exception",
			Pattern: `Task threw an uncaught and unrecoverable exception(?:\.|\s*$|\s+Task is being killed)`,
			Summary: "{task}{flow} failed and will not recover until restarted: its partitions are not mirrored{cause}.",
			Hint:    "Fix the cause, then restart the task (PUT /connectors/<name>/tasks/<n>/restart) or MM2.",
			From:    "WorkerTask.doRun (one line since 3.x; 2.x logs 'Task is being killed…' as a second line)", Carrier: true, kind: kindTask},
		{ID: "task-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Task is being killed and will not recover",
			Summary: "{task}{flow} failed and will not recover until restarted: its partitions are not mirrored{cause}.",
			Hint:    "Fix the cause, then restart the task (PUT /connectors/<name>/tasks/<n>/restart) or MM2.",
			From:    "WorkerTask.doRun (2.x second line)", Carrier: true, kind: kindTask},
		{ID: "task-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Task failed initialization",
			Summary: "{task}{flow} failed initialization and was not started{cause}.",
			Hint:    "Fix the cause (usually the task configuration or client settings) and restart the task.",
			From:    "AbstractWorkerSourceTask.initializeAndStart", Carrier: true, kind: kindTask},
		{ID: "task-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Failed to start task ",
			Pattern: `Failed to start task (?P<taskid>\S+-\d+)`,
			Summary: "Connect could not start {task}{flow}{cause}.",
			Hint:    "Fix the cause and restart the task.",
			From:    "Worker.startTask", Carrier: true, kind: kindTask},
		{ID: "task-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Failure during poll.", Logger: "MirrorSourceTask",
			Summary: "{task}{flow} failed while polling the source cluster{cause}.",
			Hint:    "Fix the cause and restart the task.",
			From:    "MirrorSourceTask.poll (non-Kafka exceptions are rethrown)", Carrier: true, kind: kindTask},

		// ── Connector failures (carriers).
		{ID: "connector-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Connector raised an error",
			Summary: "{connector}{flow} raised an error and is FAILED{cause}.",
			Hint:    "Fix the cause and restart the connector (POST /connectors/<name>/restart or restart MM2).",
			From:    "WorkerConnector.raiseError", Carrier: true, kind: kindConnector},
		{ID: "connector-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Connector has failed",
			Summary: "{connector}{flow} has failed{cause}.",
			Hint:    "Fix the cause and restart the connector.",
			From:    "WorkerConnector.onFailure", Carrier: true, kind: kindConnector},
		{ID: "connector-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Error while starting connector",
			Summary: "{connector}{flow} failed to start{cause}.",
			Hint:    "Fix the cause and restart the connector.",
			From:    "WorkerConnector.doStart", Carrier: true, kind: kindConnector},
		{ID: "connector-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Error initializing connector",
			Summary: "{connector}{flow} failed to initialize{cause}.",
			Hint:    "Fix the cause (usually the connector configuration) and restart the connector.",
			From:    "WorkerConnector.initialize", Carrier: true, kind: kindConnector},
		{ID: "connector-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Failed to start connector",
			Pattern: `Failed to start connector (?P<connector>[^\s:]+)`,
			Summary: "Connect could not start {connector}{flow}{cause}.",
			Hint:    "Fix the cause and restart the connector.",
			From:    "Worker.startConnector", Carrier: true, kind: kindConnector},
		{ID: "connector-failed", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Failed to configure ",
			Pattern: `Failed to configure (?P<connector>\S+) connector for (?P<flow>` + reAlias + `->` + reAlias + `)`,
			Summary: "MM2 could not configure {connector}{flow}{cause}.",
			Hint:    "Fix the cause (often the Connect config topic or ACLs on it) and restart MM2.",
			From:    "MirrorHerder.configureConnector (dedicated mode)", Carrier: true, kind: kindConnector},

		// ── Scheduler jobs of the MM2 connectors and tasks.
		{ID: "scheduled-job-failed", Severity: detectors.Warning, Levels: errorOnly, Prefilter: "caught exception in ",
			Pattern: `caught exception in (?:scheduled )?task: (?P<job>.+?)\s*$`,
			Summary: "MM2's scheduled job '{job}'{flow} failed{cause}.",
			Hint:    "Fix the cause; the job runs again at its next interval, and until then its work (topic refresh, config or ACL sync, group refresh) is not done.",
			From:    "Scheduler.executeThread (mirror/Scheduler.java)", Carrier: true, handler: hScheduler},
		{ID: "scheduled-job-failed", Severity: detectors.Warning, Levels: errorOnly, Prefilter: "timed out running task: ",
			Pattern: `timed out running task: (?P<job>.+?)\s*$`,
			Summary: "MM2's scheduled job '{job}'{flow} timed out{cause}.",
			Hint:    "Check connectivity to both clusters and admin.timeout.ms; the job's work is not done until it succeeds.",
			From:    "Scheduler.executeThread", Carrier: true, handler: hScheduler},
		{ID: "scheduled-job-slow", Severity: detectors.Warning, Levels: warn, Prefilter: "took too long",
			Pattern: `took too long \((?P<elapsed_ms>\d+) ms\) running task: (?P<job>.+?)\s*$`,
			Summary: "MM2's scheduled job '{job}'{flow} took {elapsed_ms} ms, longer than admin.timeout.ms.",
			Hint:    "A slow job usually means a slow or overloaded cluster, or many topics; check the admin client's latency to both clusters.",
			From:    "Scheduler.run"},

		// ── Offsets, offset syncs and checkpoints.
		{ID: "offset-flush-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "flush offsets to storage",
			Summary: "{task}{flow} could not flush its source offsets; after a restart it would re-mirror records{cause}.",
			Hint:    "Check the Connect offsets topic (mm2-offsets.<source>.internal on the target) and the target's health; frequent timeouts call for a larger offset.flush.timeout.ms.",
			From:    "WorkerSourceTask.commitOffsets / SourceTaskOffsetCommitter"},
		{ID: "offset-flush-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Failed to flush, timed out while waiting for producer",
			Summary: "{task}{flow} timed out flushing its producer before committing offsets{cause}.",
			Hint:    "The target acknowledges slowly; check its health or raise offset.flush.timeout.ms.",
			From:    "WorkerSourceTask.commitOffsets (2.x)"},
		{ID: "offset-flush-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Failed to commit offsets",
			Summary: "{task}{flow} failed to commit its source offsets{cause}.",
			Hint:    "Check the Connect offsets topic on the target and MM2's rights on it.",
			From:    "SourceTaskOffsetCommitter.commit"},
		{ID: "offset-flush-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Exception thrown while calling task.commit",
			Summary: "{task}{flow} failed in its commit callback{cause}.",
			Hint:    "Check the cause; MirrorSourceTask commits offset syncs here.",
			From:    "AbstractWorkerSourceTask.commitTaskRecord / commitSourceTask"},
		{ID: "offset-sync-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Failure sending offset sync",
			Summary: "{task}{flow} could not write offset syncs, so consumer offsets are not translated{cause}.",
			Hint:    "Check the offset-syncs topic (mm2-offset-syncs.<alias>.internal, see offset-syncs.topic.location) and the producer settings of the cluster it lives on.",
			From:    "OffsetSyncWriter / MirrorSourceTask.sendOffsetSync", Carrier: true},
		{ID: "offset-sync-failed", Severity: detectors.Warning, Levels: errorOnly, Prefilter: "RecordMetadata has no offset",
			Pattern: `can't sync offsets for (?P<tp>\S+?)\.?\s*$`,
			Summary: "{task}{flow} got acknowledgements without offsets for {topic}, so no offset syncs are written for it.",
			Hint:    "This happens when the target acknowledges with acks=0; keep the producer's acks=all for MM2.",
			From:    "MirrorSourceTask.commitRecord"},
		{ID: "producer-fatal-error", Severity: detectors.Critical, Levels: errorOnly, Prefilter: "Aborting producer batches due to fatal error",
			Summary: "A producer of MM2{flow} hit a fatal error and aborts every batch{cause}.",
			Hint:    "Fix the cause named in the stack trace; the producer cannot recover without a restart of its task.",
			From:    "Sender.maybeAbortBatches (producer client)", Carrier: true},
		{ID: "group-offset-sync-blocked", Severity: detectors.Warning, Levels: warnError, Prefilter: "Unable to sync offsets for consumer group ",
			Pattern: `Unable to sync offsets for consumer group (?P<group>.+?)\.(?:\s+This is likely|\s*$)`,
			Summary: "MM2{flow} cannot sync offsets of {group} to the target: the group is active there or the sync fails{cause}.",
			Hint:    "MM2 only syncs offsets of groups with no active members on the target; stop the consumers on the target until fail-over, or fix the cause in the stack trace.",
			From:    "MirrorCheckpointTask.syncGroupOffset"},
		{ID: "checkpoint-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Failure polling consumer state for checkpoints",
			Summary: "{task}{flow} could not read consumer group state for checkpoints{cause}.",
			Hint:    "Check MM2's Describe rights on the source groups and connectivity to the source.",
			From:    "MirrorCheckpointTask.poll"},
		{ID: "checkpoint-failed", Severity: detectors.Warning, Levels: warnError, Prefilter: "Error querying ",
			Pattern: `Error querying (?:offsets )?for consumer group (?P<group>\S+) on cluster (?P<cluster>` + reAlias + `)`,
			Summary: "MM2{flow} could not query {group} on {cluster}, so its checkpoints are not emitted{cause}.",
			Hint:    "Grant MM2 Describe on the group and check connectivity to that cluster.",
			From:    "MirrorCheckpointTask.listConsumerGroupOffsets / refreshIdleConsumerGroupOffset"},
		{ID: "checkpoint-failed", Severity: detectors.Warning, Levels: infoUp, Prefilter: "checkpoints topic ",
			Pattern: `(?:Not authorized to access|Exception encountered loading) checkpoints topic (?P<topic>[A-Za-z0-9._\-]+)`,
			Summary: "MM2{flow} could not load the checkpoints topic {topic}; offset translation only covers offsets mirrored since the task started{cause}.",
			Hint:    "Grant MM2 Read on the checkpoints topic and restart the checkpoint task.",
			From:    "CheckpointStore.start (3.7+)"},
		{ID: "poll-failed", Severity: detectors.Warning, Levels: warn, Prefilter: "Failure during poll.",
			Summary: "{task}{flow} failed to poll the source cluster and will retry{cause}.",
			Hint:    "Check connectivity and consumer rights on the source; persistent failures mean the flow is not moving.",
			From:    "MirrorSourceTask.poll (KafkaException)"},
		{ID: "poll-failed", Severity: detectors.Warning, Levels: warn, Prefilter: "failed to poll records from SourceTask",
			Summary: "{task}{flow} failed to poll records and will retry{cause}.",
			Hint:    "Check connectivity and consumer rights on the source.",
			From:    "AbstractWorkerSourceTask.poll"},

		// ── Producer retries.
		{ID: "send-retrying", Severity: detectors.Warning, Levels: warn, Prefilter: "Backing off before retrying",
			Pattern: `Failed to send record to topic '` + reTopic + `' and partition '(?P<partition>-?\d+)'`,
			Summary: "{task}{flow} keeps retrying sends to target topic {topic}{cause}.",
			Hint:    "Check the target topic exists with enough partitions and is writable by MM2; retries that never end stall the flow.",
			From:    "AbstractWorkerSourceTask.sendRecords (retriable error)"},
		{ID: "send-retrying", Severity: detectors.Warning, Levels: warn, Prefilter: "Got error produce response",
			Pattern: `on topic-partition (?P<tp>\S+?),? (?:retrying|splitting and retrying).*Error: (?P<code>\w+)`,
			Summary: "The producer of {task}{flow} is retrying sends to {topic} ({code}).",
			Hint:    "Check the target partition's leader and in-sync replicas (NOT_ENOUGH_REPLICAS, NOT_LEADER…) and MM2's write rights.",
			From:    "Sender.completeBatch (producer client)"},
		{ID: "send-retrying", Severity: detectors.Warning, Levels: warn, Prefilter: "Received unknown topic or partition error in produce request",
			Pattern: `on partition (?P<tp>\S+?)\.(?:\s|$)`,
			Summary: "The producer of {task}{flow} writes to {topic}, which the target says does not exist (UNKNOWN_TOPIC_OR_PARTITION).",
			Hint:    "The target topic likely has fewer partitions than the source: add them on the target, or, if the target lacks CreatePartitions (UnsupportedVersionException), recreate the topic with the source's partition count and restart the MirrorSourceConnector tasks. If the counts match, grant MM2 Describe on the topic.",
			From:    "Sender.completeBatch (producer client)"},
		{ID: "send-retrying", Severity: detectors.Warning, Levels: warn, Prefilter: "UNKNOWN_TOPIC_OR_PARTITION",
			Pattern: `\[Producer clientId=[^\]]+\].*\{(?P<topic>[A-Za-z0-9._\-]+)=UNKNOWN_TOPIC_OR_PARTITION`,
			Summary: "The producer of {task}{flow} cannot find {topic} on the target (UNKNOWN_TOPIC_OR_PARTITION).",
			Hint:    "Create the target topic or check that MM2 may describe it.",
			From:    "NetworkClient metadata response (producer client)"},

		// ── Cause rules: the message or the exception names the cause. Order is priority.
		{ID: "config-sync-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "IncrementalAlterConfigs", Cause: true,
			Pattern: `(?:target cluster '(?P<target>[^']+)'|on cluster (?P<target>` + reAlias + `) with)`,
			Summary: "{connector}{flow} failed because {target} does not support IncrementalAlterConfigs: topic configs are not synced{topics}{cause}.",
			Hint:    "Set sync.topic.configs.enabled=false for this flow, or upgrade the target to a broker that supports IncrementalAlterConfigs (Kafka 2.3+).",
			From:    "MirrorSourceConnector.syncTopicConfigs → WorkerConnector.raiseError (4.x)", topicList: true, optional: true},
		{ID: "idempotence-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "INIT_PRODUCER_ID", Cause: true, standalone: true,
			Summary: "A producer of {task}{flow} needs idempotence, which the cluster does not support (no InitProducerId){cause}.",
			Hint:    "Set enable.idempotence=false for that producer (<alias>.producer.enable.idempotence, or target.producer./source.producer. for the offset-syncs producer), or upgrade the broker.",
			From:    "TransactionManager / NodeApiVersions: The node does not support INIT_PRODUCER_ID"},
		{ID: "idempotence-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "InitProducerId", Cause: true, standalone: true,
			Summary: "A producer of {task}{flow} could not get a producer id for idempotent writes{cause}.",
			Hint:    "Set enable.idempotence=false for that producer or grant IdempotentWrite on the cluster to MM2's principal.",
			From:    "TransactionManager (InitProducerId errors)"},
		{ID: "idempotence-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "IDEMPOTENT_WRITE", Cause: true, standalone: true,
			Summary: "A producer of {task}{flow} is not allowed to write idempotently{cause}.",
			Hint:    "Grant IdempotentWrite on the cluster to MM2's principal, or set enable.idempotence=false for that producer.",
			From:    "ClusterAuthorizationException on an idempotent producer"},
		{ID: "idempotence-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "dempoten", Cause: true, standalone: true,
			Pattern: `(?i)(?:ClusterAuthorization|UnsupportedVersion|not support|not allowed|not authorized).*idempoten|idempoten.*(?:not supported|not allowed|unsupported|requires)`,
			Summary: "A producer of {task}{flow} cannot write idempotently on this cluster{cause}.",
			Hint:    "Set enable.idempotence=false for that producer, or grant IdempotentWrite / upgrade the broker.",
			From:    "producer client (idempotent write rejected)"},
		{ID: "record-too-large", Severity: detectors.Critical, Levels: warnError, Prefilter: "RecordTooLargeException", Cause: true, standalone: true,
			Summary: "{task}{flow} could not write a record to target topic {topic} because it is larger than the target or producer allows; the task stops{cause}.",
			Hint:    "Raise the limits to the source's: max.message.bytes on the target topic (or message.max.bytes on the brokers) and the producer's max.request.size (<target>.producer.max.request.size), then restart the task.",
			From:    "producer client / broker MESSAGE_TOO_LARGE"},
		{ID: "record-too-large", Severity: detectors.Critical, Levels: warnError, Prefilter: "MESSAGE_TOO_LARGE", Cause: true,
			Summary: "{task}{flow} could not write a record to target topic {topic} because it is larger than the target allows{cause}.",
			Hint:    "Raise max.message.bytes on the target topic and the producer's max.request.size to the source's limits, then restart the task.",
			From:    "broker MESSAGE_TOO_LARGE"},
		{ID: "compression-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "UnsupportedCompressionTypeException", Cause: true, standalone: true,
			Summary: "The target rejects the compression type of {task}{flow} when writing to {topic}; the task stops{cause}.",
			Hint:    "Set a compression the target supports (<target>.producer.compression.type, e.g. gzip or lz4 instead of zstd on brokers before 2.1), or upgrade the target, then restart the task.",
			From:    "producer callback: UNSUPPORTED_COMPRESSION_TYPE"},
		{ID: "compression-unsupported", Severity: detectors.Critical, Levels: warnError, Prefilter: "UNSUPPORTED_COMPRESSION_TYPE", Cause: true, standalone: true,
			Summary: "The target rejects the compression type of {task}{flow} when writing to {topic}{cause}.",
			Hint:    "Set a compression the target supports (<target>.producer.compression.type) or upgrade the target, then restart the task.",
			From:    "producer client: UNSUPPORTED_COMPRESSION_TYPE"},
		{ID: "partition-not-in-metadata", Severity: detectors.Critical, Levels: warnError, Prefilter: "not present in metadata after", Cause: true, standalone: true,
			Pattern: `(?:Partition (?P<partition>\d+) of topic (?P<topic>[A-Za-z0-9._\-]+) with partition count (?P<target_partitions>\d+)|Topic (?P<topic>[A-Za-z0-9._\-]+)) (?:is )?not present in metadata after (?P<max_block_ms>\d+) ms`,
			Summary: "{task}{flow} tried to write partition {partition} of target topic {topic}, which does not exist there: that source partition is not mirrored{cause}.",
			Hint:    "Give the target topic the source's partition count, then restart the task: if the target lacks CreatePartitions (UnsupportedVersionException / CREATE_PARTITIONS), recreate the topic with that count (or pre-create target topics with enough partitions); otherwise add the partitions on the target (kafka-topics --alter --partitions) and check MM2's rights to do so.",
			From:    "KafkaProducer.waitOnMetadata TimeoutException (max.block.ms overridden)", optional: true},
		{ID: "authorization-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "AuthorizationException", Cause: true, standalone: true,
			Pattern: `(?:Not authorized to access (?:topics: \[(?P<topic>[^\],]+)|group: (?P<group>\S+))|(?P<code>\w+AuthorizationException))`,
			Summary: "{task}{flow} is not authorized for {topic}{cause}.",
			Hint:    "Grant MM2's principal the ACLs it needs (Describe/Read on the source, Describe/Write/Create/Alter on the target, IdempotentWrite for idempotent producers) and restart what failed.",
			From:    "Topic/Group/Cluster/TransactionalIdAuthorizationException", optional: true},
		{ID: "internal-topic-failed", Severity: detectors.Critical, Levels: warnError, Prefilter: "topic '", Cause: true,
			Pattern: `(?:Unable to create topic|Timed out while checking for or creating topic|Error while attempting to create/find topic)\(?s?\)? '(?P<topic>[^']+)'`,
			Summary: "MM2/Connect could not create or find internal topic {topic}{flow}{cause}.",
			Hint:    "Create the internal topic yourself (compacted, with a replication factor the cluster allows) or grant CreateTopics/Describe on it.",
			From:    "MirrorUtils.createCompactedTopic, TopicAdmin", quietCause: "TopicExistsException"},
	}
	for i := range rows {
		r := &rows[i]
		r.levels = maskOf(r.Levels)
		if r.Pattern != "" {
			r.re = regexp.MustCompile(r.Pattern)
		}
	}
	return rows
}

// Rules returns the rule table: every row that produces findings, in the order
// the Engine tries them (the first matching message row wins; Cause rows are
// tried in order on the record's exception). The slice is a fresh copy.
func Rules() []Rule {
	all := table()
	out := make([]Rule, 0, len(all))
	for _, r := range all {
		if r.ID != "" {
			out = append(out, r)
		}
	}
	return out
}

// maskOf turns level names into a levelMask; "FATAL" counts as "ERROR".
func maskOf(levels []string) levelMask {
	var m levelMask
	for _, l := range levels {
		m |= levelOf(l)
	}
	return m
}

// levelOf reads a log4j level name without allocating. An empty or unknown
// level gives 0, which the Engine treats as "any level".
func levelOf(s string) levelMask {
	switch s {
	case "INFO", "info", "Info":
		return lvInfo
	case "WARN", "warn", "WARNING", "Warn", "warning":
		return lvWarn
	case "ERROR", "error", "FATAL", "fatal", "SEVERE", "Error":
		return lvError
	case "DEBUG", "debug":
		return lvDebug
	case "TRACE", "trace":
		return lvTrace
	}
	return 0
}
