package mm2config

import (
	"fmt"
	"regexp"
	"strings"
)

// Replication policy classes shipped with MM2 (connect/mirror-client).
const (
	DefaultPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
)

// ReplicationPolicy is MM2's org.apache.kafka.connect.mirror.ReplicationPolicy
// (mirror-client/ReplicationPolicy.java): how a flow names remote topics and
// its internal topics. Java's null is the empty string here: TopicSource and
// UpstreamTopic return "" for a topic that is not remote. (DefaultReplicationPolicy
// also returns the empty alias "" for a topic starting with the separator,
// such as ".foo"; such a topic is internal and never replicated, and its
// UpstreamTopic is non-empty, which tells the two cases apart.)
type ReplicationPolicy interface {
	// FormatRemoteTopic is the name topic from cluster source gets on the target.
	FormatRemoteTopic(source, topic string) string
	// TopicSource is the alias a remote topic came from, "" if not remote.
	TopicSource(t string) string
	// UpstreamTopic is the name one hop upstream, "" if not remote.
	UpstreamTopic(t string) string
	// OriginalTopic follows UpstreamTopic until it stops changing.
	OriginalTopic(t string) string
	// HeartbeatsTopic is the topic MirrorHeartbeatConnector writes ("heartbeats").
	HeartbeatsTopic() string
	// CheckpointsTopic is where MirrorCheckpointConnector writes checkpoints
	// of groups from cluster alias (on the target): "<alias>.checkpoints.internal".
	CheckpointsTopic(alias string) string
	// OffsetSyncsTopic is "mm2-offset-syncs.<alias>.internal", alias being the
	// cluster on the other side of the flow from where the topic lives.
	OffsetSyncsTopic(alias string) string
	// IsInternalTopic: MM2 never replicates these, whatever the filter says.
	IsInternalTopic(t string) bool
	// IsHeartbeatsTopic: OriginalTopic(t) is the heartbeats topic.
	IsHeartbeatsTopic(t string) bool
	// IsCheckpointsTopic: t ends with the checkpoints topic suffix.
	IsCheckpointsTopic(t string) bool
}

