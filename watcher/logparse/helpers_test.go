package logparse

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// feedAll feeds text (split on '\n') to a new Assembler, flushes it, and
// returns the records and stats.
func feedAll(t testing.TB, opts Options, text string) ([]*watcher.Record, Stats) {
	t.Helper()
	a, err := NewAssembler("test.log", opts)
	if err != nil {
		t.Fatalf("NewAssembler: %v", err)
	}
	var recs []*watcher.Record
	emit := func(r *watcher.Record) { recs = append(recs, r) }
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		// Feed a copy that is scribbled over afterwards, to prove records do
		// not alias the caller's buffer.
		b := []byte(l)
		a.Feed(b, int64(i+1), emit)
		for j := range b {
			b[j] = 'X'
		}
	}
	a.Flush(emit)
	return recs, a.Stats()
}

// logBuffer returns a logger that writes text records to the returned buffer.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), &buf
}

// want is the part of a Record a table test checks; empty strings are
// checked too (they must be empty).
type want struct {
	level, ctx, logger, thread, msg string
	stack                           int
	line                            int64
	time                            string // RFC 3339 with milliseconds, "" = zero
}

func checkRecord(t *testing.T, r *watcher.Record, w want) {
	t.Helper()
	if r.Level != w.level || r.Context != w.ctx || r.Logger != w.logger || r.Thread != w.thread || r.Message != w.msg {
		t.Errorf("record line %d:\n got level=%q ctx=%q logger=%q thread=%q msg=%q\nwant level=%q ctx=%q logger=%q thread=%q msg=%q",
			r.Line, r.Level, r.Context, r.Logger, r.Thread, r.Message, w.level, w.ctx, w.logger, w.thread, w.msg)
	}
	if len(r.Stack) != w.stack {
		t.Errorf("record line %d: %d stack lines, want %d: %q", r.Line, len(r.Stack), w.stack, r.Stack)
	}
	if w.line != 0 && r.Line != w.line {
		t.Errorf("record Line = %d, want %d", r.Line, w.line)
	}
	got := ""
	if !r.Time.IsZero() {
		got = r.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	if got != w.time {
		t.Errorf("record line %d: time %q, want %q", r.Line, got, w.time)
	}
}
