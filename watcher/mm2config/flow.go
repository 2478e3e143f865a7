package mm2config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Flow is one herder source->target of MM2 dedicated mode with the effective
// settings of its connectors (MirrorSourceConnector,
// MirrorCheckpointConnector, MirrorHeartbeatConnector) and of its Connect
// worker. Settings follow MirrorMakerConfig.connectorBaseConfig: `A->B.<k>`
// beats top-level `<k>`, which beats MM2's default.
type Flow struct {
	Source, Target string
	// Enabled: the flow replicates (`A->B.enabled=true`). A herder with
	// Enabled false exists only to emit heartbeats (MirrorMakerConfig
	// .clusterPairs), into Target.
	Enabled bool

	HeartbeatsEnabled bool          // emit.heartbeats.enabled (default true)
	HeartbeatInterval time.Duration // emit.heartbeats.interval.seconds (default 1s)
	// HeartbeatsReplicationEnabled is heartbeats.replication.enabled (4.x,
	// default true): heartbeats topics are replicated even when the topic
	// filter excludes them. 3.9 always behaves as true.
	HeartbeatsReplicationEnabled bool

	CheckpointsEnabled       bool          // emit.checkpoints.enabled (default true)
	CheckpointInterval       time.Duration // emit.checkpoints.interval.seconds (default 60s)
	SyncGroupOffsetsEnabled  bool          // sync.group.offsets.enabled (default false)
	SyncGroupOffsetsInterval time.Duration // sync.group.offsets.interval.seconds (default 60s)
	RefreshGroupsEnabled     bool          // refresh.groups.enabled (default true)
	RefreshGroupsInterval    time.Duration // refresh.groups.interval.seconds (default 600s)

	RefreshTopicsEnabled     bool          // refresh.topics.enabled (default true)
	RefreshTopicsInterval    time.Duration // refresh.topics.interval.seconds (default 600s)
	SyncTopicConfigsEnabled  bool          // sync.topic.configs.enabled (default true)
	SyncTopicConfigsInterval time.Duration // sync.topic.configs.interval.seconds (default 600s)
	SyncTopicACLsEnabled     bool          // sync.topic.acls.enabled (default true)
	SyncTopicACLsInterval    time.Duration // sync.topic.acls.interval.seconds (default 600s)
	EmitOffsetSyncsEnabled   bool          // emit.offset-syncs.enabled (default true)
	ReplicationFactor        int           // replication.factor of remote topics (default 2)
	OffsetLagMax             int64         // offset.lag.max (default 100)

	// OffsetSyncsLocation is offset-syncs.topic.location: "source" (default)
	// or "target".
	OffsetSyncsLocation string

	// PolicyClass is replication.policy.class as configured; Policy models
	// it (a TemplatePolicy or a guessed DefaultPolicy for a custom class).
	PolicyClass string
	Policy      ReplicationPolicy

	// Topics is the topic filter (topics, topics.exclude or its 3.9 alias
	// topics.blacklist); Groups the group filter (groups, groups.exclude or
	// groups.blacklist).
	Topics, Groups *Filter

	// Worker settings of the herder (MirrorMakerConfig.workerConfig).
	GroupID      string // group.id, default "<source>-mm2"
	ClientID     string // client.id, default "<source>-><target>"
	ConfigsTopic string // config.storage.topic, default "mm2-configs.<source>.internal"
	OffsetsTopic string // offset.storage.topic, default "mm2-offsets.<source>.internal"
	StatusTopic  string // status.storage.topic, default "mm2-status.<source>.internal"
	// ExactlyOnceSourceSupport is the worker's exactly.once.source.support
	// ("disabled" by default, "enabled", "preparing"), from `<target>.exactly.once.source.support`.
	ExactlyOnceSourceSupport string

	values map[string]string
	lines  map[string]int
}

// String returns "source->target", MM2's SourceAndTarget form.
func (f *Flow) String() string { return f.Source + "->" + f.Target }

