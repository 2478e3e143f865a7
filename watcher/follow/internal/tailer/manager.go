package tailer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Config says what a Manager follows and how. Every field but Globs and
// NewSink has a usable zero value.
type Config struct {
	// Globs are paths or filepath.Match patterns. A literal path is followed
	// even while it does not exist; a pattern is expanded at start and every
	// GlobInterval.
	Globs []string
	// FromStart reads files that exist at start from their beginning instead
	// of their end. Files that appear later are always read from the start.
	FromStart bool
	// Poll looks at the files every PollInterval instead of using inotify
	// (for NFS and other filesystems without inotify).
	Poll bool
	// MaxLineBytes caps a physical line (0 = 64 KiB); the rest is dropped.
	MaxLineBytes int
	// FlushAfter is the quiet period after which a pending multi-line record
	// is flushed (0 = 2 s).
	FlushAfter time.Duration
	// GlobInterval is the period of re-expanding patterns (0 = 10 s).
	GlobInterval time.Duration
	// PollInterval is the period of looking at each file in poll mode
	// (0 = 250 ms). With inotify, files are also looked at every four
	// PollIntervals, to catch what inotify cannot report (a directory that
	// did not exist yet, a lost event).
	PollInterval time.Duration
	// Logger receives lifecycle events (waiting, following, rotated,
	// truncated) at info and problems at warn; nil discards them.
	Logger *slog.Logger
	// NewSink makes the sink for one followed path; it is called once per
	// path, from the goroutine that will use it.
	NewSink func(path string) Sink
	// Metrics returns the instruments for one path; nil means none.
	Metrics func(path string) FileMetrics
	// Engine is how each file is read: EngineNative ("" too) or
	// EngineTail.
	Engine string
	// Forget is called when a path stops being followed (its file matched
	// a pattern and has been gone for two expansions), so that its series
	// can be deleted; nil means nothing to do.
	Forget func(path string)
}

// Engines, the values of Config.Engine.
const (
	// EngineNative reads each file with this package's bounded reader and
	// one shared fsnotify watcher on the files' directories.
	EngineNative = "native"
	// EngineTail reads each file with a github.com/nxadm/tail follower
	// (see tailEngine for what that gives up).
	EngineTail = "tail"
)

func (c Config) withDefaults() (Config, error) {
	if err := validateGlobs(c.Globs); err != nil {
		return c, err
	}
	switch c.Engine {
	case "":
		c.Engine = EngineNative
	case EngineNative, EngineTail:
	default:
		return c, fmt.Errorf("unknown follower engine %q (want %q or %q)", c.Engine, EngineNative, EngineTail)
	}
	if c.NewSink == nil {
		return c, errors.New("no sink for followed lines")
	}
	if c.MaxLineBytes < 0 || c.FlushAfter < 0 || c.GlobInterval < 0 || c.PollInterval < 0 {
		return c, errors.New("negative line cap or interval")
	}
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = 64 << 10
	}
	if c.FlushAfter == 0 {
		c.FlushAfter = 2 * time.Second
	}
	if c.GlobInterval == 0 {
		c.GlobInterval = 10 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 250 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Manager follows every file its globs name, one goroutine per file.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	ready chan struct{}
}

// New checks cfg (glob syntax, intervals) and returns a Manager to Run once.
func New(cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, log: cfg.Logger, ready: make(chan struct{})}, nil
}

// Ready is closed once every path of the first expansion has been opened or
// is being waited for.
func (m *Manager) Ready() <-chan struct{} { return m.ready }

// running is one followed path.
type running struct {
	path    string
	literal bool
	missing int           // consecutive expansions that did not find the file
	stop    chan struct{} // closed to stop following this path alone
	done    chan struct{} // closed when its goroutine has returned
}

