// Command scanbench runs the work of "mm2-watchdog scan FILE" without the
// report: it parses the log with logparse and hands every record to one
// logrules.Engine, then asks for the findings. It exists so that the scan hot
// path can be measured (and profiled) on its own, even while the command's
// flags or output change.
//
// Usage:
//
//	go run ./bench/scanbench [-pipeline [-batch N]] [-cpuprofile FILE] LOG
//
// With -pipeline, parsing and rule matching run on two goroutines with
// records handed over in batches (logparse.ScanFileBatched); without it, on
// one, as the scan command does today. It prints lines, records, findings
// and the wall time to standard error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/detectors/logrules"
	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
)

func main() {
	pipeline := flag.Bool("pipeline", false, "parse and match on two goroutines, records handed over in batches")
	batch := flag.Int("batch", logparse.DefaultBatchRecords, "records per batch with -pipeline")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: scanbench [-pipeline [-batch N]] [-cpuprofile FILE] LOG")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scanbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "scanbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(flag.Arg(0), *pipeline, *batch); err != nil {
		fmt.Fprintln(os.Stderr, "scanbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(path string, pipeline bool, batch int) error {
	start := time.Now()
	ctx := context.Background()
	engine := logrules.New(logrules.Options{})
	var (
		st  logparse.Stats
		err error
	)
	if pipeline {
		st, err = logparse.ScanFileBatched(ctx, path, logparse.Options{}, batch, func(recs []*watcher.Record) error {
			for _, rec := range recs {
				engine.Observe(rec)
			}
			return nil
		})
	} else {
		st, err = logparse.ScanFile(ctx, path, logparse.Options{}, func(rec *watcher.Record) error {
			engine.Observe(rec)
			return nil
		})
	}
	if err != nil {
		return err
	}
	findings := engine.Findings()
	fmt.Fprintf(os.Stderr, "scanned %d lines (%d records); %d finding(s) in %s\n",
		st.Lines, st.Records, len(findings), time.Since(start).Round(time.Millisecond))
	return nil
}
