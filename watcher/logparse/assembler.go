package logparse

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/watcher"
)

// Assembler turns the lines of one log file into Records: it removes the
// container envelope, recognises first lines by the layout, and gathers the
// continuation lines after each one into its Stack.
//
// Records are allocated in small batches (see arenaRecords): a record the
// caller keeps holds its batch in memory, a few KiB at most.
//
// An Assembler is for one file and is not safe for concurrent use. A record
// is held until the next first line arrives, Flush is called, or the file
// ends (ScanReader flushes at the end); a follower should call Flush when the
// file has been quiet for a while so the last record is not held back.
type Assembler struct {
	file string
	opts Options
	log  *slog.Logger

	fixed     lineParser // from Options.Pattern or Options.Layout; nil = detect
	fixedName string
	builtins  []namedParser // detection candidates, in tie-break order

	env      envelope
	parser   lineParser // nil while the layout is being detected
	layout   string
	cur      int  // index in builtins of parser, or -1
	fallback bool // parser is the raw fallback; builtins are still tried

	sample      []sampleLine
	sampleBytes int
	sampleCands int
	warned      bool // the "not recognised" warning was logged
	switchWarn  bool // the "layout changed" warning was logged

	fixedMiss   int  // non-empty lines before the fixed layout's first match
	fixedHit    bool // the fixed layout has read a first line
	fixedWarned bool

	partial [2]partialLine   // CRI/docker pieces per stream
	strs    strings.Builder  // arena for record text; see newString
	recs    []watcher.Record // slab for records; see newRecord
	scratch []byte           // docker unescaping
	f, tf   fields
	pend    pending
	stats   Stats
}

type namedParser struct {
	name string
	p    lineParser
}

type sampleLine struct {
	text   []byte
	lineNo int64
	cut    bool
}

type partialLine struct {
	buf    []byte
	lineNo int64
	cut    bool
	active bool
}

// pending is the record being assembled. Its first line (and any bytes the
// parser decoded) is made into one string at once, which the record's text
// fields slice; continuation lines are gathered in stack and made into one
// more string when the record is emitted.
type pending struct {
	active    bool
	lineNo    int64
	truncated bool
	needTail  bool
	f         fields // spans index s
	s         string
	textEnd   int
	tailLog   string // logger and thread read from the end of a multi-line message
	tailThr   string
	stack     []byte
	stackEnds []int
}

// NewAssembler returns an Assembler for the file named file (the name is
// copied into Record.File; "-" for stdin). It returns an error when
// opts.Layout is not one of LayoutNames() or opts.Pattern does not compile
// (see ValidatePattern).
func NewAssembler(file string, opts Options) (*Assembler, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Assembler{file: file, opts: o, log: o.Logger.With("file", file)}
	switch {
	case o.Pattern != "":
		p, err := compilePattern(o.Pattern, o.Location)
		if err != nil {
			return nil, err
		}
		a.fixed, a.fixedName = p, LayoutPattern
	case o.Layout != "":
		p, err := builtinParser(o.Layout, o.Location)
		if err != nil {
			return nil, err
		}
		a.fixed, a.fixedName = p, o.Layout
	default:
		for _, name := range LayoutNames() {
			p, err := builtinParser(name, o.Location)
			if err != nil {
				return nil, err
			}
			a.builtins = append(a.builtins, namedParser{name, p})
		}
	}
	a.Reset()
	return a, nil
}

// builtinPattern returns the ConversionPattern of a built-in text layout.
func builtinPattern(name string) string {
	switch name {
	case LayoutKafka:
		return "[%d] %p %X{connector.context}%m (%c:%L)%n"
	case LayoutStrimzi:
		return "%d{yyyy-MM-dd HH:mm:ss,SSS} %p %X{connector.context}%m (%c) [%t]%n"
	case LayoutShort:
		return "%d %-5p [%t] %c{1}:%L - %m%n"
	case LayoutColon:
		return "%d{ISO8601} %p %c: %m%n"
	}
	return ""
}

func builtinParser(name string, loc *time.Location) (lineParser, error) {
	if name == LayoutJSON {
		return &jsonParser{loc: loc}, nil
	}
	p := builtinPattern(name)
	if p == "" {
		return nil, fmt.Errorf("unknown log layout %q (known: %v)", name, LayoutNames())
	}
	return compilePattern(p, loc)
}

