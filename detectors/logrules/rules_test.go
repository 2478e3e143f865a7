package logrules

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

var t0 = time.Date(2026, 3, 5, 11, 0, 0, 0, time.UTC)

// r builds a Record at t0+sec. Extra arguments set fields by prefix:
// "ctx:", "logger:", "thread:", and any other string is a stack line.
func r(sec float64, level, msg string, extra ...string) *watcher.Record {
	rec := &watcher.Record{
		Time:    t0.Add(time.Duration(sec * float64(time.Second))),
		Level:   level,
		Message: msg,
		File:    "connect.log",
		Line:    int64(sec*10) + 1,
	}
	for _, x := range extra {
		switch {
		case strings.HasPrefix(x, "ctx:"):
			rec.Context = x[4:]
		case strings.HasPrefix(x, "logger:"):
			rec.Logger = x[7:]
		case strings.HasPrefix(x, "thread:"):
			rec.Thread = x[7:]
		default:
			rec.Stack = append(rec.Stack, x)
		}
	}
	rec.Text = "[" + rec.Time.Format("2006-01-02 15:04:05,000") + "] " + level + " " + msg
	return rec
}

func observeAll(e *Engine, recs ...*watcher.Record) []detectors.Finding {
	var out []detectors.Finding
	for _, rec := range recs {
		out = append(out, e.Observe(rec)...)
	}
	return out
}

// want describes the fields a finding must have; empty fields are not checked.
type want struct {
	rule, sev, topic, source, target, connector, group, cluster, cause string
	task                                                               *int
	count                                                              int
}

func (w want) check(t *testing.T, f detectors.Finding) {
	t.Helper()
	eq := func(name, got, want string) {
		t.Helper()
		if want != "" && got != want {
			t.Errorf("%s: %s = %q, want %q (summary %q)", f.Rule, name, got, want, f.Summary)
		}
	}
	eq("rule", f.Rule, w.rule)
	eq("severity", string(f.Severity), w.sev)
	eq("topic", f.Topic, w.topic)
	eq("source", f.Source, w.source)
	eq("target", f.Target, w.target)
	eq("connector", f.Connector, w.connector)
	eq("group", f.Group, w.group)
	eq("cluster", f.Cluster, w.cluster)
	if w.cause != "" && !strings.Contains(f.Cause, w.cause) {
		t.Errorf("%s: cause = %q, want it to contain %q", f.Rule, f.Cause, w.cause)
	}
	if w.task != nil && (f.Task == nil || *f.Task != *w.task) {
		t.Errorf("%s: task = %v, want %d", f.Rule, f.Task, *w.task)
	}
	if w.count != 0 && f.Count != w.count {
		t.Errorf("%s: count = %d, want %d", f.Rule, f.Count, w.count)
	}
	if f.Summary == "" || f.Hint == "" {
		t.Errorf("%s: empty summary or hint", f.Rule)
	}
	if unrendered.MatchString(f.Summary) || strings.Contains(f.Summary, "..") {
		t.Errorf("%s: summary not rendered cleanly: %q", f.Rule, f.Summary)
	}
}

func tp(n int) *int { return &n }

var unrendered = regexp.MustCompile(`\{[a-z_]+\}`)

const (
	msc  = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	wt   = "org.apache.kafka.connect.runtime.WorkerTask"
	awst = "org.apache.kafka.connect.runtime.AbstractWorkerSourceTask"
	wst  = "org.apache.kafka.connect.runtime.WorkerSourceTask"
	sch  = "org.apache.kafka.connect.mirror.Scheduler"
)

