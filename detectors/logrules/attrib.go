package logrules

import (
	"strconv"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// attrs is what a record says about where it comes from: the flow (source and
// target aliases), the connector and the task. Empty means unknown.
type attrs struct {
	source, target string
	connector      string
	task           int
	hasTask        bool
}

// setFlow fills the flow when it is still unknown.
func (a *attrs) setFlow(src, tgt string) {
	if a.source == "" && a.target == "" && src != "" && tgt != "" {
		a.source, a.target = src, tgt
	}
}

// setName fills connector (and flow) from a connector name that may carry a
// Connect-mode flow prefix, "legacy->platform.MirrorSourceConnector".
func (a *attrs) setName(name string) {
	if name == "" {
		return
	}
	src, tgt, rest, ok := splitFlow(name)
	if ok {
		a.setFlow(src, tgt)
		name = rest
	}
	if a.connector == "" && name != "" {
		a.connector = name
	}
}

// setTaskID fills connector, task (and flow) from a Connect task id,
// "MirrorSourceConnector-0" or "legacy->platform.MirrorSourceConnector-0".
func (a *attrs) setTaskID(id string) {
	name, n, ok := splitTaskID(id)
	if !ok {
		return
	}
	a.setName(name)
	if !a.hasTask && a.connector != "" {
		a.task, a.hasTask = n, true
	}
}

// attribute reads the flow, connector and task of rec from, in order of
// trust: the connector.context MDC, the message (task ids, herder and client
// prefixes) and the thread name.
func attribute(rec *watcher.Record) attrs {
	var a attrs
	// connector.context: "<name>|worker", "<name>|task-<n>", "<name>|task-<n>|offsets".
	if ctx := strings.TrimSpace(strings.Trim(rec.Context, "[] ")); ctx != "" {
		name, scope, _ := strings.Cut(ctx, "|")
		a.setName(name)
		if rest, ok := strings.CutPrefix(scope, "task-"); ok {
			rest, _, _ = strings.Cut(rest, "|")
			if n, err := strconv.Atoi(rest); err == nil && a.connector != "" {
				a.task, a.hasTask = n, true
			}
		}
	}
	msg := rec.Message
	// WorkerSourceTask{id=conn-0}, ExactlyOnceWorkerSourceTask{id=…}, WorkerSinkTask{id=…}.
	if i := strings.Index(msg, "Task{id="); i >= 0 {
		if id, _, ok := strings.Cut(msg[i+len("Task{id="):], "}"); ok {
			a.setTaskID(id)
		}
	}
	if i := strings.Index(msg, "WorkerConnector{id="); i >= 0 {
		if id, _, ok := strings.Cut(msg[i+len("WorkerConnector{id="):], "}"); ok {
			a.setName(id)
		}
	}
	// [Worker clientId=A->B, groupId=A-mm2]
	if i := strings.Index(msg, "[Worker clientId="); i >= 0 {
		id := msg[i+len("[Worker clientId="):]
		if j := strings.IndexAny(id, ",]"); j >= 0 {
			id = id[:j]
		}
		if src, tgt, _, ok := splitFlow(id); ok {
			a.setFlow(src, tgt)
		}
	}
	// [Producer clientId=…], [Consumer clientId=…], [AdminClient clientId=…]
	if i := strings.Index(msg, " clientId="); i >= 0 && i > 0 {
		id := msg[i+len(" clientId="):]
		if j := strings.IndexAny(id, ",]"); j >= 0 {
			id = id[:j]
		}
		a.clientID(id)
	}
	// "… replicating N topic-partitions A->B: […]" and "checkpointing N consumer groups A->B: …"
	for _, key := range []string{" topic-partitions ", " consumer groups "} {
		if i := strings.Index(msg, key); i >= 0 {
			f := msg[i+len(key):]
			if j := strings.Index(f, ": "); j >= 0 {
				if src, tgt, rest, ok := splitFlow(f[:j]); ok && rest == "" {
					a.setFlow(src, tgt)
				}
			}
		}
	}
	a.thread(rec.Thread)
	return a
}

// clientID reads a Kafka client id: "connector-producer-<conn>-<n>",
// "connector-consumer-…", "connector-adminclient-…", or MM2's own
// "A->B|<connector>|<role>".
func (a *attrs) clientID(id string) {
	for _, p := range []string{"connector-producer-", "connector-consumer-", "connector-adminclient-", "connector-dlq-producer-"} {
		if rest, ok := strings.CutPrefix(id, p); ok {
			a.setTaskID(rest)
			return
		}
	}
	if strings.Contains(id, "|") {
		// An optional user client.id may precede the flow: "[user|]A->B|Conn|role".
		parts := strings.Split(id, "|")
		for i, p := range parts {
			if src, tgt, rest, ok := splitFlow(p); ok && rest == "" {
				a.setFlow(src, tgt)
				if i+1 < len(parts) {
					a.setName(parts[i+1])
				}
				return
			}
		}
	}
}

// thread reads a thread name: "task-thread-<conn>-<n>", "Scheduler for
// <Class>: A->B|<conn>…", "kafka-producer-network-thread | <client id>".
func (a *attrs) thread(t string) {
	if t == "" {
		return
	}
	if rest, ok := strings.CutPrefix(t, "task-thread-"); ok {
		a.setTaskID(rest)
		return
	}
	if _, after, ok := strings.Cut(t, " | "); ok {
		a.clientID(strings.TrimSpace(after))
		return
	}
	if rest, ok := strings.CutPrefix(t, "Scheduler for "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			if src, tgt, name, ok := splitFlow(after); ok {
				a.setFlow(src, tgt)
				if j := strings.IndexAny(name, "-"); j > 0 && a.connector == "" {
					// "MirrorSourceConnector-refreshing topics" or "…Connector-0"
					a.connector = name[:j]
				} else {
					a.setName(name)
				}
			}
		}
	}
	// Herder threads ("DistributedHerder-<client id>-N") are not read: a
	// trailing counter cannot be told from an alias ending in "-N", and herder
	// lines carry "[Worker clientId=A->B, …]" anyway.
}

// splitFlow splits "A->B.rest" or "A->B|rest" or "A->B" into the aliases and
// the rest. Aliases cannot contain '.', '|', ',', '>' or spaces.
func splitFlow(s string) (src, tgt, rest string, ok bool) {
	i := strings.Index(s, "->")
	if i <= 0 {
		return "", "", "", false
	}
	src = s[:i]
	after := s[i+2:]
	j := strings.IndexAny(after, ".|,]: ")
	if j < 0 {
		tgt = after
	} else {
		tgt, rest = after[:j], after[j+1:]
	}
	if !validAlias(src) || !validAlias(tgt) {
		return "", "", "", false
	}
	return src, tgt, rest, true
}

func validAlias(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '.', '|', ',', '>', '[', ']', '{', '}', '(', ')', '\'', '"', ':', '=':
			return false
		}
	}
	return true
}

// splitTaskID splits "conn-3" into "conn" and 3.
func splitTaskID(id string) (name string, n int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || i == len(id)-1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}

// splitTopicPartition splits "orders-3" into "orders" and 3.
func splitTopicPartition(tp string) (topic string, p int32, ok bool) {
	i := strings.LastIndexByte(tp, '-')
	if i <= 0 || i == len(tp)-1 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(tp[i+1:], 10, 32)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return tp[:i], int32(n), true
}
