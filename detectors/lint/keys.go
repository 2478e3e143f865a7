package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// connectorNames are the connector config names of MirrorSourceConfig,
// MirrorCheckpointConfig, MirrorHeartbeatConfig and Connect's
// ConnectorConfig, the names a flow key `A->B.<name>` may carry; used to
// suggest the intended name for a misspelt one. mm2config.IsConnectorKey is
// the authority on membership.
var connectorNames = []string{
	"enabled", "source.cluster.alias", "target.cluster.alias", "replication.policy.class",
	"replication.policy.separator", "replication.policy.internal.topic.separator.enabled",
	"admin.timeout.ms", "forwarding.admin.class", "offset-syncs.topic.location", "emit.offset-syncs.enabled",
	"add.source.alias.to.metrics", "metric.reporters", "config.properties.exclude", "config.property.filter.class",
	"use.defaults.from", "use.incremental.alter.configs", "heartbeats.replication.enabled", "consumer.poll.timeout.ms",
	"replication.factor", "offset-syncs.topic.replication.factor", "offset.lag.max", "topics", "topics.exclude",
	"topic.filter.class", "refresh.topics.enabled", "refresh.topics.interval.seconds", "sync.topic.configs.enabled",
	"sync.topic.configs.interval.seconds", "sync.topic.acls.enabled", "sync.topic.acls.interval.seconds",
	"groups", "groups.exclude", "group.filter.class", "emit.checkpoints.enabled", "emit.checkpoints.interval.seconds",
	"sync.group.offsets.enabled", "sync.group.offsets.interval.seconds", "refresh.groups.enabled",
	"refresh.groups.interval.seconds", "checkpoints.topic.replication.factor", "emit.heartbeats.enabled",
	"emit.heartbeats.interval.seconds", "heartbeats.topic.replication.factor", "tasks.max", "errors.tolerance",
	"exactly.once.support", "transaction.boundary",
}

// workerOnlyKeys are Connect worker settings that dedicated mode reads only
// from `<target>.<key>` (MirrorMakerConfig.workerConfig copies the target's
// cluster properties and only a few top-level prefixes, MM2-REFERENCE.md
// §5.3): at top level or under a flow prefix they are ignored.
var workerOnlyKeys = []string{
	"offset.flush.interval.ms", "offset.flush.timeout.ms", "exactly.once.source.support", "group.id",
	"client.id", "session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms",
	"scheduled.rebalance.max.delay.ms", "connector.client.config.override.policy", "metrics.sample.window.ms",
}

// topLevelExtra are top-level keys MirrorMakerConfig or the dedicated-mode
// REST server read besides connector, worker-prefix and client keys.
var topLevelExtra = []string{"clusters", "dedicated.mode.enable.internal.rest", "listeners", "admin.listeners", "auto.include.jmx.reporter"}

// topLevelPrefixes are top-level key prefixes that are read as a family.
var topLevelPrefixes = []string{"config.providers", "replication.policy", "offset.storage", "config.storage",
	"status.storage", "key.converter", "value.converter", "header.converter", "task", "worker",
	"ssl.", "sasl.", "rest.", "metrics.", "transforms.", "predicates.", "topic.creation."}

// producerKeys are Kafka producer config names (ProducerConfig); an
// `<alias>.producer.<k>` close to one of them but not equal is a typo.
var producerKeys = []string{
	"acks", "batch.size", "bootstrap.servers", "buffer.memory", "client.id", "compression.type",
	"compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "connections.max.idle.ms",
	"delivery.timeout.ms", "enable.idempotence", "interceptor.classes", "key.serializer", "linger.ms",
	"max.block.ms", "max.in.flight.requests.per.connection", "max.request.size", "metadata.max.age.ms",
	"metadata.max.idle.ms", "partitioner.class", "partitioner.ignore.keys", "receive.buffer.bytes",
	"reconnect.backoff.ms", "request.timeout.ms", "retries", "retry.backoff.ms", "send.buffer.bytes",
	"transaction.timeout.ms", "transactional.id", "value.serializer", "security.protocol",
}

// clientFamilies are prefixes of a cluster alias's settings that name a
// client role or a client key family; anything under them is left to Kafka.
var clientRolePrefixes = []string{"producer.", "consumer.", "admin."}

