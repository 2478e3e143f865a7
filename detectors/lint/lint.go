package lint

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// Options tunes Check.
type Options struct {
	// Limits gives the limits of aliases explicitly (from --limited and
	// --kafka); it wins over a probe and the profile.
	Limits map[string]Limits
	// OthersFull makes aliases that are neither in Limits nor probed full
	// Kafka clusters. When false, the strict profile applies to them: an
	// alias is limited when it is the target of an enabled flow.
	OthersFull bool
	// MM2Version is the major version of the MM2 that will run the file: 3
	// or 4. Zero means 4. It decides lint-config-sync's severity.
	MM2Version int
	// Snapshots are probe results by alias (nil when not probing). A usable
	// snapshot decides the alias's limits (LimitsFromSnapshot) unless Limits
	// names it, and snapshots of both ends of a flow enable lint-precreate,
	// which needs topics and, for the rejected-config check, the configs in
	// RejectedTopicConfigs described.
	Snapshots map[string]*cluster.Snapshot
	// RejectedTopicConfigs are topic configs a limited target rejects in
	// CreateTopics, with the value that counts as "not set" on the source;
	// nil means DefaultRejectedTopicConfigs.
	RejectedTopicConfigs map[string]string
}

// DefaultRejectedTopicConfigs returns the topic configs a limited broker is
// known to reject when MM2 copies them into CreateTopics: retention.bytes
// (unset is -1, Kafka's default, which MM2 does not copy).
func DefaultRejectedTopicConfigs() map[string]string {
	return map[string]string{"retention.bytes": "-1"}
}

// ProbeConfigNames returns the topic config names a probe snapshot should
// describe for opts (SnapshotOptions.ConfigNames).
func ProbeConfigNames(opts Options) []string {
	m := opts.RejectedTopicConfigs
	if m == nil {
		m = DefaultRejectedTopicConfigs()
	}
	return slices.Sorted(maps.Keys(m))
}

// Check lints cfg and returns the findings in a stable order: per rule in
// Rules order, then by flow and line. It does no I/O. Findings about a
// flow carry Source and Target; findings about a cluster setting carry
// Target (the limited alias) and, when one flow writes there, Source.
func Check(cfg *mm2config.Config, opts Options) []detectors.Finding {
	if cfg == nil {
		return nil
	}
	c := &checker{cfg: cfg, opts: opts, limits: resolveLimits(cfg, opts), file: cfg.File}
	if c.opts.MM2Version == 0 {
		c.opts.MM2Version = 4
	}
	c.limitsInfo()
	c.warnings()
	c.missingBootstrap()
	c.unknownKeys()
	for _, a := range cfg.Clusters {
		if l := c.limits[a]; l.Limited() && c.writtenBy(a) != nil {
			c.producerSettings(a, l)
		}
	}
	for _, f := range cfg.Flows {
		c.flowRules(f)
	}
	c.identityLoops()
	c.precreate()
	fix := map[string]string{}
	for _, r := range Rules() {
		fix[r.ID] = r.Fix
	}
	for i := range c.out {
		f := &c.out[i]
		locate(f, cfg.Clusters)
		nameKey(f)
		if f.Hint == "" {
			f.Hint = fix[f.Rule]
		}
	}
	sortFindings(c.out)
	return c.out
}

// locate fills in where a finding about a key applies when the rule left
// it open: `src->tgt.<k>` is the flow, `<alias>.<k>` the cluster, so the
// report's WHERE column is not empty.
func locate(f *detectors.Finding, clusters []string) {
	key, _ := f.Values["key"].(string)
	if key == "" || f.Source != "" || f.Target != "" || f.Cluster != "" {
		return
	}
	head, _, _ := strings.Cut(key, ".")
	if src, tgt, ok := strings.Cut(head, "->"); ok && slices.Contains(clusters, src) && slices.Contains(clusters, tgt) {
		f.Source, f.Target = src, tgt
		return
	}
	if slices.Contains(clusters, head) {
		f.Cluster = head
	}
}

