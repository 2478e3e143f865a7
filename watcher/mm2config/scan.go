package mm2config

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Entry is one key = value line of the properties file, in file order.
// Value is the decoded value as written (escapes and continuations
// applied, ${...} placeholders NOT resolved), so it may hold a plain-text
// secret: pass it through IsSensitiveKey before showing it to anyone.
// Line is the 1-based line on which the key starts. A key that appears
// twice yields two Entries; the later one is the effective one, as in
// java.util.Properties.
type Entry struct {
	Key, Value string
	Line       int
}

// scanError is a syntax error found by scanProperties, at a 1-based line.
// Its message never contains the value being scanned.
type scanError struct {
	line int
	msg  string
}

func (e *scanError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// normalizeNewlines turns CRLF into LF and drops a leading UTF-8 byte order
// mark. java.util.Properties treats CRLF as one line terminator (also after a
// continuation backslash); magiconair/properties does not, so both the
// scanner and the library are fed the normalised text.
func normalizeNewlines(data []byte) string {
	s := string(data)
	s = strings.TrimPrefix(s, "\uFEFF")
	if strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// propScanner walks the text rune by rune with the same state machine as
// magiconair/properties v1.18.13 (lex.go), so that it yields the same keys and
// values, and additionally counts lines. Lines are counted on '\n' only.
type propScanner struct {
	in   string
	pos  int
	line int
	w    int
}

const scanEOF = -1

func (s *propScanner) next() rune {
	if s.pos >= len(s.in) {
		s.w = 0
		return scanEOF
	}
	r, w := utf8.DecodeRuneInString(s.in[s.pos:])
	s.w = w
	s.pos += w
	if r == '\n' {
		s.line++
	}
	return r
}

func (s *propScanner) backup() {
	s.pos -= s.w
	if s.w == 1 && s.in[s.pos] == '\n' {
		s.line--
	}
	s.w = 0
}

func (s *propScanner) peek() rune {
	r := s.next()
	s.backup()
	return r
}

func isPropWhitespace(r rune) bool { return r == ' ' || r == '\f' || r == '\t' }
func isPropEOL(r rune) bool        { return r == '\n' || r == '\r' }
func isPropEndOfKey(r rune) bool   { return isPropWhitespace(r) || isPropEOL(r) || r == ':' || r == '=' }

// escape decodes the escape sequence after a backslash into b.
func (s *propScanner) escape(b *strings.Builder) error {
	startLine := s.line
	switch r := s.next(); r {
	case scanEOF:
		return &scanError{startLine, "backslash at end of file"}
	case 'f':
		b.WriteRune('\f')
	case 'n':
		b.WriteRune('\n')
	case 'r':
		b.WriteRune('\r')
	case 't':
		b.WriteRune('\t')
	case 'u':
		var v rune
		for range 4 {
			d := s.next()
			var n rune
			switch {
			case d >= '0' && d <= '9':
				n = d - '0'
			case d >= 'a' && d <= 'f':
				n = d - 'a' + 10
			case d >= 'A' && d <= 'F':
				n = d - 'A' + 10
			default:
				return &scanError{startLine, `malformed \uXXXX escape`}
			}
			v = v<<4 | n
		}
		b.WriteRune(v)
	default:
		b.WriteRune(r)
	}
	return nil
}

// scanProperties returns every key/value pair of a properties text in file
// order with the line its key starts on. It accepts exactly what
// magiconair/properties accepts and reports the first syntax error.
func scanProperties(in string) ([]Entry, error) {
	s := &propScanner{in: in, line: 1}
	var out []Entry
	var b strings.Builder
	for {
		// Before a key: skip blank space, empty lines and comments.
		r := s.next()
		switch {
		case r == scanEOF:
			return out, nil
		case isPropEOL(r), isPropWhitespace(r):
			continue
		case r == '#' || r == '!':
			for {
				r = s.next()
				if r == scanEOF || isPropEOL(r) {
					break
				}
			}
			if r == scanEOF {
				return out, nil
			}
			continue
		}
		s.backup()

		// The key, up to an unescaped separator.
		line := s.line
		b.Reset()
		for {
			r = s.next()
			if r == scanEOF {
				break
			}
			if r == '\\' {
				if err := s.escape(&b); err != nil {
					return out, err
				}
				continue
			}
			if isPropEndOfKey(r) {
				s.backup()
				break
			}
			b.WriteRune(r)
		}
		key := b.String()
		if r == scanEOF {
			if key != "" {
				out = append(out, Entry{Key: key, Line: line})
			}
			return out, nil
		}
		if key == "" {
			return out, &scanError{line, "line starts with a separator and has no key"}
		}

		// The separator: blanks, at most one of ':' or '=', blanks.
		for isPropWhitespace(s.peek()) {
			s.next()
		}
		if p := s.peek(); p == ':' || p == '=' {
			s.next()
		}
		for isPropWhitespace(s.peek()) {
			s.next()
		}

		// The value, to the end of the logical line.
		b.Reset()
		for {
			r = s.next()
			if r == scanEOF || isPropEOL(r) {
				break
			}
			if r == '\\' {
				if isPropEOL(s.peek()) {
					s.next()
					for isPropWhitespace(s.peek()) {
						s.next()
					}
					continue
				}
				if err := s.escape(&b); err != nil {
					return out, err
				}
				continue
			}
			b.WriteRune(r)
		}
		out = append(out, Entry{Key: key, Value: b.String(), Line: line})
		if r == scanEOF {
			return out, nil
		}
	}
}