// Run follows until ctx is done. Each file's goroutine then flushes its sink
// and returns; Run returns nil once all have.
func (m *Manager) Run(ctx context.Context) error {
	var w *fsnotify.Watcher
	if !m.cfg.Poll {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			m.log.Warn("inotify is unavailable; polling log files instead", "err", err,
				"poll_interval", m.cfg.PollInterval)
			w = nil
		}
	}
	var eng fileEngine
	if m.cfg.Engine == EngineTail {
		// nxadm/tail creates its own process-wide inotify instance and
		// exits the process when it cannot: the probe above decides
		// whether it may use inotify at all.
		eng = &tailEngine{cfg: m.cfg, poll: w == nil}
		if w != nil {
			w.Close()
		}
	} else {
		n := newNotifier(w, m.log)
		nctx, stopNotifier := context.WithCancel(context.Background())
		notifierDone := make(chan struct{})
		go func() { defer close(notifierDone); n.run(nctx) }()
		defer func() {
			stopNotifier()
			<-notifierDone
			if w != nil {
				w.Close()
			}
		}()
		eng = &nativeEngine{cfg: m.cfg, n: n}
	}

	files := map[string]*running{}
	var wg sync.WaitGroup
	defer wg.Wait()
	start := func(p string, literal, startAtEnd bool, first *sync.WaitGroup) {
		r := &running{path: p, literal: literal, stop: make(chan struct{}), done: make(chan struct{})}
		files[p] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(r.done)
			m.runFile(ctx, eng, r, startAtEnd, first)
		}()
	}

	e := expand(m.cfg.Globs, nil)
	if len(e.paths) == 0 {
		m.log.Warn("no log file matches yet; looking again periodically",
			"globs", m.cfg.Globs, "interval", m.cfg.GlobInterval)
	}
	var first sync.WaitGroup
	first.Add(len(e.paths))
	for _, p := range e.paths {
		start(p, e.literal[p], !m.cfg.FromStart, &first)
	}
	go func() { first.Wait(); close(m.ready) }()

	tick := time.NewTicker(m.cfg.GlobInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		following := make(map[string]bool, len(files))
		for p := range files {
			following[p] = true
		}
		e := expand(m.cfg.Globs, following)
		for _, p := range e.paths {
			if files[p] == nil {
				m.log.Info("new log file matches; following it from its start", "file", p)
				start(p, e.literal[p], false, nil)
			}
		}
		for p, r := range files {
			if r.literal {
				continue
			}
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				r.missing = 0
				continue
			}
			if r.missing++; r.missing < 2 {
				continue
			}
			m.log.Info("log file is gone; no longer following it", "file", p)
			close(r.stop)
			<-r.done
			delete(files, p)
			if m.cfg.Forget != nil {
				m.cfg.Forget(p)
			}
		}
	}
}

// fileRun is one followed path as an engine sees it: what to read into, the
// instruments, and the Manager's ready signal.
type fileRun struct {
	*running
	log  *slog.Logger
	sink Sink
	m    FileMetrics
	// startAtEnd is whether a file that exists when following starts is
	// entered at its end.
	startAtEnd bool
	flush      *flushTimer
	first      *sync.WaitGroup
}

// markReady tells the Manager that this path has been opened or is being
// waited for; calls after the first do nothing.
func (f *fileRun) markReady() {
	if f.first != nil {
		f.first.Done()
		f.first = nil
	}
}

// fileEngine reads one path into its sink until ctx is done or the path's
// stop channel is closed, and then flushes the sink. Globs, the ready signal,
// retiring gone files and the metric series stay with the Manager; an engine
// only knows how to read one path.
type fileEngine interface {
	follow(ctx context.Context, f *fileRun)
}

// runFile is the goroutine of one path.
func (m *Manager) runFile(ctx context.Context, eng fileEngine, r *running, startAtEnd bool, first *sync.WaitGroup) {
	f := &fileRun{running: r, log: m.log.With("file", r.path), startAtEnd: startAtEnd, first: first}
	if m.cfg.Metrics != nil {
		f.m = m.cfg.Metrics(r.path)
	}
	f.sink = m.cfg.NewSink(r.path)
	f.flush = newFlushTimer(m.cfg.FlushAfter, f.sink)
	defer f.flush.stop()
	defer f.markReady()
	eng.follow(ctx, f)
}

// flushTimer sends a pending multi-line record after a quiet period, the
// same way for every engine.
type flushTimer struct {
	t    *time.Timer
	d    time.Duration
	sink Sink
}

func newFlushTimer(d time.Duration, sink Sink) *flushTimer {
	t := time.NewTimer(d)
	t.Stop()
	return &flushTimer{t: t, d: d, sink: sink}
}

// lineRead starts the quiet period again after lines reached the sink.
func (f *flushTimer) lineRead() {
	if f.sink.Pending() {
		f.t.Reset(f.d)
	}
}

// C fires when the quiet period is over; call fire then.
func (f *flushTimer) C() <-chan time.Time { return f.t.C }

func (f *flushTimer) fire() {
	if f.sink.Pending() {
		f.sink.Flush()
	}
}

func (f *flushTimer) stop() { f.t.Stop() }

// nativeEngine reads files with fileTail, woken by the notifier.
type nativeEngine struct {
	cfg Config
	n   *notifier
}

// follow looks at the file when inotify says something changed in its
// directory, periodically, and when asked to stop.
func (e *nativeEngine) follow(ctx context.Context, f *fileRun) {
	t := newFileTail(f.path, e.cfg.MaxLineBytes, f.startAtEnd, f.log, f.m)
	sink := f.sink

	wake := make(chan struct{}, 1)
	e.n.add(f.path, wake)
	defer e.n.remove(f.path, wake)
	interval := e.cfg.PollInterval
	if e.n.w != nil {
		interval *= 4
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	dir := filepath.Dir(filepath.Clean(f.path))

	look := func() {
		t.poll(sink)
		if t.readLine {
			t.readLine = false
			f.flush.lineRead()
		}
	}
	look()
	f.markReady()
	for {
		select {
		case <-ctx.Done():
			// An incomplete last line may still be being written: only
			// what the sink holds is flushed.
			t.close()
			sink.Flush()
			return
		case <-f.stop:
			look()
			t.closeFile(sink)
			sink.Flush()
			return
		case <-wake:
			look()
		case <-tick.C:
			e.n.ensure(dir)
			look()
		case <-f.flush.C():
			f.flush.fire()
		}
	}
}
