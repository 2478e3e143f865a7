// Command kfakeserve starts two in-process Kafka-protocol clusters (kfake)
// for benchmarks of the cluster checks: a source with -topics topics of
// -partitions partitions each (a few records per partition), and a target
// holding the same topics under IdentityReplicationPolicy names, one in ten
// with fewer partitions. It writes an MM2 properties file for the flow
// src->tgt to -props, prints "ready" and serves until SIGINT/SIGTERM.
//
// Usage: go run ./bench/kfakeserve -topics 10000 -props /tmp/mm2.properties
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	topics := flag.Int("topics", 1000, "topics per cluster")
	partitions := flag.Int("partitions", 10, "partitions per source topic")
	records := flag.Int("records", 2, "records produced into each source partition of the first 1000 topics")
	props := flag.String("props", "mm2.properties", "where to write the MM2 properties file")
	flag.Parse()

	names := make([]string, *topics)
	for i := range names {
		names[i] = fmt.Sprintf("topic-%05d", i)
	}
	var short, full []string
	for i, n := range names {
		if i%10 == 0 {
			short = append(short, n)
		} else {
			full = append(full, n)
		}
	}
	src, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ClusterID("src"), kfake.SeedTopics(int32(*partitions), names...))
	check(err)
	defer src.Close()
	tgtOpts := []kfake.Opt{kfake.NumBrokers(3), kfake.ClusterID("tgt"), kfake.SeedTopics(int32(*partitions), full...)}
	if len(short) > 0 {
		tgtOpts = append(tgtOpts, kfake.SeedTopics(int32(max(*partitions/2, 1)), short...))
	}
	tgt, err := kfake.NewCluster(tgtOpts...)
	check(err)
	defer tgt.Close()

	if *records > 0 {
		cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		check(err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		var recs []*kgo.Record
		for _, n := range names[:min(len(names), 1000)] {
			for p := 0; p < *partitions; p++ {
				for range *records {
					recs = append(recs, &kgo.Record{Topic: n, Partition: int32(p), Value: []byte("x")})
				}
			}
		}
		check(cl.ProduceSync(ctx, recs...).FirstErr())
		cancel()
		cl.Close()
	}

	text := fmt.Sprintf(`clusters = src, tgt
src.bootstrap.servers = %s
tgt.bootstrap.servers = %s
src->tgt.enabled = true
tgt->src.enabled = false
emit.heartbeats.enabled = false
emit.checkpoints.enabled = false
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
`, strings.Join(src.ListenAddrs(), ","), strings.Join(tgt.ListenAddrs(), ","))
	check(os.WriteFile(*props, []byte(text), 0o644))
	fmt.Println("ready")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakeserve:", err)
		os.Exit(1)
	}
}
