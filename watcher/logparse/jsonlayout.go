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
	var errType, errMsg []byte
	var errTypeEsc, errMsgEsc bool
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
			switch kind {
			case jsonString:
				f.stack = jp.value(line, v, esc, f)
			case jsonObject: // JsonTemplateLayout templates that nest it
				f.stack = jp.thrown(len(line), v, f)
			}
		case "thrown": // log4j2 JsonLayout
			if kind == jsonObject {
				f.stack = jp.thrown(len(line), v, f)
			}
		case "error": // ECS nested form
			if kind == jsonObject && f.stack.empty() {
				f.stack = jp.ecsError(len(line), v, f)
			}
		case "error.type":
			if kind == jsonString {
				errType, errTypeEsc = v, esc
			}
		case "error.message":
			if kind == jsonString {
				errMsg, errMsgEsc = v, esc
			}
		}
	}
	if !known {
		return noMatch
	}
	if f.stack.empty() && len(errType) > 0 {
		// ECS without error.stack_trace: "type: message", as Java prints it.
		start := len(line) + len(f.dec)
		f.dec = appendJSON(f.dec, errType, errTypeEsc)
		if len(errMsg) > 0 {
			f.dec = append(f.dec, ": "...)
			f.dec = appendJSON(f.dec, errMsg, errMsgEsc)
		}
		f.stack = span{start, len(line) + len(f.dec)}
	}
	return fullMatch
}

// appendJSON appends the raw JSON string content v, unescaping it if esc.
func appendJSON(dst, v []byte, esc bool) []byte {
	if esc {
		return appendUnescaped(dst, v)
	}
	return append(dst, v...)
}

// thrown renders a log4j2 JsonLayout "thrown" object into f.dec as log4j
// prints a throwable and returns its span: "name: message", one "\tat" line
// per extendedStackTrace element, then "Caused by: name: message" and its
// frames for each nested "cause". An extendedStackTrace given as a string
// (stacktraceAsString=true) is already the printed trace and is used as is.
func (jp *jsonParser) thrown(lineLen int, obj []byte, f *fields) span {
	start := len(f.dec)
	for depth := 0; depth < maxCauseDepth && obj != nil; depth++ {
		var name, msg, lmsg, frames, cause []byte
		var nameEsc, msgEsc, lmsgEsc bool
		var framesKind byte
		it, ok := newObjIter(obj)
		if !ok {
			break
		}
		for {
			k, kind, v, esc, _, more := it.next()
			if !more {
				break
			}
			switch string(k) {
			case "name":
				if kind == jsonString {
					name, nameEsc = v, esc
				}
			case "message":
				if kind == jsonString {
					msg, msgEsc = v, esc
				}
			case "localizedMessage":
				if kind == jsonString {
					lmsg, lmsgEsc = v, esc
				}
			case "extendedStackTrace", "stackTrace":
				if kind == jsonString || kind == jsonArray {
					frames, framesKind = v, kind
					if kind == jsonString && esc {
						framesKind = 'e'
					}
				}
			case "cause":
				if kind == jsonObject {
					cause = v
				}
			}
		}
		obj = cause
		if framesKind == jsonString || framesKind == 'e' {
			if len(f.dec) > start {
				f.dec = append(f.dec, '\n')
			}
			f.dec = appendJSON(f.dec, frames, framesKind == 'e')
			break // the printed trace includes the causes
		}
		if len(name) == 0 {
			break
		}
		if len(f.dec) > start {
			f.dec = append(f.dec, "\nCaused by: "...)
		}
		f.dec = appendJSON(f.dec, name, nameEsc)
		// Throwable.toString uses getLocalizedMessage.
		if len(lmsg) > 0 {
			msg, msgEsc = lmsg, lmsgEsc
		}
		if len(msg) > 0 {
			f.dec = append(f.dec, ": "...)
			f.dec = appendJSON(f.dec, msg, msgEsc)
		}
		if framesKind == jsonArray {
			f.dec = appendFrames(f.dec, frames)
		}
	}
	if len(f.dec) == start {
		return span{}
	}
	return span{start + lineLen, len(f.dec) + lineLen}
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

// maxCauseDepth bounds the "cause" chain read from a thrown object.
const maxCauseDepth = 32

// appendFrames appends one "\tat class.method(file:line)" line per element
// of a JsonLayout extendedStackTrace array.
func appendFrames(dst, arr []byte) []byte {
	i := skipSpace(arr, 1) // past '['
	for i < len(arr) && arr[i] == '{' {
		end, ok := skipComposite(arr, i)
		if !ok {
			return dst
		}
		var cls, meth, file, line []byte
		it, _ := newObjIter(arr[i:end])
		for {
			k, kind, v, _, _, more := it.next()
			if !more {
				break
			}
			switch string(k) {
			case "class":
				cls = v
			case "method":
				meth = v
			case "file":
				file = v
			case "line":
				if kind == jsonOther {
					line = v
				}
			}
		}
		dst = append(dst, "\n\tat "...)
		dst = append(dst, cls...)
		dst = append(dst, '.')
		dst = append(dst, meth...)
		dst = append(dst, '(')
		dst = append(dst, file...)
		if len(line) > 0 {
			dst = append(dst, ':')
			dst = append(dst, line...)
		}
		dst = append(dst, ')')
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return dst
}

// ecsError reads an ECS "error" object ({"type","message","stack_trace"})
// into f.dec: the stack trace when there is one, else "type: message".
func (jp *jsonParser) ecsError(lineLen int, obj []byte, f *fields) span {
	var typ, msg, st []byte
	var typEsc, msgEsc, stEsc bool
	it, ok := newObjIter(obj)
	if !ok {
		return span{}
	}
	for {
		k, kind, v, esc, _, more := it.next()
		if !more {
			break
		}
		if kind != jsonString {
			continue
		}
		switch string(k) {
		case "type":
			typ, typEsc = v, esc
		case "message":
			msg, msgEsc = v, esc
		case "stack_trace":
			st, stEsc = v, esc
		}
	}
	start := len(f.dec)
	switch {
	case len(st) > 0:
		f.dec = appendJSON(f.dec, st, stEsc)
	case len(typ) > 0:
		f.dec = appendJSON(f.dec, typ, typEsc)
		if len(msg) > 0 {
			f.dec = append(f.dec, ": "...)
			f.dec = appendJSON(f.dec, msg, msgEsc)
		}
	}
	if len(f.dec) == start {
		return span{}
	}
	return span{start + lineLen, len(f.dec) + lineLen}
}
