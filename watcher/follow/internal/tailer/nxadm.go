package tailer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nxadm/tail"
)

// tailEngine reads each file with one github.com/nxadm/tail v1.4.11 follower
// (Follow, ReOpen, MustExist false, CompleteLines). It is selectable for
// operators who know that library; the native engine stays the default
// because of what this one cannot guard against:
//
//   - nxadm/tail calls os.Exit (util.Fatal) from its watcher goroutines when
//     os.Stat of the followed path fails with anything but ENOENT while the
//     file is followed (watch/inotify.go, watch/polling.go), and when its
//     process-wide inotify instance cannot be created. Before a follower is
//     started, the path's directory and the path are stat-ed and a path that
//     fails with anything but ENOENT is not followed (it is logged, shown as
//     waiting, and tried again every GlobInterval), and inotify is probed
//     once so that polling is used when it is unavailable. A permission
//     change while the file is followed still exits the process.
//   - A line is read whole by bufio.Reader.ReadString before it is cut, so
//     a very long line is held in memory several times over; only what
//     reaches the sink is capped.
//   - At a rename the follower reopens the path without reading what was
//     left in the renamed file. With inotify, lines written just before the
//     rename are normally read first (measured loss-free with a writer that
//     closes, renames and reopens like log4j); with polling, lines written
//     in the last poll period (250 ms, fixed by the library) are lost.
//   - A truncation refilled past the old size before the follower looks
//     is not noticed (copytruncate under a fast writer).
//   - Line numbers count from where following started, not from the
//     start of a file entered at its end.
//
// PollInterval only sets how often the path is stat-ed for the waiting gauge;
// the library polls every 250 ms.
type tailEngine struct {
	cfg  Config
	poll bool
}

// follow starts a follower once the path may be followed, reads it until
// ctx is done or the path is retired, and starts it again when it stops on
// its own (its directory went away).
func (e *tailEngine) follow(ctx context.Context, f *fileRun) {
	startAtEnd := f.startAtEnd
	var guard guardState
	retry := time.NewTimer(e.cfg.GlobInterval)
	retry.Stop()
	defer retry.Stop()
	for {
		tl, ta := e.start(f, &startAtEnd, &guard)
		f.markReady()
		if tl != nil {
			if !e.read(ctx, f, tl, ta) {
				return
			}
			// Stopped on its own: a file found at the next start is
			// entered at its end, so that nothing is read twice.
			startAtEnd = true
		}
		retry.Reset(e.cfg.GlobInterval)
		select {
		case <-ctx.Done():
			f.sink.Flush()
			return
		case <-f.stop:
			f.sink.Flush()
			return
		case <-retry.C:
		}
	}
}

// guardState remembers the last refusal logged, to log only changes.
type guardState struct{ last string }

// start checks that nxadm/tail may follow the path and starts it. It returns
// nil, after logging why and setting the waiting gauge, when the directory is
// missing or not stat-able, or the path cannot be stat-ed for another reason
// than not existing: nxadm/tail exits the process on such a stat error, and
// stops for good when the directory is missing.
//
// *startAtEnd says whether a file found at the path is entered at its end; it
// is cleared when the path or its directory does not exist, because a file
// that appears later is new.
func (e *tailEngine) start(f *fileRun, startAtEnd *bool, g *guardState) (*tail.Tail, *tailLog) {
	refuse := func(err error) (*tail.Tail, *tailLog) {
		if errors.Is(err, fs.ErrNotExist) {
			*startAtEnd = false
		}
		setWaiting(f.m, true)
		if msg := err.Error(); msg != g.last {
			g.last = msg
			if errors.Is(err, fs.ErrNotExist) {
				f.log.Info("waiting for log directory to appear", "retry_interval", e.cfg.GlobInterval)
			} else {
				f.log.Warn("log file path cannot be stat-ed; not starting nxadm/tail on it, will retry",
					"err", err, "retry_interval", e.cfg.GlobInterval)
			}
		}
		return nil, nil
	}
	dir := filepath.Dir(filepath.Clean(f.path))
	if fi, err := os.Stat(dir); err != nil {
		return refuse(fmt.Errorf("log directory: %w", err))
	} else if !fi.IsDir() {
		return refuse(fmt.Errorf("log directory %s is not a directory", dir))
	}
	var loc *tail.SeekInfo
	fi, err := os.Stat(f.path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return refuse(fmt.Errorf("%s is not a regular file", f.path))
	case err == nil:
		if *startAtEnd {
			loc = &tail.SeekInfo{Offset: 0, Whence: io.SeekEnd}
		}
		setWaiting(f.m, false)
	case errors.Is(err, fs.ErrNotExist):
		// A file that appears later is new: read it whole.
		*startAtEnd = false
		fi = nil
		setWaiting(f.m, true)
		f.log.Info("waiting for log file to appear")
	default:
		return refuse(err)
	}
	g.last = ""
	ta := &tailLog{log: f.log, m: f.m, path: f.path, ident: fi}
	tl, err := tail.TailFile(f.path, tail.Config{
		Location:      loc,
		ReOpen:        true,
		MustExist:     false,
		Poll:          e.poll,
		Follow:        true,
		MaxLineSize:   e.cfg.MaxLineBytes + 1, // see chunks
		CompleteLines: true,
		Logger:        ta,
	})
	if err != nil { // not expected without MustExist
		return refuse(fmt.Errorf("starting nxadm/tail: %w", err))
	}
	if loc != nil {
		f.log.Info("following log file from its end", "engine", EngineTail)
	} else if fi != nil {
		f.log.Info("following log file from its start", "engine", EngineTail)
	}
	return tl, ta
}

