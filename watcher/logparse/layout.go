package logparse

import (
	"bytes"
	"time"
)

// span is a [off, end) range in the text a parser was given, extended by the
// parser's decoded bytes: positions at or past len(line) index fields.dec.
type span struct{ off, end int }

func (s span) empty() bool { return s.end <= s.off }

// fields is what a parser read from a first line. It is reused from line to
// line; nothing in it outlives the next call.
type fields struct {
	time    time.Time
	level   string // interned level name, or "" (then levelSp may hold it)
	levelSp span
	ctx     span
	logger  span
	thread  span
	msg     span
	stack   span   // JSON layouts: the stack_trace text, to be split in lines
	dec     []byte // decoded text (JSON layouts), indexed from len(line)
}

func (f *fields) reset() {
	dec := f.dec[:0]
	*f = fields{dec: dec}
}

// Match results of lineParser.parse.
const (
	noMatch     = 0 // not a first line
	headMatch   = 1 // a first line whose message continues on later lines
	fullMatch   = 2 // a complete first line
	scoreOfFull = 2
)

// lineParser recognises and reads the first lines of one layout.
type lineParser interface {
	// parse reports noMatch, headMatch or fullMatch for line and fills f.
	parse(line []byte, f *fields) int
	// tail reads the part a layout writes after the message (e.g. "
	// (logger:line)") from the last line of a multi-line message; it fills
	// f.logger and f.thread and reports whether the line has that shape.
	tail(line []byte, f *fields) bool
}

// levelName returns the interned log4j level name for b, or "".
func levelName(b []byte) string {
	switch string(b) {
	case "INFO":
		return "INFO"
	case "WARN":
		return "WARN"
	case "ERROR":
		return "ERROR"
	case "DEBUG":
		return "DEBUG"
	case "TRACE":
		return "TRACE"
	case "FATAL":
		return "FATAL"
	}
	return ""
}

// contextLen returns the length of a Connect connector.context MDC value at
// the start of b, including its brackets and trailing space, or 0. The value
// is "[<connector>|<scope>] " where scope is "worker", "task-<n>",
// "task-<n>|offsets" or "validate" (set by Connect's LoggingContext); other
// bracketed prefixes, such as the client LogContext "[Producer clientId=…] "
// or the herder's "[Worker clientId=A->B, groupId=A-mm2] ", are not contexts.
func contextLen(b []byte) int {
	if len(b) < 4 || b[0] != '[' {
		return 0
	}
	end := bytes.IndexByte(b, ']')
	if end < 0 || end+1 >= len(b) || b[end+1] != ' ' {
		return 0
	}
	in := b[1:end]
	bar := bytes.IndexByte(in, '|')
	if bar <= 0 || bytes.IndexByte(in, '[') >= 0 || !validScope(in[bar+1:]) {
		return 0
	}
	return end + 2
}

func validScope(s []byte) bool {
	switch string(s) {
	case "worker", "validate", "offsets":
		return true
	}
	if len(s) < 6 || string(s[:5]) != "task-" {
		return false
	}
	i := 5
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 5 {
		return false
	}
	return i == len(s) || string(s[i:]) == "|offsets"
}