// javaSplit is java.util.regex.Pattern.split(input) (limit 0) on the quoted
// literal sep: no match gives [input]; otherwise trailing empty strings are
// removed, so "foo." gives ["foo"], "." gives [] and ".foo" gives ["" "foo"].
// An empty sep matches between every character, the leading zero-width
// match producing no empty first element (Java 8+).
func javaSplit(input, sep string) []string {
	var parts []string
	if sep == "" {
		if input == "" {
			return []string{""}
		}
		for _, r := range input {
			parts = append(parts, string(r))
		}
		return parts
	}
	parts = strings.Split(input, sep)
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// DefaultPolicy is MM2's DefaultReplicationPolicy: remote topics are
// "<source><separator><topic>".
type DefaultPolicy struct {
	// Separator is replication.policy.separator (default "."), used as
	// written: MM2 reads it from the raw config, untrimmed.
	Separator string
	// InternalSeparator is replication.policy.internal.topic.separator.enabled
	// (default true): internal topic names use Separator instead of ".".
	InternalSeparator bool
}

// NewDefaultPolicy returns MM2's defaults: separator "." for all names.
func NewDefaultPolicy() *DefaultPolicy {
	return &DefaultPolicy{Separator: ".", InternalSeparator: true}
}

func (d *DefaultPolicy) internalSep() string {
	if d.InternalSeparator {
		return d.Separator
	}
	return "."
}

// FormatRemoteTopic returns source + separator + topic.
func (d *DefaultPolicy) FormatRemoteTopic(source, topic string) string {
	return source + d.Separator + topic
}

func (d *DefaultPolicy) topicSource(t string) (string, bool) {
	parts := javaSplit(t, d.Separator)
	if len(parts) < 2 {
		return "", false
	}
	return parts[0], true
}

// TopicSource returns the part before the first separator, "" when the
// topic has fewer than two parts after Java's split.
func (d *DefaultPolicy) TopicSource(t string) string { s, _ := d.topicSource(t); return s }

// UpstreamTopic strips the source alias and separator, "" if not remote.
func (d *DefaultPolicy) UpstreamTopic(t string) string {
	s, ok := d.topicSource(t)
	if !ok {
		return ""
	}
	return t[len(s)+len(d.Separator):]
}

// OriginalTopic follows UpstreamTopic to the first topic of the chain.
func (d *DefaultPolicy) OriginalTopic(t string) string { return originalTopic(d, t) }

// HeartbeatsTopic returns "heartbeats".
func (d *DefaultPolicy) HeartbeatsTopic() string { return "heartbeats" }

// CheckpointsTopic returns alias + S + "checkpoints" + S + "internal".
func (d *DefaultPolicy) CheckpointsTopic(alias string) string {
	s := d.internalSep()
	return alias + s + "checkpoints" + s + "internal"
}

// OffsetSyncsTopic returns "mm2-offset-syncs" + S + alias + S + "internal".
func (d *DefaultPolicy) OffsetSyncsTopic(alias string) string {
	s := d.internalSep()
	return "mm2-offset-syncs" + s + alias + s + "internal"
}

// IsMM2InternalTopic reports whether t ends with S + "internal".
func (d *DefaultPolicy) IsMM2InternalTopic(t string) bool {
	return strings.HasSuffix(t, d.internalSep()+"internal")
}

// IsInternalTopic is ReplicationPolicy.isInternalTopic: MM2-internal, or
// starting with "__" or ".", or ending with "-internal" or ".internal".
func (d *DefaultPolicy) IsInternalTopic(t string) bool {
	return d.IsMM2InternalTopic(t) || strings.HasPrefix(t, "__") || strings.HasPrefix(t, ".") ||
		strings.HasSuffix(t, "-internal") || strings.HasSuffix(t, ".internal")
}

// IsHeartbeatsTopic reports whether OriginalTopic(t) is "heartbeats".
func (d *DefaultPolicy) IsHeartbeatsTopic(t string) bool { return d.OriginalTopic(t) == "heartbeats" }

// IsCheckpointsTopic reports whether t ends with S + "checkpoints" + S + "internal".
func (d *DefaultPolicy) IsCheckpointsTopic(t string) bool {
	s := d.internalSep()
	return strings.HasSuffix(t, s+"checkpoints"+s+"internal")
}

func originalTopic(p ReplicationPolicy, t string) string {
	for {
		up := p.UpstreamTopic(t)
		if up == "" || up == t {
			return t
		}
		t = up
	}
}

// IdentityPolicy is MM2's IdentityReplicationPolicy: topics keep their name
// on the target, except topics that look like heartbeats (the name ends with
// "heartbeats", a plain suffix test, so "app-heartbeats" counts), which are
// named as by DefaultPolicy. MM2 cannot detect cycles with it.
type IdentityPolicy struct {
	DefaultPolicy
	// SourceClusterAlias is the flow's source.cluster.alias; TopicSource
	// returns it for every topic that does not look like a heartbeat.
	SourceClusterAlias string
}

func (i *IdentityPolicy) looksLikeHeartbeat(t string) bool {
	return strings.HasSuffix(t, i.HeartbeatsTopic())
}

// FormatRemoteTopic returns topic unchanged, or the DefaultPolicy name for
// heartbeat-looking topics.
func (i *IdentityPolicy) FormatRemoteTopic(source, topic string) string {
	if i.looksLikeHeartbeat(topic) {
		return i.DefaultPolicy.FormatRemoteTopic(source, topic)
	}
	return topic
}

// TopicSource returns SourceClusterAlias, or the DefaultPolicy parse for
// heartbeat-looking topics.
func (i *IdentityPolicy) TopicSource(t string) string {
	if i.looksLikeHeartbeat(t) {
		return i.DefaultPolicy.TopicSource(t)
	}
	return i.SourceClusterAlias
}

// UpstreamTopic returns t, or the DefaultPolicy parse for heartbeat-looking topics.
func (i *IdentityPolicy) UpstreamTopic(t string) string {
	if i.looksLikeHeartbeat(t) {
		return i.DefaultPolicy.UpstreamTopic(t)
	}
	return t
}

// OriginalTopic follows UpstreamTopic to the first topic of the chain.
func (i *IdentityPolicy) OriginalTopic(t string) string { return originalTopic(i, t) }

// IsHeartbeatsTopic reports whether OriginalTopic(t) is "heartbeats".
func (i *IdentityPolicy) IsHeartbeatsTopic(t string) bool { return i.OriginalTopic(t) == "heartbeats" }

// TemplatePolicy stands in for a custom ReplicationPolicy class, which cannot
// run here: remote names follow Template, in which "{source}" is the source
// alias and "{topic}" the source topic, e.g. "{source}.{topic}" or
// "{topic}". Internal topic names follow DefaultPolicy.
type TemplatePolicy struct {
	DefaultPolicy
	Template           string
	SourceClusterAlias string // returned by TopicSource when Template has no {source}
	re                 *regexp.Regexp
}

// NewTemplatePolicy checks the template: "{topic}" exactly once, "{source}"
// at most once.
func NewTemplatePolicy(template, sourceAlias string, base DefaultPolicy) (*TemplatePolicy, error) {
	if strings.Count(template, "{topic}") != 1 || strings.Count(template, "{source}") > 1 {
		return nil, fmt.Errorf("target topic template %q must contain {topic} once and {source} at most once", template)
	}
	var b strings.Builder
	b.WriteString(`\A`)
	rest := template
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		switch {
		case i >= 0 && strings.HasPrefix(rest[i:], "{topic}"):
			b.WriteString(regexp.QuoteMeta(rest[:i]) + `(?P<topic>.+)`)
			rest = rest[i+len("{topic}"):]
		case i >= 0 && strings.HasPrefix(rest[i:], "{source}"):
			b.WriteString(regexp.QuoteMeta(rest[:i]) + `(?P<source>.+?)`)
			rest = rest[i+len("{source}"):]
		case i >= 0:
			b.WriteString(regexp.QuoteMeta(rest[:i+1]))
			rest = rest[i+1:]
		default:
			b.WriteString(regexp.QuoteMeta(rest))
			rest = ""
		}
	}
	b.WriteString(`\z`)
	return &TemplatePolicy{DefaultPolicy: base, Template: template, SourceClusterAlias: sourceAlias,
		re: regexp.MustCompile(b.String())}, nil
}

