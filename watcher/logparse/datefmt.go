package logparse

import (
	"fmt"
	"time"
)

// dateFormat reads the text a log4j %d conversion renders. It is compiled
// from a java.text.SimpleDateFormat pattern or one of log4j's named formats.
//
// Reading is deliberately lenient where log4j versions differ: a ' ' or 'T'
// between date and time matches either, ',' or '.' before the fraction
// matches either, and the fraction takes 1 to 9 digits whatever the number of
// S letters (log4j 1 ISO8601 is "yyyy-MM-dd HH:mm:ss,SSS", log4j 2 ISO8601
// is "yyyy-MM-dd'T'HH:mm:ss,SSS", and both are in the field).
type dateFormat struct {
	spec     string
	toks     []dateTok
	hasDate  bool           // year, month and day are all present
	hasZone  bool           // the text carries its own offset
	fixedLen int            // rendered length when every field is fixed-width, else -1
	epoch    byte           // 's' UNIX seconds, 'm' UNIX_MILLIS, 0 otherwise
	loc      *time.Location // from %d{…}{zone}; nil = the Options location
	standard bool           // "yyyy-MM-dd HH:mm:ss,SSS" up to leniency: fast path

	// Cache of the last minute read by the fast path: consecutive lines
	// mostly share it, and time.Date is the costly part of reading a time.
	cacheKey  [16]byte
	cacheLoc  *time.Location
	cacheTime time.Time
}

type dateTok struct {
	kind byte // pattern letter, or 0 for a literal byte
	n    int  // letter count
	lit  byte
}

// namedDateFormat returns the SimpleDateFormat pattern of a log4j named %d
// format (log4j 2's FixedFormat names plus log4j 1's ISO8601, ABSOLUTE and
// DATE, which agree up to the leniency above).
func namedDateFormat(name string) (string, bool) {
	switch name {
	case "":
		return "yyyy-MM-dd HH:mm:ss,SSS", true
	case "DEFAULT":
		return "yyyy-MM-dd HH:mm:ss,SSS", true
	case "DEFAULT_MICROS":
		return "yyyy-MM-dd HH:mm:ss,SSSSSS", true
	case "DEFAULT_NANOS":
		return "yyyy-MM-dd HH:mm:ss,SSSSSSSSS", true
	case "ISO8601":
		return "yyyy-MM-dd'T'HH:mm:ss,SSS", true
	case "ISO8601_BASIC":
		return "yyyyMMdd'T'HHmmss,SSS", true
	case "ISO8601_PERIOD":
		return "yyyy-MM-dd'T'HH:mm:ss.SSS", true
	case "ISO8601_PERIOD_MICROS":
		return "yyyy-MM-dd'T'HH:mm:ss.SSSSSS", true
	case "ISO8601_OFFSET_DATE_TIME_HH":
		return "yyyy-MM-dd'T'HH:mm:ss,SSSX", true
	case "ISO8601_OFFSET_DATE_TIME_HHMM":
		return "yyyy-MM-dd'T'HH:mm:ss,SSSXX", true
	case "ISO8601_OFFSET_DATE_TIME_HHCMM":
		return "yyyy-MM-dd'T'HH:mm:ss,SSSXXX", true
	case "ABSOLUTE":
		return "HH:mm:ss,SSS", true
	case "ABSOLUTE_MICROS":
		return "HH:mm:ss,SSSSSS", true
	case "ABSOLUTE_NANOS":
		return "HH:mm:ss,SSSSSSSSS", true
	case "ABSOLUTE_PERIOD":
		return "HH:mm:ss.SSS", true
	case "COMPACT":
		return "yyyyMMddHHmmssSSS", true
	case "DATE":
		return "dd MMM yyyy HH:mm:ss,SSS", true
	case "DATE_PERIOD":
		return "dd MMM yyyy HH:mm:ss.SSS", true
	case "US_MONTH_DAY_YEAR2_TIME":
		return "dd/MM/yy HH:mm:ss.SSS", true
	case "US_MONTH_DAY_YEAR4_TIME":
		return "dd/MM/yyyy HH:mm:ss.SSS", true
	}
	return "", false
}

