package logparse

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// DefaultBatchRecords is the batch size of ScanReaderBatched when none is
// given, in records. At ~200 bytes a record, 256 records are ~50 KB of log:
// large enough that the hand-off between goroutines costs a few nanoseconds
// a record, small enough that batches stay in cache.
const DefaultBatchRecords = 256

// batchQueue is how many full batches may wait for the consumer.
const batchQueue = 8

// ScanFileBatched is ScanFile with parsing and consuming on two goroutines:
// the file is read and parsed on a goroutine of its own while emit runs on
// the caller's, and records are handed over in slices of up to batch records
// (DefaultBatchRecords when batch <= 0). On a machine with two or more cores
// the time of a scan is then about the larger of the parse time and the emit
// time, not their sum. See ScanReaderBatched for the contract.
func ScanFileBatched(ctx context.Context, path string, opts Options, batch int, emit func([]*watcher.Record) error) (Stats, error) {
	if path == "-" {
		return ScanReaderBatched(ctx, os.Stdin, "-", opts, batch, emit)
	}
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, fmt.Errorf("opening log file: %w", err)
	}
	defer f.Close()
	return ScanReaderBatched(ctx, f, path, opts, batch, emit)
}

// ScanReaderBatched is ScanReader with parsing and consuming on two
// goroutines. emit is called on the caller's goroutine, never concurrently
// with itself, with the records in file order, in slices of at most batch
// records (DefaultBatchRecords when batch <= 0); the last slice may be
// shorter. The slice is reused after emit returns, so emit must not keep it;
// the records it points to are not reused and may be kept.
//
// At most a few batches are parsed ahead of emit, so memory stays bounded
// when emit is slower than the parser. The first error from emit stops the
// parser and is returned, wrapped with the file name; otherwise the error is
// that of ScanReader (reading, or ctx.Err()). The Stats are those of the
// parser when it stopped. The parsing goroutine has ended when
// ScanReaderBatched returns.
func ScanReaderBatched(ctx context.Context, r io.Reader, name string, opts Options, batch int, emit func([]*watcher.Record) error) (Stats, error) {
	if batch <= 0 {
		batch = DefaultBatchRecords
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	full := make(chan []*watcher.Record, batchQueue)
	free := make(chan []*watcher.Record, batchQueue+2)
	var (
		stats   Stats
		scanErr error
	)
	go func() {
		defer close(full)
		cur := make([]*watcher.Record, 0, batch)
		send := func() error {
			select {
			case full <- cur:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case cur = <-free:
			default:
				cur = make([]*watcher.Record, 0, batch)
			}
			return nil
		}
		stats, scanErr = ScanReader(ctx, r, name, opts, func(rec *watcher.Record) error {
			cur = append(cur, rec)
			if len(cur) < batch {
				return nil
			}
			return send()
		})
		// The last batch goes out after a read error too (ScanReader emits
		// what it read before a truncated gzip); not once ctx is done.
		if len(cur) > 0 && ctx.Err() == nil {
			if err := send(); err != nil && scanErr == nil {
				scanErr = fmt.Errorf("scanning %s: %w", name, err)
			}
		}
	}()

	var emitErr error
	for b := range full {
		if emitErr == nil {
			if emitErr = emit(b); emitErr != nil {
				cancel() // stop the parser; keep draining so it can exit
			}
		}
		clear(b) // drop the references so recycled slices keep nothing alive
		select {
		case free <- b[:0]:
		default:
		}
	}
	// full is closed: the parser has returned and stats and scanErr are set.
	if emitErr != nil {
		return stats, fmt.Errorf("scanning %s: %w", name, emitErr)
	}
	return stats, scanErr
}