// Feed adds one physical line, without its '\n' (a trailing '\r' is
// removed). lineNo is its 1-based line number in the file. emit is called
// with each record completed by this line (at most a few); the records are
// fresh and may be retained. line may be reused by the caller after Feed
// returns.
func (a *Assembler) Feed(line []byte, lineNo int64, emit func(*watcher.Record)) {
	a.feed(line, lineNo, false, emit)
}

// feed is Feed for a line that the reader may already have cut (cut=true).
func (a *Assembler) feed(line []byte, lineNo int64, cut bool, emit func(*watcher.Record)) {
	a.stats.Lines++
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if a.env == envUnknown {
		if len(line) == 0 {
			a.content(line, lineNo, cut, emit)
			return
		}
		a.env = detectEnvelope(line)
		a.stats.Envelope = a.env.String()
		a.log.Debug("log envelope detected", "envelope", a.stats.Envelope)
	}
	switch a.env {
	case envCRI:
		start, stream, partial, ok := parseCRI(line)
		if !ok {
			a.content(line, lineNo, cut, emit)
			return
		}
		a.piece(line[start:], stream, partial, lineNo, cut, emit)
	case envDocker:
		body, stream, partial, c, ok := decodeDocker(line, &a.scratch)
		if !ok {
			a.content(line, lineNo, cut, emit)
			return
		}
		a.piece(body, stream, partial, lineNo, cut || c, emit)
	default:
		a.content(line, lineNo, cut, emit)
	}
}

// piece handles one envelope piece: partial pieces are joined per stream
// until the piece that ends the line.
func (a *Assembler) piece(body []byte, stream int, partial bool, lineNo int64, cut bool, emit func(*watcher.Record)) {
	p := &a.partial[stream]
	if !partial && !p.active {
		a.content(body, lineNo, cut, emit)
		return
	}
	if !p.active {
		p.active, p.lineNo, p.cut, p.buf = true, lineNo, false, p.buf[:0]
	}
	room := a.opts.MaxLineBytes + 1 - len(p.buf) // one over: content() sees the cut
	if len(body) > room {
		body, p.cut = body[:max(room, 0)], true
	}
	p.buf = append(p.buf, body...)
	p.cut = p.cut || cut
	if partial {
		return
	}
	p.active = false
	a.content(p.buf, p.lineNo, p.cut, emit)
}

// content handles one logical line after the envelope.
func (a *Assembler) content(text []byte, lineNo int64, cut bool, emit func(*watcher.Record)) {
	if len(text) > a.opts.MaxLineBytes {
		text, cut = text[:a.opts.MaxLineBytes], true
	}
	if cut {
		a.stats.TruncatedLines++
	}
	if a.parser == nil {
		a.addSample(text, lineNo, cut, emit)
		return
	}
	a.assemble(text, lineNo, cut, emit)
}

func (a *Assembler) assemble(text []byte, lineNo int64, cut bool, emit func(*watcher.Record)) {
	f := &a.f
	f.reset()
	m := noMatch
	if a.fallback && looksStamped(text) {
		// In the raw fallback, keep looking for a known layout.
		m = a.recognise(text, f, headMatch)
	}
	if m == noMatch {
		m = a.parser.parse(text, f)
	}
	if m == noMatch && a.fixed == nil && !a.fallback && looksStamped(text) {
		// Not a first line of the current layout but perhaps one of another:
		// files written by workers with different layouts get concatenated.
		m = a.recognise(text, f, fullMatch)
	}
	if a.fixed != nil && !a.fixedHit {
		a.checkFixed(text, m)
	}
	if m != noMatch {
		a.flush(emit)
		a.start(text, lineNo, cut, f, m == headMatch)
		return
	}
	if !a.pend.active {
		// A continuation line with no record before it (the file starts in
		// the middle of a stack trace): it becomes a record of its own.
		f.reset()
		f.msg = span{0, len(text)}
		a.start(text, lineNo, cut, f, false)
		return
	}
	p := &a.pend
	if p.needTail {
		a.tf.reset()
		if a.parser.tail(text, &a.tf) {
			p.setTail(text, &a.tf)
		}
	}
	if len(p.stackEnds) >= a.opts.MaxStackLines {
		a.stats.DroppedLines++
		p.truncated = true
		return
	}
	p.stack = append(p.stack, text...)
	p.stackEnds = append(p.stackEnds, len(p.stack))
	p.truncated = p.truncated || cut
}