// nameKey makes a finding about a key name it, its line when it has one,
// and say "not set" when the file does not set it, so that the table row
// alone tells the reader where to look.
func nameKey(f *detectors.Finding) {
	key, _ := f.Values["key"].(string)
	if key == "" {
		return
	}
	_, set := f.Values["found"]
	line, _ := f.Values["line"].(int)
	var parts []string
	switch {
	case !set && line == 0 && (f.Values["default"] != nil || f.Values["want"] != nil) && !strings.Contains(f.Summary, "not set"):
		parts = append(parts, key+" is not set")
	case !strings.Contains(f.Summary, key):
		parts = append(parts, key)
	}
	if l := fmt.Sprintf("line %d", line); line > 0 && !strings.Contains(f.Summary, l) {
		parts = append(parts, l)
	}
	if len(parts) > 0 {
		f.Summary = strings.TrimSuffix(f.Summary, ".") + " (" + strings.Join(parts, ", ") + ")."
	}
}

type checker struct {
	cfg    *mm2config.Config
	opts   Options
	limits map[string]Limits
	file   string
	out    []detectors.Finding
}

// setting is one property as the lint reports it.
type setting struct {
	key   string
	value string
	line  int
	set   bool // false: not in the file (value is MM2's or the client's default)
}

func (c *checker) top(key string) setting {
	v, line, ok := c.cfg.Value(key)
	return setting{key: key, value: v, line: line, set: ok}
}

func fromSetting(s mm2config.Setting) setting {
	return setting{key: s.Key, value: s.Value, line: s.Line, set: !s.Default}
}

// add appends a finding about s with the value to set.
func (c *checker) add(f detectors.Finding, s setting, want string) {
	if f.Values == nil {
		f.Values = map[string]any{}
	}
	f.Values["key"] = s.key
	if s.set {
		f.Values["found"] = s.value
		if s.line > 0 {
			f.Values["line"] = s.line
			f.Evidence = &detectors.Evidence{File: c.file, Line: int64(s.line), Text: s.key + " = " + s.value}
		}
	} else if s.value != "" {
		f.Values["default"] = s.value
	}
	if want != "" {
		f.Values["want"] = want
	}
	c.out = append(c.out, f)
}

// writtenBy returns the herders that write into alias (enabled flows
// first, then heartbeat-only herders), nil when none does.
func (c *checker) writtenBy(alias string) []*mm2config.Flow {
	var on, hb []*mm2config.Flow
	for _, h := range c.cfg.Herders {
		if h.Target != alias {
			continue
		}
		if h.Enabled {
			on = append(on, h)
		} else {
			hb = append(hb, h)
		}
	}
	return append(on, hb...)
}

// sourceOf returns the source alias to put on a finding about a setting of
// alias: the single enabled flow's source, or "" when several flows (or
// only heartbeat herders) write there.
func (c *checker) sourceOf(alias string) string {
	var srcs []string
	for _, f := range c.cfg.Flows {
		if f.Target == alias {
			srcs = append(srcs, f.Source)
		}
	}
	if len(srcs) == 1 {
		return srcs[0]
	}
	return ""
}

func (c *checker) limitsInfo() {
	for _, a := range c.cfg.Clusters {
		l := c.limits[a]
		kind := "a full Kafka cluster"
		if l.Limited() {
			var lacks []string
			for _, x := range []struct {
				on   bool
				name string
			}{{l.NoCreatePartitions, "CreatePartitions"}, {l.NoIncrementalAlterConfigs, "IncrementalAlterConfigs"},
				{l.NoIdempotence, "idempotence/transactions"}, {l.NoACLs, "ACLs"}, {l.NoCompression, "compression"}} {
				if x.on {
					lacks = append(lacks, x.name)
				}
			}
			kind = "limited (lacks " + strings.Join(lacks, ", ") + ")"
		}
		c.out = append(c.out, detectors.Finding{
			Rule: RuleLimits, Severity: detectors.Info, Cluster: a,
			Summary: fmt.Sprintf("Cluster %s is checked as %s: %s.", a, kind, l.Basis),
			Values:  map[string]any{"limited": l.Limited(), "basis": l.Basis},
		})
	}
}

