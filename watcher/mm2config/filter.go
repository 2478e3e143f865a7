package mm2config

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Default filter lists of MirrorSourceConfig / MirrorCheckpointConfig
// (identical in 3.9 and 4.x), as Java strings after unescaping.
const (
	DefaultTopicsInclude = `.*`
	DefaultTopicsExclude = `.*[\-\.]internal, .*\.replica, __.*`
	DefaultGroupsInclude = `.*`
	DefaultGroupsExclude = `console-consumer-.*, connect-.*, __.*`
)

// Filter is MM2's DefaultTopicFilter or DefaultGroupFilter for one flow: a
// name passes when it fully matches the include list and does not fully
// match the exclude list. Each list is a ConfigDef LIST whose entries are
// Java regexes joined with `|` into one pattern; an empty list matches
// nothing.
type Filter struct {
	// Include and Exclude are where each list came from: the raw key
	// (e.g. "kafka->vast.topics" or "topics.exclude"), its line (0 for
	// MM2's default) and its entries as ParseList returns them.
	Include, Exclude FilterList
}

// FilterList is one side of a Filter.
type FilterList struct {
	Key     string   // property that supplied the list; the plain key name when it is MM2's default
	Line    int      // line of Key in the file, 0 for MM2's default
	Entries []string // the LIST entries, each a Java regex
	re      *regexp.Regexp
}

// Matches reports whether name fully matches one of the entries.
func (l *FilterList) Matches(name string) bool {
	return l.re != nil && l.re.MatchString(name)
}

// Match reports whether name passes the filter (included and not excluded).
// A nil Filter matches nothing.
func (f *Filter) Match(name string) bool {
	return f != nil && f.Include.Matches(name) && !f.Exclude.Matches(name)
}

// CompileJavaList compiles LIST entries the way MM2's
// MirrorUtils.compilePatternList does: joined with "|" into one Java
// pattern (so a regex containing a comma, already split by ParseList, is
// compiled in pieces exactly as MM2 does) and matched against the whole
// name. It returns nil for an empty list, which matches nothing, the
// translation notes of TranslateJavaRegex, and a *RegexError when the
// pattern does not compile.
func CompileJavaList(entries []string) (*regexp.Regexp, []string, error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	joined := strings.Join(entries, "|")
	tr, notes, err := TranslateJavaRegex(joined)
	if err != nil {
		return nil, notes, err
	}
	re, err := regexp.Compile(`\A(?:` + tr + `)\z`)
	if err != nil {
		msg := err.Error()
		var se *syntax.Error
		if errors.As(err, &se) {
			msg = se.Code.String()
		}
		return nil, notes, &RegexError{Pattern: joined, Msg: msg}
	}
	return re, notes, nil
}

// compileFilterList compiles one list for the parser, turning failures into
// file:line:key errors and translation notes into warnings.
func (p *parser) compileFilterList(s Setting, fatal bool) FilterList {
	l := FilterList{Key: s.Key, Line: s.Line, Entries: ParseList(s.Value)}
	re, notes, err := CompileJavaList(l.Entries)
	for _, n := range notes {
		p.warnOnce(s.Line, s.Key, "Java regex translated for Go: "+n)
	}
	if err != nil {
		if fatal {
			p.errs = append(p.errs, p.errorf(s.Line, s.Key, nil, "%v", err))
		} else {
			p.warnOnce(s.Line, s.Key, fmt.Sprintf("%v (the flow is disabled, so MM2 never compiles it)", err))
		}
		return l
	}
	l.re = re
	return l
}