// PolicyGuessed reports whether the flow's replication.policy.class is a
// custom class the watchdog cannot run and no target topic template was
// given, so Policy is DefaultReplicationPolicy naming as a guess: a target
// topic found under the guessed name is evidence, one not found is not.
func (f *Flow) PolicyGuessed() bool {
	if f.PolicyClass == "" || f.PolicyClass == DefaultPolicyClass || f.PolicyClass == IdentityPolicyClass {
		return false
	}
	_, template := f.Policy.(*TemplatePolicy)
	return !template
}

// Setting is an effective value and where it came from.
type Setting struct {
	Key     string // the property that supplied it ("A->B.topics", "topics"), or the plain name for a default
	Value   string // placeholders resolved
	Line    int    // line of Key, 0 for MM2's default
	Default bool   // the value is MM2's default, not from the file
}

// Lookup returns the effective connector setting key for the flow: the
// `<source>-><target>.<key>` property, else the top-level property when key
// is a connector config name (IsConnectorKey), else MM2's default. ok is
// false when none applies.
func (f *Flow) Lookup(key string) (Setting, bool) {
	if k := f.String() + "." + key; hasKey(f.values, k) {
		return Setting{Key: k, Value: f.values[k], Line: f.lines[k]}, true
	}
	if IsConnectorKey(key) && hasKey(f.values, key) {
		return Setting{Key: key, Value: f.values[key], Line: f.lines[key]}, true
	}
	switch key {
	case "source.cluster.alias":
		return Setting{Key: key, Value: f.Source, Default: true}, true
	case "target.cluster.alias":
		return Setting{Key: key, Value: f.Target, Default: true}, true
	}
	if d, ok := connectorDefaults[key]; ok && d != "" {
		return Setting{Key: key, Value: d, Default: true}, true
	}
	return Setting{}, false
}

// Get is Lookup reduced to the value and its line (0 for a default).
func (f *Flow) Get(key string) (value string, line int, ok bool) {
	s, ok := f.Lookup(key)
	return s.Value, s.Line, ok
}