// producerSettings checks what every producer writing into the limited
// alias gets: `<alias>.producer.*` is the worker's producer.* for every
// herder into alias (MirrorMakerConfig.workerConfig, MM2-REFERENCE.md §5.3).
func (c *checker) producerSettings(alias string, l Limits) {
	src := c.sourceOf(alias)
	if l.NoIdempotence {
		s := c.top(alias + ".producer.enable.idempotence")
		switch {
		case s.set && isTrue(s.value):
			c.add(detectors.Finding{Rule: RuleIdempotence, Severity: detectors.Critical, Source: src, Target: alias,
				Summary: fmt.Sprintf("MM2's producers into %s are idempotent, but %s has no InitProducerId: every task writing there fails.", alias, alias),
				Hint:    fmt.Sprintf("Set %s = false.", s.key)}, s, "false")
		case !s.set:
			s.value = "false for Connect's source-task producers; true for other clients"
			c.add(detectors.Finding{Rule: RuleIdempotence, Severity: detectors.Warning, Source: src, Target: alias,
				Summary: fmt.Sprintf("%s is not set: Connect turns idempotence off for its own producers, but not every MM2 version and client does, and %s has no InitProducerId.", s.key, alias),
				Hint:    fmt.Sprintf("Set %s = false explicitly.", s.key)}, s, "false")
		}
	}
	if l.NoCompression {
		s := c.top(alias + ".producer.compression.type")
		switch {
		case s.set && strings.ToLower(strings.TrimSpace(s.value)) != "none":
			c.add(detectors.Finding{Rule: RuleCompression, Severity: detectors.Critical, Source: src, Target: alias,
				Summary: fmt.Sprintf("MM2's producers into %s compress with %s, which %s rejects (UNSUPPORTED_COMPRESSION_TYPE kills the task).", alias, strings.TrimSpace(s.value), alias),
				Hint:    fmt.Sprintf("Set %s = none.", s.key)}, s, "none")
		case !s.set:
			s.value = "none"
			c.add(detectors.Finding{Rule: RuleCompression, Severity: detectors.Warning, Source: src, Target: alias,
				Summary: fmt.Sprintf("%s is not set; %s does not support compressed batches, so pin it to none.", s.key, alias),
				Hint:    fmt.Sprintf("Set %s = none explicitly.", s.key)}, s, "none")
		}
	}
	if l.NoIdempotence {
		// exactly.once.source.support is a worker setting: `<alias>.` (the
		// herder's target) is the only place dedicated mode reads it, so
		// every herder into alias has the same one.
		ws, _ := c.writtenBy(alias)[0].WorkerLookup("exactly.once.source.support")
		s := fromSetting(ws)
		v := strings.ToLower(strings.TrimSpace(s.value))
		sev := detectors.Severity("")
		switch v {
		case "enabled":
			sev = detectors.Critical
		case "preparing":
			sev = detectors.Warning
		}
		if sev != "" && s.set {
			c.add(detectors.Finding{Rule: RuleExactlyOnce, Severity: sev, Source: src, Target: alias,
				Summary: fmt.Sprintf("exactly.once.source.support=%s makes MM2's producers into %s transactional, but %s has no InitProducerId or transactions.", v, alias, alias),
				Hint:    fmt.Sprintf("Remove %s or set it to disabled.", s.key)}, s, "disabled")
		}
	}
}

// flowRules checks one enabled flow.
func (c *checker) flowRules(f *mm2config.Flow) {
	tl, sl := c.limits[f.Target], c.limits[f.Source]
	if tl.NoACLs && f.SyncTopicACLsEnabled {
		st, _ := f.Lookup("sync.topic.acls.enabled")
		c.add(detectors.Finding{Rule: RuleACLSync, Severity: detectors.Warning, Source: f.Source, Target: f.Target,
			Summary: fmt.Sprintf("%s syncs topic ACLs into %s, which has no ACLs: every sync fails with a WARN (every %.0f s).", f, f.Target, f.SyncTopicACLsInterval.Seconds()),
			Hint:    "Set sync.topic.acls.enabled = false (top level, or " + f.String() + ".sync.topic.acls.enabled)."}, fromSetting(st), "false")
	}
	if tl.NoIncrementalAlterConfigs && f.SyncTopicConfigsEnabled {
		st, _ := f.Lookup("sync.topic.configs.enabled")
		s := fromSetting(st)
		fd := detectors.Finding{Rule: RuleConfigSync, Source: f.Source, Target: f.Target,
			Values: map[string]any{"mm2_version": c.opts.MM2Version}}
		if c.opts.MM2Version >= 4 {
			fd.Severity = detectors.Critical
			fd.Summary = fmt.Sprintf("MM2 4.x syncs topic configs of %s with IncrementalAlterConfigs, which %s lacks: MirrorSourceConnector goes FAILED on the first sync, at start.", f, f.Target)
			fd.Hint = "Set sync.topic.configs.enabled = false."
		} else {
			ia, _ := f.Lookup("use.incremental.alter.configs")
			mode := strings.ToLower(strings.TrimSpace(ia.Value))
			fd.Values["use.incremental.alter.configs"] = ia.Value
			if mode == "required" {
				fd.Severity = detectors.Critical
				fd.Summary = fmt.Sprintf("MM2 3.x with use.incremental.alter.configs=required fails MirrorSourceConnector of %s: %s lacks IncrementalAlterConfigs.", f, f.Target)
				fd.Hint = "Set sync.topic.configs.enabled = false, or use.incremental.alter.configs = requested to fall back to AlterConfigs."
			} else {
				fd.Severity = detectors.Warning
				fd.Summary = fmt.Sprintf("MM2 3.x syncs topic configs of %s into %s, which lacks IncrementalAlterConfigs: it falls back to the deprecated AlterConfigs with a WARN, and breaks on 4.x.", f, f.Target)
				fd.Hint = "Set sync.topic.configs.enabled = false; if you keep it on 3.x, leave use.incremental.alter.configs at requested (the default) so MM2 falls back to AlterConfigs, or set never to use AlterConfigs from the start."
			}
		}
		c.add(fd, s, "false")
	}
	if sl.Limited() && !tl.Limited() && f.EmitOffsetSyncsEnabled && f.OffsetSyncsLocation == "source" {
		st, _ := f.Lookup("offset-syncs.topic.location")
		_, topic := f.OffsetSyncsTopic()
		c.add(detectors.Finding{Rule: RuleOffsetSyncsLocation, Severity: detectors.Warning, Source: f.Source, Target: f.Target, Topic: topic,
			Summary: fmt.Sprintf("%s keeps its offset-syncs topic %s on the limited source %s: MM2 creates it there and writes to it.", f, topic, f.Source),
			Hint:    "Set offset-syncs.topic.location = target (top level, or " + f.String() + ".offset-syncs.topic.location)."}, fromSetting(st), "target")
	}
	c.offsetSyncsIdempotence(f)
}