// compileDateFormat compiles the option of a %d conversion (without braces).
// Supported letters: y, M (numeric or MMM), d, H, h, k, K, m, s, S, a, E, Z,
// X; text in single quotes is literal. Named formats and UNIX / UNIX_MILLIS
// are accepted.
func compileDateFormat(spec string) (*dateFormat, error) {
	f := &dateFormat{spec: spec, fixedLen: 0}
	switch spec {
	case "UNIX":
		f.epoch, f.hasDate, f.hasZone, f.fixedLen = 's', true, true, -1
		return f, nil
	case "UNIX_MILLIS":
		f.epoch, f.hasDate, f.hasZone, f.fixedLen = 'm', true, true, -1
		return f, nil
	}
	p := spec
	if named, ok := namedDateFormat(spec); ok {
		p = named
	}
	var y, mo, d bool
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			if j < len(p) && p[j] == '\'' {
				f.toks = append(f.toks, dateTok{lit: '\''})
				i += 2
				continue
			}
			for j < len(p) && p[j] != '\'' {
				f.toks = append(f.toks, dateTok{lit: p[j]})
				j++
			}
			if j >= len(p) {
				return nil, fmt.Errorf("date format %q: unterminated quote", spec)
			}
			i = j + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			switch c {
			case 'y':
				y = true
			case 'M':
				mo = true
			case 'd':
				d = true
			case 'Z', 'X':
				f.hasZone = true
			case 'H', 'h', 'k', 'K', 'm', 's', 'S', 'a', 'E':
			default:
				return nil, fmt.Errorf("date format %q: unsupported field %q", spec, p[i:i+n])
			}
			f.toks = append(f.toks, dateTok{kind: c, n: n})
			i += n
		default:
			f.toks = append(f.toks, dateTok{lit: c})
			i++
		}
	}
	f.hasDate = y && mo && d
	f.standard = isStandardLayout(f.toks)
	for _, t := range f.toks {
		switch {
		case t.kind == 0:
			f.fixedLen++
		case t.kind == 'E' || t.kind == 'X' || t.kind == 'Z' || (t.n == 1 && t.kind != 'a') || (t.kind == 'y' && t.n == 3):
			f.fixedLen = -1
		case t.kind == 'a':
			f.fixedLen += 2
		case t.kind == 'M' && t.n >= 3:
			f.fixedLen += 3
		default:
			f.fixedLen += t.n
		}
		if f.fixedLen < 0 {
			break
		}
	}
	return f, nil
}

