package lint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// precreate compares, for every enabled flow into a cluster without
// CreatePartitions whose two ends were probed, each source topic the flow
// replicates with its target topic: missing, or fewer partitions (MM2 can
// never add them, MM2-REFERENCE.md §1.2 and §1.5). For a target that
// lacks any feature it also reports source topic configs in
// RejectedTopicConfigs that MM2 would copy into CreateTopics (§1.3): set
// explicitly on the source and not excluded by config.properties.exclude.
// A topic whose metadata failed on either side is skipped: unknown is not
// missing.
func (c *checker) precreate() {
	rejected := c.opts.RejectedTopicConfigs
	if rejected == nil {
		rejected = DefaultRejectedTopicConfigs()
	}
	for _, f := range c.cfg.Flows {
		src, tgt := c.opts.Snapshots[f.Source], c.opts.Snapshots[f.Target]
		tl := c.limits[f.Target]
		if src == nil || tgt == nil || !tl.Limited() {
			continue
		}
		var exclude []string
		if st, ok := f.Lookup("config.properties.exclude"); ok {
			exclude = mm2config.ParseList(st.Value)
		}
		excludeRe, _, _ := mm2config.CompileJava(exclude, 0)
		for _, name := range src.TopicNames() {
			st := src.Topics[name]
			if st.Err != nil || st.Internal || !f.ShouldReplicateTopic(name) || f.Policy.IsHeartbeatsTopic(name) {
				continue
			}
			tname := f.TargetTopic(name)
			tt, exists := tgt.Topics[tname]
			if exists && tt.Err != nil {
				if !errors.Is(tt.Err, kerr.UnknownTopicOrPartition) {
					continue // unknown, not missing
				}
				exists = false
			}
			var bad []string // rejected configs MM2 would copy into CreateTopics
			if !exists && st.Configs != nil {
				for _, k := range slices.Sorted(maps.Keys(rejected)) {
					v, ok := st.Configs[k]
					if !ok || strings.TrimSpace(v) == rejected[k] || (excludeRe != nil && excluded(excludeRe, k)) {
						continue
					}
					bad = append(bad, k+"="+v)
				}
			}
			fd := detectors.Finding{Rule: RulePrecreate, Severity: detectors.Critical, Source: f.Source, Target: f.Target, Topic: tname,
				Values: map[string]any{"source_topic": name, "source_partitions": st.Partitions}}
			switch {
			case tl.NoCreatePartitions && !exists:
				fd.Summary = fmt.Sprintf("Target topic %s does not exist on %s, which cannot add partitions later: create it before MM2 starts, with at least the %d partitions of %s on %s.", tname, f.Target, st.Partitions, name, f.Source)
				fd.Hint = fmt.Sprintf("Create %s on %s with %d or more partitions (head-room for growth) and the topic configs you want.", tname, f.Target, st.Partitions)
				fd.Values["want"] = fmt.Sprintf(">= %d partitions", st.Partitions)
			case tl.NoCreatePartitions && exists && tt.Err == nil && tt.Partitions < st.Partitions:
				for p := tt.Partitions; p < st.Partitions; p++ {
					fd.Partitions = append(fd.Partitions, int32(p))
				}
				fd.Summary = fmt.Sprintf("%s has %d partitions on %s but %s has only %d on %s, which cannot add partitions: records of partitions %d..%d cannot be mirrored and their task blocks.", name, st.Partitions, f.Source, tname, tt.Partitions, f.Target, tt.Partitions, st.Partitions-1)
				fd.Hint = fmt.Sprintf("Recreate %s on %s with at least %d partitions before MM2 starts.", tname, f.Target, st.Partitions)
				fd.Values["target_partitions"] = tt.Partitions
				fd.Values["want"] = fmt.Sprintf(">= %d partitions", st.Partitions)
			case len(bad) > 0:
				fd.Summary = fmt.Sprintf("MM2 would create %s on %s with %s copied from %s on %s, which %s rejects: the topic would not be created at all.", tname, f.Target, strings.Join(bad, ", "), name, f.Source, f.Target)
				fd.Hint = fmt.Sprintf("Pre-create %s on %s, or add the configs to config.properties.exclude.", tname, f.Target)
				fd.Values["want"] = "exclude " + strings.Join(bad, ", ")
			default:
				continue
			}
			if len(bad) > 0 {
				fd.Values["rejected_configs"] = bad
				if tl.NoCreatePartitions {
					fd.Summary += fmt.Sprintf(" If MM2 creates it, it copies %s from the source, which %s rejects.", strings.Join(bad, ", "), f.Target)
				}
			}
			c.out = append(c.out, fd)
		}
	}
}

// excluded reports whether config.properties.exclude matches the config name;
// a match that timed out counts as not excluded, as in the filters.
func excluded(p *mm2config.JavaPattern, name string) bool {
	ok, err := p.MatchString(name)
	return ok && err == nil
}