// offsetSyncsIdempotence checks MM2's offset-syncs producer
// (OffsetSyncWriter, MM2-REFERENCE.md §1.9) when the offset-syncs topic
// lives on a cluster without InitProducerId. It is a plain KafkaProducer
// built from the connector's `<side>.producer.*` settings, so the client
// default enable.idempotence=true applies unless one of these sets it,
// highest precedence first: `S->T.<side>.producer.enable.idempotence`,
// `<alias>.producer.enable.idempotence` (passed as `<side>.producer.*` by
// MirrorMakerConfig.connectorBaseConfig), `S->T.producer.enable.idempotence`.
func (c *checker) offsetSyncsIdempotence(f *mm2config.Flow) {
	if !f.EmitOffsetSyncsEnabled {
		return
	}
	alias, topic := f.OffsetSyncsTopic()
	if !c.limits[alias].NoIdempotence {
		return
	}
	side, other, otherAlias := "source", "target", f.Target
	if alias == f.Target {
		side, other, otherAlias = "target", "source", f.Source
	}
	s := setting{key: alias + ".producer.enable.idempotence", value: "true (Kafka client default)"}
	for _, k := range []string{f.String() + "." + side + ".producer.enable.idempotence", alias + ".producer.enable.idempotence", f.String() + ".producer.enable.idempotence"} {
		if t := c.top(k); t.set {
			s = t
			break
		}
	}
	if s.set && !isTrue(s.value) {
		return
	}
	if s.set && s.key == alias+".producer.enable.idempotence" && alias == f.Target {
		return // already reported for the data producers with the same line
	}
	c.add(detectors.Finding{Rule: RuleIdempotence, Severity: detectors.Critical, Source: f.Source, Target: f.Target,
		Topic: topic, Connector: "MirrorSourceConnector",
		Summary: fmt.Sprintf("MM2's offset-syncs producer of %s writes %s on %s idempotently (the Kafka client default), but %s has no InitProducerId: every offset sync fails and consumer offsets are not translated.", f, topic, alias, alias),
		Hint:    fmt.Sprintf("Set %s.producer.enable.idempotence = false, or offset-syncs.topic.location = %s if %s is a full Kafka cluster.", alias, other, otherAlias)}, s, "false")
}

func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

// missingBootstrap reports aliases used by a herder without bootstrap.servers.
func (c *checker) missingBootstrap() {
	used := map[string]bool{}
	for _, h := range c.cfg.Herders {
		used[h.Source], used[h.Target] = true, true
	}
	for _, a := range c.cfg.Clusters {
		if !used[a] {
			continue
		}
		if _, err := c.cfg.Client(a); err == nil {
			continue
		}
		c.add(detectors.Finding{Rule: RuleMissingBootstrap, Severity: detectors.Critical, Cluster: a,
			Summary: fmt.Sprintf("Cluster %s has no bootstrap.servers: MM2 would connect to localhost:9092.", a),
			Hint:    fmt.Sprintf("Set %s.bootstrap.servers.", a)}, setting{key: a + ".bootstrap.servers"}, "host:port,...")
	}
}