// parse reads a timestamp at the start of b. It returns the time (zero when
// the format has no full date, e.g. ABSOLUTE), the number of bytes read, and
// ok=false when b does not start with text in this format. loc is used when
// the text carries no offset and the format has no zone of its own.
func (f *dateFormat) parse(b []byte, loc *time.Location) (time.Time, int, bool) {
	if f.loc != nil {
		loc = f.loc
	}
	if loc == nil {
		loc = time.UTC
	}
	if f.standard {
		if t, ok := f.parseStandard(b, loc); ok {
			return t, 23, true
		}
	}
	if f.epoch != 0 {
		v, n := readDigits(b, 0, 1, 19)
		if n == 0 {
			return time.Time{}, 0, false
		}
		if f.epoch == 's' {
			return time.Unix(int64(v), 0).UTC(), n, true
		}
		return time.UnixMilli(int64(v)).UTC(), n, true
	}
	year, month, day := 0, 1, 1
	hour, minute, sec, nsec := 0, 0, 0, 0
	pm, hasAMPM, hour12 := false, false, false
	zoned, offset := false, 0
	i := 0
	for _, t := range f.toks {
		if t.kind == 0 {
			if i >= len(b) {
				return time.Time{}, 0, false
			}
			c := b[i]
			switch t.lit {
			case ' ', 'T':
				if c != ' ' && c != 'T' {
					return time.Time{}, 0, false
				}
			case ',', '.':
				if c != ',' && c != '.' {
					return time.Time{}, 0, false
				}
			default:
				if c != t.lit {
					return time.Time{}, 0, false
				}
			}
			i++
			continue
		}
		var v, n int
		switch t.kind {
		case 'y', 'd', 'H', 'h', 'k', 'K', 'm', 's':
			lo, hi := t.n, t.n
			if t.n == 1 {
				lo, hi = 1, 2
			}
			if t.kind == 'y' && t.n != 2 {
				lo, hi = 4, 4
			}
			v, n = readDigits(b, i, lo, hi)
			if n == 0 {
				return time.Time{}, 0, false
			}
			switch t.kind {
			case 'y':
				year = v
				if t.n == 2 {
					year += 2000
				}
			case 'd':
				day = v
			case 'H', 'k':
				hour = v
				if t.kind == 'k' && v == 24 {
					hour = 0
				}
			case 'h', 'K':
				hour, hour12 = v, true
			case 'm':
				minute = v
			case 's':
				sec = v
			}
		case 'M':
			if t.n >= 3 {
				if i+3 > len(b) {
					return time.Time{}, 0, false
				}
				m := monthAbbrev(b[i : i+3])
				if m == 0 {
					return time.Time{}, 0, false
				}
				month, n = m, 3
				// MMMM: the full name.
				if t.n > 3 {
					for i+n < len(b) && isLetter(b[i+n]) {
						n++
					}
				}
			} else {
				lo, hi := t.n, t.n
				if t.n == 1 {
					lo, hi = 1, 2
				}
				v, n = readDigits(b, i, lo, hi)
				if n == 0 {
					return time.Time{}, 0, false
				}
				month = v
			}
		case 'S':
			v, n = readDigits(b, i, 1, 9)
			if n == 0 {
				return time.Time{}, 0, false
			}
			nsec = v
			for k := n; k < 9; k++ {
				nsec *= 10
			}
		case 'a':
			if i+2 > len(b) {
				return time.Time{}, 0, false
			}
			switch string(b[i : i+2]) {
			case "AM", "am":
			case "PM", "pm":
				pm = true
			default:
				return time.Time{}, 0, false
			}
			hasAMPM, n = true, 2
		case 'E':
			for i+n < len(b) && isLetter(b[i+n]) {
				n++
			}
			if n == 0 {
				return time.Time{}, 0, false
			}
		case 'Z', 'X':
			off, k, good := readOffset(b[i:])
			if !good {
				return time.Time{}, 0, false
			}
			zoned, offset, n = true, off, k
		}
		i += n
	}
	if !f.hasDate {
		return time.Time{}, i, true
	}
	if hour12 && hasAMPM {
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, 0, false
	}
	if zoned {
		return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC).Add(-time.Duration(offset) * time.Second), i, true
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), i, true
}

// readDigits reads between lo and hi decimal digits at b[i:], returning the
// value and the count read (0 when fewer than lo).
func readDigits(b []byte, i, lo, hi int) (int, int) {
	v, n := 0, 0
	for n < hi && i+n < len(b) && isDigit(b[i+n]) {
		v = v*10 + int(b[i+n]-'0')
		n++
	}
	if n < lo {
		return 0, 0
	}
	return v, n
}

// readOffset reads a zone offset: "Z", "+hh", "+hhmm" or "+hh:mm" (or '-'),
// returning seconds east of UTC and the bytes read.
func readOffset(b []byte) (int, int, bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	if b[0] == 'Z' {
		return 0, 1, true
	}
	if b[0] != '+' && b[0] != '-' {
		return 0, 0, false
	}
	h, n := readDigits(b, 1, 2, 2)
	if n == 0 || h > 18 {
		return 0, 0, false
	}
	i := 3
	m := 0
	if i < len(b) && b[i] == ':' {
		if mm, k := readDigits(b, i+1, 2, 2); k == 2 {
			m, i = mm, i+3
		}
	} else if mm, k := readDigits(b, i, 2, 2); k == 2 {
		m, i = mm, i+2
	}
	off := h*3600 + m*60
	if b[0] == '-' {
		off = -off
	}
	return off, i, true
}

