package follow

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/follow/internal/tailer"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/logparse"
)

// Engines, the values of Options.Engine.
const (
	// EngineNative is the default engine: this module's bounded reader with
	// one fsnotify watcher on the followed files' directories.
	EngineNative = tailer.EngineNative
	// EngineTail follows each file with github.com/nxadm/tail. It can
	// exit the process: see Options.Engine.
	EngineTail = tailer.EngineTail
)

// Options configures following. Only Globs is required.
type Options struct {
	// Engine is how each file is read: EngineNative ("native", the default
	// when empty) or EngineTail ("tail", one github.com/nxadm/tail v1.4.11
	// follower per file). Globs, the waiting gauge, FlushAfter, Ready and
	// the metrics behave the same with both; the differences are in the
	// package documentation. With EngineTail the process can still exit
	// (nxadm/tail calls os.Exit) if the permissions of a followed file's
	// directory change while it is followed: the path is checked before a
	// follower is started, not afterwards. That is why EngineNative is the
	// default. Any other value makes New fail.
	Engine string
	// Globs are the --log values: paths or filepath.Match patterns. See the
	// package documentation for how patterns, missing paths and rotated
	// siblings are treated.
	Globs []string
	// FromStart reads files that exist at start from their first line
	// instead of their end.
	FromStart bool
	// Poll looks at each file every PollInterval instead of using inotify;
	// for NFS and other filesystems where inotify reports nothing. inotify
	// is also replaced by polling, with a warning, when no inotify instance
	// can be created (fs.inotify.max_user_instances reached).
	Poll bool
	// PollInterval is the poll period (0 = 250 ms). With inotify each file
	// is still looked at every four PollIntervals as a safety net.
	PollInterval time.Duration
	// MaxLineBytes caps a physical line in bytes (0 = 64 KiB). The rest of
	// a longer line is read and dropped, never held in memory, and counted
	// in mm2_watchdog_log_truncated_lines_total.
	MaxLineBytes int
	// FlushAfter is how long a file must be quiet before a pending
	// multi-line record is sent (0 = 2 s).
	FlushAfter time.Duration
	// GlobInterval is how often patterns are expanded again (0 = 10 s).
	GlobInterval time.Duration
	// Parse configures the per-file logparse.Assembler (layout, pattern,
	// time zone, caps). Its Logger defaults to Logger.
	Parse logparse.Options
	// Logger receives file lifecycle events (waiting, following, rotated,
	// truncated) at info and problems at warn. nil discards.
	Logger *slog.Logger
	// Metrics are the instruments to update; nil updates unregistered ones.
	Metrics *Metrics
	// Now is the clock used when a record has no timestamp of its own
	// (for mm2_watchdog_log_last_record_timestamp_seconds); nil is time.Now.
	Now func() time.Time
}

// Follower follows the files of one Options. Make it with New, serve its
// Ready, and call Run once.
type Follower struct {
	opts Options
	mgr  *tailer.Manager
	out  chan<- *watcher.Record
}

