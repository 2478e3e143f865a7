package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// witnessSamples are plain topic names tried against both filters besides
// the names derived from the filters themselves; they catch `.*` on both
// sides.
var witnessSamples = []string{"orders", "events", "topic", "a"}

// identityLoops reports each pair of enabled flows A->B and B->A that both
// keep topic names (IdentityReplicationPolicy) and whose topic filters both
// accept some topic.
//
// Whether two sets of Java regexes intersect is not decided in general.
// The check only reports an overlap it can show: a witness topic name that
// both flows would replicate (Flow.ShouldReplicateTopic, which applies the
// include and exclude lists, MM2's internal-topic rule and cycle detection).
// Witnesses are every literal entry of either include list, a name built
// from each regex entry (`orders.*` gives "orders", `pay\.[a-z]+` gives
// "pay.a"), and a few plain names that catch `.*` on both sides. So a
// finding is never a false alarm; filters that overlap only on names no
// witness reaches go unreported.
func (c *checker) identityLoops() {
	flows := c.cfg.Flows
	for i, ab := range flows {
		if !keepsNames(ab) {
			continue
		}
		for _, ba := range flows[i+1:] {
			if ba.Source != ab.Target || ba.Target != ab.Source || !keepsNames(ba) {
				continue
			}
			w := witness(ab, ba)
			if w == "" {
				continue
			}
			pol, _ := ab.Lookup("replication.policy.class")
			s := fromSetting(pol)
			inc1, inc2 := ab.Topics.Include, ba.Topics.Include
			f := detectors.Finding{Rule: RuleIdentityLoop, Severity: detectors.Critical, Source: ab.Source, Target: ab.Target, Topic: w,
				Summary: fmt.Sprintf("%s and %s both keep topic names (IdentityReplicationPolicy) and both replicate %q: MM2 cannot detect the cycle, so such topics are copied back and forth forever.", ab, ba, w),
				Hint:    fmt.Sprintf("Make the topic filters of %s, %s, and of %s, %s, disjoint, or disable one direction.", ab, filterRef(inc1), ba, filterRef(inc2)),
				Values: map[string]any{
					"witness_topic":         w,
					"topics_" + ab.String(): strings.Join(inc1.Entries, ", "),
					"topics_" + ba.String(): strings.Join(inc2.Entries, ", "),
				}}
			if inc1.Line > 0 {
				f.Values["topics_"+ab.String()+"_line"] = inc1.Line
			}
			if inc2.Line > 0 {
				f.Values["topics_"+ba.String()+"_line"] = inc2.Line
			}
			c.add(f, s, "disjoint topic filters")
		}
	}
}

func filterRef(l mm2config.FilterList) string {
	if l.Line > 0 {
		return fmt.Sprintf("%s (line %d)", l.Key, l.Line)
	}
	return l.Key + " (MM2's default .*)"
}

// keepsNames reports whether the flow's policy keeps source topic names.
func keepsNames(f *mm2config.Flow) bool {
	if _, ok := f.Policy.(*mm2config.IdentityPolicy); ok {
		return true
	}
	return f.Policy.FormatRemoteTopic(f.Source, "orders") == "orders"
}

// witness returns a topic name both flows replicate, or "".
func witness(a, b *mm2config.Flow) string {
	var cands []string
	for _, f := range []*mm2config.Flow{a, b} {
		for _, e := range f.Topics.Include.Entries {
			if w := sampleFor(e); w != "" {
				cands = append(cands, w)
			}
		}
	}
	cands = append(cands, witnessSamples...)
	for _, w := range cands {
		if a.Policy.IsHeartbeatsTopic(w) || b.Policy.IsHeartbeatsTopic(w) {
			continue // heartbeats get a prefix even under Identity
		}
		if a.ShouldReplicateTopic(w) && b.ShouldReplicateTopic(w) {
			return w
		}
	}
	return ""
}

// sampleFor builds one name a simple Java regex accepts: escapes become
// their character, `.` becomes "a", a character class its first member,
// quantifiers keep one repetition (`*` and `?` too, which a full match
// still accepts when the rest fits). It gives up ("") on groups and
// alternation. The result is only a candidate: callers test it.
func sampleFor(re string) string {
	var b strings.Builder
	literal := false
	rs := []rune(re)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\\':
			if i+1 >= len(rs) {
				return ""
			}
			i++
			switch rs[i] {
			case 'd':
				b.WriteByte('0')
			case 'w':
				b.WriteByte('a')
			case 's', 'S', 'W', 'D', 'b', 'B', 'Q', 'E':
				return ""
			default:
				b.WriteRune(rs[i])
				literal = true
			}
		case '.':
			b.WriteByte('a')
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '^' {
				return ""
			}
			if j < len(rs) && rs[j] == '\\' && j+1 < len(rs) {
				j++
			}
			if j >= len(rs) {
				return ""
			}
			b.WriteRune(rs[j])
			k := slices.Index(rs[j+1:], ']')
			if k < 0 {
				return ""
			}
			i = j + 1 + k
		case '*', '+', '?', '^', '$':
		case '{':
			k := slices.Index(rs[i:], '}')
			if k < 0 {
				return ""
			}
			i += k
		case '(', ')', '|':
			return ""
		default:
			b.WriteRune(r)
			literal = true
		}
	}
	if !literal {
		return "" // only wildcards: the plain samples do better
	}
	return b.String()
}