func monthAbbrev(b []byte) int {
	if len(b) < 3 {
		return 0
	}
	c0, c1, c2 := lower(b[0]), lower(b[1]), lower(b[2])
	for i, m := range [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		if m[0] == c0 && m[1] == c1 && m[2] == c2 {
			return i + 1
		}
	}
	return 0
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// parseLooseTimestamp reads the timestamps a log line may start with when no
// layout is known: "yyyy-MM-dd HH:mm:ss" with an optional ",SSS"/".SSS"
// fraction, ' ' or 'T' between date and time, and an optional offset ("Z",
// "+02:00", "+0200"). Text without an offset is read in loc.
func parseLooseTimestamp(b []byte, loc *time.Location) (time.Time, int, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, 0, false
	}
	year, n1 := readDigits(b, 0, 4, 4)
	month, n2 := readDigits(b, 5, 2, 2)
	day, n3 := readDigits(b, 8, 2, 2)
	hour, n4 := readDigits(b, 11, 2, 2)
	minute, n5 := readDigits(b, 14, 2, 2)
	sec, n6 := readDigits(b, 17, 2, 2)
	if n1 == 0 || n2 == 0 || n3 == 0 || n4 == 0 || n5 == 0 || n6 == 0 ||
		month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, 0, false
	}
	i, nsec := 19, 0
	if i < len(b) && (b[i] == ',' || b[i] == '.') {
		if v, n := readDigits(b, i+1, 1, 9); n > 0 {
			nsec = v
			for k := n; k < 9; k++ {
				nsec *= 10
			}
			i += 1 + n
		}
	}
	if off, n, ok := readOffset(b[i:]); ok {
		return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC).Add(-time.Duration(off) * time.Second), i + n, true
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), i, true
}

// isStandardLayout reports whether toks are "yyyy-MM-dd HH:mm:ss,SSS" (with
// ' ' or 'T', ',' or '.'), the format of log4j's default %d.
func isStandardLayout(toks []dateTok) bool {
	want := [...]dateTok{{kind: 'y', n: 4}, {lit: '-'}, {kind: 'M', n: 2}, {lit: '-'}, {kind: 'd', n: 2}, {lit: ' '},
		{kind: 'H', n: 2}, {lit: ':'}, {kind: 'm', n: 2}, {lit: ':'}, {kind: 's', n: 2}, {lit: ','}, {kind: 'S', n: 3}}
	if len(toks) != len(want) {
		return false
	}
	for i, t := range toks {
		w := want[i]
		if t.kind != w.kind || t.n != w.n {
			return false
		}
		if t.kind == 0 && t.lit != w.lit && !(w.lit == ' ' && t.lit == 'T') && !(w.lit == ',' && t.lit == '.') {
			return false
		}
	}
	return true
}

// parseStandard reads exactly "yyyy-MM-dd HH:mm:ss,SSS" (23 bytes, not
// followed by another digit); anything else is left to the general path.
func (f *dateFormat) parseStandard(b []byte, loc *time.Location) (time.Time, bool) {
	if len(b) < 23 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' ||
		(b[19] != ',' && b[19] != '.') || (len(b) > 23 && isDigit(b[23])) {
		return time.Time{}, false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22} {
		if !isDigit(b[i]) {
			return time.Time{}, false
		}
	}
	d2 := func(i int) int { return int(b[i]-'0')*10 + int(b[i+1]-'0') }
	sec := d2(17)
	msec := int(b[20]-'0')*100 + d2(21)
	if sec > 59 {
		return time.Time{}, false
	}
	off := time.Duration(sec)*time.Second + time.Duration(msec)*time.Millisecond
	if loc == f.cacheLoc && string(b[:16]) == string(f.cacheKey[:]) && !f.cacheTime.IsZero() {
		return f.cacheTime.Add(off), true
	}
	year := d2(0)*100 + d2(2)
	month, day, hour, minute := d2(5), d2(8), d2(11), d2(14)
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	base := time.Date(year, time.Month(month), day, hour, minute, 0, 0, loc)
	if base.Day() != day {
		return time.Time{}, false // e.g. February 30th: let the general path normalise it
	}
	copy(f.cacheKey[:], b[:16])
	f.cacheLoc, f.cacheTime = loc, base
	return base.Add(off), true
}