// read hands tl's lines to the sink until ctx is done or the path is retired
// (then it stops tl and reports false), or tl stops on its own (true).
func (e *tailEngine) read(ctx context.Context, f *fileRun, tl *tail.Tail, ta *tailLog) (restart bool) {
	interval := e.cfg.PollInterval * 4
	tick := time.NewTicker(interval)
	defer tick.Stop()
	c := chunks{max: e.cfg.MaxLineBytes, dropOff: -1, reopens: &ta.reopens}
	for {
		select {
		case <-ctx.Done():
			stopTail(tl, f.log)
			f.sink.Flush()
			return false
		case <-f.stop:
			stopTail(tl, f.log)
			f.sink.Flush()
			return false
		case l, ok := <-tl.Lines:
			if !ok {
				f.log.Warn("nxadm/tail stopped following the log file; starting it again later",
					"err", tl.Err(), "retry_interval", e.cfg.GlobInterval)
				setWaiting(f.m, true)
				f.sink.Flush()
				return true
			}
			c.line(l, f.sink, f.m, f.log)
			f.flush.lineRead()
		case <-tick.C:
			// Keep the waiting gauge true to the path between lines
			// (renamed and not yet recreated, or not created yet).
			_, err := os.Stat(f.path)
			setWaiting(f.m, err != nil)
		case <-f.flush.C():
			f.flush.fire()
		}
	}
}

// stopTail stops tl. It does not call tl.Cleanup: in v1.4.11 Stop already
// removes the follower's inotify watch (its change goroutine does when the
// follower stops), and Cleanup removes it a second time, which leaves the
// process-wide tracker's count for that path at -1: a later follower of the
// same path in this process (a restart, a file that reappears, another Run)
// then never gets an inotify watch and reads nothing past its first end of
// file. Measured: a second follower after Stop got the appended line at
// once; after Stop and Cleanup it got nothing in 3 s.
func stopTail(tl *tail.Tail, log *slog.Logger) {
	if err := tl.Stop(); err != nil {
		log.Debug("nxadm/tail stopped with an error", "err", err)
	}
}

// chunks turns nxadm/tail lines back into physical lines. With MaxLineSize
// set to the cap plus one, a line longer than the cap arrives as chunks of
// cap+1 bytes and a shorter last chunk, sent one after the other with
// consecutive Num and the same SeekInfo.Offset (the offset after the whole
// line); a line of exactly the cap is one chunk and is not cut. The first
// chunk of a longer line is cut to the cap and handed over at once, marked
// truncated; the chunks after it are dropped.
type chunks struct {
	max     int
	prevNum int
	dropOff int64 // offset of the line whose chunks are being dropped; -1 if none
	lineNo  int64

	reopens     *atomic.Int64 // reopens nxadm/tail logged
	seenReopens int64         // reopens accounted for at the last new file
}