// warnings turns mm2config's parse warnings into findings, except the ones
// another rule reports better (missing bootstrap.servers).
func (c *checker) warnings() {
	for _, w := range c.cfg.Warnings {
		if strings.Contains(w.Message, "no bootstrap.servers") {
			continue
		}
		rule, sev := RuleSyntax, detectors.Info
		switch {
		case strings.Contains(w.Message, "removed in Kafka 4.0"):
			rule, sev = RuleUnknownKey, detectors.Info
			if c.opts.MM2Version >= 4 {
				sev = detectors.Warning
			}
		case strings.Contains(w.Message, "does not compile"), strings.Contains(w.Message, "surrounding whitespace"):
			sev = detectors.Warning
		}
		where := w.Key
		if where == "" {
			where = "the file"
		}
		if w.Line > 0 {
			where += fmt.Sprintf(" (line %d)", w.Line)
		}
		f := detectors.Finding{Rule: rule, Severity: sev, Summary: where + ": " + w.Message + ".",
			Hint: warningHint(w), Values: map[string]any{}}
		if w.Key != "" {
			f.Values["key"] = w.Key
		}
		if w.Line > 0 {
			f.Values["line"] = w.Line
			f.Evidence = &detectors.Evidence{File: c.file, Line: int64(w.Line), Text: c.entryText(w.Line, w.Key)}
		}
		c.out = append(c.out, f)
	}
}

// warningHint returns what to do about one of mm2config's parse warnings,
// by the kind of warning its message names.
func warningHint(w mm2config.Warning) string {
	m := w.Message
	switch {
	case strings.Contains(m, "removed in Kafka 4.0"):
		return fmt.Sprintf("Remove %s, or replace it as the summary says; MM2 4.x ignores it.", w.Key)
	case strings.Contains(m, "set again"):
		return fmt.Sprintf("Keep one %s line: MM2 uses the last one.", w.Key)
	case strings.Contains(m, "listed twice"):
		return "List each alias once in clusters."
	case strings.Contains(m, "surrounding whitespace"):
		return fmt.Sprintf("Remove the spaces around the value of %s.", w.Key)
	case strings.Contains(m, "does not compile"):
		return "Fix the regex list before enabling the flow: MM2 joins the comma-separated Java regexes with | and each must match the whole topic or group name."
	case strings.Contains(m, "regex translated"):
		return "Nothing to fix: the lint matches names with the translated regex, which accepts the same names."
	case strings.Contains(m, "negative interval"):
		return fmt.Sprintf("Set %s to a positive number of seconds if the job should run.", w.Key)
	case strings.Contains(m, "separator"):
		return "Check replication.policy.separator: remote topic names are <source><separator><topic>."
	case strings.Contains(m, "replication policy"), strings.Contains(m, "target topic template"):
		return "Check that the assumed remote topic names are right; give the target topic template of a custom policy if not."
	case strings.Contains(m, "provider"), strings.Contains(m, "placeholder"):
		return "Declare every provider in config.providers with its config.providers.<name>.class, as MM2 needs them."
	}
	return "Check the value on the named line."
}

// entryText renders the entry on line as "key = value", masking secrets.
func (c *checker) entryText(line int, key string) string {
	for _, e := range c.cfg.Entries() {
		if e.Line == line && (key == "" || e.Key == key) {
			return e.Key + " = " + maskValue(e.Key, e.Value)
		}
	}
	return key
}

// ruleOrder ranks rule ids in Rules order.
func ruleOrder() map[string]int {
	m := map[string]int{}
	for i, r := range Rules() {
		m[r.ID] = i
	}
	return m
}

func lineOf(f *detectors.Finding) int {
	if f.Evidence != nil {
		return int(f.Evidence.Line)
	}
	return 0
}

func sortFindings(fs []detectors.Finding) {
	order := ruleOrder()
	slices.SortStableFunc(fs, func(a, b detectors.Finding) int {
		return cmp.Or(
			cmp.Compare(order[a.Rule], order[b.Rule]),
			cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Cluster, b.Cluster),
			cmp.Compare(lineOf(&a), lineOf(&b)), cmp.Compare(a.Topic, b.Topic))
	})
}
