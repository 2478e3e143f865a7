package mm2config

import "strings"

// connectorDefaults are the connector config names of MirrorSourceConfig,
// MirrorCheckpointConfig, MirrorHeartbeatConfig and their common base
// (MirrorConnectorConfig and Connect's ConnectorConfig), with MM2's default
// as a string ("" where the default is null or empty). A top-level key with
// one of these names applies to every flow (MirrorMakerConfig
// .connectorBaseConfig keeps exactly these); `A->B.<name>` overrides it for
// one flow. The table is read-only.
var connectorDefaults = map[string]string{
	// MirrorConnectorConfig
	"enabled":                      "false", // MirrorMakerConfig puts enabled=false if absent
	"source.cluster.alias":         "",
	"target.cluster.alias":         "",
	"replication.policy.class":     DefaultPolicyClass,
	"replication.policy.separator": ".",
	"replication.policy.internal.topic.separator.enabled": "true",
	"admin.timeout.ms":                      "60000",
	"forwarding.admin.class":                "org.apache.kafka.clients.admin.ForwardingAdmin",
	"offset-syncs.topic.location":           "source",
	"emit.offset-syncs.enabled":             "true",
	"add.source.alias.to.metrics":           "false", // 3.9 only
	"metric.reporters":                      "",
	"config.properties.exclude":             "follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas",
	"config.properties.blacklist":           "", // 3.9 alias
	"config.property.filter.class":          "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
	"use.defaults.from":                     "target",
	"use.incremental.alter.configs":         "requested", // 3.9 only
	"heartbeats.replication.enabled":        "true",      // 4.x; 3.9 behaves as true
	"consumer.poll.timeout.ms":              "1000",
	"replication.factor":                    "2",
	"offset-syncs.topic.replication.factor": "3",
	"offset.lag.max":                        "100",
	"topics":                                DefaultTopicsInclude,
	"topics.exclude":                        DefaultTopicsExclude,
	"topics.blacklist":                      "", // 3.9 alias
	"topic.filter.class":                    "org.apache.kafka.connect.mirror.DefaultTopicFilter",
	"refresh.topics.enabled":                "true",
	"refresh.topics.interval.seconds":       "600",
	"sync.topic.configs.enabled":            "true",
	"sync.topic.configs.interval.seconds":   "600",
	"sync.topic.acls.enabled":               "true",
	"sync.topic.acls.interval.seconds":      "600",
	// MirrorCheckpointConfig
	"groups":                               DefaultGroupsInclude,
	"groups.exclude":                       DefaultGroupsExclude,
	"groups.blacklist":                     "", // 3.9 alias
	"group.filter.class":                   "org.apache.kafka.connect.mirror.DefaultGroupFilter",
	"emit.checkpoints.enabled":             "true",
	"emit.checkpoints.interval.seconds":    "60",
	"sync.group.offsets.enabled":           "false",
	"sync.group.offsets.interval.seconds":  "60",
	"refresh.groups.enabled":               "true",
	"refresh.groups.interval.seconds":      "600",
	"checkpoints.topic.replication.factor": "3",
	// MirrorHeartbeatConfig
	"emit.heartbeats.enabled":             "true",
	"emit.heartbeats.interval.seconds":    "1",
	"heartbeats.topic.replication.factor": "3",
	// Connect ConnectorConfig / SourceConnectorConfig
	"name":                             "",
	"connector.class":                  "",
	"tasks.max":                        "1",
	"tasks.max.enforce":                "true",
	"key.converter":                    "",
	"value.converter":                  "",
	"header.converter":                 "",
	"config.action.reload":             "restart",
	"transforms":                       "",
	"predicates":                       "",
	"errors.retry.timeout":             "0",
	"errors.retry.delay.max.ms":        "60000",
	"errors.tolerance":                 "none",
	"errors.log.enable":                "false",
	"errors.log.include.messages":      "false",
	"exactly.once.support":             "requested",
	"transaction.boundary":             "poll",
	"transaction.boundary.interval.ms": "",
	"offsets.storage.topic":            "",
	"topic.creation.groups":            "",
}

// connectorKeyPrefixes are top-level key prefixes that connectorBaseConfig
// passes to every flow besides the names above.
var connectorKeyPrefixes = []string{"replication.policy", "config.providers"}

// IsConnectorKey reports whether a top-level key applies to every flow's
// connectors (MirrorMakerConfig.connectorBaseConfig keeps it), so that
// `A->B.<key>` is the per-flow form.
func IsConnectorKey(key string) bool {
	if _, ok := connectorDefaults[key]; ok {
		return true
	}
	for _, p := range connectorKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// workerKeyPrefixes are the top-level key prefixes that
// MirrorMakerConfig.workerConfig copies into every herder's worker config,
// where they beat the target cluster's `<target>.<k>` settings.
var workerKeyPrefixes = []string{"offset.storage", "config.storage", "status.storage",
	"key.converter", "value.converter", "header.converter", "task", "worker", "replication.policy"}

// removedIn40 are keys Apache Kafka 4.0 removed, with what to use instead.
var removedIn40 = map[string]string{
	"topics.blacklist":              "use topics.exclude",
	"groups.blacklist":              "use groups.exclude",
	"config.properties.blacklist":   "use config.properties.exclude",
	"use.incremental.alter.configs": "4.x always uses IncrementalAlterConfigs and fails the connector when the target lacks it",
	"add.source.alias.to.metrics":   "4.x always adds the source tag",
	"auto.include.jmx.reporter":     "4.x configures JmxReporter through metric.reporters",
}
