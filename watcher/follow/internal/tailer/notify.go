package tailer

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// notifier turns inotify events into wake-ups of the goroutines that follow
// the files. It watches directories, not files: a directory watch reports
// writes to, creation of, and renames within the directory with the child's
// name, survives the rotation of every file in it, and costs one watch per
// directory. Without inotify (poll mode, or when no inotify instance can be
// had) it does nothing and the followers' periodic look is all there is.
type notifier struct {
	w   *fsnotify.Watcher
	log *slog.Logger

	mu      sync.Mutex
	byPath  map[string]map[chan struct{}]struct{}
	byDir   map[string]map[chan struct{}]struct{}
	watched map[string]bool
}

// newNotifier makes a notifier; w may be nil for poll mode.
func newNotifier(w *fsnotify.Watcher, log *slog.Logger) *notifier {
	return &notifier{
		w:       w,
		log:     log,
		byPath:  map[string]map[chan struct{}]struct{}{},
		byDir:   map[string]map[chan struct{}]struct{}{},
		watched: map[string]bool{},
	}
}

// add registers wake for events on path and tries to watch its directory.
func (n *notifier) add(path string, wake chan struct{}) {
	path = filepath.Clean(path)
	dir := filepath.Dir(path)
	n.mu.Lock()
	defer n.mu.Unlock()
	addTo(n.byPath, path, wake)
	addTo(n.byDir, dir, wake)
	n.ensureLocked(dir)
}

// remove undoes add, and stops watching a directory nobody follows any more.
func (n *notifier) remove(path string, wake chan struct{}) {
	path = filepath.Clean(path)
	dir := filepath.Dir(path)
	n.mu.Lock()
	defer n.mu.Unlock()
	removeFrom(n.byPath, path, wake)
	removeFrom(n.byDir, dir, wake)
	if _, ok := n.byDir[dir]; !ok && n.watched[dir] {
		delete(n.watched, dir)
		if n.w != nil {
			_ = n.w.Remove(dir) // gone already when the directory was deleted
		}
	}
}

// ensure watches dir if it is not watched yet (it may not have existed, or
// may have been deleted and recreated). It reports whether dir is watched.
func (n *notifier) ensure(dir string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ensureLocked(dir)
}

func (n *notifier) ensureLocked(dir string) bool {
	if n.w == nil {
		return false
	}
	if n.watched[dir] {
		return true
	}
	if err := n.w.Add(dir); err != nil {
		n.log.Debug("cannot watch log directory yet; looking periodically", "dir", dir, "err", err)
		return false
	}
	n.watched[dir] = true
	return true
}

// run delivers events until ctx is done or the watcher is closed.
func (n *notifier) run(ctx context.Context) {
	if n.w == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-n.w.Events:
			if !ok {
				return
			}
			n.dispatch(ev)
		case err, ok := <-n.w.Errors:
			if !ok {
				return
			}
			// An overflowed queue lost events: everybody looks.
			n.log.Warn("inotify reported an error; checking every followed file", "err", err)
			n.wakeAll()
		}
	}
}

func (n *notifier) dispatch(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	n.mu.Lock()
	defer n.mu.Unlock()
	for wake := range n.byPath[name] {
		signal(wake)
	}
	if subs, ok := n.byDir[name]; ok && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
		// The directory itself went away: its watch is gone (or points at
		// the moved directory). Look again at the next periodic check.
		delete(n.watched, name)
		if ev.Op&fsnotify.Rename != 0 {
			_ = n.w.Remove(name)
		}
		for wake := range subs {
			signal(wake)
		}
	}
}

func (n *notifier) wakeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, subs := range n.byPath {
		for wake := range subs {
			signal(wake)
		}
	}
}

// signal wakes a follower without blocking; wake-ups coalesce.
func signal(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}

func addTo(m map[string]map[chan struct{}]struct{}, key string, wake chan struct{}) {
	if m[key] == nil {
		m[key] = map[chan struct{}]struct{}{}
	}
	m[key][wake] = struct{}{}
}

func removeFrom(m map[string]map[chan struct{}]struct{}, key string, wake chan struct{}) {
	delete(m[key], wake)
	if len(m[key]) == 0 {
		delete(m, key)
	}
}
