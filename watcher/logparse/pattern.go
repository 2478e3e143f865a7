package logparse

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Element kinds of a compiled ConversionPattern.
const (
	elLit    = iota // literal text
	elDate          // %d
	elLevel         // %p
	elThread        // %t: any text
	elLogger        // %c (or %C when there is no %c): text without spaces
	elToken         // %C, %F, %M, %l: text without spaces, not kept
	elLine          // %L: digits or '?'
	elDigits        // %r, %T, %pid, %sn, %N: digits, not kept
	elMsg           // %m
	elCtx           // %X{connector.context}: optional
	elVar           // %X{key}, %X, %x: any text, possibly empty, not kept
	elEnd           // %n, %ex and friends: nothing on the first line
)

type elem struct {
	kind  int
	lit   []byte
	min   int  // minimum width (padding), 0 = none
	left  bool // '-' modifier: padded on the right
	date  *dateFormat
	col   int  // 1-based column of the '%' in the pattern
	class bool // %C or %class: the logger when the pattern has no %c
}

// patternParser matches lines against a compiled log4j ConversionPattern.
// Conversions before %m are matched left to right, those after it right to
// left from the end of the line, so the message may contain anything.
type patternParser struct {
	pattern string
	prefix  []elem
	suffix  []elem
	hasMsg  bool
	loc     *time.Location
}

// ValidatePattern reports whether p is a log4j ConversionPattern that
// --log-pattern can read. Supported conversions: %d and %date with an
// optional SimpleDateFormat or named format ({ISO8601}, {ABSOLUTE},
// {DATE}, {yyyy-MM-dd HH:mm:ss,SSS}, …) and optional zone ({UTC}); %p,
// %level; %t, %thread, %tn; %c, %logger, %C, %class (precision options such
// as {1} accepted); %L, %line; %m, %msg, %message; %n; %X{key}, %mdc{key},
// %X; %x, %NDC; %F, %M, %l; %r, %T, %pid, %sn, %N; %ex, %xEx, %throwable and
// variants (they print after the line); %%; %highlight{…}{…} and
// %style{…}{…}, read as the pattern inside them; %notEmpty{%X{connector.context}}.
// Conversions that rewrite or may omit text (%equals, %replace, %encode,
// %maxLen, other %notEmpty contents) are reported by name. Format modifiers (%-5p, %5p,
// %.30c, %-20.30c) are accepted. An %X{key} other than connector.context that
// is not followed by literal text is read as empty, since its end cannot be
// told from what follows. The error names the first problem and its
// 1-based column, e.g. `log pattern "%d %Q": unknown conversion %Q at column 4`.
func ValidatePattern(p string) error {
	_, err := compilePattern(p, time.UTC)
	return err
}

