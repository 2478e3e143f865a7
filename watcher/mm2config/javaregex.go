package mm2config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// listSeparator is ConfigDef's COMMA_WITH_WHITESPACE, `\s*,\s*`, with Java's
// \s (which, unlike Go's, includes the vertical tab).
var listSeparator = regexp.MustCompile(`[ \t\n\x0B\f\r]*,[ \t\n\x0B\f\r]*`)

// ParseList splits a value the way Kafka's ConfigDef parses a LIST
// (clients/.../common/config/ConfigDef.java, parseType): trim (Java
// String.trim, every char <= U+0020), an empty result is the empty list,
// otherwise split on `\s*,\s*` with limit -1, so empty entries, including
// trailing ones, are kept: "a, b," gives ["a" "b" ""].
func ParseList(value string) []string {
	t := strings.TrimFunc(value, func(r rune) bool { return r <= ' ' })
	if t == "" {
		return []string{}
	}
	return listSeparator.Split(t, -1)
}

// RegexError is returned by TranslateJavaRegex for a Java pattern that Go's
// RE2 engine cannot express or that Java itself rejects.
type RegexError struct {
	Pattern string // the Java pattern as given
	Msg     string // what is wrong, e.g. "lookahead (?= is not supported by Go's RE2 engine"
}

func (e *RegexError) Error() string {
	return fmt.Sprintf("regex %q does not compile: %s", e.Pattern, e.Msg)
}

// posixClasses maps java.util.regex POSIX property names (US-ASCII only, as
// in Java without UNICODE_CHARACTER_CLASS) to the body of a Go class.
var posixClasses = map[string]string{
	"Lower": `a-z`, "Upper": `A-Z`, "ASCII": `\x00-\x7F`, "Alpha": `a-zA-Z`,
	"Digit": `0-9`, "Alnum": `a-zA-Z0-9`, "Punct": `!-/:-@\[-` + "`" + `{-~`,
	"Graph": `!-~`, "Print": ` -~`, "Blank": ` \t`, "Cntrl": `\x00-\x1F\x7F`,
	"XDigit": `0-9a-fA-F`, "Space": ` \t\n\x0B\f\r`,
}

// javaProperties maps the java.lang.Character properties of
// java.util.regex (\p{javaLowerCase} is Character.isLowerCase, ...) to the
// body of a Go class built from the Unicode general categories they are
// defined by. Other_Lowercase, Other_Uppercase and Other_Alphabetic code
// points are not included; no Kafka topic name contains one.
var javaProperties = map[string]string{
	"javaLowerCase": `\p{Ll}`, "javaUpperCase": `\p{Lu}`, "javaTitleCase": `\p{Lt}`,
	"javaDigit": `\p{Nd}`, "javaDefined": `\P{Cn}`, "javaLetter": `\p{L}`,
	"javaLetterOrDigit": `\p{L}\p{Nd}`, "javaAlphabetic": `\p{L}\p{Nl}`,
	"javaSpaceChar": `\p{Z}`, "javaISOControl": `\x00-\x1F\x7F-\x{9F}`,
	"javaWhitespace":             `\t-\r\x1C-\x1F\x{1680}\x{2000}-\x{2006}\x{2008}-\x{200A}\x{2028}\x{2029}\x{205F}\x{3000} `,
	"javaIdeographic":            `\p{Han}`,
	"javaJavaIdentifierStart":    `\p{L}\p{Nl}\p{Sc}\p{Pc}`,
	"javaJavaIdentifierPart":     `\p{L}\p{Nl}\p{Sc}\p{Pc}\p{Nd}\p{Mn}\p{Mc}\x00-\x08\x0E-\x1B\x7F-\x{9F}\p{Cf}`,
	"javaUnicodeIdentifierStart": `\p{L}\p{Nl}`,
	"javaUnicodeIdentifierPart":  `\p{L}\p{Nl}\p{Pc}\p{Nd}\p{Mn}\p{Mc}\x00-\x08\x0E-\x1B\x7F-\x{9F}\p{Cf}`,
	"javaIdentifierIgnorable":    `\x00-\x08\x0E-\x1B\x7F-\x{9F}\p{Cf}`,
}