// WorkerLookup returns the effective Connect worker setting of the herder
// (MirrorMakerConfig.workerConfig): a top-level key with one of the worker
// prefixes (offset.storage, config.storage, status.storage, key.converter,
// value.converter, header.converter, task, worker, replication.policy) beats
// `<target>.<key>`, which beats a top-level client key (bootstrap.servers,
// security.protocol, ssl.*, sasl.*); then MM2's herder defaults.
func (f *Flow) WorkerLookup(key string) (Setting, bool) {
	for _, p := range workerKeyPrefixes {
		if strings.HasPrefix(key, p) && hasKey(f.values, key) {
			return Setting{Key: key, Value: f.values[key], Line: f.lines[key]}, true
		}
	}
	if k := f.Target + "." + key; hasKey(f.values, k) {
		return Setting{Key: k, Value: f.values[k], Line: f.lines[k]}, true
	}
	if isClientConfigKey(key) && hasKey(f.values, key) {
		return Setting{Key: key, Value: f.values[key], Line: f.lines[key]}, true
	}
	def := map[string]string{
		"client.id":                   f.String(),
		"group.id":                    f.Source + "-mm2",
		"offset.storage.topic":        "mm2-offsets." + f.Source + ".internal",
		"status.storage.topic":        "mm2-status." + f.Source + ".internal",
		"config.storage.topic":        "mm2-configs." + f.Source + ".internal",
		"exactly.once.source.support": "disabled",
		"offset.flush.interval.ms":    "60000",
	}[key]
	if def != "" {
		return Setting{Key: key, Value: def, Default: true}, true
	}
	return Setting{}, false
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// ShouldReplicateTopic reports whether MM2's MirrorSourceConnector on this
// flow replicates source topic t (shouldReplicateTopic): the flow is
// enabled, and (the topic filter accepts t, or t is a heartbeats topic and
// heartbeats.replication.enabled), and t is not internal, and t is not a
// cycle (it did not come from the target).
func (f *Flow) ShouldReplicateTopic(t string) bool {
	if !f.Enabled {
		return false
	}
	return (f.Topics.Match(t) || (f.HeartbeatsReplicationEnabled && f.Policy.IsHeartbeatsTopic(t))) &&
		!f.Policy.IsInternalTopic(t) && !f.IsCycle(t)
}

// IsCycle is MirrorSourceConnector.isCycle: t, or a topic upstream of it,
// came from the flow's target. Always false with IdentityPolicy for
// non-heartbeat topics, which is why Identity both ways loops.
func (f *Flow) IsCycle(t string) bool {
	for range 1000 {
		src := f.Policy.TopicSource(t)
		if src == "" {
			return false
		}
		if src == f.Target {
			return true
		}
		up := f.Policy.UpstreamTopic(t)
		if up == "" || up == t {
			return false
		}
		t = up
	}
	return false
}

// ShouldReplicateGroup reports whether MirrorCheckpointConnector on this
// flow checkpoints group g: the flow is enabled, checkpoints are on and the
// group filter accepts g. (MM2 additionally requires that g has committed
// offsets for a topic the topic filter accepts; that needs the cluster.)
func (f *Flow) ShouldReplicateGroup(g string) bool {
	return f.Enabled && f.CheckpointsEnabled && f.Groups.Match(g)
}

// TargetTopic is the name sourceTopic gets on the target cluster.
func (f *Flow) TargetTopic(sourceTopic string) string {
	return f.Policy.FormatRemoteTopic(f.Source, sourceTopic)
}

// HeartbeatsTopic is the topic this herder's MirrorHeartbeatConnector writes on Target.
func (f *Flow) HeartbeatsTopic() string { return f.Policy.HeartbeatsTopic() }

// CheckpointsTopic is the checkpoints topic of this flow, on Target.
func (f *Flow) CheckpointsTopic() string { return f.Policy.CheckpointsTopic(f.Source) }

// OffsetSyncsTopic returns the cluster the offset-syncs topic lives on and
// its name: by default on Source, named after Target
// ("mm2-offset-syncs.<target>.internal"); with
// offset-syncs.topic.location=target, on Target, named after Source.
func (f *Flow) OffsetSyncsTopic() (cluster, name string) {
	if f.OffsetSyncsLocation == "target" {
		return f.Target, f.Policy.OffsetSyncsTopic(f.Source)
	}
	return f.Source, f.Policy.OffsetSyncsTopic(f.Target)
}

// InternalTopic is a topic MM2 creates for a herder, and where.
type InternalTopic struct {
	Cluster string // alias of the cluster it lives on
	Name    string
	// Role: "heartbeats", "checkpoints", "offset-syncs", "connect-configs",
	// "connect-offsets" or "connect-status".
	Role string
}

// InternalTopics lists the topics the herder uses: the three Connect
// topics of its worker and, when emitted, heartbeats on Target; and for an
// enabled flow checkpoints on Target and offset-syncs where
// offset-syncs.topic.location puts them.
func (f *Flow) InternalTopics() []InternalTopic {
	out := []InternalTopic{
		{f.Target, f.ConfigsTopic, "connect-configs"},
		{f.Target, f.OffsetsTopic, "connect-offsets"},
		{f.Target, f.StatusTopic, "connect-status"},
	}
	if f.HeartbeatsEnabled {
		out = append(out, InternalTopic{f.Target, f.HeartbeatsTopic(), "heartbeats"})
	}
	if f.Enabled && f.CheckpointsEnabled {
		out = append(out, InternalTopic{f.Target, f.CheckpointsTopic(), "checkpoints"})
	}
	if f.Enabled && f.EmitOffsetSyncsEnabled {
		c, n := f.OffsetSyncsTopic()
		out = append(out, InternalTopic{c, n, "offset-syncs"})
	}
	return out
}

// flow builds the herder s->t from the resolved properties.
func (p *parser) flow(c *Config, s, t string) *Flow {
	f := &Flow{Source: s, Target: t, values: p.values, lines: p.lines}
	get := func(key string) Setting {
		st, ok := f.Lookup(key)
		if !ok {
			st = Setting{Key: key, Default: true}
		}
		return st
	}
	f.Enabled = p.boolSetting(get("enabled"), false)
	fatal := f.Enabled // MM2 validates a disabled flow's connectors only lightly

	f.HeartbeatsEnabled = p.boolSetting(get("emit.heartbeats.enabled"), true)
	f.HeartbeatInterval = p.secondsSetting(get("emit.heartbeats.interval.seconds"))
	f.HeartbeatsReplicationEnabled = p.boolSetting(get("heartbeats.replication.enabled"), true)
	f.CheckpointsEnabled = p.boolSetting(get("emit.checkpoints.enabled"), true)
	f.CheckpointInterval = p.secondsSetting(get("emit.checkpoints.interval.seconds"))
	f.SyncGroupOffsetsEnabled = p.boolSetting(get("sync.group.offsets.enabled"), false)
	f.SyncGroupOffsetsInterval = p.secondsSetting(get("sync.group.offsets.interval.seconds"))
	f.RefreshGroupsEnabled = p.boolSetting(get("refresh.groups.enabled"), true)
	f.RefreshGroupsInterval = p.secondsSetting(get("refresh.groups.interval.seconds"))
	f.RefreshTopicsEnabled = p.boolSetting(get("refresh.topics.enabled"), true)
	f.RefreshTopicsInterval = p.secondsSetting(get("refresh.topics.interval.seconds"))
	f.SyncTopicConfigsEnabled = p.boolSetting(get("sync.topic.configs.enabled"), true)
	f.SyncTopicConfigsInterval = p.secondsSetting(get("sync.topic.configs.interval.seconds"))
	f.SyncTopicACLsEnabled = p.boolSetting(get("sync.topic.acls.enabled"), true)
	f.SyncTopicACLsInterval = p.secondsSetting(get("sync.topic.acls.interval.seconds"))
	f.EmitOffsetSyncsEnabled = p.boolSetting(get("emit.offset-syncs.enabled"), true)
	f.ReplicationFactor = int(p.intSetting(get("replication.factor"), 2))
	f.OffsetLagMax = p.intSetting(get("offset.lag.max"), 100)

	loc := get("offset-syncs.topic.location")
	switch v := strings.ToLower(strings.TrimSpace(loc.Value)); v {
	case "source", "target":
		f.OffsetSyncsLocation = v
	default:
		f.OffsetSyncsLocation = "source"
		p.errs = append(p.errs, p.errorf(loc.Line, loc.Key, nil, "must be source or target"))
	}

	f.Policy = p.policy(f, get)
	f.Topics = &Filter{
		Include: p.compileFilterList(get("topics"), fatal),
		Exclude: p.compileFilterList(deprecatedAlias(f, "topics.exclude", "topics.blacklist"), fatal),
	}
	f.Groups = &Filter{
		Include: p.compileFilterList(get("groups"), fatal),
		Exclude: p.compileFilterList(deprecatedAlias(f, "groups.exclude", "groups.blacklist"), fatal),
	}

	worker := func(key string) string { s, _ := f.WorkerLookup(key); return strings.TrimSpace(s.Value) }
	f.GroupID = worker("group.id")
	f.ClientID = worker("client.id")
	f.ConfigsTopic = worker("config.storage.topic")
	f.OffsetsTopic = worker("offset.storage.topic")
	f.StatusTopic = worker("status.storage.topic")
	f.ExactlyOnceSourceSupport = strings.ToLower(worker("exactly.once.source.support"))
	return f
}

// deprecatedAlias is ConfigUtils.translateDeprecatedConfigs as the 3.9
// filters use it: the new key, if set at any level, wins over the alias; the
// alias is used only when the new key is not set at all.
func deprecatedAlias(f *Flow, key, alias string) Setting {
	s, _ := f.Lookup(key)
	if !s.Default {
		return s
	}
	if a, ok := f.Lookup(alias); ok && !a.Default {
		return a
	}
	return s
}

// boolSetting parses a ConfigDef BOOLEAN: trimmed, "true"/"false" in any case.
func (p *parser) boolSetting(s Setting, def bool) bool {
	if s.Default && s.Value == "" {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(s.Value)) {
	case "true":
		return true
	case "false":
		return false
	}
	p.errs = append(p.errs, p.errorf(s.Line, s.Key, nil, "expected true or false, got %q", s.Value))
	return def
}

// intSetting parses a ConfigDef INT or LONG: trimmed, base 10.
func (p *parser) intSetting(s Setting, def int64) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s.Value), 10, 64)
	if err != nil {
		p.errs = append(p.errs, p.errorf(s.Line, s.Key, nil, "expected a whole number, got %q", s.Value))
		return def
	}
	return n
}

