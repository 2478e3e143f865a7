package logrules

import (
	"container/list"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// Defaults for Options fields left at zero.
const (
	// DefaultRebalanceWindow is the sliding window of rebalance-storm.
	DefaultRebalanceWindow = 5 * time.Minute
	// DefaultRebalanceThreshold is how many "Rebalance started" lines of one
	// group within the window make a storm.
	DefaultRebalanceThreshold = 5
	// DefaultMaxTracked bounds the folded findings the Engine keeps.
	DefaultMaxTracked = 10000
)

// linkWindow is how far apart (record time) the lines of one incident may be:
// a failed send and the task's death, a config-sync error and the connector's.
const linkWindow = 2 * time.Minute

// maxListed caps the topics listed in Values["topics"].
const maxListed = 20

// Options tunes an Engine. Zero values mean the defaults.
type Options struct {
	// RebalanceWindow is the sliding window, in record time, over which
	// "Rebalance started" lines of one Connect group are counted (default 5m).
	RebalanceWindow time.Duration
	// RebalanceThreshold is the number of rebalances within the window that
	// makes a rebalance-storm finding (default 5).
	RebalanceThreshold int
	// MaxTracked caps the number of distinct findings (identities) kept; the
	// least recently seen is evicted first (default 10000).
	MaxTracked int
	// Flows are the enabled flows of the MM2 config ("A->B"), when known. In
	// dedicated mode most lines do not name their flow; with exactly one
	// enabled flow, a finding that names neither alias (or only one that
	// fits) is attributed to it. Lines of MirrorHeartbeatConnector are left
	// alone: the heartbeat-only reverse herder logs them too.
	Flows []string
}

// configuredFlow fills the flow of f from Options.Flows when the config has
// exactly one enabled flow and nothing in the line contradicts it.
func (e *Engine) configuredFlow(f *detectors.Finding, connector string) {
	if len(e.opts.Flows) != 1 || connector == "MirrorHeartbeatConnector" || (f.Source != "" && f.Target != "") {
		return
	}
	src, tgt, _, ok := splitFlow(e.opts.Flows[0])
	if !ok || (f.Source != "" && f.Source != src) || (f.Target != "" && f.Target != tgt) {
		return
	}
	f.Source, f.Target = src, tgt
}

// Engine applies the rule table to records, one at a time, and keeps the
// folded findings. It holds per-flow, per-group and per-task state across
// records, so one Engine should see one MM2 worker's records in order. It is
// not safe for concurrent use.
type Engine struct {
	opts Options
	rows []Rule
	// causes are the Cause rows, in priority order.
	causes []*Rule
	// plans are the rows that apply to each record level, with their
	// prefilter automaton; indexed by planIndex.
	plans [numPlans]levelPlan

	byID map[string]*entry
	// lru holds the entries per severity rank (index detectors.Severity.Rank),
	// each list with the most recently seen at the front. Past MaxTracked the
	// least recently seen entry of the lowest severity is evicted, so a flood
	// of warnings cannot push out a critical.
	lru [4]*list.List
	// evicted counts the findings dropped past MaxTracked.
	evicted int
	// recent are the entries that may still absorb a linked line.
	recent []*entry
	// tasks are the entries of kind kindTask in byID (in no order), which the
	// frequent "task started" signals search instead of every entry.
	tasks []*entry

	missing   map[string]*missingState // by "source->target"
	rebalance map[string][]time.Time   // by group and flow
	taskFlows map[string][]string      // task id → distinct "A->B" seen replicating
	aliases   map[string]struct{}
	flows     map[string]struct{}
}

// entry is one folded finding and what the Engine needs to keep folding it.
type entry struct {
	f         detectors.Finding
	row       *Rule
	kind      incidentKind
	lastRow   *Rule
	topics    []string
	recovered bool
	elem      *list.Element
	rank      int // the severity rank of the lru list elem is in
	evicted   bool
}

// missingState follows the refreshes of one flow for partitions-missing-on-target.
type missingState struct {
	last    int
	streak  int
	pending bool // a "Found … missing" line was seen in the current refresh run
}

// New returns an Engine with the rule table compiled and opts defaulted.
func New(opts Options) *Engine {
	if opts.RebalanceWindow <= 0 {
		opts.RebalanceWindow = DefaultRebalanceWindow
	}
	if opts.RebalanceThreshold <= 0 {
		opts.RebalanceThreshold = DefaultRebalanceThreshold
	}
	if opts.MaxTracked <= 0 {
		opts.MaxTracked = DefaultMaxTracked
	}
	e := &Engine{
		opts:      opts,
		rows:      table(),
		byID:      make(map[string]*entry),
		lru:       [4]*list.List{list.New(), list.New(), list.New(), list.New()},
		missing:   make(map[string]*missingState),
		rebalance: make(map[string][]time.Time),
		taskFlows: make(map[string][]string),
		aliases:   make(map[string]struct{}),
		flows:     make(map[string]struct{}),
	}
	for i := range e.rows {
		if e.rows[i].Cause {
			e.causes = append(e.causes, &e.rows[i])
		}
	}
	for i, lv := range [numPlans]levelMask{planTrace: lvTrace, planDebug: lvDebug, planInfo: lvInfo, planWarn: lvWarn, planError: lvError, planAny: lvAll} {
		p, err := newPlan(e.rows, lv)
		if err != nil {
			// The table is fixed at compile time; TestPrefilterPlans builds it.
			panic("logrules: " + err.Error())
		}
		e.plans[i] = p
	}
	return e
}

// Observe applies the rules to one record and returns the findings it
// produced or updated, already folded with earlier repeats (Count, FirstSeen,
// LastSeen), and findings whose condition ended (Recovered set). It returns
// nil for records that match nothing; those cost one pass over the message
// (and, for a warning or error, over the exception lines of its stack) and no
// allocation. It does no I/O. rec must not be nil.
//
// Rows are tried in table order and the first whose prefilter, logger and
// pattern match wins; a single-pass search for the prefilters of every row
// that applies to the record's level picks the rows worth trying.
func (e *Engine) Observe(rec *watcher.Record) []detectors.Finding {
	r, idx, causeGroups := e.pick(rec)
	if r == nil {
		return nil
	}
	return e.fire(r, rec, idx, causeGroups)
}

// pick returns the row that applies to rec, or nil: the first message row (in
// table order) whose level, prefilter, logger and pattern match, with the
// pattern's submatch indexes; else, for a warning or error, the first
// standalone cause row whose prefilter occurs in the message or an exception
// line of the stack and whose pattern matches, with its groups.
func (e *Engine) pick(rec *watcher.Record) (*Rule, []int, map[string]string) {
	lv := levelOf(rec.Level)
	known := lv != 0
	if !known {
		lv = lvAll
	}
	p := &e.plans[planIndex(lv)]
	if p.m == nil {
		return nil, nil, nil
	}
	msg := rec.Message
	var hit litSet
	p.m.scan(msg, &hit)
	if hit.meets(&p.rowLits) {
		for _, pr := range p.rows {
			if !hit.has(pr.lit) {
				continue
			}
			r := pr.r
			if r.Logger != "" && rec.Logger != "" && !strings.HasSuffix(rec.Logger, r.Logger) {
				continue
			}
			var m []int
			if r.re != nil {
				if !pr.mayMatch(msg) {
					continue
				}
				if m = r.re.FindStringSubmatchIndex(msg); m == nil {
					continue
				}
			}
			return r, m, nil
		}
	}
	// A warning or error that no message row knows, whose exception names a
	// cause with its own rule.
	if len(p.causes) > 0 && lv&(lvWarn|lvError) != 0 && (known || len(rec.Stack) > 0) {
		for _, l := range rec.Stack {
			if !isFrame(l) {
				p.m.scan(l, &hit)
			}
		}
		if !hit.meets(&p.causeLits) {
			return nil, nil, nil
		}
		for _, pc := range p.causes {
			if !hit.has(pc.lit) {
				continue
			}
			if g, ok := causeMatch(pc.r, rec.Message, rec.Stack); ok {
				return pc.r, nil, g
			}
		}
	}
	return nil, nil, nil
}

// Findings returns every folded finding kept so far, sorted by FirstSeen,
// then rule, then identity. A finding whose condition ended after its last
// episode (a failed task started again, partitions added, …) is included with
// Recovered set; one that started again after a recovery is active again.
// The findings are copies.
func (e *Engine) Findings() []detectors.Finding {
	out := make([]detectors.Finding, 0, len(e.byID))
	for _, ent := range e.byID {
		c := copyFinding(&ent.f)
		c.Recovered = ent.recovered
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if !a.FirstSeen.Equal(b.FirstSeen) {
			return a.FirstSeen.Before(b.FirstSeen)
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Identity() < b.Identity()
	})
	return out
}

// match is a row's hit on a record, before it becomes a finding.
type match struct {
	rec    *watcher.Record
	origin *Rule // the message row that matched
	row    *Rule // the row whose template and severity apply
	id     string
	sev    detectors.Severity
	kind   incidentKind
	at     attrs
	f      detectors.Finding
	groups map[string]string
	// idx is the message row's submatch indexes; groups is left nil for
	// rows whose handler reads its groups with group.
	idx []int
}

// group returns the named group of the match: from groups when they were
// built, else read from the submatch indexes without building the map.
func (mt *match) group(name string) string {
	if mt.groups != nil {
		return mt.groups[name]
	}
	return groupOf(mt.origin.re, mt.rec.Message, mt.idx, name)
}

// fire turns a row's hit into findings. idx is the row's match on the message;
// causeGroups, for a Cause row, the groups its pattern found in the exception.
func (e *Engine) fire(r *Rule, rec *watcher.Record, idx []int, causeGroups map[string]string) []detectors.Finding {
	if r.handler == hAliases {
		// A good share of a healthy log: learn its aliases without building
		// a match.
		at := attribute(rec)
		e.learnFlow(at.source, at.target)
		if src, tgt, _, ok := splitFlow(groupOf(r.re, rec.Message, idx, "flow")); ok {
			e.learnFlow(src, tgt)
		}
		e.learnAlias(groupOf(r.re, rec.Message, idx, "source"))
		return nil
	}
	mt := &match{rec: rec, origin: r, row: r, id: r.ID, sev: r.Severity, kind: r.kind}
	mt.idx = idx
	if r.handler != hReplicating {
		// One line per task start in a real log, but frequent: it reads two
		// groups with group and needs no map.
		mt.groups = groupsOf(r.re, rec.Message, idx)
	}
	if r.Cause {
		mt.groups = causeGroups
	}
	mt.at = attribute(rec)
	e.learnFlow(mt.at.source, mt.at.target)
	if mt.at.hasTask && mt.at.source == "" {
		e.rememberedFlow(&mt.at)
	}

	switch r.handler {
	case hIncreased:
		return e.onIncreased(mt)
	case hTaskStart:
		return e.onTaskStart(mt)
	case hRefreshDone:
		return e.onRefreshDone(mt)
	case hMissing:
		return e.onMissing(mt)
	case hRebalance:
		return e.onRebalance(mt)
	case hTopicName:
		e.learnAlias(mt.groups["cluster"])
		return e.onTopicNames(mt, e.namesOf(mt))
	case hReplicating:
		return e.onReplicating(mt)
	}

	stackText := rec.Stack
	cause := rootCause(stackText)
	if r.requireCause && cause == "" {
		return nil
	}
	mt.f.Cause = cause
	if r.Carrier {
		for _, c := range e.causes {
			if _, ok := findInException(rec.Message, stackText, c.Prefilter); !ok {
				continue
			}
			g, ok := causeMatch(c, rec.Message, stackText)
			if !ok {
				continue
			}
			for k, v := range g {
				if mt.groups[k] == "" {
					mt.groups[k] = v
				}
			}
			mt.row, mt.id, mt.sev = c, c.ID, c.Severity
			if mt.kind == kindPlain && mt.at.hasTask {
				mt.kind = kindTask
			}
			break
		}
		if mt.row == r && r.handler == hScheduler {
			mt.id, mt.sev = jobRule(mt.groups["job"])
		}
	}
	if mt.row.Cause && mt.kind == kindPlain && mt.at.hasTask {
		mt.kind = kindTask
	}
	// Known false alarms and softer variants.
	quiet := mt.row.quietCause
	if mt.id == "internal-topic-failed" {
		quiet = "TopicExistsException"
	}
	if quiet != "" {
		if _, ok := findInException("", stackText, quiet); ok || strings.Contains(cause, quiet) {
			return nil
		}
	}
	if w := mt.row.warnCause; w != "" && strings.Contains(cause, w) {
		mt.sev = detectors.Warning
	}
	if r.handler == hAuthMap {
		return e.onAuthMap(mt)
	}
	e.fill(mt)
	return e.emit(mt, nil)
}

// causeMatch applies a Cause row's pattern to the message and the exception
// lines of the stack and returns the groups of the first match. Without a
// match it reports ok only for rows whose pattern is optional.
func causeMatch(c *Rule, msg string, stack []string) (map[string]string, bool) {
	if c.re == nil {
		return map[string]string{}, true
	}
	if idx := c.re.FindStringSubmatchIndex(msg); idx != nil {
		return groupsOf(c.re, msg, idx), true
	}
	for _, l := range stack {
		if isFrame(l) {
			continue
		}
		if idx := c.re.FindStringSubmatchIndex(l); idx != nil {
			return groupsOf(c.re, l, idx), true
		}
	}
	return map[string]string{}, c.optional
}

// jobRule maps the description of a failed MM2 Scheduler job to a rule.
func jobRule(job string) (string, detectors.Severity) {
	switch {
	case strings.Contains(job, "ACL"):
		return "acl-sync-failed", detectors.Warning
	case strings.Contains(job, "topic configs"):
		return "config-sync-failed", detectors.Warning
	case strings.Contains(job, "internal topic"), strings.Contains(job, "offset-syncs topic"):
		return "internal-topic-failed", detectors.Critical
	case strings.Contains(job, "consumer group"), strings.Contains(job, "group offset"),
		strings.Contains(job, "consumers group"), strings.Contains(job, "checkpoint"):
		return "checkpoint-failed", detectors.Warning
	}
	return "scheduled-job-failed", detectors.Warning
}

// identityGroup reports whether a named group fills an identity field; every
// other group becomes a value.
func identityGroup(name string) bool {
	switch name {
	case "topic", "source", "target", "flow", "cluster", "connector", "taskid", "task", "group", "partition", "tp", "client":
		return true
	}
	return false
}

// fill sets the finding's fields from the match's groups and attribution.
func (e *Engine) fill(mt *match) {
	g, a := mt.groups, &mt.at
	f := &mt.f
	if id := g["taskid"]; id != "" {
		var b attrs
		b.setTaskID(id)
		if b.hasTask && !a.hasTask {
			a.connector, a.task, a.hasTask = b.connector, b.task, true
		}
		a.setFlow(b.source, b.target)
	}
	if c := g["connector"]; c != "" {
		var b attrs
		b.setName(c)
		if a.connector == "" {
			a.connector = b.connector
		}
		a.setFlow(b.source, b.target)
	}
	if src, tgt, _, ok := splitFlow(g["flow"]); ok {
		a.setFlow(src, tgt)
	}
	if a.hasTask && a.source == "" {
		e.rememberedFlow(a)
	}
	f.Source, f.Target = a.source, a.target
	if g["source"] != "" && f.Source == "" {
		f.Source = g["source"]
	}
	if g["target"] != "" && f.Target == "" {
		f.Target = g["target"]
	}
	e.configuredFlow(f, a.connector)
	f.Connector = a.connector
	if a.hasTask {
		f.Task = detectors.TaskPtr(a.task)
	}
	f.Cluster = g["cluster"]
	f.Group = g["group"]
	f.Topic = g["topic"]
	if tp := g["tp"]; tp != "" {
		if t, p, ok := splitTopicPartition(tp); ok {
			if f.Topic == "" {
				f.Topic = t
			}
			f.Partitions = []int32{p}
		} else if f.Topic == "" {
			f.Topic = tp
		}
	}
	if p := g["partition"]; p != "" {
		if n, err := strconv.ParseInt(p, 10, 32); err == nil && n >= 0 {
			f.Partitions = []int32{int32(n)}
		}
	}
	for k, v := range g {
		if identityGroup(k) || v == "" {
			continue
		}
		if f.Values == nil {
			f.Values = make(map[string]any)
		}
		if n, err := strconv.Atoi(v); err == nil {
			f.Values[k] = n
		} else {
			f.Values[k] = v
		}
	}
	if f.Topic == "" && (mt.id == "worker-died" || mt.id == "authorization-failed") {
		// The herder's cause names the internal topic it could not use.
		f.Topic = topicInText(f.Cause)
	}
}

var (
	reAuthTopics = regexp.MustCompile(`Not authorized to access topics: \[([^\],]+)`)
	reQuoted     = regexp.MustCompile(`topic(?:\(s\))? '([^']+)'`)
)

// topicInText finds a topic named by a Kafka or Connect exception message.
func topicInText(s string) string {
	if s == "" {
		return ""
	}
	if m := reAuthTopics.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := reQuoted.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// emit folds mt's finding into the kept findings and returns the result,
// appended to out.
func (e *Engine) emit(mt *match, out []detectors.Finding) []detectors.Finding {
	f := &mt.f
	f.Rule, f.Severity = mt.id, mt.sev
	rec := mt.rec
	f.Count = 1
	f.FirstSeen, f.LastSeen = rec.Time, rec.Time
	text := rec.Text
	if text == "" {
		text = rec.Message
	}
	f.Evidence = &detectors.Evidence{File: rec.File, Line: rec.Line, Text: text}
	f.Hint = mt.row.Hint
	var topics []string
	if mt.row.topicList && f.Topic != "" {
		topics = []string{f.Topic}
		f.Topic = ""
	}
	ent := e.add(mt, topics)
	return append(out, copyFinding(&ent.f))
}

// add folds the finding of mt into an existing entry (same identity, or an
// open incident it belongs to) or makes a new one.
func (e *Engine) add(mt *match, topics []string) *entry {
	f := mt.f
	id := f.Identity()
	if ent, ok := e.byID[id]; ok {
		if ent.kind != kindPlain && !ent.recovered && mt.origin != ent.lastRow && within(f.LastSeen, ent.f.LastSeen) {
			// Another line of the same task or connector incident.
			e.foldLinked(ent, mt, topics)
		} else {
			e.foldRepeat(ent, mt, topics)
		}
		return ent
	}
	if ent := e.link(mt); ent != nil {
		e.foldLinked(ent, mt, topics)
		return ent
	}
	ent := &entry{f: f, row: mt.row, kind: mt.kind, lastRow: mt.origin}
	ent.addTopics(topics)
	ent.render()
	e.byID[id] = ent
	if ent.kind == kindTask {
		e.tasks = append(e.tasks, ent)
	}
	ent.rank = ent.f.Severity.Rank()
	ent.elem = e.lru[ent.rank].PushFront(ent)
	e.remember(ent)
	for e.tracked() > e.opts.MaxTracked {
		old := e.evictOne()
		old.evicted = true
		e.evicted++
		delete(e.byID, old.f.Identity())
		if old.kind == kindTask {
			e.dropTask(old)
		}
	}
	return ent
}

// foldRepeat folds a repeat of the same identity.
func (e *Engine) foldRepeat(ent *entry, mt *match, topics []string) {
	if ent.recovered {
		// A new episode after a recovery starts from its own severity.
		ent.f.Severity = mt.f.Severity
		ent.recovered = false
	}
	ent.f.Fold(mt.f)
	ent.lastRow = mt.origin
	ent.addTopics(topics)
	ent.render()
	e.touch(ent)
}

// foldLinked folds another line of the same incident into ent. The identity,
// the evidence and the summary's rule stay those of the first line; fields
// the first line lacked are kept in values; another line of a different kind
// does not count as a repeat.
func (e *Engine) foldLinked(ent *entry, mt *match, topics []string) {
	n := mt.f
	if ent.recovered {
		ent.f.Severity = n.Severity
		ent.recovered = false
	}
	if mt.origin == ent.lastRow {
		ent.f.Count++
	}
	if n.LastSeen.After(ent.f.LastSeen) {
		ent.f.LastSeen = n.LastSeen
	}
	if !n.FirstSeen.IsZero() && (ent.f.FirstSeen.IsZero() || n.FirstSeen.Before(ent.f.FirstSeen)) {
		ent.f.FirstSeen = n.FirstSeen
	}
	if n.Severity.Rank() > ent.f.Severity.Rank() {
		ent.f.Severity = n.Severity
	}
	if ent.f.Cause == "" {
		ent.f.Cause = n.Cause
	}
	if len(ent.f.Partitions) == 0 {
		ent.f.Partitions = n.Partitions
	}
	for k, v := range n.Values {
		if ent.f.Values == nil {
			ent.f.Values = make(map[string]any)
		}
		if _, ok := ent.f.Values[k]; !ok {
			ent.f.Values[k] = v
		}
	}
	if n.Topic != "" && n.Topic != ent.f.Topic {
		topics = append(topics, n.Topic)
	}
	ent.lastRow = mt.origin
	ent.addTopics(topics)
	ent.render()
	e.touch(ent)
}

// link finds an open incident that the finding of mt belongs to: seen within
// linkWindow, with no identity field that contradicts it, and either the same
// rule or the same dead task or connector.
func (e *Engine) link(mt *match) *entry {
	f := &mt.f
	for i := len(e.recent) - 1; i >= 0; i-- {
		ent := e.recent[i]
		if ent.evicted || ent.recovered {
			continue
		}
		if !within(f.LastSeen, ent.f.LastSeen) {
			continue
		}
		g := &ent.f
		sameTask := mt.kind == kindTask && ent.kind == kindTask && f.Task != nil && g.Task != nil && *f.Task == *g.Task && f.Connector == g.Connector
		sameConn := mt.kind == kindConnector && ent.kind == kindConnector && f.Connector != "" && f.Connector == g.Connector
		if g.Rule != f.Rule && !sameTask && !sameConn {
			continue
		}
		// Where the line comes from (flow, connector, task) may be known on
		// one line only; what it is about (topic, group, cluster) must agree,
		// except between the lines of one dead task or connector.
		if !fits(g.Source, f.Source) || !fits(g.Target, f.Target) || !fits(g.Connector, f.Connector) {
			continue
		}
		if sameTask || sameConn {
			if !fits(g.Cluster, f.Cluster) || !fits(g.Group, f.Group) {
				continue
			}
		} else if g.Topic != f.Topic || g.Group != f.Group || g.Cluster != f.Cluster {
			continue
		}
		if f.Task != nil && g.Task != nil && *f.Task != *g.Task {
			continue
		}
		return ent
	}
	return nil
}

func fits(a, b string) bool { return a == "" || b == "" || a == b }

// within reports whether two record times are at most linkWindow apart (or
// unknown).
func within(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return true
	}
	d := a.Sub(b)
	return d <= linkWindow && d >= -linkWindow
}

// remember keeps ent among the entries that may absorb linked lines.
func (e *Engine) remember(ent *entry) {
	const maxRecent = 64
	if len(e.recent) >= maxRecent {
		copy(e.recent, e.recent[1:])
		e.recent = e.recent[:maxRecent-1]
	}
	e.recent = append(e.recent, ent)
}

func (e *Engine) touch(ent *entry) {
	if ent.elem == nil {
		return
	}
	if r := ent.f.Severity.Rank(); r != ent.rank {
		// The finding's severity changed: it moves to its rank's list.
		e.lru[ent.rank].Remove(ent.elem)
		ent.rank = r
		ent.elem = e.lru[r].PushFront(ent)
		return
	}
	e.lru[ent.rank].MoveToFront(ent.elem)
}

// tracked is the number of findings kept.
func (e *Engine) tracked() int {
	n := 0
	for _, l := range e.lru {
		n += l.Len()
	}
	return n
}

// evictOne removes and returns the least recently seen entry of the lowest
// severity that has any.
func (e *Engine) evictOne() *entry {
	for _, l := range e.lru {
		if l.Len() > 0 {
			return l.Remove(l.Back()).(*entry)
		}
	}
	return nil
}

// Evicted returns how many findings were dropped because more than
// Options.MaxTracked distinct findings were seen (lowest severity, least
// recently seen first).
func (e *Engine) Evicted() int { return e.evicted }

// addTopics lists topics in Values["topics"], without duplicates, capped.
func (ent *entry) addTopics(topics []string) {
	for _, t := range topics {
		if t == "" || len(ent.topics) >= maxListed {
			continue
		}
		dup := false
		for _, have := range ent.topics {
			if have == t {
				dup = true
				break
			}
		}
		if !dup {
			ent.topics = append(ent.topics, t)
		}
	}
	if len(ent.topics) > 0 {
		if ent.f.Values == nil {
			ent.f.Values = make(map[string]any)
		}
		ent.f.Values["topics"] = append([]string(nil), ent.topics...)
	}
}

// render writes the entry's summary from its row's template.
func (ent *entry) render() {
	ent.f.Summary = renderSummary(ent.row.Summary, &ent.f, ent.topics)
	if ent.f.Hint == "" {
		ent.f.Hint = ent.row.Hint
	}
}

// resolve marks ent recovered and returns the Recovered observation.
func (e *Engine) resolve(ent *entry, rec *watcher.Record, out []detectors.Finding) []detectors.Finding {
	ent.recovered = true
	c := copyFinding(&ent.f)
	c.Recovered = true
	if !rec.Time.IsZero() {
		c.LastSeen = rec.Time
	}
	text := rec.Text
	if text == "" {
		text = rec.Message
	}
	c.Evidence = &detectors.Evidence{File: rec.File, Line: rec.Line, Text: text}
	return append(out, c)
}

// dropTask removes an evicted entry from e.tasks.
func (e *Engine) dropTask(ent *entry) {
	for i, t := range e.tasks {
		if t == ent {
			last := len(e.tasks) - 1
			e.tasks[i] = e.tasks[last]
			e.tasks[last] = nil
			e.tasks = e.tasks[:last]
			return
		}
	}
}

// notBefore reports whether a record at t may end a condition last seen at last.
func notBefore(t, last time.Time) bool { return t.IsZero() || last.IsZero() || !t.Before(last) }

// ── State signals ────────────────────────────────────────────────────────────

// onIncreased handles "Increased size of T to N partitions.": partitions were
// added, which ends partitions-not-created for T.
func (e *Engine) onIncreased(mt *match) []detectors.Finding {
	topic := mt.groups["topic"]
	var out []detectors.Finding
	for _, ent := range e.byID {
		if ent.f.Rule == "partitions-not-created" && ent.f.Topic == topic && !ent.recovered && notBefore(mt.rec.Time, ent.f.LastSeen) {
			out = e.resolve(ent, mt.rec, out)
		}
	}
	sortByIdentity(out)
	return append(out, e.onTopicNames(mt, []string{topic})...)
}

// onTaskStart handles a task being started again, which ends the task's
// failure findings.
func (e *Engine) onTaskStart(mt *match) []detectors.Finding {
	a := mt.at
	if id := mt.groups["taskid"]; id != "" {
		var b attrs
		b.setTaskID(id)
		if b.hasTask {
			a.connector, a.task, a.hasTask = b.connector, b.task, true
			a.setFlow(b.source, b.target)
		}
	}
	if !a.hasTask {
		return nil
	}
	if a.source == "" {
		e.rememberedFlow(&a)
	}
	return e.taskStarted(a, mt.rec)
}

func (e *Engine) taskStarted(a attrs, rec *watcher.Record) []detectors.Finding {
	var hits []*entry
	flows := map[string]bool{}
	for _, ent := range e.tasks {
		f := &ent.f
		if ent.recovered || f.Task == nil || *f.Task != a.task || f.Connector != a.connector {
			continue
		}
		if a.source != "" && !(fits(f.Source, a.source) && fits(f.Target, a.target)) {
			continue
		}
		if !notBefore(rec.Time, f.LastSeen) {
			continue
		}
		hits = append(hits, ent)
		flows[f.Source+"->"+f.Target] = true
	}
	if a.source == "" && len(flows) > 1 {
		return nil // several flows share this task name; do not guess
	}
	var out []detectors.Finding
	for _, ent := range hits {
		out = e.resolve(ent, rec, out)
	}
	sortByIdentity(out)
	return out
}

// onRefreshDone handles "refreshing topics took N ms": a refresh run that
// logged no "Found … missing" line found nothing missing.
func (e *Engine) onRefreshDone(mt *match) []detectors.Finding {
	var key string
	if mt.at.target != "" {
		key = mt.at.source + "->" + mt.at.target
	} else if len(e.flows) <= 1 && len(e.missing) == 1 {
		for k := range e.missing {
			key = k
		}
	}
	st := e.missing[key]
	if st == nil {
		return nil
	}
	if st.pending {
		st.pending = false
		return nil
	}
	return e.missingResolved(key, mt.rec)
}

func (e *Engine) missingResolved(key string, rec *watcher.Record) []detectors.Finding {
	delete(e.missing, key)
	var out []detectors.Finding
	for _, ent := range e.byID {
		if ent.f.Rule == "partitions-missing-on-target" && !ent.recovered && ent.f.Source+"->"+ent.f.Target == key {
			out = e.resolve(ent, rec, out)
		}
	}
	sortByIdentity(out)
	return out
}

// onMissing handles "Found … topic-partitions missing on B.": warning, critical
// when the same non-zero count repeats on consecutive refreshes; 0 resolves.
// A first sighting where every missing partition is new on the source is the
// normal course of a partition increase (MM2 creates them right after), so it
// only starts the streak.
func (e *Engine) onMissing(mt *match) []detectors.Finding {
	src, tgt := mt.groups["source"], mt.groups["target"]
	if src == "" {
		src = mt.at.source
	}
	e.learnAlias(src)
	e.learnAlias(tgt)
	if src != "" {
		e.learnFlow(src, tgt)
	}
	key := src + "->" + tgt
	n, _ := strconv.Atoi(mt.groups["missing_partitions"])
	if n == 0 {
		return e.missingResolved(key, mt.rec)
	}
	st := e.missing[key]
	if st == nil {
		st = &missingState{}
		e.missing[key] = st
	}
	st.pending = true
	if newN, err := strconv.Atoi(mt.groups["new_partitions"]); err == nil && n <= newN {
		// Every missing partition was just found: MM2 creates them next.
		st.last, st.streak = n, 1
		return nil
	}
	if st.last == n {
		st.streak++
	} else {
		st.last, st.streak = n, 1
	}
	if st.streak >= 2 {
		mt.sev = detectors.Critical
	}
	mt.at.source, mt.at.target = src, tgt
	mt.at.connector, mt.at.hasTask = "", false
	delete(mt.groups, "source")
	delete(mt.groups, "target")
	e.fill(mt)
	mt.f.Connector = ""
	if mt.f.Values == nil {
		mt.f.Values = make(map[string]any)
	}
	mt.f.Values["consecutive_refreshes"] = st.streak
	return e.emit(mt, nil)
}

// onRebalance counts "Rebalance started" per Connect group in a sliding
// window of record time.
func (e *Engine) onRebalance(mt *match) []detectors.Finding {
	t := mt.rec.Time
	if t.IsZero() {
		return nil
	}
	group := mt.groups["group"]
	key := group + "\x1f" + mt.at.source + "->" + mt.at.target
	times := e.rebalance[key]
	cut := t.Add(-e.opts.RebalanceWindow)
	k := 0
	for _, x := range times {
		if x.After(cut) {
			times[k] = x
			k++
		}
	}
	times = append(times[:k], t)
	if max := 4 * e.opts.RebalanceThreshold; len(times) > max {
		times = times[len(times)-max:]
	}
	e.rebalance[key] = times
	if len(times) < e.opts.RebalanceThreshold {
		return nil
	}
	e.fill(mt)
	mt.f.Connector, mt.f.Task = "", nil
	mt.f.Values = map[string]any{
		"rebalances":     len(times),
		"window_seconds": int(e.opts.RebalanceWindow / time.Second),
		"window":         e.opts.RebalanceWindow.String(),
	}
	return e.emit(mt, nil)
}

// onReplicating handles "task-thread-X-0 replicating N topic-partitions A->B:
// […]": the task runs (ends its failures), its flow is remembered for lines
// that do not carry it, and the topic names are checked for a loop.
func (e *Engine) onReplicating(mt *match) []detectors.Finding {
	src, tgt, _, _ := splitFlow(mt.group("flow"))
	e.learnFlow(src, tgt)
	a := attrs{}
	if name, _, ok := strings.Cut(mt.rec.Message, " "); ok {
		if rest, ok := strings.CutPrefix(name, "task-thread-"); ok {
			a.setTaskID(rest)
		}
	}
	if !a.hasTask {
		a = mt.at
	}
	var out []detectors.Finding
	if a.hasTask {
		a.setFlow(src, tgt)
		e.rememberTaskFlow(a.connector, a.task, src, tgt)
		out = e.taskStarted(a, mt.rec)
	}
	return append(out, e.onTopicNames(mt, e.namesOf(mt))...)
}

// namesOf returns the topic names a line lists: the topic group, or the
// "[t-0, t-1]" list after ": " with partition suffixes removed. A list in
// which no name has the two dots of a chained remote topic ("a.b.t") gives
// nil without being split, as no name in it can show a replication loop.
func (e *Engine) namesOf(mt *match) []string {
	if t := mt.group("topic"); t != "" {
		return []string{t}
	}
	msg := mt.rec.Message
	i := strings.Index(msg, ": ")
	if i < 0 {
		return nil
	}
	list := strings.TrimSpace(msg[i+2:])
	list = strings.TrimSuffix(list, ".")
	if strings.Count(list, ".") < 2 {
		return nil
	}
	list = strings.TrimPrefix(list, "[")
	list = strings.TrimSuffix(list, "]")
	var names []string
	for _, tp := range strings.Split(list, ",") {
		tp = strings.TrimSpace(tp)
		if t, _, ok := splitTopicPartition(tp); ok {
			tp = t
		}
		if tp != "" {
			names = append(names, tp)
		}
	}
	return names
}

// onTopicNames reports replication-loop for names that carry the same alias
// prefix twice or more: one finding per alias, listing the chained topics.
func (e *Engine) onTopicNames(mt *match, names []string) []detectors.Finding {
	var (
		byAlias map[string][]string
		order   []string
		depth   map[string]int
	)
	for _, n := range names {
		alias, d := e.loopAlias(n)
		if alias == "" {
			continue
		}
		if byAlias == nil {
			byAlias, depth = map[string][]string{}, map[string]int{}
		}
		if _, ok := byAlias[alias]; !ok {
			order = append(order, alias)
		}
		byAlias[alias] = append(byAlias[alias], n)
		if d > depth[alias] {
			depth[alias] = d
		}
	}
	var out []detectors.Finding
	for _, alias := range order {
		loop := *mt
		loop.id, loop.sev, loop.kind = "replication-loop", detectors.Critical, kindPlain
		loop.row = e.loopRow()
		loop.f = detectors.Finding{Cluster: alias, Values: map[string]any{"alias": alias, "prefix_repeats": depth[alias]}}
		if mt.at.source != "" {
			loop.f.Values["flow"] = mt.at.source + "->" + mt.at.target
		}
		if ent, ok := e.byID[loopIdentity(alias)]; ok {
			if d, _ := ent.f.Values["prefix_repeats"].(int); d > depth[alias] {
				loop.f.Values["prefix_repeats"] = d
			}
		}
		out = e.emit(&loop, out)
		ent := e.byID[loopIdentity(alias)]
		ent.addTopics(byAlias[alias])
		ent.render()
		out[len(out)-1] = copyFinding(&ent.f)
	}
	return out
}

func loopIdentity(alias string) string {
	f := detectors.Finding{Rule: "replication-loop", Cluster: alias}
	return f.Identity()
}

func (e *Engine) loopRow() *Rule {
	for i := range e.rows {
		if e.rows[i].ID == "replication-loop" {
			return &e.rows[i]
		}
	}
	panic("logrules: rule table has no replication-loop row")
}

// loopAlias returns the alias that the prefix of a topic name repeats, and how
// many times it occurs: "a.a.t" always counts; otherwise an alias learnt from
// the log must occur twice among the prefixes ("a.b.a.t").
func (e *Engine) loopAlias(name string) (string, int) {
	if strings.Count(name, ".") < 2 {
		return "", 0
	}
	segs := strings.Split(name, ".")
	if len(segs) < 3 {
		return "", 0
	}
	prefix := segs[:len(segs)-1]
	count := func(a string) int {
		n := 0
		for _, s := range prefix {
			if s == a {
				n++
			}
		}
		return n
	}
	if prefix[0] != "" && prefix[0] == prefix[1] {
		return prefix[0], count(prefix[0])
	}
	for _, s := range prefix {
		if _, ok := e.aliases[s]; ok {
			if n := count(s); n >= 2 {
				return s, n
			}
		}
	}
	return "", 0
}

// onAuthMap handles a client metadata error map
// "{t1=TOPIC_AUTHORIZATION_FAILED, t2=…}": one finding per topic.
func (e *Engine) onAuthMap(mt *match) []detectors.Finding {
	var out []detectors.Finding
	for _, m := range reAuthEntry.FindAllStringSubmatch(mt.rec.Message, 10) {
		one := *mt
		one.groups = map[string]string{"code": m[2] + "_AUTHORIZATION_FAILED"}
		switch m[2] {
		case "TOPIC":
			one.groups["topic"] = m[1]
		case "GROUP":
			one.groups["group"] = m[1]
		}
		one.f = detectors.Finding{Cause: mt.f.Cause}
		e.fill(&one)
		out = e.emit(&one, out)
	}
	if out == nil {
		e.fill(mt)
		out = e.emit(mt, nil)
	}
	return out
}

var reAuthEntry = regexp.MustCompile(`([A-Za-z0-9._\-]+)=(TOPIC|GROUP)_AUTHORIZATION_FAILED`)

// ── Flow memory ──────────────────────────────────────────────────────────────

const maxMemory = 1024

func (e *Engine) learnAlias(a string) {
	if a == "" {
		return
	}
	if _, ok := e.aliases[a]; !ok && validAlias(a) && len(e.aliases) < maxMemory {
		e.aliases[a] = struct{}{}
	}
}

func (e *Engine) learnFlow(src, tgt string) {
	if src == "" || tgt == "" {
		return
	}
	e.learnAlias(src)
	e.learnAlias(tgt)
	if _, ok := e.flows[src+"->"+tgt]; !ok && len(e.flows) < maxMemory {
		e.flows[src+"->"+tgt] = struct{}{}
	}
}

// rememberTaskFlow notes that task conn-n replicates for the flow src->tgt.
// A flow already noted costs no allocation.
func (e *Engine) rememberTaskFlow(conn string, n int, src, tgt string) {
	num := strconv.Itoa(n)
	for _, f := range e.taskFlows[conn+"-"+num] { // the key does not escape
		if len(f) == len(src)+2+len(tgt) && strings.HasPrefix(f, src) && strings.HasSuffix(f, tgt) && f[len(src):len(src)+2] == "->" {
			return
		}
	}
	if len(e.taskFlows) >= maxMemory {
		return
	}
	key := conn + "-" + num
	e.taskFlows[key] = append(e.taskFlows[key], src+"->"+tgt)
}

// rememberedFlow fills a's flow from the replicating lines of its task, when
// exactly one flow is known for that task name (dedicated mode names every
// flow's tasks alike).
func (e *Engine) rememberedFlow(a *attrs) {
	if !a.hasTask || a.connector == "" {
		return
	}
	flows := e.taskFlows[a.connector+"-"+strconv.Itoa(a.task)]
	if len(flows) != 1 {
		return
	}
	if src, tgt, _, ok := splitFlow(flows[0]); ok {
		a.setFlow(src, tgt)
	}
}

// ── Helpers ──────────────────────────────────────────────────────────────────

// groupsOf returns the non-empty named groups of a match; a name used twice
// (alternatives) takes the first non-empty capture.
func groupsOf(re *regexp.Regexp, s string, idx []int) map[string]string {
	g := map[string]string{}
	if re == nil || idx == nil {
		return g
	}
	for i, name := range re.SubexpNames() {
		if name == "" || 2*i+1 >= len(idx) || idx[2*i] < 0 {
			continue
		}
		if v := s[idx[2*i]:idx[2*i+1]]; v != "" && g[name] == "" {
			g[name] = v
		}
	}
	return g
}

// groupOf returns the first non-empty capture of the named group in a match,
// as groupsOf(re, s, idx)[name] does, without building the map.
func groupOf(re *regexp.Regexp, s string, idx []int, name string) string {
	if re == nil || idx == nil {
		return ""
	}
	for i, n := range re.SubexpNames() {
		if n != name || 2*i+1 >= len(idx) || idx[2*i] < 0 {
			continue
		}
		if v := s[idx[2*i]:idx[2*i+1]]; v != "" {
			return v
		}
	}
	return ""
}

// copyFinding returns a deep copy of f, so that later folds do not change
// findings already handed out.
func copyFinding(f *detectors.Finding) detectors.Finding {
	c := *f
	if f.Task != nil {
		c.Task = detectors.TaskPtr(*f.Task)
	}
	if f.Partitions != nil {
		c.Partitions = append([]int32(nil), f.Partitions...)
	}
	if f.Evidence != nil {
		ev := *f.Evidence
		c.Evidence = &ev
	}
	if f.Values != nil {
		c.Values = make(map[string]any, len(f.Values))
		for k, v := range f.Values {
			if s, ok := v.([]string); ok {
				v = append([]string(nil), s...)
			}
			c.Values[k] = v
		}
	}
	return c
}

func sortByIdentity(fs []detectors.Finding) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Identity() < fs[j].Identity() })
}
