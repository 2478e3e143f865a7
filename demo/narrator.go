package demo

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Narrator prints the demo's story: one line per event, prefixed with the
// time since the demo started as [mm:ss]. It is safe for concurrent use.
type Narrator struct {
	w     io.Writer
	now   func() time.Time
	start time.Time

	mu sync.Mutex
}

// NewNarrator returns a Narrator writing to w whose clock starts now; now
// nil means time.Now.
func NewNarrator(w io.Writer, now func() time.Time) *Narrator {
	if now == nil {
		now = time.Now
	}
	return &Narrator{w: w, now: now, start: now()}
}

// Elapsed is the time since the Narrator was made.
func (n *Narrator) Elapsed() time.Duration { return n.now().Sub(n.start) }

// Sayf prints one event. Continuation lines of a multi-line text are
// indented under the first.
func (n *Narrator) Sayf(format string, args ...any) {
	d := n.Elapsed().Round(time.Second)
	stamp := fmt.Sprintf("[%02d:%02d] ", int(d.Minutes()), int(d.Seconds())%60)
	text := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\n"+strings.Repeat(" ", len(stamp)))
	n.mu.Lock()
	defer n.mu.Unlock()
	fmt.Fprintln(n.w, stamp+text)
}
