// Package mm2config reads MirrorMaker 2's own dedicated-mode properties file
// (connect-mirror-maker.properties) and models it the way MM2 itself does:
// which cluster aliases exist, the Kafka client settings of each alias, which
// herders (source->target pairs) run and which of them replicate, the
// effective per-flow connector settings with MM2's precedence and defaults,
// the topic and group filters with Java regular-expression semantics, the
// replication policy, and the names and locations of every internal topic.
//
// The facts come from the Apache Kafka source of the 3.9 branch and the 4.0
// line: MirrorMakerConfig (clusterPairs, clusterProps, workerConfig,
// connectorBaseConfig), MirrorSourceConfig, MirrorCheckpointConfig,
// MirrorHeartbeatConfig, DefaultTopicFilter, DefaultGroupFilter,
// DefaultReplicationPolicy, IdentityReplicationPolicy, ConfigDef (LIST and
// BOOLEAN parsing) and ConfigTransformer (${provider:path:key} placeholders).
// Where 3.9 and 4.x differ, the package models 3.9 and reports the 4.x
// difference as a Warning (for example the removed *.blacklist aliases).
//
// The file is read with github.com/magiconair/properties with ${...}
// expansion disabled, which follows java.util.Properties: `=`, `:` or
// whitespace between key and value, `#` and `!` comments, backslash
// continuations and escapes. A small scanner of its own keeps the line of
// every key, so that errors and warnings read
// `mm2.properties:12: key "kafka->vast.topics": ...`. The file is read as
// UTF-8 (Java reads it as ISO-8859-1; the two agree for ASCII files).
//
// Filters are Java regexes. Each list is translated to Go's RE2 syntax and
// matched in linear time when RE2 can express it; otherwise (lookaround,
// backreferences, atomic groups, possessive quantifiers) it is matched by
// the backtracking engine github.com/dlclark/regexp2 with a time limit per
// name (Options.MatchTimeout), and a Warning says so. Only a pattern neither
// engine can compile is an error.
//
// Placeholders of the built-in FileConfigProvider, EnvVarConfigProvider and
// DirectoryConfigProvider are resolved; the environment and the file system
// are reached only through Options, so tests inject both.
//
// What the package deliberately does not do: it opens no network
// connection and builds no Kafka client (watcher/cluster does that from
// ClientSettings); it does not judge a configuration (the lint detector
// does, from Entries, Flows and Warnings); it does not run custom
// ReplicationPolicy or ConfigProvider classes, which exist only in Java; and
// it never prints a secret: values of sensitive keys are masked by
// ClientSettings.Redacted and String, and no error carries a resolved
// placeholder value.
package mm2config
