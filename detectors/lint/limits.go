package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// Limits says which features a cluster lacks. The zero value is a full
// Apache Kafka cluster.
type Limits struct {
	NoCreatePartitions        bool // CreatePartitions (API key 37)
	NoIncrementalAlterConfigs bool // IncrementalAlterConfigs (44)
	NoIdempotence             bool // InitProducerId (22): no idempotent or transactional producer
	NoACLs                    bool // DescribeAcls (29) / CreateAcls (30)
	NoCompression             bool // compressed record batches (not visible in ApiVersions)
	// Basis says how the limits were decided, for people: "strict profile
	// (target of kafka->vast)", "--limited", "--kafka", "probe: lacks
	// CreatePartitions, ...".
	Basis string
}

// Limited reports whether the cluster lacks any feature.
func (l Limits) Limited() bool {
	return l.NoCreatePartitions || l.NoIncrementalAlterConfigs || l.NoIdempotence || l.NoACLs || l.NoCompression
}

// LimitedBroker is a Kafka-compatible broker without CreatePartitions,
// IncrementalAlterConfigs, idempotence, transactions, ACLs and compression
// (for example VAST Event Broker).
func LimitedBroker(basis string) Limits {
	return Limits{true, true, true, true, true, basis}
}

// FullKafka is an Apache Kafka cluster with every feature.
func FullKafka(basis string) Limits { return Limits{Basis: basis} }

// ProbeKeys are the API keys a probe looks for, with the feature each one
// stands for.
var probeKeys = []struct {
	key  kmsg.Key
	name string
}{
	{kmsg.CreatePartitions, "CreatePartitions"},
	{kmsg.IncrementalAlterConfigs, "IncrementalAlterConfigs"},
	{kmsg.InitProducerID, "InitProducerId"},
	{kmsg.DescribeACLs, "DescribeAcls"},
}

// LimitsFromSnapshot decides a cluster's limits from the ApiVersions every
// broker advertises (Snapshot.Supports): CreatePartitions (37),
// IncrementalAlterConfigs (44), InitProducerId (22) and DescribeAcls (29).
// Compression cannot be seen in ApiVersions; a cluster that lacks any of the
// four keys is taken not to support it either (the limited brokers this
// tool is written for lack all of them), one that has all four is taken to
// support it. ok is false when a key's support is unknown (some broker's
// ApiVersions failed); the caller then falls back to flags or the profile.
func LimitsFromSnapshot(s *cluster.Snapshot) (Limits, bool) {
	var lacks []string
	missing := map[kmsg.Key]bool{}
	for _, pk := range probeKeys {
		sup, known := s.Supports(pk.key)
		if !known {
			return Limits{}, false
		}
		if !sup {
			missing[pk.key] = true
			lacks = append(lacks, pk.name)
		}
	}
	l := Limits{
		NoCreatePartitions:        missing[kmsg.CreatePartitions],
		NoIncrementalAlterConfigs: missing[kmsg.IncrementalAlterConfigs],
		NoIdempotence:             missing[kmsg.InitProducerID],
		NoACLs:                    missing[kmsg.DescribeACLs],
		NoCompression:             len(lacks) > 0,
	}
	if len(lacks) == 0 {
		l.Basis = "probe: advertises CreatePartitions, IncrementalAlterConfigs, InitProducerId and DescribeAcls"
	} else {
		l.Basis = "probe: lacks " + strings.Join(lacks, ", ") + " (compression assumed unsupported too)"
	}
	return l, true
}

// resolveLimits returns the limits of every alias in cfg.Clusters:
// opts.Limits first, then a usable probe snapshot, then full Kafka when
// opts.OthersFull, else the profile:
//
//   - when the file itself pins some aliases' producers the way a limited
//     broker needs (`<alias>.producer.enable.idempotence = false` and
//     `<alias>.producer.compression.type = none`, both), those aliases are
//     limited and every other alias is Kafka;
//   - otherwise the strict profile: an alias is limited when it is the
//     target of an enabled flow.
func resolveLimits(cfg *mm2config.Config, opts Options) map[string]Limits {
	declared := declaredLimited(cfg)
	out := make(map[string]Limits, len(cfg.Clusters))
	for _, a := range cfg.Clusters {
		if l, ok := opts.Limits[a]; ok {
			out[a] = l
			continue
		}
		if s := opts.Snapshots[a]; s != nil {
			if l, ok := LimitsFromSnapshot(s); ok {
				out[a] = l
				continue
			}
		}
		switch {
		case opts.OthersFull:
			out[a] = FullKafka("not named as limited")
		case len(declared) > 0 && slices.Contains(declared, a):
			out[a] = LimitedBroker(fmt.Sprintf("profile: the file sets %s.producer.enable.idempotence=false and %s.producer.compression.type=none", a, a))
		case len(declared) > 0:
			out[a] = FullKafka(fmt.Sprintf("profile: the file pins only %s as limited", strings.Join(declared, ", ")))
		default:
			var into []string
			for _, f := range cfg.Flows {
				if f.Target == a {
					into = append(into, f.String())
				}
			}
			if len(into) > 0 {
				out[a] = LimitedBroker(fmt.Sprintf("strict profile: target of %s", strings.Join(into, ", ")))
			} else {
				out[a] = FullKafka("strict profile: no enabled flow writes to it")
			}
		}
	}
	return out
}

// declaredLimited returns the aliases whose producers the file pins to no
// idempotence and no compression.
func declaredLimited(cfg *mm2config.Config) []string {
	var out []string
	for _, a := range cfg.Clusters {
		idem, _, ok1 := cfg.Value(a + ".producer.enable.idempotence")
		comp, _, ok2 := cfg.Value(a + ".producer.compression.type")
		if ok1 && ok2 && strings.EqualFold(strings.TrimSpace(idem), "false") && strings.EqualFold(strings.TrimSpace(comp), "none") {
			out = append(out, a)
		}
	}
	return out
}

// Profile returns the limits Check uses for every alias of cfg with opts,
// so that a caller can show them.
func Profile(cfg *mm2config.Config, opts Options) map[string]Limits {
	return resolveLimits(cfg, opts)
}