// Class bodies of Java's \h, \v and \s (java.util.regex.Pattern).
const (
	javaHorizontalWS = `\t \x{A0}\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}`
	javaVerticalWS   = `\n\x0B\f\r\x{85}\x{2028}\x{2029}`
	javaWhitespace   = `\t\n\x0B\f\r `
)

// TranslateJavaRegex rewrites a java.util.regex.Pattern source as a Go
// regexp (RE2) source with the same meaning, for the patterns MM2's
// DefaultTopicFilter and DefaultGroupFilter compile. notes lists, once
// each, the Java constructs that were rewritten (for a Warning). It fails
// with a *RegexError for constructs RE2 lacks (lookahead, lookbehind,
// backreferences, atomic groups, possessive quantifiers, class
// intersection and union, \G, \X) and for a `{` that does not
// start a valid quantifier, which Java rejects ("Illegal repetition") while Go
// would read it literally. Other syntax errors are left to regexp.Compile.
//
// Known remaining differences: Java's `.` also excludes \r, U+0085, U+2028 and
// U+2029 (Go excludes only \n), and Java's (?i) folds ASCII only unless (?u)
// is given. Neither can occur in a Kafka topic name.
func TranslateJavaRegex(src string) (string, []string, error) {
	return translateJava(src, false)
}

// translateJava is TranslateJavaRegex for either engine: with backtrack
// set, the output is for regexp2 (compiled with its RE2 option) and keeps
// lookaround, backreferences and atomic groups, and rewrites possessive
// quantifiers as atomic groups.
func translateJava(src string, backtrack bool) (string, []string, error) {
	t := &translator{src: src, seen: map[string]bool{}, backtrack: backtrack, atom: -1}
	if err := t.run(); err != nil {
		return "", t.notes, err
	}
	return t.out.String(), t.notes, nil
}

type translator struct {
	src   string
	pos   int
	out   strings.Builder
	notes []string
	seen  map[string]bool

	backtrack bool           // output is for regexp2 rather than RE2
	atom      int            // offset in out where the last quantifiable atom starts, -1 if none
	groups    int            // capturing groups opened so far (Java's numbering)
	names     map[string]int // named group -> number (backtrack mode)
	stack     []frame        // open groups
	comments  bool           // Java COMMENTS flag (?x) in effect
}

// frame is one open group: where its output starts and the COMMENTS flag
// to restore when it closes (Java scopes inline flags to the group).
type frame struct {
	start    int
	comments bool
}

// javaSpace reports whether r is whitespace that Java's COMMENTS mode skips
// (Character.isWhitespace on ASCII: [ \t\n\x0B\f\r]).
func javaSpace(r rune) bool {
	return r == ' ' || (r >= '\t' && r <= '\r')
}

// skipComment skips a COMMENTS-mode comment; the '#' has been read.
func (t *translator) skipComment() {
	for !t.eof() {
		if r := t.next(); r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return
		}
	}
}

func (t *translator) fail(format string, args ...any) error {
	return &RegexError{Pattern: t.src, Msg: fmt.Sprintf(format, args...)}
}

func (t *translator) note(n string) {
	if !t.seen[n] {
		t.seen[n] = true
		t.notes = append(t.notes, n)
	}
}

func (t *translator) eof() bool { return t.pos >= len(t.src) }

func (t *translator) next() rune {
	r, w := utf8.DecodeRuneInString(t.src[t.pos:])
	t.pos += w
	return r
}

