package logparse

import (
	"strconv"
	"time"
)

// jsonParser reads JSON-object log lines (LayoutJSON). The keys it reads are
// listed on LayoutJSON; others are skipped without decoding.
type jsonParser struct {
	loc *time.Location
}

// offsetIn returns the offset of sub within b; sub must be a sub-slice of b.
func offsetIn(b, sub []byte) int { return cap(b) - cap(sub) }

// parse implements lineParser. A line is a first line when it is a JSON
// object with a "message" or "level" member; an object cut at the line cap
// still yields the members before the cut.
func (jp *jsonParser) parse(line []byte, f *fields) int {
	it, ok := newObjIter(line)
	if !ok {
		return noMatch
	}
	known := false
	for {
		k, kind, v, esc, _, more := it.next()
		if !more {
			break
		}
		switch string(k) {
		case "@timestamp", "timestamp", "time", "date", "timeMillis":
			switch kind {
			case jsonString:
				if t, _, ok := parseLooseTimestamp(v, jp.loc); ok {
					f.time = t
				}
			case jsonOther:
				if ms, err := strconv.ParseInt(string(v), 10, 64); err == nil {
					f.time = time.UnixMilli(ms).UTC()
				}
			}
		case "instant": // log4j2 JsonLayout: {"epochSecond":…,"nanoOfSecond":…}
			if kind == jsonObject {
				f.time = readInstant(v)
			}
		case "level", "log.level", "severity":
			if kind == jsonString {
				known = true
				if lv := levelName(v); lv != "" {
					f.level = lv
				} else {
					f.levelSp = jp.value(line, v, esc, f)
				}
			}
		case "logger_name", "logger", "loggerName", "log.logger":
			if kind == jsonString {
				f.logger = jp.value(line, v, esc, f)
			}
		case "thread_name", "thread", "threadName", "process.thread.name":
			if kind == jsonString {
				f.thread = jp.value(line, v, esc, f)
			}
		case "message", "msg":
			if kind == jsonString {
				known = true
				f.msg = jp.value(line, v, esc, f)
			}
		case "connector.context":
			if kind == jsonString {
				f.ctx = trimContext(jp.value(line, v, esc, f), line, f)
			}
		case "mdc", "contextMap", "context", "MDC":
			if kind == jsonObject {
				jp.readMDC(line, v, f)
			}
		case "stack_trace", "exception", "error.stack_trace", "stackTrace", "stacktrace":
			if kind == jsonString {
				f.stack = jp.value(line, v, esc, f)
			}
		}
	}
	if !known {
		return noMatch
	}
	return fullMatch
}

// tail implements lineParser; JSON records carry everything on one line.
func (jp *jsonParser) tail([]byte, *fields) bool { return false }

// value returns the span of a JSON string value: within line when it has no
// escapes, else decoded into f.dec.
func (jp *jsonParser) value(line, v []byte, esc bool, f *fields) span {
	if !esc {
		off := offsetIn(line, v)
		return span{off, off + len(v)}
	}
	start := len(line) + len(f.dec)
	f.dec = appendUnescaped(f.dec, v)
	return span{start, len(line) + len(f.dec)}
}

func (jp *jsonParser) readMDC(line, obj []byte, f *fields) {
	it, ok := newObjIter(obj)
	if !ok {
		return
	}
	for {
		k, kind, v, esc, _, more := it.next()
		if !more {
			return
		}
		if kind == jsonString && string(k) == "connector.context" {
			f.ctx = trimContext(jp.value(line, v, esc, f), line, f)
		}
	}
}

// trimContext strips the brackets and trailing space of a connector.context
// value ("[MirrorSourceConnector|task-0] " → "MirrorSourceConnector|task-0").
func trimContext(s span, line []byte, f *fields) span {
	b := spanBytes(s, line, f)
	i, j := 0, len(b)
	for j > i && b[j-1] == ' ' {
		j--
	}
	if j > i && b[i] == '[' && b[j-1] == ']' {
		i++
		j--
	}
	return span{s.off + i, s.off + j}
}

func spanBytes(s span, line []byte, f *fields) []byte {
	if s.off >= len(line) {
		return f.dec[s.off-len(line) : s.end-len(line)]
	}
	return line[s.off:s.end]
}

func readInstant(obj []byte) time.Time {
	it, ok := newObjIter(obj)
	if !ok {
		return time.Time{}
	}
	var sec, nsec int64
	var have bool
	for {
		k, kind, v, _, _, more := it.next()
		if !more {
			break
		}
		if kind != jsonOther {
			continue
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			continue
		}
		switch string(k) {
		case "epochSecond":
			sec, have = n, true
		case "nanoOfSecond":
			nsec = n
		}
	}
	if !have {
		return time.Time{}
	}
	return time.Unix(sec, nsec).UTC()
}

// rawParser is the fallback when no layout is recognised. With stamped set,
// a line that starts with a timestamp (optionally after '[') starts a record;
// otherwise every line does. The level is sniffed from the first words.
type rawParser struct {
	loc     *time.Location
	stamped bool
}

func (rp *rawParser) parse(line []byte, f *fields) int {
	t, ok := leadingTimestamp(line, rp.loc)
	if !ok && rp.stamped {
		return noMatch
	}
	f.time = t
	f.level = sniffLevel(line)
	f.msg = span{0, len(line)}
	return fullMatch
}

func (rp *rawParser) tail([]byte, *fields) bool { return false }

// leadingTimestamp reads a timestamp at the start of line or after a '['.
func leadingTimestamp(line []byte, loc *time.Location) (time.Time, bool) {
	b := line
	if len(b) > 0 && b[0] == '[' {
		b = b[1:]
	}
	t, _, ok := parseLooseTimestamp(b, loc)
	return t, ok
}

// sniffLevel finds a log4j level name written as a word in the first 120
// bytes of line.
func sniffLevel(line []byte) string {
	if len(line) > 120 {
		line = line[:120]
	}
	for i := 0; i < len(line); i++ {
		if line[i] < 'A' || line[i] > 'Z' || (i > 0 && isLetter(line[i-1])) {
			continue
		}
		j := i
		for j < len(line) && isLetter(line[j]) {
			j++
		}
		if lv := levelName(line[i:j]); lv != "" {
			return lv
		}
		i = j
	}
	return ""
}