// start begins a new pending record from a first line.
func (a *Assembler) start(text []byte, lineNo int64, cut bool, f *fields, needTail bool) {
	p := &a.pend
	p.active, p.lineNo, p.truncated, p.needTail = true, lineNo, cut, needTail
	p.s = a.newString(text, f.dec)
	p.textEnd = len(text)
	dec := p.f.dec
	p.f = *f
	p.f.dec = dec
	p.tailLog, p.tailThr = "", ""
	p.stack = p.stack[:0]
	p.stackEnds = p.stackEnds[:0]
	if f.stack.empty() {
		return
	}
	// JSON layouts carry the stack trace in one member: split it.
	st := p.s[f.stack.off:f.stack.end]
	for len(st) > 0 {
		i := strings.IndexByte(st, '\n')
		ln := st
		if i >= 0 {
			ln, st = st[:i], st[i+1:]
		} else {
			st = ""
		}
		ln = strings.TrimSuffix(ln, "\r")
		if len(ln) == 0 && len(st) == 0 {
			break
		}
		if len(p.stackEnds) >= a.opts.MaxStackLines {
			a.stats.DroppedLines++
			p.truncated = true
			continue
		}
		p.stack = append(p.stack, ln...)
		p.stackEnds = append(p.stackEnds, len(p.stack))
	}
}

// setTail records the logger and thread found at the end of a multi-line
// message.
func (p *pending) setTail(line []byte, tf *fields) {
	p.needTail = false
	if !tf.logger.empty() {
		p.tailLog = string(line[tf.logger.off:tf.logger.end])
	}
	if !tf.thread.empty() {
		p.tailThr = string(line[tf.thread.off:tf.thread.end])
	}
}

// Records and their text are allocated in small batches, which halves the
// allocations per record: emitting a record then costs about one allocation
// in 16. The price is that a record retained by the caller keeps its batch
// alive: at most arenaRecords records and arenaBytes bytes of text.
const (
	arenaBytes   = 8 << 10
	arenaRecords = 16
)

// newString returns a+b as a string carved from the text arena. A
// strings.Builder never changes bytes it has written, so strings sliced from
// String() stay valid while the builder grows or is replaced.
func (a *Assembler) newString(x, y []byte) string {
	n := len(x) + len(y)
	if n > arenaBytes/4 {
		return string(x) + string(y)
	}
	if a.strs.Cap()-a.strs.Len() < n {
		a.strs = strings.Builder{}
		a.strs.Grow(arenaBytes)
	}
	off := a.strs.Len()
	a.strs.Write(x)
	a.strs.Write(y)
	return a.strs.String()[off:]
}

// newRecord returns a zeroed Record from the record slab.
func (a *Assembler) newRecord() *watcher.Record {
	if len(a.recs) == 0 {
		a.recs = make([]watcher.Record, arenaRecords)
	}
	r := &a.recs[0]
	a.recs = a.recs[1:]
	return r
}

// flush emits the pending record, if any.
func (a *Assembler) flush(emit func(*watcher.Record)) {
	p := &a.pend
	if !p.active {
		return
	}
	p.active = false
	s := p.s
	p.s = ""
	r := a.newRecord()
	*r = watcher.Record{
		Time:      p.f.time.UTC(),
		Level:     p.f.level,
		Context:   s[p.f.ctx.off:p.f.ctx.end],
		Logger:    s[p.f.logger.off:p.f.logger.end],
		Thread:    s[p.f.thread.off:p.f.thread.end],
		Message:   s[p.f.msg.off:p.f.msg.end],
		File:      a.file,
		Line:      p.lineNo,
		Text:      s[:p.textEnd],
		Truncated: p.truncated,
	}
	if r.Level == "" && !p.f.levelSp.empty() {
		r.Level = s[p.f.levelSp.off:p.f.levelSp.end]
	}
	if p.tailLog != "" {
		r.Logger = p.tailLog
	}
	if p.tailThr != "" {
		r.Thread = p.tailThr
	}
	if n := len(p.stackEnds); n > 0 {
		all := a.newString(p.stack, nil)
		st := make([]string, n)
		prev := 0
		for i, e := range p.stackEnds {
			st[i] = all[prev:e]
			prev = e
		}
		r.Stack = st
	}
	a.stats.Records++
	emit(r)
}