// FormatRemoteTopic fills in the template.
func (p *TemplatePolicy) FormatRemoteTopic(source, topic string) string {
	return strings.NewReplacer("{source}", source, "{topic}", topic).Replace(p.Template)
}

func (p *TemplatePolicy) group(t, name string) (string, bool) {
	m := p.re.FindStringSubmatch(t)
	if m == nil {
		return "", false
	}
	i := p.re.SubexpIndex(name)
	if i < 0 {
		return "", true
	}
	return m[i], true
}

// TopicSource returns the {source} part, SourceClusterAlias when the
// template has none, or "" when t does not fit the template.
func (p *TemplatePolicy) TopicSource(t string) string {
	s, ok := p.group(t, "source")
	if !ok {
		return ""
	}
	if p.re.SubexpIndex("source") < 0 {
		return p.SourceClusterAlias
	}
	return s
}

// UpstreamTopic returns the {topic} part, or "" when t does not fit the template.
func (p *TemplatePolicy) UpstreamTopic(t string) string { s, _ := p.group(t, "topic"); return s }

// OriginalTopic follows UpstreamTopic to the first topic of the chain.
func (p *TemplatePolicy) OriginalTopic(t string) string { return originalTopic(p, t) }

// IsHeartbeatsTopic reports whether OriginalTopic(t) is "heartbeats".
func (p *TemplatePolicy) IsHeartbeatsTopic(t string) bool { return p.OriginalTopic(t) == "heartbeats" }
