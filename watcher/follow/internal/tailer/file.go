package tailer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	// readBufferSize is the size of the one read buffer each followed file
	// owns. Together with the line cap it bounds the memory a file can take,
	// whatever the length of its lines.
	readBufferSize = 64 << 10
	// fingerprintLen is how many of the last bytes read are remembered to
	// notice a truncation that was refilled past the old size before we
	// looked (copytruncate under a fast writer). It spans more than one
	// MM2 line, so it holds a timestamp and a message, not only the
	// "(logger:line)" ending that many lines share.
	fingerprintLen = 256
	// skipScanLimit is the largest file whose lines are counted when
	// following starts at its end, so that line numbers stay absolute.
	// Larger files are entered near their end and numbered from there.
	skipScanLimit = 64 << 20
)

// Rotation kinds, the values of the kind label of
// mm2_watchdog_log_rotations_total.
const (
	// KindRename is a new file at the followed path: log4j 1
	// DailyRollingFileAppender (connect.log → connect.log.YYYY-MM-DD-HH),
	// log4j2 RollingFile (connect.log → connect-YYYY-MM-DD-HH.log), delete
	// and recreate, or a Kubernetes symlink pointed at a new file.
	KindRename = "rename"
	// KindTruncate is the same file cut back in place (logrotate
	// copytruncate).
	KindTruncate = "truncate"
)

// Sink receives the lines of one followed file, always from the one goroutine
// that follows that file.
type Sink interface {
	// Line is called once per physical line, without its line break (a
	// trailing "\r" is removed too). line is only valid during the call.
	// lineNo is 1-based and starts again at 1 in a new file. truncated
	// reports that the line was longer than the cap and was cut.
	Line(line []byte, lineNo int64, truncated bool)
	// Pending reports whether the sink holds lines that a later line might
	// still extend (a multi-line record not yet emitted).
	Pending() bool
	// Flush emits whatever the sink holds. It is called after a quiet
	// period, when the file is replaced or truncated, and at shutdown.
	Flush()
}

// FileMetrics are the per-file instruments, already bound to the file label.
// Zero fields are allowed and skipped.
type FileMetrics struct {
	// Lines counts physical lines read.
	Lines prometheus.Counter
	// TruncatedLines counts physical lines cut at the line cap.
	TruncatedLines prometheus.Counter
	// Waiting is 1 while the path does not exist or cannot be opened.
	Waiting prometheus.Gauge
	// Renames counts new files found at the path.
	Renames prometheus.Counter
	// Truncations counts in-place truncations noticed.
	Truncations prometheus.Counter
}

func inc(c prometheus.Counter) {
	if c != nil {
		c.Inc()
	}
}

// fileTail follows one path. It is not safe for concurrent use: one goroutine
// owns it.
type fileTail struct {
	path    string
	maxLine int
	log     *slog.Logger
	m       FileMetrics

	// startAtEnd is true until the first successful open, when following
	// should begin at the end of a file that already existed.
	startAtEnd bool

	f      *os.File
	ident  os.FileInfo // identity of f, for os.SameFile against the path
	rd     *bufio.Reader
	off    int64 // bytes of f consumed: the offset of the next unread byte
	lineNo int64

	// The physical line being assembled across reads: at most maxLine bytes
	// are kept; partialLen counts all of them.
	partial      []byte
	partialLen   int64
	partialTrunc bool
	// discard drops lines instead of handing them to the sink (used while
	// skipping to the end); dropFirst drops the first, partial line after
	// entering a large file in the middle.
	discard   bool
	dropFirst bool

	fp    [fingerprintLen]byte // the last bytes consumed
	fpLen int
	fpBuf [fingerprintLen]byte

	waiting  bool
	lastErr  string // last open/stat problem logged, to log only changes
	statErr  string
	readLine bool // a line reached the sink since the last reset
}

func newFileTail(path string, maxLine int, startAtEnd bool, log *slog.Logger, m FileMetrics) *fileTail {
	return &fileTail{
		path:       path,
		maxLine:    maxLine,
		startAtEnd: startAtEnd,
		log:        log,
		m:          m,
		rd:         bufio.NewReaderSize(nil, readBufferSize),
		waiting:    true,
	}
}