// Flush emits the pending record, if any, after completing any envelope
// partial line and deciding the layout from the lines seen so far if it was
// still being detected. Call it at the end of a file and when the file has
// been quiet for a while.
func (a *Assembler) Flush(emit func(*watcher.Record)) {
	for s := range a.partial {
		if p := &a.partial[s]; p.active {
			p.active = false
			a.content(p.buf, p.lineNo, p.cut, emit)
		}
	}
	if a.parser == nil && len(a.sample) > 0 {
		a.decide(emit)
	}
	a.flush(emit)
}

// Pending reports whether lines are held that Flush would emit.
func (a *Assembler) Pending() bool {
	return a.pend.active || len(a.sample) > 0 || a.partial[0].active || a.partial[1].active
}

// Reset discards all partial state (the pending record, partial envelope
// pieces, lines held for layout detection), for use after the file was
// truncated or rotated; call Flush first to keep the pending record. The
// envelope is detected again, and so is the layout unless Options.Layout or
// Options.Pattern fixed it. Stats counters keep counting.
func (a *Assembler) Reset() {
	a.pend.active = false
	a.partial[0].active, a.partial[1].active = false, false
	a.env = envUnknown
	a.stats.Envelope = ""
	a.sample, a.sampleBytes, a.sampleCands = nil, 0, 0
	a.cur, a.fallback = -1, false
	a.fixedMiss, a.fixedHit = 0, false
	if a.fixed != nil {
		a.parser, a.layout = a.fixed, a.fixedName
	} else {
		a.parser, a.layout = nil, ""
	}
	a.stats.Layout = a.layout
}

// Stats returns the counts so far.
func (a *Assembler) Stats() Stats { return a.stats }

func (a *Assembler) addSample(text []byte, lineNo int64, cut bool, emit func(*watcher.Record)) {
	a.sample = append(a.sample, sampleLine{text: append([]byte(nil), text...), lineNo: lineNo, cut: cut})
	a.sampleBytes += len(text)
	// Only lines shaped like the first line of some layout are evidence:
	// start-up text before the first record (JVM notices, entrypoint
	// scripts) must not push detection into the fallback.
	if looksStamped(text) {
		a.sampleCands++
	}
	switch {
	case a.sampleCands >= detectCandidates:
		a.decide(emit)
	case len(a.sample) >= detectMaxLines || a.sampleBytes >= detectMaxBytes:
		a.decide(emit)
	}
}

// looksStamped reports whether line could be the first line of a built-in
// layout: it starts with a timestamp (optionally after '[') or is a JSON
// object. It is a cheap pre-check; the layouts decide.
func looksStamped(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	if line[0] == '{' {
		return true
	}
	b := line
	if b[0] == '[' {
		b = b[1:]
	}
	return len(b) >= 19 && isDigit(b[0]) && b[4] == '-' && b[7] == '-' && (b[10] == ' ' || b[10] == 'T') && b[13] == ':' && b[16] == ':'
}

// decide picks the layout that reads the sampled lines best and replays the
// sample through it. Each line scores 2 for a full match and 1 for a first
// line whose message continues; ties go to the earlier name in
// LayoutNames(). When no sampled line looks like a first line of any layout,
// the sample is emitted one record per line and detection goes on with the
// next lines. When lines start with timestamps but no layout reads at least
// half of them, the raw fallback is used, a warning is logged, and each later
// line that a built-in layout reads switches to that layout.
func (a *Assembler) decide(emit func(*watcher.Record)) {
	best, bestScore, bestLines := -1, 0, 0
	for i, c := range a.builtins {
		score, lines := 0, 0
		for _, s := range a.sample {
			a.f.reset()
			if m := c.p.parse(s.text, &a.f); m != noMatch {
				score += m
				lines++
			}
		}
		if score > bestScore {
			best, bestScore, bestLines = i, score, lines
		}
	}
	stamped := 0
	for _, s := range a.sample {
		if _, ok := leadingTimestamp(s.text, a.opts.Location); ok {
			stamped++
		}
	}
	switch {
	case best >= 0 && bestLines*2 >= stamped:
		a.use(best)
		a.log.Debug("log layout detected", "layout", a.layout, "lines_matched", bestLines, "lines_sampled", len(a.sample))
	case stamped == 0:
		a.drain(emit)
		return
	default:
		a.parser, a.cur, a.fallback = &rawParser{loc: a.opts.Location, stamped: true}, -1, true
		a.layout = LayoutRawTimestamp
		a.stats.Layout = a.layout
		a.warnUnrecognised("each line that starts with a timestamp starts a record", len(a.sample))
	}
	a.replay(emit)
}