// secondsSetting parses a LONG number of seconds.
func (p *parser) secondsSetting(s Setting) time.Duration {
	n := p.intSetting(s, 0)
	if n < 0 && !s.Default {
		p.warnOnce(s.Line, s.Key, "a negative interval disables the job")
	}
	return time.Duration(n) * time.Second
}

// policy builds the flow's ReplicationPolicy the way MirrorConnectorConfig
// configures it: the separator and the internal-separator flag are read
// from the raw connector properties (untrimmed, Boolean.parseBoolean).
func (p *parser) policy(f *Flow, get func(string) Setting) ReplicationPolicy {
	cls := get("replication.policy.class")
	f.PolicyClass = strings.TrimSpace(cls.Value)
	sep := get("replication.policy.separator")
	base := DefaultPolicy{Separator: sep.Value, InternalSeparator: true}
	if sep.Value != strings.TrimSpace(sep.Value) {
		p.warnOnce(sep.Line, sep.Key, fmt.Sprintf("the separator %q has surrounding whitespace, which MM2 keeps", sep.Value))
	}
	if sep.Value == "" {
		p.warnOnce(sep.Line, sep.Key, "the separator is empty; remote topic names cannot be parsed back")
	}
	if s, ok := f.Lookup("replication.policy.internal.topic.separator.enabled"); ok && !s.Default {
		base.InternalSeparator = javaParseBoolean(s.Value)
	}
	if !base.InternalSeparator && base.Separator != "." {
		p.warnOnce(sep.Line, sep.Key, fmt.Sprintf("internal topics use '.' instead of %q (replication.policy.internal.topic.separator.enabled=false)", base.Separator))
	}
	tmpl := p.opts.TargetTopicTemplate
	switch f.PolicyClass {
	case DefaultPolicyClass:
		if tmpl != "" {
			p.warnOnce(cls.Line, cls.Key, "the target topic template is ignored: DefaultReplicationPolicy is modelled exactly")
		}
		return &base
	case IdentityPolicyClass:
		if tmpl != "" {
			p.warnOnce(cls.Line, cls.Key, "the target topic template is ignored: IdentityReplicationPolicy is modelled exactly")
		}
		return &IdentityPolicy{DefaultPolicy: base, SourceClusterAlias: f.Source}
	}
	if tmpl != "" {
		tp, err := NewTemplatePolicy(tmpl, f.Source, base)
		if err != nil {
			p.errs = append(p.errs, p.errorf(cls.Line, cls.Key, err, "custom replication policy"))
			return &base
		}
		p.warnOnce(cls.Line, cls.Key, fmt.Sprintf("custom replication policy %q cannot be run here; remote topic names follow the target topic template %q", f.PolicyClass, tmpl))
		return tp
	}
	p.warnOnce(cls.Line, cls.Key, fmt.Sprintf("custom replication policy %q cannot be run here; assuming DefaultReplicationPolicy names (<source>%s<topic>); give a target topic template if that is wrong", f.PolicyClass, base.Separator))
	return &base
}