// TestRules checks each rule on records built from MM2's templates, in the
// wordings of the versions and classes that log it.
func TestRules(t *testing.T) {
	rtl := "org.apache.kafka.common.errors.RecordTooLargeException: The request included a message larger than the max message size the server will accept."
	cases := []struct {
		name string
		recs []*watcher.Record
		want []want // exactly these findings, in Findings() order
	}{
		{"partitions-not-created 3.x/4.x kafka layout",
			[]*watcher.Record{r(1, "WARN", "Could not create topic-partitions for B.orders.", "ctx:MirrorSourceConnector|worker", "logger:"+msc,
				"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS")},
			[]want{{rule: "partitions-not-created", sev: "critical", topic: "B.orders", connector: "MirrorSourceConnector", cause: "UnsupportedVersionException: The node does not support CREATE_PARTITIONS"}}},
		{"partitions-not-created Connect mode, error code cause",
			[]*watcher.Record{r(1, "WARN", "Could not create topic-partitions for src.orders.", "ctx:src->dst.MirrorSourceConnector|worker",
				"org.apache.kafka.common.errors.PolicyViolationException: Request parameters do not satisfy the configured policy.")},
			[]want{{rule: "partitions-not-created", topic: "src.orders", source: "src", target: "dst", connector: "MirrorSourceConnector", cause: "PolicyViolationException"}}},
		{"partitions-not-created short layout without context, logger simple name",
			[]*watcher.Record{r(1, "WARN", "Could not create topic-partitions for orders", "logger:MirrorSourceConnector", "thread:kafka-admin-client-thread | A->B|MirrorSourceConnector|replication-target-admin")},
			[]want{{rule: "partitions-not-created", topic: "orders", source: "A", target: "B", connector: "MirrorSourceConnector"}}},
		{"topic-not-created invalid config",
			[]*watcher.Record{r(1, "WARN", "Could not create topic A.archive.", "org.apache.kafka.common.errors.InvalidConfigurationException: Unknown topic config name: x")},
			[]want{{rule: "topic-not-created", sev: "critical", topic: "A.archive", cause: "InvalidConfigurationException"}}},
		{"topic-not-created TopicExistsException is a warning",
			[]*watcher.Record{r(1, "WARN", "Could not create topic A.clicks.", "org.apache.kafka.common.errors.TopicExistsException: Topic 'A.clicks' already exists.")},
			[]want{{rule: "topic-not-created", sev: "warning", topic: "A.clicks"}}},
		{"internal-topic-failed from a Scheduler job",
			[]*watcher.Record{r(1, "ERROR", "Scheduler for MirrorHeartbeatConnector caught exception in scheduled task: creating internal topics", "logger:"+sch,
				"org.apache.kafka.connect.errors.ConnectException: Unable to create topic 'heartbeats': Replication factor: 3 larger than available brokers: 1.",
				"\tat org.apache.kafka.connect.mirror.MirrorUtils.createCompactedTopic(MirrorUtils.java:200)")},
			[]want{{rule: "internal-topic-failed", sev: "critical", topic: "heartbeats", connector: ""}}},
		{"internal-topic-failed timeout wording",
			[]*watcher.Record{r(1, "ERROR", "Scheduler for MirrorSourceConnector caught exception in task: creating upstream offset-syncs topic",
				"org.apache.kafka.connect.errors.ConnectException: Timed out while checking for or creating topic 'mm2-offset-syncs.B.internal'. This could indicate a connectivity issue, unavailable topic partitions, or if this is your first use of the topic it may have taken too long to create.")},
			[]want{{rule: "internal-topic-failed", topic: "mm2-offset-syncs.B.internal"}}},
		{"internal-topic-failed quiet on TopicExistsException",
			[]*watcher.Record{r(1, "ERROR", "Scheduler for MirrorCheckpointConnector caught exception in scheduled task: creating internal topics",
				"org.apache.kafka.connect.errors.ConnectException: Error while attempting to create/find topic 'A.checkpoints.internal'",
				"Caused by: org.apache.kafka.common.errors.TopicExistsException: Topic 'A.checkpoints.internal' already exists.")},
			nil},
		{"config-sync-unsupported 4.x: per-topic ERROR and the connector failure are one finding",
			[]*watcher.Record{
				r(1, "ERROR", "Failed to sync configs for topic A.orders on cluster B with IncrementalAlterConfigs API", "ctx:MirrorSourceConnector|worker",
					"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support INCREMENTAL_ALTER_CONFIGS"),
				r(1.01, "ERROR", "WorkerConnector{id=MirrorSourceConnector} Connector raised an error", "ctx:MirrorSourceConnector|worker",
					"org.apache.kafka.connect.errors.ConnectException: the target cluster 'B' is not compatible with IncrementalAlterConfigs API",
					"Caused by: org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support INCREMENTAL_ALTER_CONFIGS"),
			},
			[]want{{rule: "config-sync-unsupported", sev: "critical", target: "B", connector: "MirrorSourceConnector", count: 2}}},
		{"config-sync-unsupported Connector raised an error alone (Connect mode)",
			[]*watcher.Record{r(1, "ERROR", "WorkerConnector{id=A->B.MirrorSourceConnector} Connector raised an error",
				"org.apache.kafka.connect.errors.ConnectException: the target cluster 'B' is not compatible with IncrementalAlterConfigs API")},
			[]want{{rule: "config-sync-unsupported", sev: "critical", source: "A", target: "B", connector: "MirrorSourceConnector"}}},
		{"config-sync-unsupported 3.x required mode",
			[]*watcher.Record{r(1, "ERROR", "WorkerConnector{id=MirrorSourceConnector} Connector raised an error",
				"org.apache.kafka.connect.errors.ConnectException: use.incremental.alter.configs was set to \"required\", but the target cluster 'B' is not compatible with IncrementalAlterConfigs API")},
			[]want{{rule: "config-sync-unsupported", target: "B", connector: "MirrorSourceConnector"}}},
		{"config-sync-unsupported 3.9 fallback is a warning",
			[]*watcher.Record{r(1, "WARN", "The target cluster B is not compatible with IncrementalAlterConfigs API. Therefore using deprecated AlterConfigs API for syncing configs for topic A.orders")},
			[]want{{rule: "config-sync-unsupported", sev: "warning", target: "B"}}},
		{"config-sync-failed with a cause",
			[]*watcher.Record{r(1, "WARN", "Could not alter configuration of topic A.orders.", "org.apache.kafka.common.errors.InvalidConfigurationException: Invalid value -2 for configuration retention.bytes")},
			[]want{{rule: "config-sync-failed", sev: "warning", topic: "A.orders", cause: "retention.bytes"}}},
		{"config-sync-failed 4.0/4.1 spurious WARN without stack is quiet",
			[]*watcher.Record{r(1, "WARN", "Could not alter configuration of topic A.orders.")},
			nil},
		{"acl-sync-disabled",
			[]*watcher.Record{r(1, "INFO", "No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing will take place. Consider disabling topic ACL syncing by setting sync.topic.acls.enabled to 'false'.")},
			[]want{{rule: "acl-sync-disabled", sev: "info"}}},
		{"acl-sync-failed folds topics of one flow",
			[]*watcher.Record{
				r(1, "WARN", "Could not sync ACL of topic A.orders.", "org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker"),
				r(2, "WARN", "Could not sync ACL of topic A.clicks.", "org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker"),
			},
			[]want{{rule: "acl-sync-failed", sev: "warning", topic: "", count: 2}}},
		{"acl-sync-failed from the Scheduler job",
			[]*watcher.Record{r(1, "ERROR", "Scheduler for MirrorSourceConnector caught exception in scheduled task: syncing topic ACLs",
				"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support DESCRIBE_ACLS")},
			[]want{{rule: "acl-sync-failed"}}},
		{"authorization-failed MirrorUtils.adminCall",
			[]*watcher.Record{r(1, "ERROR", "ClusterAuthorizationException occurred while trying to create partitions {B.orders=NewPartitions(totalCount=6)} on B cluster")},
			[]want{{rule: "authorization-failed", cluster: "B"}}},
		{"authorization-failed kills a task (specific cause wins over task-failed)",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-1} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
				"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback",
				"Caused by: org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [B.orders]")},
			[]want{{rule: "authorization-failed", topic: "B.orders", connector: "MirrorSourceConnector", task: tp(1)}}},
		{"authorization-failed group",
			[]*watcher.Record{r(1, "ERROR", "Error querying for consumer group billing on cluster B.",
				"org.apache.kafka.common.errors.GroupAuthorizationException: Not authorized to access group: billing")},
			[]want{{rule: "checkpoint-failed", group: "billing", cluster: "B"}}},
		{"compression-unsupported send failure then task death",
			[]*watcher.Record{
				r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to B.orders: ", "logger:"+awst,
					"org.apache.kafka.common.errors.UnsupportedCompressionTypeException: The requesting client does not support the compression type of given partition."),
				r(1.01, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted", "logger:"+wt,
					"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback",
					"Caused by: org.apache.kafka.common.errors.UnsupportedCompressionTypeException: The requesting client does not support the compression type of given partition."),
			},
			[]want{{rule: "compression-unsupported", sev: "critical", topic: "B.orders", connector: "MirrorSourceConnector", task: tp(0), count: 1}}},
		{"compression-unsupported producer error code",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-2} failed to send record to B.logs:", "org.apache.kafka.common.KafkaException: UNSUPPORTED_COMPRESSION_TYPE")},
			[]want{{rule: "compression-unsupported", topic: "B.logs", task: tp(2)}}},
		{"idempotence-unsupported: Sender fatal error then offset-sync failure, one incident",
			[]*watcher.Record{
				r(1, "ERROR", "[Producer clientId=A->B|MirrorSourceConnector|offset-syncs-source-producer] Aborting producer batches due to fatal error",
					"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support INIT_PRODUCER_ID"),
				r(1.1, "ERROR", "Failure sending offset sync.", "ctx:MirrorSourceConnector|task-0",
					"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support INIT_PRODUCER_ID"),
			},
			[]want{{rule: "idempotence-unsupported", source: "A", target: "B", connector: "MirrorSourceConnector", count: 1}}},
		{"idempotence-unsupported ClusterAuthorizationException for idempotent write",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to B.t:",
				"org.apache.kafka.common.errors.ClusterAuthorizationException: The producer is not authorized to do idempotent sends")},
			[]want{{rule: "idempotence-unsupported", topic: "B.t"}}},
		{"record-too-large broker wording (3.x/4.x single Task threw line)",
			[]*watcher.Record{
				r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to B.docs: ", "ctx:MirrorSourceConnector|task-0", rtl),
				r(1.01, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted", "ctx:MirrorSourceConnector|task-0",
					"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback", "\tat org.apache.kafka.connect.runtime.WorkerSourceTask.maybeThrowProducerSendException(WorkerSourceTask.java:312)", "Caused by: "+rtl),
			},
			[]want{{rule: "record-too-large", topic: "B.docs", task: tp(0), count: 1, cause: "RecordTooLargeException"}}},
		{"record-too-large 2.x: two ERROR lines, Task threw before the send failure",
			[]*watcher.Record{
				r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception", "thread:task-thread-MirrorSourceConnector-0",
					"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback", "Caused by: "+rtl),
				r(1.001, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task is being killed and will not recover until manually restarted", "thread:task-thread-MirrorSourceConnector-0"),
				r(1.002, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to B.docs: ",
					"org.apache.kafka.common.errors.RecordTooLargeException: The message is 2097152 bytes when serialized which is larger than 1048576, which is the value of the max.request.size configuration."),
			},
			[]want{{rule: "record-too-large", task: tp(0), connector: "MirrorSourceConnector", count: 1}}},
		{"record-too-large from the producer's MESSAGE_TOO_LARGE in a Task threw message (json layout, no stack)",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-3} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
				"org.apache.kafka.connect.errors.ConnectException: Unrecoverable exception from producer send callback",
				"Caused by: org.apache.kafka.common.KafkaException: MESSAGE_TOO_LARGE")},
			[]want{{rule: "record-too-large", task: tp(3)}}},
		{"partition-not-in-metadata",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to B.orders: ",
				"org.apache.kafka.common.errors.TimeoutException: Partition 4 of topic B.orders with partition count 3 is not present in metadata after 60000 ms.")},
			[]want{{rule: "partition-not-in-metadata", topic: "B.orders", task: tp(0)}}},
		{"partition-not-in-metadata topic wording",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} failed to send record to B.gone: ",
				"org.apache.kafka.common.errors.TimeoutException: Topic B.gone not present in metadata after 60000 ms.")},
			[]want{{rule: "partition-not-in-metadata", topic: "B.gone"}}},
		{"send-retrying: synchronous retry, Sender retry, unknown partition",
			[]*watcher.Record{
				r(1, "WARN", "WorkerSourceTask{id=MirrorSourceConnector-0} Failed to send record to topic 'B.orders' and partition '4'. Backing off before retrying: ",
					"org.apache.kafka.common.errors.NotEnoughReplicasException: Messages are rejected since there are fewer in-sync replicas than required."),
				r(2, "WARN", "[Producer clientId=connector-producer-MirrorSourceConnector-0] Got error produce response with correlation id 77 on topic-partition B.orders-4, retrying (2147483646 attempts left). Error: NOT_ENOUGH_REPLICAS"),
				r(3, "WARN", "[Producer clientId=connector-producer-MirrorSourceConnector-0] Received unknown topic or partition error in produce request on partition B.orders-5. The topic-partition may not exist or the user may not have Describe access to it"),
			},
			[]want{{rule: "send-retrying", topic: "B.orders", task: tp(0), count: 3}}},
		{"task-failed generic cause, 3.x one line",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
				"org.apache.kafka.common.errors.TimeoutException: Timeout expired while fetching topic metadata")},
			[]want{{rule: "task-failed", sev: "critical", connector: "MirrorSourceConnector", task: tp(0), cause: "Timeout expired"}}},
		{"task-failed 2.x two lines are one finding",
			[]*watcher.Record{
				r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-1} Task threw an uncaught and unrecoverable exception",
					"java.lang.NullPointerException", "\tat org.apache.kafka.connect.mirror.MirrorSourceTask.poll(MirrorSourceTask.java:140)"),
				r(1.001, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-1} Task is being killed and will not recover until manually restarted"),
			},
			[]want{{rule: "task-failed", task: tp(1), count: 1, cause: "java.lang.NullPointerException"}}},
		{"task-failed init failure (Connect mode)",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=A->B.MirrorCheckpointConnector-0} Task failed initialization and will not be started.",
				"org.apache.kafka.common.config.ConfigException: Invalid value")},
			[]want{{rule: "task-failed", source: "A", target: "B", connector: "MirrorCheckpointConnector", task: tp(0)}}},
		{"task-failed during shutdown is not a failure",
			[]*watcher.Record{r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception during shutdown", "java.lang.IllegalStateException: closed")},
			nil},
		{"connector-failed: raised an error, has failed, failed to start",
			[]*watcher.Record{
				r(1, "ERROR", "WorkerConnector{id=MirrorCheckpointConnector} Connector raised an error", "org.apache.kafka.connect.errors.ConnectException: boom"),
				r(2, "ERROR", "WorkerConnector{id=MirrorCheckpointConnector} Connector has failed", "org.apache.kafka.connect.errors.ConnectException: boom"),
				r(3, "ERROR", "Failed to start connector MirrorHeartbeatConnector", "org.apache.kafka.connect.errors.ConnectException: Failed to start connector: MirrorHeartbeatConnector"),
			},
			// "raised an error" and "has failed" are one incident of one connector.
			[]want{{rule: "connector-failed", connector: "MirrorCheckpointConnector", count: 1}, {rule: "connector-failed", connector: "MirrorHeartbeatConnector"}}},
		{"connector-failed MirrorHerder configure",
			[]*watcher.Record{r(1, "ERROR", "Failed to configure MirrorSourceConnector connector for A->B", "org.apache.kafka.connect.errors.ConnectException: x")},
			[]want{{rule: "connector-failed", source: "A", target: "B", connector: "MirrorSourceConnector"}}},
		{"task-reconfiguration-failed three wordings",
			[]*watcher.Record{
				r(1, "ERROR", "[Worker clientId=A->B, groupId=A-mm2] Request to leader to reconfigure connector tasks failed", "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: IO Error"),
				r(2, "ERROR", "[Worker clientId=A->B, groupId=A-mm2] Failed to reconfigure connector's tasks (MirrorSourceConnector), retrying after backoff.", "org.apache.kafka.connect.runtime.rest.errors.ConnectRestException: IO Error"),
				r(3, "ERROR", "[Worker clientId=A->B, groupId=A-mm2] Task reconfiguration for MirrorSourceConnector failed unexpectedly, this connector will not be properly reconfigured unless manually triggered."),
			},
			// One incident: the forward fails, the retries fail, Connect gives up.
			[]want{{rule: "task-reconfiguration-failed", source: "A", target: "B", count: 1}}},
		{"connector-unresponsive task and connector",
			[]*watcher.Record{
				r(1, "ERROR", "Graceful stop of task MirrorSourceConnector-1 failed."),
				r(2, "ERROR", "Connector 'MirrorCheckpointConnector' failed to properly shut down, has become unresponsive, and may be consuming external resources."),
			},
			[]want{{rule: "connector-unresponsive", connector: "MirrorSourceConnector", task: tp(1)}, {rule: "connector-unresponsive", connector: "MirrorCheckpointConnector"}}},
		{"worker-died three wordings",
			[]*watcher.Record{
				r(1, "ERROR", "[Worker clientId=A->B, groupId=A-mm2] Uncaught exception in herder work thread, exiting: ", "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [mm2-offsets.A.internal]"),
				r(200, "ERROR", "Failed to start MirrorMaker", "org.apache.kafka.connect.errors.ConnectException: x", "Caused by: java.net.BindException: Address already in use"),
				r(400, "ERROR", "Stopping due to error", "org.apache.kafka.common.config.ConfigException: Missing required configuration \"clusters\""),
			},
			[]want{{rule: "worker-died", source: "A", target: "B", topic: "mm2-offsets.A.internal", cause: "TopicAuthorizationException"}, {rule: "worker-died", cause: "ConfigException", count: 2}}},
		{"offset-flush-failed wordings",
			[]*watcher.Record{
				r(1, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Failed to flush offsets to storage: ", "org.apache.kafka.common.errors.TimeoutException: x"),
				r(2, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Timed out waiting to flush offsets to storage; will try again on next flush interval with latest offsets"),
				r(3, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Failed to flush, timed out while waiting for producer to flush outstanding 12 messages"),
				r(4, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Failed to commit offsets"),
			},
			[]want{{rule: "offset-flush-failed", task: tp(0), count: 4}}},
		{"group-offset-sync-blocked active group and other failure",
			[]*watcher.Record{
				r(1, "WARN", "Unable to sync offsets for consumer group billing.v2. This is likely caused by consumers currently using this group in the target cluster."),
				r(2, "ERROR", "Unable to sync offsets for consumer group billing.v2.", "org.apache.kafka.common.errors.UnknownServerException: x"),
			},
			[]want{{rule: "group-offset-sync-blocked", group: "billing.v2", count: 2}}},
		{"checkpoint-failed wordings",
			[]*watcher.Record{
				r(1, "WARN", "Failure polling consumer state for checkpoints.", "org.apache.kafka.common.errors.TimeoutException: x"),
				r(2, "ERROR", "Error querying offsets for consumer group billing on cluster A.", "org.apache.kafka.common.errors.TimeoutException: x"),
				r(3, "WARN", "Not authorized to access checkpoints topic B.checkpoints.internal - this may degrade offset translation as only checkpoints for offsets which were mirrored after the task started will be emitted",
					"org.apache.kafka.common.errors.TopicAuthorizationException: x"),
			},
			[]want{{rule: "checkpoint-failed"}, {rule: "checkpoint-failed", group: "billing", cluster: "A"}, {rule: "checkpoint-failed", topic: "B.checkpoints.internal"}}},
		{"checkpoint-failed from a consumer-group Scheduler job",
			[]*watcher.Record{r(1, "ERROR", "Scheduler for MirrorCheckpointConnector timed out running task: loading initial consumer groups")},
			[]want{{rule: "checkpoint-failed"}}},
		{"eos-fencing-failed",
			[]*watcher.Record{r(1, "ERROR", "[Worker clientId=A->B, groupId=A-mm2] Failed to perform round of zombie fencing for source connector MirrorSourceConnector", "org.apache.kafka.connect.errors.ConnectException: x")},
			[]want{{rule: "eos-fencing-failed", sev: "critical", source: "A", target: "B", connector: "MirrorSourceConnector"}}},
		{"replication-loop from created topics and lists",
			[]*watcher.Record{
				r(1, "INFO", "Created remote topic peer.peer.orders with 3 partitions."),
				r(2, "INFO", "task-thread-MirrorSourceConnector-0 replicating 2 topic-partitions peer->home: [peer.peer.peer.orders-0, orders-0]."),
			},
			[]want{{rule: "replication-loop", sev: "critical", cluster: "peer", count: 2}}},
		{"replication-loop A.B.A.t once the aliases are known",
			[]*watcher.Record{
				r(1, "INFO", "[Worker clientId=A->B, groupId=A-mm2] Rebalance started"),
				r(2, "INFO", "Created remote topic A.B.A.orders with 3 partitions."),
			},
			[]want{{rule: "replication-loop", cluster: "A"}}},
		{"no replication-loop for dotted names without a known alias twice",
			[]*watcher.Record{r(1, "INFO", "Created remote topic A.com.acme.orders.v1 with 3 partitions.")},
			nil},
		{"orderly shutdown is quiet",
			[]*watcher.Record{
				r(1, "INFO", "Stopping REST server"), r(2, "INFO", "REST server stopped"),
				r(3, "INFO", "[Worker clientId=A->B, groupId=A-mm2] Herder stopping"), r(4, "INFO", "[Worker clientId=A->B, groupId=A-mm2] Herder stopped"),
				r(5, "INFO", "Kafka MirrorMaker stopped."),
			},
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(Options{})
			observeAll(e, c.recs...)
			got := e.Findings()
			if len(got) != len(c.want) {
				for _, f := range got {
					t.Logf("got %s %s topic=%q conn=%q task=%v count=%d: %s", f.Rule, f.Severity, f.Topic, f.Connector, f.Task, f.Count, f.Summary)
				}
				t.Fatalf("got %d findings, want %d", len(got), len(c.want))
			}
			for i, w := range c.want {
				w.check(t, got[i])
			}
		})
	}
}

func TestRuleTableCoversContract(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range Rules() {
		ids[r.ID] = true
		if r.ID == "" || r.Summary == "" || r.Hint == "" || r.Prefilter == "" || r.From == "" {
			t.Errorf("incomplete row %+v", r)
		}
		if r.Severity.Rank() == 0 {
			t.Errorf("%s: bad severity %q", r.ID, r.Severity)
		}
	}
	for _, id := range []string{"partitions-not-created", "partitions-missing-on-target", "topic-not-created", "internal-topic-failed",
		"config-sync-unsupported", "config-sync-failed", "acl-sync-disabled", "acl-sync-failed", "authorization-failed",
		"compression-unsupported", "idempotence-unsupported", "record-too-large", "partition-not-in-metadata", "send-retrying",
		"task-failed", "connector-failed", "task-reconfiguration-failed", "connector-unresponsive", "worker-died", "rebalance-storm",
		"offset-flush-failed", "group-offset-sync-blocked", "checkpoint-failed", "eos-fencing-failed", "replication-loop"} {
		if !ids[id] {
			t.Errorf("contract rule %s has no row", id)
		}
	}
}

func TestPartitionsMissingStreak(t *testing.T) {
	e := New(Options{})
	found := func(sec float64, newN, missing int) []detectors.Finding {
		return e.Observe(r(sec, "INFO", fmt.Sprintf("Found %d new topic-partitions on A. Found 0 deleted topic-partitions on A. Found %d topic-partitions missing on B.", newN, missing)))
	}
	// A partition increase: new partitions are missing until MM2 creates them.
	if got := found(0, 3, 3); len(got) != 0 {
		t.Fatalf("first sighting of new partitions reported: %+v", got)
	}
	got := found(600, 0, 3)
	if len(got) != 1 || got[0].Severity != detectors.Critical || got[0].Source != "A" || got[0].Target != "B" {
		t.Fatalf("second refresh with the same count: %+v", got)
	}
	if got[0].Values["missing_partitions"] != 3 || got[0].Values["consecutive_refreshes"] != 2 {
		t.Errorf("values = %v", got[0].Values)
	}
	got = found(1200, 0, 0)
	if len(got) != 1 || !got[0].Recovered || got[0].Rule != "partitions-missing-on-target" {
		t.Fatalf("count 0 did not resolve: %+v", got)
	}
	// A new episode starts as a warning.
	if got := found(1800, 0, 2); len(got) != 1 || got[0].Severity != detectors.Warning {
		t.Fatalf("new episode: %+v", got)
	}
	// 2.4–2.8 wording has no missing count and is not a finding.
	e2 := New(Options{})
	if got := e2.Observe(r(1, "INFO", "Found 6 topic-partitions on peer. 3 are new. 0 were removed. Previously had 3.")); got != nil {
		t.Fatalf("old refresh wording reported: %+v", got)
	}
}

func TestRefreshWithoutMissingResolves(t *testing.T) {
	e := New(Options{})
	sched := "thread:Scheduler for MirrorSourceConnector: A->B|MirrorSourceConnector-refreshing topics"
	observeAll(e,
		r(0, "INFO", "Found 0 new topic-partitions on A. Found 0 deleted topic-partitions on A. Found 2 topic-partitions missing on B.", sched),
		r(0.1, "INFO", "refreshing topics took 40 ms", sched, "logger:"+sch))
	got := e.Observe(r(600.1, "INFO", "refreshing topics took 38 ms", sched, "logger:"+sch))
	if len(got) != 1 || !got[0].Recovered {
		t.Fatalf("a refresh run without a missing line did not resolve: %+v", got)
	}
}

func TestIncreasedSizeResolvesPartitionsNotCreated(t *testing.T) {
	e := New(Options{})
	observeAll(e, r(0, "WARN", "Could not create topic-partitions for A.orders.", "org.apache.kafka.common.errors.UnsupportedVersionException: x"))
	if got := e.Observe(r(5, "INFO", "Increased size of A.clicks to 6 partitions.")); len(got) != 0 {
		t.Fatalf("another topic's increase resolved: %+v", got)
	}
	got := e.Observe(r(10, "INFO", "Increased size of A.orders to 6 partitions."))
	if len(got) != 1 || !got[0].Recovered || got[0].Rule != "partitions-not-created" || got[0].Topic != "A.orders" {
		t.Fatalf("got %+v", got)
	}
}

func TestTaskRestartResolves(t *testing.T) {
	died := func(sec float64, extra ...string) *watcher.Record {
		return r(sec, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
			append(extra, "java.lang.IllegalStateException: x")...)
	}
	for _, restart := range []*watcher.Record{
		r(100, "INFO", "Creating task MirrorSourceConnector-0"),
		r(100, "INFO", "WorkerSourceTask{id=MirrorSourceConnector-0} Executing source task"),
		r(100, "INFO", "task-thread-MirrorSourceConnector-0 replicating 3 topic-partitions A->B: [t-0, t-1, t-2]."),
		r(100, "INFO", "Starting with 0 previously uncommitted partitions.", "ctx:MirrorSourceConnector|task-0"),
	} {
		e := New(Options{})
		observeAll(e, died(1))
		got := e.Observe(restart)
		if len(got) != 1 || !got[0].Recovered || got[0].Rule != "task-failed" {
			t.Errorf("%q: got %+v", restart.Message, got)
		}
	}
	// Another task's start does not resolve it.
	e := New(Options{})
	observeAll(e, died(1))
	if got := e.Observe(r(100, "INFO", "Creating task MirrorSourceConnector-1")); len(got) != 0 {
		t.Errorf("task 1 resolved task 0: %+v", got)
	}
}

func TestDedicatedModeFlowMemory(t *testing.T) {
	rep := func(flow string) *watcher.Record {
		return r(0, "INFO", "task-thread-MirrorSourceConnector-0 replicating 1 topic-partitions "+flow+": [t-0].", "ctx:MirrorSourceConnector|task-0")
	}
	fail := r(10, "ERROR", "WorkerSourceTask{id=MirrorSourceConnector-0} Task threw an uncaught and unrecoverable exception. Task is being killed and will not recover until manually restarted",
		"ctx:MirrorSourceConnector|task-0", "java.lang.IllegalStateException: x")
	e := New(Options{})
	got := observeAll(e, rep("A->B"), fail)
	if len(got) != 1 || got[0].Source != "A" || got[0].Target != "B" {
		t.Fatalf("one known flow not used: %+v", got)
	}
	e = New(Options{})
	got = observeAll(e, rep("A->B"), rep("B->A"), fail)
	if len(got) != 1 || got[0].Source != "" || got[0].Target != "" {
		t.Fatalf("guessed between two flows: %+v", got)
	}
}

func TestRebalanceStormWindow(t *testing.T) {
	reb := func(sec float64, flow, group string) *watcher.Record {
		return r(sec, "INFO", "[Worker clientId="+flow+", groupId="+group+"] Rebalance started")
	}
	e := New(Options{})
	// Four within five minutes, then spaced out: no storm.
	for i, s := range []float64{0, 60, 120, 180, 400, 700, 1000} {
		if got := e.Observe(reb(s, "A->B", "A-mm2")); len(got) != 0 {
			t.Fatalf("rebalance %d reported: %+v", i, got)
		}
	}
	// Two groups interleaved do not add up.
	e = New(Options{})
	for i := 0; i < 4; i++ {
		observeAll(e, reb(float64(i*10), "A->B", "A-mm2"), reb(float64(i*10+1), "B->A", "B-mm2"))
	}
	if fs := e.Findings(); len(fs) != 0 {
		t.Fatalf("groups mixed: %+v", fs)
	}
	got := e.Observe(reb(50, "A->B", "A-mm2"))
	if len(got) != 1 || got[0].Rule != "rebalance-storm" || got[0].Group != "A-mm2" || got[0].Source != "A" || got[0].Values["rebalances"] != 5 {
		t.Fatalf("fifth rebalance: %+v", got)
	}
	// Configurable.
	e = New(Options{RebalanceWindow: time.Minute, RebalanceThreshold: 2})
	observeAll(e, reb(0, "A->B", "A-mm2"))
	if got := e.Observe(reb(61, "A->B", "A-mm2")); len(got) != 0 {
		t.Fatalf("outside a 1m window: %+v", got)
	}
	if got := e.Observe(reb(90, "A->B", "A-mm2")); len(got) != 1 {
		t.Fatalf("threshold 2 within 1m not reported")
	}
}

func TestFoldAndEviction(t *testing.T) {
	e := New(Options{MaxTracked: 2})
	w := func(sec float64, topic string) []detectors.Finding {
		return e.Observe(r(sec, "WARN", "Could not create topic-partitions for "+topic+".", "org.apache.kafka.common.errors.UnsupportedVersionException: x"))
	}
	w(0, "a")
	got := w(600, "a")
	if len(got) != 1 || got[0].Count != 2 || !got[0].FirstSeen.Equal(t0) || !got[0].LastSeen.Equal(t0.Add(600*time.Second)) {
		t.Fatalf("fold: %+v", got)
	}
	w(700, "b")
	w(800, "a") // a is now the most recent
	w(900, "c") // evicts b
	var topics []string
	for _, f := range e.Findings() {
		topics = append(topics, f.Topic)
	}
	if strings.Join(topics, ",") != "a,c" {
		t.Fatalf("kept %v, want a,c (least recently seen evicted)", topics)
	}
	// Findings handed out are copies.
	got = w(1000, "a")
	got[0].Values = map[string]any{"x": 1}
	*got[0].Evidence = detectors.Evidence{}
	if f := e.Findings()[0]; f.Evidence.File == "" {
		t.Fatalf("caller's change leaked into the engine")
	}
}

func TestRootCause(t *testing.T) {
	cases := []struct {
		stack []string
		want  string
	}{
		{[]string{"org.a.X: top", "\tat a.b(C.java:1)", "Caused by: org.a.Y: mid", "\t... 3 more", "Caused by: org.a.Z: root"}, "org.a.Z: root"},
		{[]string{"org.a.X: top", "\tSuppressed: org.a.S: s", "\t\tCaused by: org.a.T: t"}, "org.a.X: top"},
		{[]string{"\tacks = -1", "org.apache.kafka.common.errors.TimeoutException"}, "org.apache.kafka.common.errors.TimeoutException"},
		{[]string{"\tat x.y(Z.java:1) ~[connect-runtime-4.1.0.jar:?]"}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		if got := rootCause(c.stack); got != c.want {
			t.Errorf("rootCause(%q) = %q, want %q", c.stack, got, c.want)
		}
	}
}

func TestAttribution(t *testing.T) {
	cases := []struct {
		rec            *watcher.Record
		src, tgt, conn string
		task           int
	}{
		{r(0, "INFO", "x", "ctx:legacy->platform.MirrorSourceConnector|task-0"), "legacy", "platform", "MirrorSourceConnector", 0},
		{r(0, "INFO", "x", "ctx:MirrorSourceConnector|task-2|offsets"), "", "", "MirrorSourceConnector", 2},
		{r(0, "INFO", "x", "thread:task-thread-us-east->eu-west.MirrorSourceConnector-1"), "us-east", "eu-west", "MirrorSourceConnector", 1},
		{r(0, "INFO", "x", "thread:kafka-producer-network-thread | connector-producer-A->B.MirrorSourceConnector-3"), "A", "B", "MirrorSourceConnector", 3},
		{r(0, "INFO", "[AdminClient clientId=A->B|MirrorSourceConnector|replication-target-admin] x"), "A", "B", "MirrorSourceConnector", -1},
		{r(0, "INFO", "x", "thread:Scheduler for MirrorCheckpointConnector: A->B|MirrorCheckpointConnector-refreshing consumer groups"), "A", "B", "MirrorCheckpointConnector", -1},
		{r(0, "INFO", "[Worker clientId=A->B, groupId=A-mm2] x"), "A", "B", "", -1},
	}
	for _, c := range cases {
		a := attribute(c.rec)
		task := -1
		if a.hasTask {
			task = a.task
		}
		if a.source != c.src || a.target != c.tgt || a.connector != c.conn || task != c.task {
			t.Errorf("%q ctx=%q thread=%q: got %+v", c.rec.Message, c.rec.Context, c.rec.Thread, a)
		}
	}
}
