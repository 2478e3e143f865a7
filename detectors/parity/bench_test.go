package parity

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/mm2-watchdog/mm2-watchdog/internal/kafkatest"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/cluster"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// BenchmarkCheck measures one round of Check over n source topics of 10
// partitions, every 100th of them short of a partition on the target, with
// the Checker's state warm (the daemon's steady state).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("memory/topics=%d", n), func(b *testing.B) {
			cfg := memConfig(b, "")
			src, tgt := memLarge(n, 10)
			benchCheck(b, cfg, src, tgt, n/100)
		})
	}
	b.Run("kfake/topics=1000", func(b *testing.B) {
		names := make([]string, 1000)
		for i := range names {
			names[i] = fmt.Sprintf("topic-%05d", i)
		}
		src := kafkatest.New(b, "kafka", kfake.SeedTopics(10, names...))
		targets := make([]string, len(names))
		for i, n := range names {
			targets[i] = "kafka." + n
		}
		tgt := kafkatest.New(b, "vast", kfake.SeedTopics(10, targets[1:]...), kfake.SeedTopics(9, targets[0]))
		cfg := kafkatest.ParseConfig(b, kafkatest.PairConfig(src, tgt))
		start := time.Now()
		r := takeRound(b, cfg, t0, src, tgt)
		if len(r.Failures) > 0 {
			b.Fatalf("snapshots failed: %v", r.Failures)
		}
		snapshots := time.Since(start)
		benchCheck(b, cfg, r.Snapshots["kafka"], r.Snapshots["vast"], 1)
		b.ReportMetric(float64(snapshots.Microseconds())/2000, "ms/snapshot")
	})
}

func benchCheck(b *testing.B, cfg *mm2config.Config, src, tgt *cluster.Snapshot, wantUnmirrored int) {
	b.Helper()
	r := Round{Config: cfg, Snapshots: map[string]*cluster.Snapshot{"kafka": src, "vast": tgt}, Now: t0}
	c := New(Options{})
	ctx := context.Background()
	res := c.Check(ctx, r, nil) // warm the state
	if got := len(byRule(res, flowScope, RuleUnmirrored)); got != wantUnmirrored {
		b.Fatalf("%d unmirrored findings, want %d", got, wantUnmirrored)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Now = t0.Add(time.Duration(i+1) * time.Minute)
		c.Check(ctx, r, nil)
	}
}
