package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Logger names and connector contexts of the lines the simulated MM2 writes.
// Every MM2 and Connect class logs with LoggerFactory.getLogger(Class), so
// the logger is the fully-qualified class name (MM2-REFERENCE.md §6).
const (
	loggerSourceConnector = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	loggerSourceTask      = "org.apache.kafka.connect.mirror.MirrorSourceTask"
	loggerScheduler       = "org.apache.kafka.connect.mirror.Scheduler"
	loggerMirrorMaker     = "org.apache.kafka.connect.mirror.MirrorMaker"
	loggerWorkerTask      = "org.apache.kafka.connect.runtime.AbstractWorkerSourceTask"
	loggerCommit          = "org.apache.kafka.connect.runtime.WorkerSourceTask"
	loggerWorker          = "org.apache.kafka.connect.runtime.Worker"

	ctxConnector = "[MirrorSourceConnector|worker] "
	ctxTask      = "[MirrorSourceConnector|task-0] "
	ctxOffsets   = "[MirrorSourceConnector|task-0|offsets] "
)

// WorkerLogName is the file name of the active worker log, as MM2 3.9's
// config/connect-log4j.properties names it.
const WorkerLogName = "connect.log"

// rolledSuffix is the DatePattern of log4j 1.x's DailyRollingFileAppender in
// MM2 3.9 ('.'yyyy-MM-dd-HH): rolled files are connect.log.2026-10-30-18.
const rolledSuffix = ".2006-01-02-15"

// WorkerLog writes an MM2 3.9 worker log: the layout
// `[%d] %p %X{connector.context}%m (%c:%L)%n` with %d in log4j's ISO8601
// form (yyyy-MM-dd HH:mm:ss,SSS) in UTC, a throwable's lines after the
// message line, and log4j 1.x rollover: the active file is renamed to
// connect.log.YYYY-MM-DD-HH and a new connect.log is created.
//
// It is safe for concurrent use. Each record (message line and stack) is
// written with one write call, so a follower never sees half a record.
type WorkerLog struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	f       *os.File
	lines   int64
	last    time.Time // time of the last record written to the active file
	rotated []string
}

// OpenWorkerLog creates (or appends to) dir/connect.log. now is the clock of
// the timestamps; nil means time.Now.
func OpenWorkerLog(dir string, now func() time.Time) (*WorkerLog, error) {
	if now == nil {
		now = time.Now
	}
	w := &WorkerLog{path: filepath.Join(dir, WorkerLogName), now: now}
	// Every demo starts a new log: a directory kept from an earlier run
	// (--dir) must not replay that run's incident, so the active file and
	// its rolled siblings are removed first.
	old, _ := filepath.Glob(w.path + ".*")
	for _, p := range append(old, w.path) {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("removing the previous demo's worker log: %w", err)
		}
	}
	f, err := os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening worker log: %w", err)
	}
	w.f = f
	return w, nil
}

// Path is the active log file, the one to follow by name.
func (w *WorkerLog) Path() string { return w.path }

// Log writes one record: level is INFO, WARN or ERROR; context is the
// connector.context MDC value with its trailing space (or ""); logger is the
// class name and line its source line; stack holds the throwable's lines as
// log4j prints them (first line "class: message", then "\tat …" frames).
func (w *WorkerLog) Log(level, context, logger string, line int, msg string, stack ...string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("worker log %s: closed", w.path)
	}
	t := w.now().UTC()
	var b strings.Builder
	fmt.Fprintf(&b, "[%s,%03d] %s %s%s (%s:%d)\n", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/1e6, level, context, msg, logger, line)
	for _, s := range stack {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	if _, err := w.f.WriteString(b.String()); err != nil {
		return fmt.Errorf("writing worker log: %w", err)
	}
	w.lines += int64(1 + len(stack))
	w.last = t
	return nil
}

// Rotate rolls the log over as log4j 1.x's DailyRollingFileAppender does:
// close connect.log, rename it to connect.log.YYYY-MM-DD-HH (the hour its
// last record belongs to; an existing file of that name is replaced, as
// log4j does), and create a new connect.log. It returns the rolled name.
func (w *WorkerLog) Rotate() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return "", fmt.Errorf("worker log %s: closed", w.path)
	}
	hour := w.last
	if hour.IsZero() {
		hour = w.now().UTC()
	}
	rolled := w.path + hour.Format(rolledSuffix)
	if err := w.f.Close(); err != nil {
		return "", fmt.Errorf("closing worker log for rollover: %w", err)
	}
	w.f = nil
	_ = os.Remove(rolled)
	if err := os.Rename(w.path, rolled); err != nil {
		return "", fmt.Errorf("rolling worker log over: %w", err)
	}
	f, err := os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return "", fmt.Errorf("reopening worker log after rollover: %w", err)
	}
	w.f = f
	w.rotated = append(w.rotated, rolled)
	return rolled, nil
}

// Rotated lists the rolled files, oldest first.
func (w *WorkerLog) Rotated() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.rotated...)
}

// Lines counts the physical lines written (message lines and stack lines).
func (w *WorkerLog) Lines() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}

// Close closes the active file. Later writes fail.
func (w *WorkerLog) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