// New checks opts: the globs' syntax, the intervals, the engine name, and the
// parse options (a logparse layout name or ConversionPattern that does not
// compile).
func New(opts Options) (*Follower, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Logger = opts.Logger.With("component", "follow")
	if opts.Parse.Logger == nil {
		opts.Parse.Logger = opts.Logger
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Parse.MaxLineBytes == 0 && opts.MaxLineBytes > 0 {
		opts.Parse.MaxLineBytes = opts.MaxLineBytes
	}
	if _, err := logparse.NewAssembler("", opts.Parse); err != nil {
		return nil, fmt.Errorf("log parse options: %w", err)
	}
	f := &Follower{opts: opts}
	mgr, err := tailer.New(tailer.Config{
		Globs:        opts.Globs,
		FromStart:    opts.FromStart,
		Poll:         opts.Poll,
		MaxLineBytes: opts.MaxLineBytes,
		FlushAfter:   opts.FlushAfter,
		GlobInterval: opts.GlobInterval,
		PollInterval: opts.PollInterval,
		Logger:       opts.Logger,
		NewSink:      f.newSink,
		Metrics:      opts.Metrics.forFile,
		Forget:       opts.Metrics.forget,
		Engine:       opts.Engine,
	})
	if err != nil {
		return nil, fmt.Errorf("following logs: %w", err)
	}
	f.mgr = mgr
	return f, nil
}

// Ready is closed once every path of the first glob expansion has been opened
// or is being waited for (a missing path counts as ready: waiting for it is
// the expected state). A /readyz handler can select on it without blocking.
func (f *Follower) Ready() <-chan struct{} { return f.mgr.Ready() }

// Run follows until ctx is done, sending every assembled record to out. On
// cancel it sends each file's pending record and returns nil. Sends block, so
// the caller must keep receiving from out until Run has returned (and then
// close out if it wants to: Run never closes it).
func (f *Follower) Run(ctx context.Context, out chan<- *watcher.Record) error {
	f.out = out
	return f.mgr.Run(ctx)
}

// Run follows the files of opts until ctx is done, sending every assembled
// record to out; it closes nothing it does not own and returns nil on ctx
// cancel after flushing pending records. It is New followed by Follower.Run;
// use New to also serve Ready.
func Run(ctx context.Context, opts Options, out chan<- *watcher.Record) error {
	f, err := New(opts)
	if err != nil {
		return err
	}
	return f.Run(ctx, out)
}

// newSink is called by the file's own goroutine, after Run has set out.
func (f *Follower) newSink(file string) tailer.Sink {
	a, err := logparse.NewAssembler(file, f.opts.Parse)
	if err != nil {
		// Not expected: New built one with the same options. Detecting the
		// layout is better than not following the file.
		f.opts.Logger.Error("log parse options rejected; detecting the layout instead", "file", file, "err", err)
		a, _ = logparse.NewAssembler(file, logparse.Options{Location: f.opts.Parse.Location, Logger: f.opts.Parse.Logger})
	}
	s := &recordSink{a: a, out: f.out, file: file, metrics: f.opts.Metrics, now: f.opts.Now}
	s.emitFn = s.emit
	return s
}

// recordSink feeds one file's lines to its Assembler and sends the records.
type recordSink struct {
	a       *logparse.Assembler
	out     chan<- *watcher.Record
	file    string
	metrics *Metrics
	gauge   prometheus.Gauge // bound at the first record: no fake 0 before
	now     func() time.Time
	emitFn  func(*watcher.Record)

	// Lines cut at the cap, so that the records holding them are marked
	// Truncated: the Assembler's Feed has no way to be told.
	cut     []int64
	feeding int64 // line being fed; 0 while flushing
}

func (s *recordSink) Line(line []byte, lineNo int64, truncated bool) {
	if truncated {
		s.cut = append(s.cut, lineNo)
	}
	s.feeding = lineNo
	s.a.Feed(line, lineNo, s.emitFn)
	s.feeding = 0
}

func (s *recordSink) Pending() bool { return s.a.Pending() }

func (s *recordSink) Flush() {
	s.a.Flush(s.emitFn)
	s.cut = s.cut[:0]
}

func (s *recordSink) emit(r *watcher.Record) {
	if len(s.cut) > 0 {
		s.markCut(r)
	}
	if s.gauge == nil {
		s.gauge = s.metrics.recordTime(s.file)
	}
	t := r.Time
	if t.IsZero() {
		t = s.now()
	}
	s.gauge.Set(float64(t.UnixNano()) / 1e9)
	s.out <- r
}

// markCut marks r Truncated when one of its lines was cut. While line N is
// being fed, a record that started before N ends at N-1 (N starts the next
// one); a record that starts at N is N alone so far.
func (s *recordSink) markCut(r *watcher.Record) {
	last := s.feeding - 1
	if s.feeding == 0 {
		last = 1<<63 - 1
	} else if r.Line == s.feeding {
		last = s.feeding
	}
	kept := s.cut[:0]
	for _, n := range s.cut {
		switch {
		case n >= r.Line && n <= last:
			r.Truncated = true
		case n > last:
			kept = append(kept, n)
		}
	}
	s.cut = kept
}