// poll brings the file up to date: opens it if needed, notices a truncation,
// reads every complete line, and moves to a new file found at the path after
// reading the old one to its end. It never fails: problems are logged, shown
// in the waiting gauge, and retried at the next poll.
func (t *fileTail) poll(s Sink) {
	// A new file found at the path is read at once: its writer may already
	// be done with it and send no further event.
	for range 4 {
		if t.f == nil && !t.open(s) {
			return
		}
		if t.checkTruncated(s) {
			t.restart(s, KindTruncate)
		}
		if t.f == nil || !t.read(s) {
			return
		}
		if !t.checkReplaced(s) {
			return
		}
	}
}

// open opens the path. It reports whether a file is now open.
func (t *fileTail) open(s Sink) bool {
	f, err := os.Open(t.path)
	if err == nil {
		var fi os.FileInfo
		fi, err = f.Stat()
		if err == nil && fi.IsDir() {
			err = fmt.Errorf("%s is a directory", t.path)
		}
		if err != nil {
			f.Close()
		} else {
			t.f, t.ident = f, fi
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// A file that appears later is new: read it whole.
			t.startAtEnd = false
		}
		t.setWaiting(err)
		return false
	}
	t.setWaiting(nil)
	t.rd.Reset(t.f)
	t.off, t.lineNo, t.fpLen = 0, 0, 0
	if t.startAtEnd {
		t.startAtEnd = false
		t.skipToEnd(s, t.ident.Size())
	}
	return true
}

// skipToEnd consumes the file up to its current end without handing lines to
// the sink, so that following starts with the next line written. A last line
// without its line break is kept and handed over whole once it is complete.
func (t *fileTail) skipToEnd(s Sink, size int64) {
	if size > skipScanLimit {
		start := size - readBufferSize
		if _, err := t.f.Seek(start, io.SeekStart); err == nil {
			t.rd.Reset(t.f)
			t.off = start
			t.dropFirst = true
			t.log.Info("log file is large; starting near its end, line numbers count from there",
				"size_bytes", size)
		}
	}
	t.discard = true
	t.read(s)
	t.discard, t.dropFirst = false, false
}

// read hands every complete line up to the end of the file to the sink. It
// reports false when the read failed and the file was closed.
func (t *fileTail) read(s Sink) bool {
	for {
		b, err := t.rd.ReadSlice('\n')
		if len(b) > 0 {
			t.off += int64(len(b))
			t.remember(b)
		}
		switch err {
		case nil:
			t.complete(s, b[:len(b)-1])
		case bufio.ErrBufferFull:
			t.appendPartial(b)
		case io.EOF:
			t.appendPartial(b)
			return true
		default:
			t.log.Warn("reading log file failed; reopening it", "err", err)
			t.closeFile(s)
			return false
		}
	}
}

// complete ends the physical line whose last piece is b.
func (t *fileTail) complete(s Sink, b []byte) {
	if t.partialLen > 0 || t.partialTrunc {
		t.appendPartial(b)
		b = t.partial
	}
	trunc := t.partialTrunc
	if len(b) > t.maxLine {
		b, trunc = b[:t.maxLine], true
	}
	b = bytes.TrimSuffix(b, []byte{'\r'})
	t.partial, t.partialLen, t.partialTrunc = t.partial[:0], 0, false
	if t.dropFirst {
		t.dropFirst = false
		return
	}
	t.lineNo++
	if t.discard {
		return
	}
	inc(t.m.Lines)
	if trunc {
		inc(t.m.TruncatedLines)
	}
	t.readLine = true
	s.Line(b, t.lineNo, trunc)
}

// appendPartial keeps b as part of the current physical line, up to the cap.
func (t *fileTail) appendPartial(b []byte) {
	if len(b) == 0 {
		return
	}
	t.partialLen += int64(len(b))
	room := t.maxLine - len(t.partial)
	if room < len(b) {
		if room > 0 {
			t.partial = append(t.partial, b[:room]...)
		}
		t.partialTrunc = true
		return
	}
	t.partial = append(t.partial, b...)
}