// compilePattern compiles p; loc is the zone for %d text without an offset.
func compilePattern(p string, loc *time.Location) (*patternParser, error) {
	if p == "" {
		return nil, fmt.Errorf("log pattern is empty")
	}
	if loc == nil {
		loc = time.UTC
	}
	pp := &patternParser{pattern: p, loc: loc}
	orig := p
	p, cols, err := expandWrappers(orig)
	if err != nil {
		return nil, fmt.Errorf("log pattern %q: %w", orig, err)
	}
	var elems []elem
	addLit := func(b []byte) {
		if n := len(elems); n > 0 && elems[n-1].kind == elLit {
			elems[n-1].lit = append(elems[n-1].lit, b...)
			return
		}
		elems = append(elems, elem{kind: elLit, lit: append([]byte(nil), b...)})
	}
	errf := func(col int, format string, args ...any) error {
		// Report the column in the pattern as given, before wrappers such
		// as %highlight{…} were removed.
		oc := len(orig) + 1
		if col-1 < len(cols) {
			oc = cols[col-1]
		}
		return fmt.Errorf("log pattern %q: %s at column %d", orig, fmt.Sprintf(format, args...), oc)
	}
	sawEnd, hasLogger := false, false
	for i := 0; i < len(p); {
		c := p[i]
		if c != '%' {
			if sawEnd && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				return nil, errf(i+1, "text after %%n")
			}
			if !sawEnd {
				addLit([]byte{c})
			}
			i++
			continue
		}
		col := i + 1
		i++
		if i >= len(p) {
			return nil, errf(col, "dangling %%")
		}
		if p[i] == '%' {
			addLit([]byte{'%'})
			i++
			continue
		}
		e := elem{col: col}
		if p[i] == '-' {
			e.left = true
			i++
		}
		st := i
		for i < len(p) && isDigit(p[i]) {
			i++
		}
		if i > st {
			e.min, _ = strconv.Atoi(p[st:i])
		}
		if i < len(p) && p[i] == '.' {
			i++
			if i < len(p) && p[i] == '-' {
				i++
			}
			st = i
			for i < len(p) && isDigit(p[i]) {
				i++
			}
			if i == st {
				return nil, errf(col, "missing width after '.'")
			}
		}
		st = i
		for i < len(p) && isLetter(p[i]) {
			i++
		}
		if i == st {
			if i < len(p) {
				return nil, errf(col, "unknown conversion %%%c", p[i])
			}
			return nil, errf(col, "dangling %%")
		}
		// log4j 2 takes the longest known name; letters after it are text.
		name := p[st:i]
		kind := -1
		for n := len(name); n > 0; n-- {
			if k, ok := conversionKind(name[:n]); ok {
				kind, i = k, st+n
				name = name[:n]
				break
			}
		}
		if kind < 0 {
			return nil, errf(col, "unknown conversion %%%s", name)
		}
		var opts []string
		for i < len(p) && p[i] == '{' {
			j := bytes.IndexByte([]byte(p[i:]), '}')
			if j < 0 {
				return nil, errf(i+1, "unterminated {")
			}
			opts = append(opts, p[i+1:i+j])
			i += j + 1
		}
		if sawEnd && kind != elEnd {
			return nil, errf(col, "conversion %%%s after %%n", name)
		}
		e.kind = kind
		switch kind {
		case elDate:
			spec := ""
			if len(opts) > 0 {
				spec = opts[0]
			}
			df, err := compileDateFormat(spec)
			if err != nil {
				return nil, errf(col, "%%%s: %v", name, err)
			}
			if len(opts) > 1 && opts[1] != "" {
				l, err := time.LoadLocation(opts[1])
				if err != nil {
					return nil, errf(col, "%%%s: time zone %q: %v", name, opts[1], err)
				}
				df.loc = l
			}
			e.date = df
		case elVar:
			if len(opts) > 0 && opts[0] == "connector.context" {
				e.kind = elCtx
			}
		case elLogger:
			hasLogger = true
		case elToken:
			e.class = name == "C" || name == "class"
		case elEnd:
			if name == "n" {
				sawEnd = true
			}
			continue
		}
		elems = append(elems, e)
	}
	// %C (the caller's class) stands in for the logger when there is no %c.
	for k := range elems {
		if !hasLogger && elems[k].class {
			elems[k].kind = elLogger
			hasLogger = true
		}
	}
	msgAt := -1
	for k, e := range elems {
		if e.kind == elMsg {
			if msgAt >= 0 {
				return nil, errf(e.col, "more than one message conversion")
			}
			msgAt = k
		}
	}
	if msgAt < 0 {
		pp.prefix = elems
	} else {
		pp.hasMsg = true
		pp.prefix = elems[:msgAt]
		pp.suffix = elems[msgAt+1:]
	}
	if len(pp.prefix) == 0 && len(pp.suffix) == 0 && !pp.hasMsg {
		return nil, fmt.Errorf("log pattern %q: no conversion or text to match", orig)
	}
	return pp, nil
}

