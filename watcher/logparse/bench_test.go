package logparse

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// genLog writes about size bytes of MM2-like log in the Apache Kafka default
// layout: mostly INFO lines from the MM2 and Connect classes, some WARN, and
// an ERROR with a stack trace now and then. The output is deterministic.
func genLog(size int) []byte {
	rnd := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	ms := 0
	for b.Len() < size {
		ms += rnd.IntN(50)
		ts := fmt.Sprintf("[2026-10-30 %02d:%02d:%02d,%03d]", 18+ms/3600000%6, ms/60000%60, ms/1000%60, ms%1000)
		task := rnd.IntN(8)
		switch k := rnd.IntN(100); {
		case k < 40:
			fmt.Fprintf(&b, "%s INFO [MirrorSourceConnector|task-%d|offsets] WorkerSourceTask{id=MirrorSourceConnector-%d} Committing offsets for %d acknowledged messages (org.apache.kafka.connect.runtime.WorkerSourceTask:233)\n", ts, task, task, rnd.IntN(100000))
		case k < 60:
			fmt.Fprintf(&b, "%s INFO [MirrorCheckpointConnector|task-0] refreshing consumer groups took %d ms (org.apache.kafka.connect.mirror.Scheduler:95)\n", ts, rnd.IntN(500))
		case k < 75:
			fmt.Fprintf(&b, "%s INFO [Producer clientId=A->B|MirrorSourceConnector-%d|offset-syncs-source-producer] Node %d disconnected. (org.apache.kafka.clients.NetworkClient:1032)\n", ts, task, rnd.IntN(6))
		case k < 85:
			fmt.Fprintf(&b, "%s INFO [Worker clientId=A->B, groupId=A-mm2] Rebalance started (org.apache.kafka.connect.runtime.distributed.WorkerCoordinator:242)\n", ts)
		case k < 95:
			fmt.Fprintf(&b, "%s WARN [MirrorSourceConnector|task-%d] [Producer clientId=connector-producer-MirrorSourceConnector-%d] Got error produce response with correlation id %d on topic-partition B.orders-%d, retrying (2147483646 attempts left). Error: NOT_LEADER_OR_FOLLOWER (org.apache.kafka.clients.producer.internals.Sender:657)\n", ts, task, task, rnd.IntN(1e6), rnd.IntN(12))
		default:
			fmt.Fprintf(&b, "%s WARN [MirrorSourceConnector|worker] Could not create topic-partitions for B.orders. (org.apache.kafka.connect.mirror.MirrorSourceConnector:412)\n", ts)
			b.WriteString("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS\n")
			for i := 0; i < 12; i++ {
				fmt.Fprintf(&b, "\tat org.apache.kafka.connect.mirror.MirrorSourceConnector.createNewPartitions(MirrorSourceConnector.java:%d) ~[connect-mirror-4.1.0.jar:?]\n", 400+i)
			}
			b.WriteString("Caused by: org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support CREATE_PARTITIONS\n\t... 12 more\n")
		}
	}
	return b.Bytes()
}

func BenchmarkAssembler(b *testing.B) {
	data := genLog(8 << 20)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	records := 0
	emit := func(*watcher.Record) { records++ }
	for b.Loop() {
		a, err := NewAssembler("bench.log", Options{})
		if err != nil {
			b.Fatal(err)
		}
		for i, l := range lines {
			a.Feed(l, int64(i+1), emit)
		}
		a.Flush(emit)
	}
	b.ReportMetric(float64(records)/float64(b.N), "records/op")
}

func BenchmarkScan(b *testing.B) {
	data := genLog(8 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ScanReader(context.Background(), bytes.NewReader(data), "bench.log", Options{}, func(*watcher.Record) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanFile scans the file named by LOGPARSE_BENCH_FILE (skipped
// when unset), to measure a real or large log:
//
//	LOGPARSE_BENCH_FILE=/var/log/connect.log go test -run ^$ -bench ScanFile -benchtime 1x
func BenchmarkScanFile(b *testing.B) {
	path := os.Getenv("LOGPARSE_BENCH_FILE")
	if path == "" {
		b.Skip("LOGPARSE_BENCH_FILE not set")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		st, err := ScanFile(context.Background(), path, Options{}, func(*watcher.Record) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Records), "records/op")
	}
}