// unknownKeys reports keys MM2 ignores: misspelt connector names, aliases
// that are not in `clusters`, top-level or flow-level worker keys, and
// connector keys under a cluster prefix. It deliberately leaves alone any
// `<alias>.<k>` that could be a Kafka client or worker setting, which are too
// many to know, except producer keys one or two letters away from a known one.
func (c *checker) unknownKeys() {
	aliases := c.cfg.Clusters
	seen := map[string]bool{}
	for _, e := range c.cfg.Entries() {
		if seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		s := setting{key: e.Key, value: maskValue(e.Key, e.Value), line: e.Line, set: true}
		if src, rest, ok := strings.Cut(e.Key, "->"); ok {
			c.flowKey(s, src, rest, aliases)
			continue
		}
		first, rest, _ := strings.Cut(e.Key, ".")
		if slices.Contains(aliases, first) && rest != "" {
			c.aliasKey(s, first, rest)
			continue
		}
		if knownTopLevel(e.Key) {
			continue
		}
		if slices.Contains(workerOnlyKeys, e.Key) {
			c.unknown(s, fmt.Sprintf("%s is a Connect worker setting, which dedicated mode ignores at top level.", e.Key),
				fmt.Sprintf("Set it per target cluster: %s.", joinFor(aliases, e.Key)), aliasedWant(aliases, e.Key))
			continue
		}
		if role, sub, ok := cutAny(e.Key, clientRolePrefixes); ok {
			c.unknown(s, fmt.Sprintf("Top-level %s is ignored: MM2 dedicated mode passes top-level keys only when they are connector settings or bootstrap.servers, security.protocol, ssl.* and sasl.*.", e.Key),
				fmt.Sprintf("Set it per cluster: %s.", joinFor(aliases, role+sub)), aliasedWant(aliases, role+sub))
			continue
		}
		if near := nearest(first, aliases, 2); near != "" && rest != "" {
			c.unknown(s, fmt.Sprintf("%s: %q is not a cluster alias listed in clusters, so MM2 ignores the key.", e.Key, first),
				fmt.Sprintf("Did you mean %s.%s?", near, rest), near+"."+rest)
			continue
		}
		if near := nearest(e.Key, connectorNames, 3); near != "" {
			c.unknown(s, fmt.Sprintf("%s is not a setting MM2 knows; MM2 ignores it.", e.Key), fmt.Sprintf("Did you mean %s?", near), near)
			continue
		}
		c.unknown(s, fmt.Sprintf("%s is not a setting MM2 dedicated mode reads; MM2 ignores it.", e.Key),
			"Prefix cluster settings with a cluster alias and flow settings with source->target.", "")
	}
}