// conversionKind maps a conversion name to its element kind.
func conversionKind(name string) (int, bool) {
	switch name {
	case "d", "date":
		return elDate, true
	case "p", "level":
		return elLevel, true
	case "t", "thread", "tn", "threadName":
		return elThread, true
	case "c", "logger", "lo":
		return elLogger, true
	case "C", "class", "F", "file", "M", "method", "l", "location":
		return elToken, true
	case "L", "line":
		return elLine, true
	case "r", "relative", "T", "tid", "threadId", "pid", "sn", "sequenceNumber", "N", "nano":
		return elDigits, true
	case "m", "msg", "message":
		return elMsg, true
	case "X", "mdc", "MDC", "K", "map", "x", "NDC", "ndc":
		return elVar, true
	case "n", "ex", "exception", "throwable", "xEx", "xException", "xThrowable",
		"rEx", "rException", "rThrowable", "wEx", "wException", "wThrowable":
		return elEnd, true
	}
	return 0, false
}

// parse implements lineParser.
func (pp *patternParser) parse(line []byte, f *fields) int {
	pos, ok := pp.matchPrefix(line, f)
	if !ok {
		return noMatch
	}
	if !pp.hasMsg {
		return fullMatch
	}
	if end, ok := pp.matchSuffix(line, pos, f); ok {
		f.msg = span{pos, end}
		return fullMatch
	}
	f.logger, f.thread = span{}, span{}
	f.msg = span{pos, len(line)}
	if len(pp.suffix) == 0 {
		return fullMatch
	}
	return headMatch
}

// tail implements lineParser.
func (pp *patternParser) tail(line []byte, f *fields) bool {
	if !pp.hasMsg || len(pp.suffix) == 0 {
		return false
	}
	_, ok := pp.matchSuffix(line, 0, f)
	return ok
}

func (pp *patternParser) matchPrefix(line []byte, f *fields) (int, bool) {
	pos := 0
	els := pp.prefix
	for k := range els {
		e := &els[k]
		switch e.kind {
		case elLit:
			if !bytes.HasPrefix(line[pos:], e.lit) {
				return 0, false
			}
			pos += len(e.lit)
		case elDate:
			if e.min > 0 && !e.left {
				pos = skipSpaces(line, pos)
			}
			t, n, ok := e.date.parse(line[pos:], pp.loc)
			if !ok {
				return 0, false
			}
			f.time = t
			pos += n
			if e.left {
				pos = skipPad(line, pos, e.min-n)
			}
		case elLevel:
			if e.min > 0 && !e.left {
				pos = skipSpaces(line, pos)
			}
			j := pos
			for j < len(line) && isLetter(line[j]) {
				j++
			}
			lv := levelName(line[pos:j])
			if lv == "" {
				return 0, false
			}
			f.level = lv
			n := j - pos
			pos = j
			if e.left {
				pos = skipPad(line, pos, e.min-n)
			}
		case elLine, elDigits:
			if e.min > 0 && !e.left {
				pos = skipSpaces(line, pos)
			}
			j := pos
			for j < len(line) && (isDigit(line[j]) || (e.kind == elLine && line[j] == '?')) {
				j++
			}
			if j == pos {
				return 0, false
			}
			n := j - pos
			pos = j
			if e.left {
				pos = skipPad(line, pos, e.min-n)
			}
		case elCtx:
			if n := contextLen(line[pos:]); n > 0 {
				f.ctx = span{pos + 1, pos + n - 2}
				pos += n
			}
		default: // elThread, elLogger, elToken, elVar
			var end int
			if k+1 < len(els) && els[k+1].kind == elLit {
				idx := bytes.Index(line[pos:], els[k+1].lit)
				if idx < 0 {
					return 0, false
				}
				end = pos + idx
			} else if e.kind == elVar {
				// An MDC value with no text after it cannot be told apart
				// from what follows; take it as empty.
				end = pos
			} else {
				end = pos
				for end < len(line) && line[end] != ' ' {
					end++
				}
			}
			s, ok := trimValue(line, pos, end, e)
			if !ok {
				return 0, false
			}
			switch e.kind {
			case elThread:
				f.thread = s
			case elLogger:
				f.logger = s
			}
			pos = end
		}
	}
	return pos, true
}

