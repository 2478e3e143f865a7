package logparse

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// readBufferSize is the read buffer of ScanReader, in bytes. Lines longer
// than it are gathered in a second buffer up to the raw line cap.
const readBufferSize = 64 << 10

// ctxCheckLines is how often, in lines, ScanReader checks its context.
const ctxCheckLines = 4096

// ScanFile reads the log file at path from the start and emits its records
// in order: a plain file, a gzip file (recognised by its magic bytes, not by
// its name), or "-" for standard input. It stops at the first error from
// emit, from reading, or when ctx is done, and returns that error wrapped
// with the file name, together with the stats so far.
func ScanFile(ctx context.Context, path string, opts Options, emit func(*watcher.Record) error) (Stats, error) {
	if path == "-" {
		return ScanReader(ctx, os.Stdin, "-", opts, emit)
	}
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, fmt.Errorf("opening log file: %w", err)
	}
	defer f.Close()
	return ScanReader(ctx, f, path, opts, emit)
}

// ScanReader reads r to its end as the log file named name (used in
// Record.File and in errors) and emits its records in order. Input starting
// with the gzip magic bytes is decompressed. Lines are read through a
// bounded buffer: the part of a line beyond twice Options.MaxLineBytes plus
// 4 KiB (room for an envelope) is discarded unread into memory and counted
// in Stats.DiscardedBytes, so a 50 MB line costs no more memory than a long
// one. The returned error wraps the first error from emit, from reading, or
// ctx.Err(), and names the file. On a read error (a truncated or corrupt
// gzip file, an I/O error) the records read before it are emitted first.
func ScanReader(ctx context.Context, r io.Reader, name string, opts Options, emit func(*watcher.Record) error) (Stats, error) {
	a, err := NewAssembler(name, opts)
	if err != nil {
		return Stats{}, fmt.Errorf("scanning %s: %w", name, err)
	}
	br := bufio.NewReaderSize(r, readBufferSize)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return a.Stats(), fmt.Errorf("reading %s: gzip header: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, readBufferSize)
	}
	var emitErr error
	em := func(rec *watcher.Record) {
		if emitErr == nil {
			emitErr = emit(rec)
		}
	}
	rawCap := 2*a.opts.MaxLineBytes + 4096
	var long []byte
	var lineNo int64
	for {
		if lineNo%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return a.Stats(), fmt.Errorf("scanning %s: %w", name, err)
			}
		}
		chunk, rerr := br.ReadSlice('\n')
		line, cut := chunk, false
		if errors.Is(rerr, bufio.ErrBufferFull) {
			// A line longer than the read buffer: keep up to rawCap bytes of
			// it, discard the rest as it streams past.
			long = append(long[:0], chunk...)
			for errors.Is(rerr, bufio.ErrBufferFull) {
				chunk, rerr = br.ReadSlice('\n')
				if room := rawCap - len(long); room > 0 {
					long = append(long, chunk[:min(room, len(chunk))]...)
					if len(chunk) > room {
						a.stats.DiscardedBytes += int64(len(chunk) - room)
						cut = true
					}
				} else {
					a.stats.DiscardedBytes += int64(len(chunk))
					cut = true
				}
			}
			line = long
		}
		if len(line) > 0 {
			lineNo++
			if line[len(line)-1] == '\n' {
				line = line[:len(line)-1]
			}
			a.feed(line, lineNo, cut, em)
			if emitErr != nil {
				return a.Stats(), fmt.Errorf("scanning %s: %w", name, emitErr)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			// A truncated or corrupt file (a gzip cut short): emit what was
			// read before the error, then report it.
			a.Flush(em)
			if emitErr != nil {
				return a.Stats(), fmt.Errorf("scanning %s: %w", name, emitErr)
			}
			return a.Stats(), fmt.Errorf("reading %s: %w", name, rerr)
		}
	}
	a.Flush(em)
	if emitErr != nil {
		return a.Stats(), fmt.Errorf("scanning %s: %w", name, emitErr)
	}
	return a.Stats(), nil
}