// use switches to built-in layout i.
func (a *Assembler) use(i int) {
	a.parser, a.layout, a.cur, a.fallback = a.builtins[i].p, a.builtins[i].name, i, false
	a.stats.Layout = a.layout
}

func (a *Assembler) warnUnrecognised(how string, lines int) {
	if a.warned {
		return
	}
	a.warned = true
	a.stats.LayoutWarnings++
	a.log.Warn("log layout not recognised; set the log pattern to parse loggers and levels reliably",
		"layout", a.layout, "assumed", how, "lines_sampled", lines)
}

// drain emits the sampled lines one record per line, when none of them
// looks like a first line of any layout; the layout stays undetected.
func (a *Assembler) drain(emit func(*watcher.Record)) {
	sample := a.sample
	a.sample, a.sampleBytes, a.sampleCands = nil, 0, 0
	raw := rawParser{loc: a.opts.Location}
	for _, s := range sample {
		a.f.reset()
		raw.parse(s.text, &a.f)
		a.flush(emit)
		a.start(s.text, s.lineNo, s.cut, &a.f, false)
	}
	a.layout = LayoutRawLine
	a.stats.Layout = a.layout
	a.warnUnrecognised("every line is a record until a known layout appears", len(sample))
}

// recognise tries the built-in layouts other than the current one on a line
// the current layout did not read. On a match of at least min it switches
// to that layout, logs the change (a warning the first time a recognised
// layout changes in this file), and returns the match with f filled; else
// it returns noMatch with f reset.
func (a *Assembler) recognise(text []byte, f *fields, min int) int {
	for i, c := range a.builtins {
		if i == a.cur {
			continue
		}
		f.reset()
		m := c.p.parse(text, f)
		if m < min {
			continue
		}
		from := a.layout
		wasFallback := a.fallback || a.cur < 0
		a.use(i)
		switch {
		case wasFallback:
			a.log.Info("log layout recognised", "layout", a.layout, "previous", from, "line_text_bytes", len(text))
		case !a.switchWarn:
			a.switchWarn = true
			a.stats.LayoutWarnings++
			a.log.Warn("log layout changed within the file; reading each line with the layout that fits it",
				"layout", a.layout, "previous", from)
		default:
			a.log.Debug("log layout changed", "layout", a.layout, "previous", from)
		}
		return m
	}
	f.reset()
	return noMatch
}

// fixedCheckLines is how many non-empty lines a fixed layout or pattern may
// fail to read before a warning says it matches nothing.
const fixedCheckLines = 64

// checkFixed warns once when the first fixedCheckLines non-empty lines hold
// no first line of the layout fixed by Options.Pattern or Options.Layout.
func (a *Assembler) checkFixed(text []byte, m int) {
	if m != noMatch {
		a.fixedHit = true
		return
	}
	if len(text) == 0 {
		return
	}
	a.fixedMiss++
	if a.fixedMiss == fixedCheckLines && !a.fixedWarned {
		a.fixedWarned = true
		a.stats.LayoutWarnings++
		a.log.Warn("log pattern matches none of the first lines; they are read as continuation lines of one record (check the log pattern or layout)",
			"layout", a.layout, "lines", a.fixedMiss)
	}
}

func (a *Assembler) replay(emit func(*watcher.Record)) {
	sample := a.sample
	a.sample, a.sampleBytes, a.sampleCands = nil, 0, 0
	for _, s := range sample {
		a.assemble(s.text, s.lineNo, s.cut, emit)
	}
}
