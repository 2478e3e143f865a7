package parity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// maxLoopTopics caps the topic names a replication-loop finding lists.
const maxLoopTopics = 10

// maxChain bounds the walk along a topic name's alias chain; a Kafka topic
// name (at most 249 characters) cannot chain more aliases than this.
const maxChain = 128

// loopFinding looks for topics on the flow's target that came from the flow's
// source (the policy's TopicSource is the source alias, the way
// MirrorSourceConnector.refreshTopicPartitions lists remote topics) and whose
// name carries the same cluster alias twice or more along the policy's
// TopicSource/UpstreamTopic chain (`peer.peer.orders` with
// DefaultReplicationPolicy): the mark of a cycle that MM2's own cycle
// detection (MirrorSourceConnector.isCycle) did not stop, for example after a
// change of replication.policy.separator or a custom policy. Only aliases
// named in `clusters` count, so `v1.v1.events` is not a loop.
func loopFinding(f *mm2config.Flow, tgt *cluster.Snapshot, aliases []string) *detectors.Finding {
	var chained []string
	var repeated []string
	for name := range tgt.Topics {
		if !mayRepeat(name, aliases) || f.Policy.TopicSource(name) != f.Source {
			continue
		}
		if a := repeatedAlias(f.Policy, name, aliases); a != "" {
			chained = append(chained, name)
			if !contains(repeated, a) {
				repeated = append(repeated, a)
			}
		}
	}
	if len(chained) == 0 {
		return nil
	}
	sort.Strings(chained)
	sort.Strings(repeated)
	shown := chained
	if len(shown) > maxLoopTopics {
		shown = shown[:maxLoopTopics]
	}
	return &detectors.Finding{
		Rule: RuleReplicationLoop, Severity: detectors.Critical,
		Source: f.Source, Target: f.Target,
		Summary: fmt.Sprintf("Topics on %s chain the alias %s more than once (%s): records mirrored by %s are being replicated in a loop.",
			f.Target, strings.Join(repeated, ", "), strings.Join(shown, ", "), f),
		Values: map[string]any{"chained_topics": len(chained), "aliases": strings.Join(repeated, ",")},
		Hint:   "Exclude remote topics from the flow (topics.exclude), keep DefaultReplicationPolicy's cycle detection working (the same replication.policy.separator on every flow, no custom policy that hides the source), then delete the chained topics.",
	}
}

// repeatedAlias walks the policy's TopicSource/UpstreamTopic chain of name and
// returns the first alias of aliases seen twice, or "".
func repeatedAlias(p mm2config.ReplicationPolicy, name string, aliases []string) string {
	var seen [8]string // aliases seen so far; a longer chain spills to the heap
	chain := seen[:0]
	for range maxChain {
		src := p.TopicSource(name)
		if src == "" {
			return ""
		}
		if contains(aliases, src) {
			if contains(chain, src) {
				return src
			}
			chain = append(chain, src)
		}
		up := p.UpstreamTopic(name)
		if up == "" || up == name {
			return ""
		}
		name = up
	}
	return ""
}

// mayRepeat is a cheap, allocation-free prefilter for repeatedAlias: every
// policy this package models writes the aliases of a chain into the name, so
// a name in which no alias occurs twice cannot chain one twice.
func mayRepeat(name string, aliases []string) bool {
	for _, a := range aliases {
		if a != "" && strings.Count(name, a) >= 2 {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// identityLoops reports flows A->B and B->A that both keep topic names
// (IdentityReplicationPolicy, or a custom policy modelled as "{topic}") and
// whose filters both accept a topic that exists on A or B: MM2's cycle
// detection cannot work when names do not change (MM2-REFERENCE.md §4.3), so
// such a topic is copied back and forth forever. The finding goes to the
// scope of the flow whose source alias sorts first; a pair with both
// snapshots missing is not judged.
func identityLoops(cfg *mm2config.Config, snaps map[string]*cluster.Snapshot) map[string]detectors.Finding {
	out := map[string]detectors.Finding{}
	for _, f := range cfg.Flows {
		if !keepsNames(f.Policy) {
			continue
		}
		for _, g := range cfg.Flows {
			if g.Source != f.Target || g.Target != f.Source || !keepsNames(g.Policy) || f.Source > g.Source {
				continue
			}
			var both []string
			for _, pair := range [2][2]*mm2config.Flow{{f, g}, {g, f}} {
				there, back := pair[0], pair[1]
				snap := snaps[there.Source]
				if snap == nil {
					continue
				}
				for name := range snap.Topics {
					if there.ShouldReplicateTopic(name) && back.ShouldReplicateTopic(there.TargetTopic(name)) {
						both = append(both, name)
					}
				}
			}
			if len(both) == 0 {
				continue
			}
			sort.Strings(both)
			both = dedupSorted(both)
			shown := both
			if len(shown) > maxLoopTopics {
				shown = shown[:maxLoopTopics]
			}
			out[FlowScope(f.Source, f.Target)] = detectors.Finding{
				Rule: RuleReplicationLoop, Severity: detectors.Critical,
				Source: f.Source, Target: f.Target,
				Summary: fmt.Sprintf("%s and %s both keep topic names (IdentityReplicationPolicy) and both accept %s: these topics are copied back and forth in a loop.",
					f, g, strings.Join(shown, ", ")),
				Values: map[string]any{"overlapping_topics": len(both)},
				Hint:   fmt.Sprintf("Disable one direction (%s.enabled=false) or make the two flows' topic filters disjoint.", g),
			}
		}
	}
	return out
}

// keepsNames reports whether the policy leaves ordinary topic names
// unchanged, as IdentityReplicationPolicy does for every topic but
// heartbeats.
func keepsNames(p mm2config.ReplicationPolicy) bool {
	return p != nil && p.FormatRemoteTopic("a", "orders") == "orders"
}

func dedupSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
