// Command loggen writes a large MM2-like worker log for benchmarks: the
// Apache Kafka default layout, mostly healthy INFO chatter (offset commits,
// scheduler timings, rebalances, producer/consumer config dumps) with a small
// share of real failure records (WARN/ERROR with stack traces) taken from
// MM2's templates.
//
// Usage: go run ./bench/loggen -size 1GiB -o /tmp/mm2-1g.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

var healthy = []string{
	"[%s] INFO [MirrorSourceConnector|task-%d|offsets] WorkerSourceTask{id=MirrorSourceConnector-%d} Committing offsets for %d acknowledged messages (org.apache.kafka.connect.runtime.WorkerSourceTask:233)",
	"[%s] INFO [MirrorHeartbeatConnector|task-%d|offsets] WorkerSourceTask{id=MirrorHeartbeatConnector-%d} Committing offsets for %d acknowledged messages (org.apache.kafka.connect.runtime.WorkerSourceTask:233)",
	"[%s] INFO [MirrorSourceConnector|worker] refreshing known target topics took %d ms (org.apache.kafka.connect.mirror.Scheduler:%d)",
	"[%s] INFO [MirrorCheckpointConnector|task-%d] task-thread-MirrorCheckpointConnector-%d checkpointing %d consumer groups kafka->vast: [billing, search]. (org.apache.kafka.connect.mirror.MirrorCheckpointTask:%d)",
	"[%s] INFO [Worker clientId=kafka->vast, groupId=kafka-mm2] Successfully synced group in generation Generation{generationId=%d, memberId='kafka->vast-5c1e', protocol='sessioned'} (org.apache.kafka.connect.runtime.distributed.WorkerCoordinator:%d)",
	"[%s] INFO [Producer clientId=connector-producer-MirrorSourceConnector-%d] Resetting the last seen epoch of partition orders-%d to %d since the associated topicId changed (org.apache.kafka.clients.Metadata:%d)",
	"[%s] DEBUG [Consumer clientId=kafka->vast|MirrorSourceConnector|replication-consumer, groupId=null] Fetch READ_UNCOMMITTED at offset %d for partition clicks-%d returned fetch data (org.apache.kafka.clients.consumer.internals.AbstractFetch:%d)",
	"[%s] INFO [MirrorSourceConnector|task-%d] task-thread-MirrorSourceConnector-%d replicating %d topic-partitions kafka->vast: [orders-0, orders-1, orders-2, clicks-0]. (org.apache.kafka.connect.mirror.MirrorSourceTask:%d)",
}

var configDump = []string{
	"\tacks = -1",
	"\tbatch.size = 16384",
	"\tbootstrap.servers = [broker-vip-1:9092, broker-vip-2:9092]",
	"\tcompression.type = none",
	"\tenable.idempotence = false",
	"\tmax.block.ms = 9223372036854775807",
}

var failures = []string{
	"[%s] WARN [MirrorSourceConnector|worker] Could not create topic-partitions for orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:%d)\n" +
		"org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS",
	"[%s] INFO [MirrorSourceConnector|worker] Found 0 new topic-partitions on kafka. Found 0 deleted topic-partitions on kafka. Found %d topic-partitions missing on vast. (org.apache.kafka.connect.mirror.MirrorSourceConnector:%d)",
	"[%s] ERROR [MirrorSourceConnector|task-%d] WorkerSourceTask{id=MirrorSourceConnector-%d} failed to send record to orders:  (org.apache.kafka.connect.runtime.AbstractWorkerSourceTask:%d)\n" +
		"org.apache.kafka.common.errors.TimeoutException: Partition 4 of topic orders with partition count 3 is not present in metadata after 60000 ms.",
}

func main() {
	sizeFlag := flag.String("size", "1GiB", "approximate output size (e.g. 100MiB, 1GiB)")
	out := flag.String("o", "", "output file (default stdout)")
	failEvery := flag.Int("fail-every", 20000, "one failure record every N records (0 = none)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	size, err := parseSize(*sizeFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loggen:", err)
		os.Exit(2)
	}
	w := os.Stdout
	if *out != "" {
		if w, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, "loggen:", err)
			os.Exit(2)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewPCG(*seed, 2))
	t := time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)
	var written int64
	for n := 0; written < size; n++ {
		t = t.Add(time.Duration(r.IntN(50)) * time.Millisecond)
		ts := t.Format("2006-01-02 15:04:05,000")
		var line string
		switch {
		case *failEvery > 0 && n%*failEvery == *failEvery-1:
			tmpl := failures[r.IntN(len(failures))]
			line = fmt.Sprintf(tmpl, fillArgs(ts, strings.Count(tmpl, "%d"), r)...) +
				"\n\tat org.apache.kafka.connect.mirror.MirrorSourceConnector.lambda$createNewPartitions$1(MirrorSourceConnector.java:598)" +
				"\n\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)"
		case n%500 == 0:
			line = fmt.Sprintf("[%s] INFO ProducerConfig values: (org.apache.kafka.clients.producer.ProducerConfig:%d)\n%s", ts, 370, strings.Join(configDump, "\n"))
		default:
			tmpl := healthy[r.IntN(len(healthy))]
			line = fmt.Sprintf(tmpl, fillArgs(ts, strings.Count(tmpl, "%d"), r)...)
		}
		k, err := bw.WriteString(line + "\n")
		if err != nil {
			fmt.Fprintln(os.Stderr, "loggen:", err)
			os.Exit(1)
		}
		written += int64(k)
	}
	if err := bw.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "loggen:", err)
		os.Exit(1)
	}
	if w != os.Stdout {
		_ = w.Close()
	}
}

func fillArgs(ts string, n int, r *rand.Rand) []any {
	args := []any{ts}
	for range n {
		args = append(args, r.IntN(5000))
	}
	return args
}

// parseSize reads sizes like 1GiB, 512MiB, 1000000.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if strings.HasSuffix(s, u.suf) {
			mult, s = u.m, strings.TrimSuffix(s, u.suf)
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
