package logparse

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON kinds reported by objIter.next.
const (
	jsonString = 's'
	jsonObject = 'o'
	jsonArray  = 'a'
	jsonOther  = 'n' // number, true, false, null
)

// objIter walks the members of one JSON object without reflection or
// allocation. It is deliberately lenient: it stops at the first syntax error
// (ok=false from next, broken=true) so that a line cut at the line cap still
// yields the members before the cut.
type objIter struct {
	b      []byte
	i      int
	broken bool
	done   bool
}

// newObjIter starts at the first non-space byte of b, which must be '{'.
func newObjIter(b []byte) (objIter, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return objIter{}, false
	}
	return objIter{b: b, i: i + 1}, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// next returns the next member. key is the raw key text (escapes are not
// decoded; keys in log JSON do not use them). For strings, val is the raw
// text between the quotes and esc reports whether it holds a backslash; for
// other kinds val is the raw value text. A string cut by the end of the
// input is returned with cut=true, and iteration ends after it.
func (it *objIter) next() (key []byte, kind byte, val []byte, esc, cut, ok bool) {
	if it.done || it.broken {
		return nil, 0, nil, false, false, false
	}
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) {
		it.broken = true
		return nil, 0, nil, false, false, false
	}
	if b[i] == '}' {
		it.done = true
		it.i = i + 1
		return nil, 0, nil, false, false, false
	}
	if b[i] != '"' {
		it.broken = true
		return nil, 0, nil, false, false, false
	}
	ks, ke, _, kcut := scanString(b, i+1)
	if kcut {
		it.broken = true
		return nil, 0, nil, false, false, false
	}
	key = b[ks:ke]
	i = skipSpace(b, ke+1)
	if i >= len(b) || b[i] != ':' {
		it.broken = true
		return nil, 0, nil, false, false, false
	}
	i = skipSpace(b, i+1)
	if i >= len(b) {
		it.broken = true
		return nil, 0, nil, false, false, false
	}
	switch b[i] {
	case '"':
		vs, ve, e, c := scanString(b, i+1)
		if c {
			it.broken = true
			return key, jsonString, b[vs:ve], e, true, true
		}
		it.i = ve + 1
		return key, jsonString, b[vs:ve], e, false, true
	case '{', '[':
		end, good := skipComposite(b, i)
		if !good {
			it.broken = true
			return nil, 0, nil, false, false, false
		}
		it.i = end
		k := byte(jsonObject)
		if b[i] == '[' {
			k = jsonArray
		}
		return key, k, b[i:end], false, false, true
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		if j == i {
			it.broken = true
			return nil, 0, nil, false, false, false
		}
		it.i = j
		return key, jsonOther, b[i:j], false, false, true
	}
}

// scanString scans a JSON string whose opening quote is at start-1. It
// returns the content span, whether it holds escapes, and cut=true when the
// input ends before the closing quote (then end is len(b)).
func scanString(b []byte, start int) (s, end int, esc, cut bool) {
	i := start
	for i < len(b) {
		switch b[i] {
		case '"':
			return start, i, esc, false
		case '\\':
			esc = true
			i += 2
			continue
		}
		i++
	}
	return start, len(b), esc, true
}

// skipComposite skips the object or array starting at b[i], returning the
// index after its closing bracket.
func skipComposite(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			_, e, _, cut := scanString(b, i+1)
			if cut {
				return len(b), false
			}
			i = e + 1
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return len(b), false
}

// appendUnescaped appends the decoded form of the JSON string content s
// (without quotes) to dst. Unknown escapes are kept verbatim; bad \u escapes
// and unpaired surrogates become U+FFFD. A trailing lone backslash (a string
// cut mid-escape) is dropped.
func appendUnescaped(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return dst
		}
		c := s[1]
		s = s[2:]
		switch c {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'u':
			r, n := hex4(s)
			if n == 0 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				continue
			}
			s = s[n:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if r2, n2 := hex4(s[2:]); n2 != 0 {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							s = s[6:]
							dst = utf8.AppendRune(dst, d)
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, '\\', c)
		}
	}
	return dst
}

func hex4(s []byte) (rune, int) {
	if len(s) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}
