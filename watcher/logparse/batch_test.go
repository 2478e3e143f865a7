package logparse

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// TestBatchedMatchesScanReader: the batched scan hands over exactly the
// records of ScanReader, in order, in batches of the asked size, with the
// same stats, for plain and gzip input and for batch sizes that do and do not
// divide the record count.
func TestBatchedMatchesScanReader(t *testing.T) {
	data := genLog(1 << 20)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	want, wantStats := scanAll(t, bytes.NewReader(data), Options{})
	if len(want) < 1000 {
		t.Fatalf("only %d records generated", len(want))
	}
	for _, in := range []struct {
		name string
		b    []byte
	}{{"plain", data}, {"gzip", gz.Bytes()}} {
		for _, size := range []int{0, 1, 7, 256, len(want), len(want) + 1} {
			var got []*watcher.Record
			calls, short := 0, 0
			st, err := ScanReaderBatched(context.Background(), bytes.NewReader(in.b), "in.log", Options{}, size, func(recs []*watcher.Record) error {
				calls++
				limit := size
				if limit <= 0 {
					limit = DefaultBatchRecords
				}
				if len(recs) == 0 || len(recs) > limit {
					t.Fatalf("%s/%d: batch of %d records", in.name, size, len(recs))
				}
				if len(recs) < limit {
					short++
				}
				got = append(got, recs...)
				return nil
			})
			if err != nil {
				t.Fatalf("%s/%d: %v", in.name, size, err)
			}
			if short > 1 {
				t.Errorf("%s/%d: %d short batches, want at most the last", in.name, size, short)
			}
			if st != wantStats {
				t.Errorf("%s/%d: stats %+v, want %+v", in.name, size, st, wantStats)
			}
			if len(got) != len(want) {
				t.Fatalf("%s/%d: %d records in %d batches, want %d", in.name, size, len(got), calls, len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s/%d: record %d differs:\n got %+v\nwant %+v", in.name, size, i, got[i], want[i])
				}
			}
		}
	}
}

// TestBatchedRecordsOutliveTheirBatch: records kept from a batch are intact
// after the parser has gone on (the slice is reused, the records are not).
func TestBatchedRecordsOutliveTheirBatch(t *testing.T) {
	data := genLog(512 << 10)
	want, _ := scanAll(t, bytes.NewReader(data), Options{})
	var kept []*watcher.Record
	var lastBatch []*watcher.Record
	_, err := ScanReaderBatched(context.Background(), bytes.NewReader(data), "in.log", Options{}, 3, func(recs []*watcher.Record) error {
		kept = append(kept, recs[0])
		lastBatch = recs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range kept {
		if !reflect.DeepEqual(r, want[3*i]) {
			t.Fatalf("kept record %d changed: %+v", i, r)
		}
	}
	for _, r := range lastBatch[:cap(lastBatch)][len(lastBatch):] {
		if r != nil {
			t.Fatalf("a returned batch slice still references a record beyond its length")
		}
	}
}

// TestBatchedErrors: an emit error stops the parser and is returned wrapped
// with the file name; a cancelled context and a missing file are reported.
func TestBatchedErrors(t *testing.T) {
	data := genLog(4 << 20)
	stop := errors.New("stop")
	calls := 0
	st, err := ScanReaderBatched(context.Background(), bytes.NewReader(data), "x.log", Options{}, 16, func([]*watcher.Record) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), "x.log") || calls != 2 {
		t.Errorf("emit error: %v after %d calls", err, calls)
	}
	// The parser stopped early: at most the batches queued ahead of the
	// failing one, plus the ones between context checks, were parsed.
	all, _ := scanAll(t, bytes.NewReader(data), Options{})
	if st.Records >= int64(len(all)) {
		t.Errorf("parser did not stop: %d of %d records", st.Records, len(all))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ScanReaderBatched(ctx, bytes.NewReader(data), "x.log", Options{}, 0, func([]*watcher.Record) error { return nil }); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "x.log") {
		t.Errorf("cancelled: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "nope.log")
	if _, err := ScanFileBatched(context.Background(), missing, Options{}, 0, nil); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
}

// TestScanFileBatched reads a real file.
func TestScanFileBatched(t *testing.T) {
	data := genLog(256 << 10)
	path := filepath.Join(t.TempDir(), "connect.log")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want, _ := scanAll(t, bytes.NewReader(data), Options{})
	n := 0
	st, err := ScanFileBatched(context.Background(), path, Options{}, 0, func(recs []*watcher.Record) error {
		for _, r := range recs {
			if r.File != path || r.Message != want[n].Message {
				t.Fatalf("record %d: file %q message %q", n, r.File, r.Message)
			}
			n++
		}
		return nil
	})
	if err != nil || n != len(want) || st.Records != int64(n) {
		t.Fatalf("ScanFileBatched: %v, %d records (stats %d), want %d", err, n, st.Records, len(want))
	}
}