// matchSuffix matches the conversions after %m right to left, from the end
// of line back to lo; it returns where the message ends.
func (pp *patternParser) matchSuffix(line []byte, lo int, f *fields) (int, bool) {
	end := len(line)
	els := pp.suffix
	for k := len(els) - 1; k >= 0; k-- {
		e := &els[k]
		switch e.kind {
		case elLit:
			if !bytes.HasSuffix(line[lo:end], e.lit) {
				return 0, false
			}
			end -= len(e.lit)
		case elLine, elDigits, elLevel:
			if e.left {
				end = skipPadBack(line, lo, end, e.min)
			}
			j := end
			for j > lo && (isDigit(line[j-1]) || (e.kind == elLine && line[j-1] == '?') || (e.kind == elLevel && isLetter(line[j-1]))) {
				j--
			}
			if j == end {
				return 0, false
			}
			if e.kind == elLevel {
				lv := levelName(line[j:end])
				if lv == "" {
					return 0, false
				}
				f.level = lv
			}
			end = j
			if e.min > 0 && !e.left {
				for end > lo && line[end-1] == ' ' {
					end--
				}
			}
		case elDate:
			n := e.date.fixedLen
			if n <= 0 || end-lo < n {
				return 0, false
			}
			t, m, ok := e.date.parse(line[end-n:end], pp.loc)
			if !ok || m != n {
				return 0, false
			}
			f.time = t
			end -= n
		default: // elThread, elLogger, elToken, elVar, elCtx
			var start int
			if k > 0 && els[k-1].kind == elLit {
				idx := lastIndex(line[lo:end], els[k-1].lit)
				if idx < 0 {
					return 0, false
				}
				start = lo + idx + len(els[k-1].lit)
			} else {
				start = end
				for start > lo && line[start-1] != ' ' {
					start--
				}
			}
			s, ok := trimValue(line, start, end, e)
			if !ok {
				return 0, false
			}
			switch e.kind {
			case elThread:
				f.thread = s
			case elLogger:
				f.logger = s
			case elCtx:
				f.ctx = s
			}
			end = start
		}
	}
	return end, true
}

// trimValue removes padding from a variable-width value and checks that a
// logger or token value has no spaces.
func trimValue(line []byte, start, end int, e *elem) (span, bool) {
	if e.min > 0 {
		for start < end && line[start] == ' ' {
			start++
		}
		for end > start && line[end-1] == ' ' {
			end--
		}
	}
	if e.kind == elLogger || e.kind == elToken {
		if start == end || bytes.IndexByte(line[start:end], ' ') >= 0 {
			return span{}, false
		}
	}
	return span{start, end}, true
}

func skipSpaces(line []byte, pos int) int {
	for pos < len(line) && line[pos] == ' ' {
		pos++
	}
	return pos
}

// skipPad skips up to n padding spaces.
func skipPad(line []byte, pos, n int) int {
	for ; n > 0 && pos < len(line) && line[pos] == ' '; n-- {
		pos++
	}
	return pos
}

// skipPadBack skips, backwards from end, the spaces that right padding to
// width min may have added.
func skipPadBack(line []byte, lo, end, min int) int {
	for n := min - 1; n > 0 && end > lo && line[end-1] == ' '; n-- {
		end--
	}
	return end
}