func knownTopLevel(k string) bool {
	if mm2config.IsConnectorKey(k) || slices.Contains(topLevelExtra, k) || k == "bootstrap.servers" || k == "security.protocol" {
		return true
	}
	for _, p := range topLevelPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// flowKey checks `src->tgt.<k>`.
func (c *checker) flowKey(s setting, src, rest string, aliases []string) {
	tgt, k, hasKey := strings.Cut(rest, ".")
	for _, a := range []string{src, tgt} {
		if slices.Contains(aliases, a) {
			continue
		}
		hint := "Add it to clusters, or fix the alias."
		want := ""
		if fs, ft, ok := nearestFlow(src, tgt, aliases); ok {
			fixed := fs + "->" + ft
			if hasKey {
				fixed += "." + k
			}
			hint = fmt.Sprintf("Did you mean %s?", fixed)
			want = fixed
		}
		c.unknown(s, fmt.Sprintf("%s names cluster %q, which is not listed in clusters: MM2 ignores the key.", s.key, a), hint, want)
		return
	}
	if src == tgt {
		c.unknown(s, fmt.Sprintf("%s names a flow from a cluster to itself, which MM2 never runs.", s.key), "Remove the key.", "")
		return
	}
	flow := src + "->" + tgt
	switch {
	case k == "":
		c.unknown(s, fmt.Sprintf("%s has no setting name after the flow.", s.key), "Write "+flow+".<setting>.", "")
	case mm2config.IsConnectorKey(k), hasAnyPrefix(k, []string{"producer.", "consumer.", "admin.", "source.", "target.", "transforms.", "predicates.", "topic.creation.", "errors."}):
	case slices.Contains(workerOnlyKeys, k):
		c.unknown(s, fmt.Sprintf("%s is a Connect worker setting, which dedicated mode reads only from the target cluster's prefix.", s.key),
			fmt.Sprintf("Set %s.%s instead (it applies to every herder into %s).", tgt, k, tgt), tgt+"."+k)
	default:
		hint, want := "Check the spelling against the MirrorMaker 2 connector settings.", ""
		if near := nearest(k, connectorNames, 3); near != "" {
			hint, want = fmt.Sprintf("Did you mean %s.%s?", flow, near), flow+"."+near
		}
		c.unknown(s, fmt.Sprintf("%s: %q is not a MirrorMaker 2 connector setting, so MM2 ignores it.", s.key, k), hint, want)
	}
}

// aliasKey checks `<alias>.<k>`: connector keys there are ignored by the
// connectors; producer keys close to a known one are typos.
func (c *checker) aliasKey(s setting, alias, k string) {
	if sub, ok := strings.CutPrefix(k, "producer."); ok {
		if !slices.Contains(producerKeys, sub) {
			if near := nearest(sub, producerKeys, 2); near != "" {
				c.unknown(s, fmt.Sprintf("%s: %q is not a Kafka producer setting, so the producer ignores it.", s.key, sub),
					fmt.Sprintf("Did you mean %s.producer.%s?", alias, near), alias+".producer."+near)
			}
		}
		return
	}
	if hasAnyPrefix(k, clientRolePrefixes) || k == "metric.reporters" || hasAnyPrefix(k, []string{"key.converter", "value.converter", "header.converter", "config.providers"}) {
		return
	}
	if mm2config.IsConnectorKey(k) {
		c.unknown(s, fmt.Sprintf("%s: %s is a connector setting, which MM2 does not read under a cluster prefix.", s.key, k),
			fmt.Sprintf("Set it at top level (every flow) or as <source>->%s.%s (one flow).", alias, k), k)
	}
}

func (c *checker) unknown(s setting, summary, hint, want string) {
	c.add(detectors.Finding{Rule: RuleUnknownKey, Severity: detectors.Warning, Summary: summary, Hint: hint}, s, want)
}

func cutAny(s string, prefixes []string) (prefix, rest string, ok bool) {
	for _, p := range prefixes {
		if r, ok := strings.CutPrefix(s, p); ok {
			return p, r, true
		}
	}
	return "", "", false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	_, _, ok := cutAny(s, prefixes)
	return ok
}

func joinFor(aliases []string, k string) string {
	parts := make([]string, len(aliases))
	for i, a := range aliases {
		parts[i] = a + "." + k
	}
	return strings.Join(parts, ", ")
}

func aliasedWant(aliases []string, k string) string {
	if len(aliases) == 0 {
		return ""
	}
	return "<alias>." + k
}

// nearestFlow suggests the flow src->tgt most likely meant when either
// alias is not in aliases: each unknown end is replaced by an alias at most
// two edits away, choosing the closest pair whose ends differ (MM2 never
// runs a flow from a cluster to itself). ok is false when there is no such
// pair.
func nearestFlow(src, tgt string, aliases []string) (fixedSrc, fixedTgt string, ok bool) {
	options := func(a string) []string {
		if slices.Contains(aliases, a) {
			return []string{a}
		}
		var out []string
		for _, c := range aliases {
			if levenshtein(a, c) <= 2 {
				out = append(out, c)
			}
		}
		return out
	}
	best := -1
	for _, s := range options(src) {
		for _, t := range options(tgt) {
			if s == t {
				continue
			}
			if d := levenshtein(src, s) + levenshtein(tgt, t); best < 0 || d < best {
				fixedSrc, fixedTgt, best = s, t, d
			}
		}
	}
	return fixedSrc, fixedTgt, best >= 0
}

// nearest returns the candidate closest to s in edit distance, if it is at
// most max edits away and s is not itself a candidate; "" otherwise. Ties go
// to the earlier candidate.
func nearest(s string, candidates []string, max int) string {
	best, bestD := "", max+1
	for _, c := range candidates {
		if c == s {
			return ""
		}
		if d := levenshtein(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// secretHints are name fragments that make a key's value secret even when
// the key is misspelt (so mm2config.IsSensitiveKey does not know it).
var secretHints = []string{"pass", "secret", "jaas", "token", "credential", "keystore.key", "auth.user.info"}

// maskValue returns value safe to show for key: masked whole when the key
// is sensitive (mm2config.IsSensitiveKey) or merely looks secret. A
// sasl.jaas.config is masked whole too: a lint finding never needs its
// options, and a malformed one may not parse as options at all.
func maskValue(key, value string) string {
	k := strings.ToLower(key)
	if mm2config.IsSensitiveKey(key) {
		return "[redacted]"
	}
	for _, h := range secretHints {
		if strings.Contains(k, h) {
			return "[redacted]"
		}
	}
	return value
}