// remember keeps the last fingerprintLen bytes consumed.
func (t *fileTail) remember(b []byte) {
	if len(b) >= fingerprintLen {
		copy(t.fp[:], b[len(b)-fingerprintLen:])
		t.fpLen = fingerprintLen
		return
	}
	if over := t.fpLen + len(b) - fingerprintLen; over > 0 {
		copy(t.fp[:], t.fp[over:t.fpLen])
		t.fpLen -= over
	}
	t.fpLen += copy(t.fp[t.fpLen:], b)
}

// checkTruncated reports whether the open file was cut back in place: it is
// now shorter than what was read, or the bytes just before the read offset
// changed (it was cut and refilled past the old size before this look).
func (t *fileTail) checkTruncated(s Sink) bool {
	fi, err := t.f.Stat()
	if err != nil {
		t.log.Warn("stat of open log file failed; reopening it", "err", err)
		t.closeFile(s)
		return false
	}
	if fi.Size() < t.off {
		return true
	}
	if t.fpLen == 0 {
		return false
	}
	n, err := t.f.ReadAt(t.fpBuf[:t.fpLen], t.off-int64(t.fpLen))
	return n == t.fpLen && err == nil && !bytes.Equal(t.fpBuf[:n], t.fp[:t.fpLen]) ||
		n < t.fpLen // shrank between the stat and the read
}

// checkReplaced moves to a new file found at the path, after the old one has
// been read to its end. A path that is gone (renamed, not yet recreated)
// keeps the old file open: a writer may still be appending to it. It reports
// whether it moved to another file.
func (t *fileTail) checkReplaced(s Sink) bool {
	fi, err := os.Stat(t.path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && err.Error() != t.statErr {
			t.log.Warn("cannot stat log file path; still reading the open file", "err", err)
		}
		t.statErr = err.Error()
		return false
	}
	t.statErr = ""
	if os.SameFile(fi, t.ident) {
		return false
	}
	t.restart(s, KindRename)
	return true
}

// restart finishes the current file and starts again at offset 0: of the
// same file after a truncation, of the file now at the path after a rename.
func (t *fileTail) restart(s Sink, kind string) {
	if kind == KindRename {
		// Whatever the writer put into the old file before it closed it.
		if !t.read(s) {
			return
		}
	}
	t.endOfFile(s)
	if kind == KindTruncate {
		inc(t.m.Truncations)
		t.log.Info("log file was truncated; reading it again from the start", "read_bytes", t.off)
		if _, err := t.f.Seek(0, io.SeekStart); err != nil {
			t.log.Warn("seek after truncation failed; reopening", "err", err)
			t.closeFile(s)
			return
		}
		t.rd.Reset(t.f)
		t.off, t.lineNo, t.fpLen = 0, 0, 0
		return
	}
	inc(t.m.Renames)
	t.log.Info("log file was replaced (rotated); following the new file", "read_bytes", t.off)
	t.f.Close()
	t.f = nil
	t.open(s)
}

// endOfFile hands over a last line that never got its line break and flushes
// the sink: nothing more will be appended to what it holds.
func (t *fileTail) endOfFile(s Sink) {
	if t.partialLen > 0 || t.partialTrunc {
		t.complete(s, nil)
	}
	s.Flush()
}

// closeFile closes the open file, flushing what it produced.
func (t *fileTail) closeFile(s Sink) {
	if t.f == nil {
		return
	}
	t.endOfFile(s)
	t.f.Close()
	t.f = nil
}

// close releases the file without handing over an incomplete last line.
func (t *fileTail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// setWaiting records whether the path could be opened, logging changes only.
func (t *fileTail) setWaiting(err error) {
	if err == nil {
		if t.waiting {
			t.log.Info("following log file")
		}
		t.waiting, t.lastErr = false, ""
		if t.m.Waiting != nil {
			t.m.Waiting.Set(0)
		}
		return
	}
	t.waiting = true
	if t.m.Waiting != nil {
		t.m.Waiting.Set(1)
	}
	if msg := err.Error(); msg != t.lastErr {
		t.lastErr = msg
		if errors.Is(err, fs.ErrNotExist) {
			t.log.Info("waiting for log file to appear")
		} else {
			t.log.Warn("cannot open log file; will retry", "err", err)
		}
	}
}