// lastIndex is bytes.LastIndex for the short separators of a pattern; it
// scans back for the separator's first byte, which is faster than the
// general algorithm when the byte is rare, as '(' and '[' are in messages.
func lastIndex(s, sep []byte) int {
	if len(sep) == 0 {
		return len(s)
	}
	c := sep[0]
	for end := len(s) - len(sep) + 1; end > 0; {
		i := bytes.LastIndexByte(s[:end], c)
		if i < 0 {
			return -1
		}
		if bytes.HasPrefix(s[i:], sep) {
			return i
		}
		end = i
	}
	return -1
}

// expandWrappers rewrites the log4j 2 conversions that only decorate the
// text of an inner pattern: %highlight{inner}{…} and %style{inner}{…} (ANSI
// colours, which a log file written by log4j does not carry unless the
// console had them on; they are not stripped) become inner, and
// %notEmpty{%X{connector.context}} becomes %X{connector.context}, which is
// optional anyway. Conversions that change or may omit the text
// (%notEmpty, %varsNotEmpty, %variablesNotEmpty with other contents,
// %equals, %equalsIgnoreCase, %replace, %encode, %maxLen, %maxLength) cannot
// be read back and are reported by name. It returns the rewritten pattern
// and, for each of its bytes, the 1-based column in p it came from.
func expandWrappers(p string) (string, []int, error) {
	var out []byte
	var cols []int
	if err := expandInto(p, 0, &out, &cols); err != nil {
		return "", nil, err
	}
	return string(out), cols, nil
}

func expandInto(p string, base int, out *[]byte, cols *[]int) error {
	put := func(from, to int) {
		*out = append(*out, p[from:to]...)
		for k := from; k < to; k++ {
			*cols = append(*cols, base+k+1)
		}
	}
	for i := 0; i < len(p); {
		if p[i] != '%' {
			put(i, i+1)
			i++
			continue
		}
		if i+1 < len(p) && p[i+1] == '%' {
			put(i, i+2)
			i += 2
			continue
		}
		col := i + 1
		j := i + 1
		for j < len(p) && (p[j] == '-' || p[j] == '.' || isDigit(p[j])) {
			j++
		}
		st := j
		for j < len(p) && isLetter(p[j]) {
			j++
		}
		name := p[st:j]
		switch name {
		case "highlight", "style", "notEmpty", "varsNotEmpty", "variablesNotEmpty",
			"equals", "equalsIgnoreCase", "replace", "encode", "maxLen", "maxLength":
		default:
			put(i, j)
			i = j
			continue
		}
		var groups []string
		var groupAt []int
		for j < len(p) && p[j] == '{' {
			end := matchBrace(p, j)
			if end < 0 {
				return fmt.Errorf("unterminated { at column %d", base+j+1)
			}
			groups = append(groups, p[j+1:end])
			groupAt = append(groupAt, j+1)
			j = end + 1
		}
		switch name {
		case "highlight", "style":
			if len(groups) == 0 {
				return fmt.Errorf("%%%s without {pattern} at column %d", name, base+col)
			}
			if err := expandInto(groups[0], base+groupAt[0], out, cols); err != nil {
				return err
			}
		case "notEmpty", "varsNotEmpty", "variablesNotEmpty":
			if len(groups) > 0 {
				switch strings.TrimSpace(groups[0]) {
				case "%X{connector.context}", "%mdc{connector.context}", "%MDC{connector.context}":
					g := groups[0]
					put(groupAt[0]+strings.IndexByte(g, '%'), groupAt[0]+len(strings.TrimRight(g, " \t")))
					i = j
					continue
				}
			}
			return fmt.Errorf("unsupported conversion %%%s at column %d (its text may be absent from a line; only %%%s{%%X{connector.context}} can be read)", name, base+col, name)
		default:
			return fmt.Errorf("unsupported conversion %%%s at column %d (it changes the logged text)", name, base+col)
		}
		i = j
	}
	return nil
}

// matchBrace returns the index of the '}' that closes the '{' at p[open],
// counting nested braces, or -1.
func matchBrace(p string, open int) int {
	depth := 0
	for k := open; k < len(p); k++ {
		switch p[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}