func (t *translator) peek() rune {
	if t.eof() {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(t.src[t.pos:])
	return r
}

func (t *translator) run() error {
	for !t.eof() {
		r := t.next()
		if t.comments && javaSpace(r) {
			continue
		}
		if t.comments && r == '#' {
			t.skipComment()
			continue
		}
		switch r {
		case '\\':
			t.atom = t.out.Len()
			if err := t.escape(false); err != nil {
				return err
			}
		case '[':
			t.atom = t.out.Len()
			if err := t.class(); err != nil {
				return err
			}
		case '(':
			t.atom = -1
			if err := t.group(); err != nil {
				return err
			}
		case ')':
			t.out.WriteByte(')')
			t.atom = -1
			if n := len(t.stack); n > 0 {
				f := t.stack[n-1]
				t.stack = t.stack[:n-1]
				t.atom, t.comments = f.start, f.comments
			}
		case '|':
			t.out.WriteByte('|')
			t.atom = -1
		case '{':
			if err := t.quantifiable(r); err != nil {
				return err
			}
			if err := t.repetition(); err != nil {
				return err
			}
			if err := t.quantifierSuffix(); err != nil {
				return err
			}
			t.atom = -1
		case '*', '+', '?':
			if err := t.quantifiable(r); err != nil {
				return err
			}
			t.out.WriteRune(r)
			if err := t.quantifierSuffix(); err != nil {
				return err
			}
			t.atom = -1
		default:
			t.atom = t.out.Len()
			t.out.WriteRune(r)
		}
	}
	return nil
}

// quantifiable fails, for the backtracking engine, on a quantifier with
// nothing before it to repeat ("Dangling meta character" in Java), such as
// the third '+' of a+++, which would otherwise repeat the atomic group
// written for a++.
func (t *translator) quantifiable(q rune) error {
	if t.backtrack && t.atom < 0 {
		return t.fail("dangling meta character %q", q)
	}
	return nil
}

// quantifierSuffix handles what may follow a quantifier: `?` (reluctant,
// same in Go) or `+` (possessive, which RE2 lacks). For the backtracking
// engine X*+ is written as the atomic group (?>X*), which is what a
// possessive quantifier means.
func (t *translator) quantifierSuffix() error {
	switch t.peek() {
	case '?':
		t.out.WriteRune(t.next())
	case '+':
		if !t.backtrack {
			return t.fail("possessive quantifiers (*+, ++, ?+, {n}+) are not supported by Go's RE2 engine")
		}
		if t.atom < 0 {
			return t.fail("dangling possessive quantifier")
		}
		t.next()
		s := t.out.String()
		t.out.Reset()
		t.out.WriteString(s[:t.atom] + "(?>" + s[t.atom:] + ")")
	}
	return nil
}

// repetition reads the rest of a `{n}`, `{n,}` or `{n,m}` quantifier.
func (t *translator) repetition() error {
	end := strings.IndexByte(t.src[t.pos:], '}')
	if end < 0 {
		return t.fail("illegal repetition: '{' does not start a {n}, {n,} or {n,m} quantifier (a comma inside {} splits the list entry, as in MM2)")
	}
	body := t.src[t.pos : t.pos+end]
	lo, hi, comma := strings.Cut(body, ",")
	if !isDigits(lo) || (comma && hi != "" && !isDigits(hi)) {
		return t.fail("illegal repetition {%s}: '{' does not start a {n}, {n,} or {n,m} quantifier (a comma inside {} splits the list entry, as in MM2)", body)
	}
	t.pos += end + 1
	t.out.WriteString("{" + body + "}")
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// group handles `(` and the Java group constructs that follow it.
func (t *translator) group() error {
	t.stack = append(t.stack, frame{start: t.out.Len(), comments: t.comments})
	if t.peek() != '?' {
		t.groups++
		t.out.WriteByte('(')
		return nil
	}
	t.next()
	rest := t.src[t.pos:]
	switch {
	case strings.HasPrefix(rest, ":"):
		t.pos++
		t.out.WriteString("(?:")
		return nil
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
		if !t.backtrack {
			return t.fail("lookahead (?%c is not supported by Go's RE2 engine", rest[0])
		}
		t.pos++
		t.out.WriteString("(?" + rest[:1])
		return nil
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
		if !t.backtrack {
			return t.fail("lookbehind (?%s is not supported by Go's RE2 engine", rest[:2])
		}
		t.pos += 2
		t.out.WriteString("(?" + rest[:2])
		return nil
	case strings.HasPrefix(rest, ">"):
		if !t.backtrack {
			return t.fail("atomic groups (?> are not supported by Go's RE2 engine")
		}
		t.pos++
		t.out.WriteString("(?>")
		return nil
	case strings.HasPrefix(rest, "<"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return t.fail("named group without closing '>'")
		}
		name := rest[1:end]
		if !validGroupName(name) {
			return t.fail("named capturing group <%s> has an invalid name", name)
		}
		t.pos += end + 1
		t.groups++
		if !t.backtrack {
			t.out.WriteString("(?P<" + name + ">")
			return nil
		}
		// regexp2, like .NET, numbers named groups after the unnamed
		// ones; Java numbers all groups left to right. A plain group
		// keeps the numbers equal, and \k<name> is written by number.
		if t.names == nil {
			t.names = map[string]int{}
		}
		if _, dup := t.names[name]; dup {
			return t.fail("named capturing group <%s> is already defined", name)
		}
		t.names[name] = t.groups
		t.out.WriteByte('(')
		return nil
	}
	// A pure flag group (?i) opens nothing.
	t.stack = t.stack[:len(t.stack)-1]
	return t.flags()
}

// validGroupName reports whether name is a Java group name: an ASCII
// letter followed by ASCII letters and digits.
func validGroupName(name string) bool {
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}

// flags reads inline flags after "(?".
func (t *translator) flags() error {
	saved := t.comments
	// Inline flags: (?idmsuxU-idmsuxU) or (?idmsux-idmsux:X).
	var on, off strings.Builder
	neg := false
	for {
		if t.eof() {
			return t.fail("unclosed inline flag group")
		}
		c := t.next()
		switch c {
		case '-':
			neg = true
			continue
		case ')', ':':
			if c == ':' {
				t.stack = append(t.stack, frame{start: t.out.Len(), comments: saved})
			}
			return t.emitFlags(on.String(), off.String(), c)
		case 'i', 'm', 's':
			if neg {
				off.WriteRune(c)
			} else {
				on.WriteRune(c)
			}
		case 'x':
			// COMMENTS: whitespace and #-comments are dropped here.
			t.comments = !neg
		case 'd', 'u', 'U':
			t.note(fmt.Sprintf("inline flag %q (UNIX_LINES, UNICODE_CASE or UNICODE_CHARACTER_CLASS) has no Go equivalent and was dropped", c))
		default:
			return t.fail("unknown inline flag %q", c)
		}
	}
}

func (t *translator) emitFlags(on, off string, end rune) error {
	flags := on
	if off != "" {
		flags += "-" + off
	}
	switch {
	case end == ':' && flags == "":
		t.out.WriteString("(?:")
	case end == ':':
		t.out.WriteString("(?" + flags + ":")
	case flags != "":
		t.out.WriteString("(?" + flags + ")")
	}
	return nil
}

// class translates a bracket expression; the '[' has been read.
func (t *translator) class() error {
	t.out.WriteByte('[')
	if t.peek() == '^' {
		t.out.WriteRune(t.next())
	}
	if t.peek() == ']' {
		t.next()
		t.out.WriteString(`\]`)
	}
	for {
		if t.eof() {
			return t.fail("unclosed character class")
		}
		r := t.next()
		if t.comments && javaSpace(r) {
			continue
		}
		if t.comments && r == '#' {
			t.skipComment()
			continue
		}
		switch r {
		case ']':
			t.out.WriteByte(']')
			return nil
		case '[':
			return t.fail("character class union (a '[' inside [...]) is not supported here; escape it as \\[ for a literal")
		case '&':
			if t.peek() == '&' {
				return t.fail("character class intersection (&&) is not supported here")
			}
			t.out.WriteByte('&')
		case '\\':
			if err := t.escape(true); err != nil {
				return err
			}
		default:
			t.out.WriteRune(r)
		}
	}
}

// escape translates a backslash escape; the backslash has been read.
// inClass tells whether the output goes inside a bracket expression.
func (t *translator) escape(inClass bool) error {
	if t.eof() {
		return t.fail("trailing backslash")
	}
	c := t.next()
	switch {
	case c == 'Q':
		end := strings.Index(t.src[t.pos:], `\E`)
		var lit string
		if end < 0 {
			lit, t.pos = t.src[t.pos:], len(t.src)
		} else {
			lit = t.src[t.pos : t.pos+end]
			t.pos += end + 2
		}
		if inClass {
			for _, r := range lit {
				t.literal(r)
			}
		} else if lit != "" {
			// A quantifier after \E applies to the last character only.
			_, w := utf8.DecodeLastRuneInString(lit)
			t.out.WriteString(regexp.QuoteMeta(lit[:len(lit)-w]))
			t.atom = t.out.Len()
			t.out.WriteString(regexp.QuoteMeta(lit[len(lit)-w:]))
		}
	case c >= '1' && c <= '9' && !inClass:
		if !t.backtrack {
			return t.fail("backreference \\%c is not supported by Go's RE2 engine", c)
		}
		// Java reads further digits while they name a group opened so
		// far (Pattern.ref).
		n := int(c - '0')
		for d := t.peek(); d >= '0' && d <= '9' && n*10+int(d-'0') <= t.groups; d = t.peek() {
			n = n*10 + int(d-'0')
			t.next()
		}
		t.backref(n)
	case c >= '1' && c <= '9':
		return t.fail("illegal escape \\%c inside [...]", c)
	case c == 'k' && t.peek() == '<':
		if !t.backtrack {
			return t.fail("named backreference \\k<...> is not supported by Go's RE2 engine")
		}
		end := strings.IndexByte(t.src[t.pos:], '>')
		if end < 0 {
			return t.fail("named backreference \\k< without closing '>'")
		}
		name := t.src[t.pos+1 : t.pos+end]
		n, ok := t.names[name]
		if !ok {
			return t.fail("named capturing group <%s> does not exist", name)
		}
		t.pos += end + 1
		t.backref(n)
	case c == 'G':
		if !t.backtrack || inClass {
			return t.fail("\\G (end of previous match) is not supported by Go's RE2 engine")
		}
		t.out.WriteString(`\G`)
	case c == 'X', c == 'N':
		return t.fail("\\%c is not supported by Go's RE2 engine", c)
	case c == 'b' && t.peek() == '{':
		return t.fail("\\b{...} boundaries are not supported by Go's RE2 engine")
	case c == '0':
		n, digits := 0, 0
		for digits < 3 {
			d := t.peek()
			if d < '0' || d > '7' || (digits == 2 && n > 037) {
				break
			}
			t.next()
			n = n*8 + int(d-'0')
			digits++
		}
		if digits == 0 {
			return t.fail("illegal octal escape \\0")
		}
		t.note(`octal escape \0nn written as \x{..}`)
		t.literal(rune(n))
	case c == 'u':
		r, err := t.hex4()
		if err != nil {
			return err
		}
		if r >= 0xD800 && r <= 0xDBFF && strings.HasPrefix(t.src[t.pos:], `\u`) {
			save := t.pos
			t.pos += 2
			lo, err := t.hex4()
			if err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
				r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
			} else {
				t.pos = save
			}
		}
		t.note(`\uXXXX written as \x{XXXX}`)
		t.literal(r)
	case c == 'e':
		t.note(`\e written as \x1B`)
		t.literal(0x1B)
	case c == 'c':
		if t.eof() {
			return t.fail("\\c must be followed by a character")
		}
		t.note(`control escape \cX written as \x{..}`)
		t.literal(t.next() ^ 64)
	case c == 'h' || c == 'v' || c == 's':
		body := map[rune]string{'h': javaHorizontalWS, 'v': javaVerticalWS, 's': javaWhitespace}[c]
		if c != 's' {
			t.note(fmt.Sprintf(`\%c written as an explicit class`, c))
		}
		if inClass {
			t.out.WriteString(body)
		} else {
			t.out.WriteString("[" + body + "]")
		}
	case c == 'H' || c == 'V':
		if inClass {
			return t.fail("\\%c inside [...] is not supported here", c)
		}
		body := javaHorizontalWS
		if c == 'V' {
			body = javaVerticalWS
		}
		t.note(fmt.Sprintf(`\%c written as an explicit class`, c))
		t.out.WriteString("[^" + body + "]")
	case c == 'R':
		if inClass {
			return t.fail("\\R is not allowed inside [...]")
		}
		t.note(`\R written as an explicit alternation`)
		t.out.WriteString(`(?:\r\n|[` + javaVerticalWS + `])`)
	case c == 'Z':
		if inClass {
			return t.fail("\\Z is not allowed inside [...]")
		}
		t.note(`\Z written as an optional final line terminator and \z`)
		t.out.WriteString(`(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?\z`)
	case c == 'p' || c == 'P':
		return t.property(c == 'P', inClass)
	case c < utf8.RuneSelf:
		t.out.WriteByte('\\')
		t.out.WriteRune(c)
	default:
		// Java reads a backslash before a non-ASCII character as that
		// character; RE2 rejects the escape.
		t.literal(c)
	}
	return nil
}

// backref writes a backreference to group n. A group Java has not opened
// yet at this point never has a value, so the reference never matches.
func (t *translator) backref(n int) {
	if n > t.groups {
		t.out.WriteString("(?!)")
		return
	}
	fmt.Fprintf(&t.out, `(?:\%d)`, n)
}

func (t *translator) hex4() (rune, error) {
	if len(t.src)-t.pos < 4 {
		return 0, t.fail("illegal Unicode escape sequence")
	}
	v, err := strconv.ParseUint(t.src[t.pos:t.pos+4], 16, 32)
	if err != nil {
		return 0, t.fail("illegal Unicode escape sequence")
	}
	t.pos += 4
	return rune(v), nil
}

// literal writes one character so that it means itself in or out of a class.
func (t *translator) literal(r rune) {
	switch {
	case r < 0x20 || r == 0x7F || (r >= 0x80 && r < 0xA0):
		fmt.Fprintf(&t.out, `\x{%X}`, r)
	case r < utf8.RuneSelf && strings.ContainsRune(`\.+*?()|[]{}^$-&~#`, r):
		t.out.WriteByte('\\')
		t.out.WriteRune(r)
	default:
		t.out.WriteRune(r)
	}
}

// property translates \p{Name}, \pL, \P{Name}.
func (t *translator) property(negated, inClass bool) error {
	var name string
	if t.peek() == '{' {
		end := strings.IndexByte(t.src[t.pos:], '}')
		if end < 0 {
			return t.fail("unclosed \\p{...}")
		}
		name = t.src[t.pos+1 : t.pos+end]
		t.pos += end + 1
	} else {
		if t.eof() {
			return t.fail("\\p must be followed by a property name")
		}
		name = string(t.next())
	}
	p := "p"
	if negated {
		p = "P"
	}
	body, ok := posixClasses[name]
	if !ok {
		body, ok = javaProperties[name]
	}
	if ok {
		t.note(fmt.Sprintf(`\%s{%s} written as an explicit class`, p, name))
		switch {
		case !negated && inClass:
			t.out.WriteString(body)
		case !negated:
			t.out.WriteString("[" + body + "]")
		case inClass:
			return t.fail("\\P{%s} inside [...] is not supported here", name)
		default:
			t.out.WriteString("[^" + body + "]")
		}
		return nil
	}
	goName := name
	switch {
	case strings.HasPrefix(name, "Is"):
		goName = name[2:]
	case strings.HasPrefix(name, "sc="), strings.HasPrefix(name, "script="),
		strings.HasPrefix(name, "gc="), strings.HasPrefix(name, "general_category="):
		goName = name[strings.IndexByte(name, '=')+1:]
	case strings.HasPrefix(name, "In"), strings.HasPrefix(name, "blk="), strings.HasPrefix(name, "block="),
		strings.HasPrefix(name, "java"):
		return t.fail("\\%s{%s}: Unicode blocks and this java.lang.Character property are not supported here", p, name)
	}
	if _, err := regexp.Compile(`\p{` + goName + `}`); err != nil {
		return t.fail("unknown or unsupported character property \\%s{%s}", p, name)
	}
	if goName != name {
		t.note(fmt.Sprintf(`\%s{%s} written as \%s{%s}`, p, name, p, goName))
	}
	t.out.WriteString(`\` + p + "{" + goName + "}")
	return nil
}
