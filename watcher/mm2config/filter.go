package mm2config

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2"
	regexp2syntax "github.com/dlclark/regexp2/syntax"
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
	re      *JavaPattern
	file    string        // file name for timeout warnings
	onLimit func(Warning) // Options.OnMatchTimeout
}

// Matches reports whether name fully matches one of the entries. A match
// on the backtracking engine that exceeds its time limit counts as no
// match and is reported to Options.OnMatchTimeout.
func (l *FilterList) Matches(name string) bool {
	if l.re == nil {
		return false
	}
	ok, err := l.re.MatchString(name)
	if err != nil {
		if l.onLimit != nil {
			l.onLimit(Warning{File: l.file, Line: l.Line, Key: l.Key, Message: err.Error()})
		}
		return false
	}
	return ok
}

// Pattern is the compiled list, nil for an empty or broken one.
func (l *FilterList) Pattern() *JavaPattern { return l.re }

// Match reports whether name passes the filter (included and not excluded).
// A nil Filter matches nothing.
func (f *Filter) Match(name string) bool {
	return f != nil && f.Include.Matches(name) && !f.Exclude.Matches(name)
}

// DefaultMatchTimeout is how long one match on the backtracking engine may
// run before it counts as no match (Options.MatchTimeout overrides it).
const DefaultMatchTimeout = 100 * time.Millisecond

// JavaPattern is a compiled MM2 filter list: one Java pattern matched
// against whole names, by Go's RE2 engine when the pattern can be
// translated for it, otherwise by the backtracking engine
// github.com/dlclark/regexp2, which has lookaround, backreferences and
// atomic groups but can take exponential time, so each match there is
// bounded by a timeout. It is safe for concurrent use.
type JavaPattern struct {
	source   string
	re       *regexp.Regexp
	bt       *regexp2.Regexp
	timeout  time.Duration
	timeouts atomic.Int64
}

// MatchTimeoutError is returned by JavaPattern.MatchString when a match on
// the backtracking engine ran longer than its timeout.
type MatchTimeoutError struct {
	Pattern string        // the joined Java pattern
	Name    string        // the topic or group name being matched
	Timeout time.Duration // the limit that was exceeded
}

func (e *MatchTimeoutError) Error() string {
	return fmt.Sprintf("regex %q took longer than %v to match %q on the backtracking engine; treated as no match", e.Pattern, e.Timeout, e.Name)
}

// String returns the Java pattern (the entries joined with "|").
func (p *JavaPattern) String() string { return p.source }

// Backtracking reports whether the pattern needed the backtracking engine.
func (p *JavaPattern) Backtracking() bool { return p.bt != nil }

// Timeouts is the number of matches so far that hit the timeout.
func (p *JavaPattern) Timeouts() int64 { return p.timeouts.Load() }

// MatchString reports whether name fully matches the pattern, as Java's
// Matcher.matches does. The only error is a *MatchTimeoutError.
func (p *JavaPattern) MatchString(name string) (bool, error) {
	if p.re != nil {
		return p.re.MatchString(name), nil
	}
	ok, err := p.bt.MatchString(name)
	if err != nil {
		p.timeouts.Add(1)
		return false, &MatchTimeoutError{Pattern: p.source, Name: name, Timeout: p.timeout}
	}
	return ok, nil
}

// CompileJavaList compiles LIST entries the way MM2's
// MirrorUtils.compilePatternList does: joined with "|" into one Java
// pattern (so a regex containing a comma, already split by ParseList, is
// compiled in pieces exactly as MM2 does) and matched against the whole
// name. It uses Go's RE2 engine only: it returns nil for an empty list,
// which matches nothing, the translation notes of TranslateJavaRegex, and a
// *RegexError when the pattern does not compile for RE2 (see CompileJava
// for every pattern Java accepts).
func CompileJavaList(entries []string) (*regexp.Regexp, []string, error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	joined := strings.Join(entries, "|")
	re, notes, err := compileRE2(joined)
	return re, notes, err
}

func compileRE2(joined string) (*regexp.Regexp, []string, error) {
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

// CompileJava compiles LIST entries like CompileJavaList, falling back to
// the backtracking engine for what RE2 cannot express (lookahead,
// lookbehind, backreferences, atomic groups, possessive quantifiers,
// repetition counts over 1000). timeout bounds each backtracking match
// (0 means DefaultMatchTimeout). It returns nil for an empty list, the
// translation notes (the first one says why the backtracking engine is
// used, when it is), and a *RegexError when neither engine can compile the
// pattern.
func CompileJava(entries []string, timeout time.Duration) (*JavaPattern, []string, error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	if timeout <= 0 {
		timeout = DefaultMatchTimeout
	}
	joined := strings.Join(entries, "|")
	re, notes, errRE2 := compileRE2(joined)
	if errRE2 == nil {
		return &JavaPattern{source: joined, re: re}, notes, nil
	}
	tr, btNotes, err := translateJava(joined, true)
	if err != nil {
		return nil, btNotes, err
	}
	bt, err := regexp2.Compile(`\A(?:`+tr+`)\z`, regexp2.RE2)
	if err != nil {
		if _, _, trErr := TranslateJavaRegex(joined); trErr == nil {
			return nil, notes, errRE2 // a plain syntax error: RE2's words are clearer
		}
		msg := err.Error()
		var se *regexp2syntax.Error
		if errors.As(err, &se) {
			msg = se.Code.String()
			if len(se.Args) > 0 {
				msg = fmt.Sprintf(msg, se.Args...)
			}
		}
		return nil, btNotes, &RegexError{Pattern: joined, Msg: msg}
	}
	bt.MatchTimeout = timeout
	why := errRE2.Error()
	var rerr *RegexError
	if errors.As(errRE2, &rerr) {
		why = rerr.Msg
	}
	btNotes = append([]string{fmt.Sprintf("%s, so the list is matched by a slower backtracking engine (up to %v per name; a longer match counts as no match)", why, timeout)}, btNotes...)
	return &JavaPattern{source: joined, bt: bt, timeout: timeout}, btNotes, nil
}

// compileFilterList compiles one list for the parser, turning failures into
// file:line:key errors and translation notes into warnings.
func (p *parser) compileFilterList(s Setting, fatal bool) FilterList {
	l := FilterList{Key: s.Key, Line: s.Line, Entries: ParseList(s.Value), file: p.name, onLimit: p.opts.OnMatchTimeout}
	re, notes, err := CompileJava(l.Entries, p.opts.MatchTimeout)
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
