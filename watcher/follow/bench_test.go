package follow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nxadm/tail"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
)

const benchLines = 100_000

// benchFile writes benchLines MM2-like lines (one WARN record with a stack
// trace every 50 lines) and returns its path.
func benchFile(b *testing.B) (path string, records int) {
	b.Helper()
	var sb strings.Builder
	for i := 0; i < benchLines; {
		if i%50 == 49 && i+3 <= benchLines {
			sb.WriteString(warnLine + "\nCaused by: " + cause + "\n" + frame + "\n")
			i += 3
		} else {
			fmt.Fprintf(&sb, "[2026-10-30 18:18:56,123] INFO [MirrorSourceConnector|task-0] WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets for %d acknowledged messages (org.apache.kafka.connect.runtime.WorkerSourceTask:%d)\n", i, i%500)
			i++
		}
		records++
	}
	path = filepath.Join(b.TempDir(), "connect.log")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, records
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBareTail reads the file with nxadm/tail in follow mode, from the
// start, until every line has been seen: the baseline.
func BenchmarkBareTail(b *testing.B) {
	path, _ := benchFile(b)
	b.ResetTimer()
	start := cpuTime()
	for range b.N {
		tl, err := tail.TailFile(path, tail.Config{Follow: true, ReOpen: true, CompleteLines: true,
			Logger: tail.DiscardingLogger})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range tl.Lines {
			if n++; n == benchLines {
				break
			}
		}
		tl.Stop()
		tl.Cleanup()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFollow reads the same file through Run (reader, Assembler,
// metrics, channel send) until every record has arrived, with the native
// engine.
func BenchmarkFollow(b *testing.B) { benchmarkFollow(b, EngineNative) }

// BenchmarkFollowTailEngine is BenchmarkFollow with the nxadm/tail engine.
func BenchmarkFollowTailEngine(b *testing.B) { benchmarkFollow(b, EngineTail) }

func benchmarkFollow(b *testing.B, engine string) {
	path, records := benchFile(b)
	b.ResetTimer()
	start := cpuTime()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan *watcher.Record, 1024)
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, Options{Globs: []string{path}, FromStart: true, Engine: engine,
				Parse: logparse.Options{Layout: logparse.LayoutKafka}}, out)
		}()
		// The last record is sent by the quiet-period flush or at cancel:
		// count up to the one before it.
		for n := 0; n < records-1; n++ {
			<-out
		}
		cancel()
		for {
			select {
			case <-out:
				continue
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
			}
			break
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