func (c *chunks) line(l *tail.Line, s Sink, m FileMetrics, log *slog.Logger) {
	newFile := l.Num <= c.prevNum
	if newFile {
		// Num starts again at 1 in each file nxadm/tail opens: a new file
		// at the path or the same file after a truncation. A record never
		// spans two files.
		s.Flush()
		if c.reopens.Load() == c.seenReopens {
			// A reopen the library did not log (or logged differently
			// in another version): count it as a new file.
			inc(m.Renames)
			log.Info("log file was replaced (rotated); following the new file")
		}
		c.lineNo, c.dropOff = 0, -1
	}
	if newFile || c.prevNum == 0 {
		c.seenReopens = c.reopens.Load()
	}
	cont := c.dropOff >= 0 && l.Num == c.prevNum+1 && l.SeekInfo.Offset == c.dropOff
	c.prevNum = l.Num
	if cont {
		return
	}
	c.dropOff = -1
	text := l.Text
	trunc := len(text) > c.max
	if trunc {
		text = text[:c.max]
		c.dropOff = l.SeekInfo.Offset
		inc(m.TruncatedLines)
	}
	text = strings.TrimSuffix(text, "\r")
	c.lineNo++
	inc(m.Lines)
	setWaiting(m, false)
	s.Line([]byte(text), c.lineNo, trunc)
}

// tailLog is the Logger of one nxadm/tail follower: its messages go to slog
// at debug, and the ones that say it reopened the path are counted as
// rotations (nxadm/tail has no other way to tell). It is called from the
// library's goroutine.
type tailLog struct {
	log     *slog.Logger
	m       FileMetrics
	path    string
	reopens atomic.Int64 // reopens logged, read by the file's goroutine

	// ident is the file at the path when nxadm/tail last opened it, as
	// far as a stat can tell; nil if unknown. Only the library's
	// goroutine uses it after TailFile.
	ident os.FileInfo
}

func (a *tailLog) note(msg string) {
	a.log.Debug(msg, "source", "nxadm/tail")
	switch {
	case strings.HasPrefix(msg, "Re-opening moved/deleted file"):
		a.rotated(KindRename)
		a.ident = nil
	case strings.HasPrefix(msg, "Re-opening truncated file"):
		// nxadm/tail also takes a rename for a truncation when the write
		// event it stats for comes after the rename: the path then names
		// a new, smaller file.
		kind := KindTruncate
		fi, err := os.Stat(a.path)
		if err == nil && a.ident != nil && !os.SameFile(fi, a.ident) {
			kind = KindRename
		}
		a.rotated(kind)
		a.ident = fi
	case strings.HasPrefix(msg, "Waiting for "):
		setWaiting(a.m, true)
	case strings.HasPrefix(msg, "Successfully reopened"):
		setWaiting(a.m, false)
		if fi, err := os.Stat(a.path); err == nil {
			a.ident = fi
		}
	}
}

func (a *tailLog) rotated(kind string) {
	a.reopens.Add(1)
	if kind == KindTruncate {
		inc(a.m.Truncations)
		a.log.Info("log file was truncated; reading it again from the start")
		return
	}
	inc(a.m.Renames)
	a.log.Info("log file was replaced (rotated); following the new file")
}

// Print, Printf and Println are what nxadm/tail v1.4.11 calls.
func (a *tailLog) Print(v ...any) { a.note(strings.TrimSuffix(fmt.Sprint(v...), "\n")) }

func (a *tailLog) Printf(format string, v ...any) {
	a.note(strings.TrimSuffix(fmt.Sprintf(format, v...), "\n"))
}

func (a *tailLog) Println(v ...any) { a.note(strings.TrimSuffix(fmt.Sprintln(v...), "\n")) }

// Fatal, Fatalf and Fatalln log at error and do not exit: nxadm/tail v1.4.11
// never calls them (its fatal errors go through util.Fatal, which does not
// use this Logger), and this process does not exit from a library.
func (a *tailLog) Fatal(v ...any) { a.log.Error(fmt.Sprint(v...), "source", "nxadm/tail") }

func (a *tailLog) Fatalf(format string, v ...any) {
	a.log.Error(fmt.Sprintf(format, v...), "source", "nxadm/tail")
}

func (a *tailLog) Fatalln(v ...any) { a.log.Error(fmt.Sprint(v...), "source", "nxadm/tail") }

// Panic, Panicf and Panicln log at error and panic, like log.Logger's.
func (a *tailLog) Panic(v ...any) { a.Panicf("%s", fmt.Sprint(v...)) }

func (a *tailLog) Panicf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	a.log.Error(msg, "source", "nxadm/tail")
	panic(msg)
}

func (a *tailLog) Panicln(v ...any) { a.Panicf("%s", fmt.Sprint(v...)) }

// setWaiting sets the waiting gauge, if there is one.
func setWaiting(m FileMetrics, waiting bool) {
	if m.Waiting == nil {
		return
	}
	if waiting {
		m.Waiting.Set(1)
	} else {
		m.Waiting.Set(0)
	}
}
