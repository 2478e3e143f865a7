package mm2config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBacktrackingFilters checks lists that need the backtracking engine.
// The expected results are worked out from java.util.regex semantics
// (MirrorUtils.compilePatternList joins the entries with '|' and MM2 calls
// Matcher.matches, so the whole name must match), not from running Java.
func TestBacktrackingFilters(t *testing.T) {
	for _, tc := range []struct {
		list    string
		matches []string
		misses  []string
	}{
		// Negative lookahead at the start: anything not starting with "internal".
		{`(?!internal).*`, []string{"orders", "xinternal", ""}, []string{"internal", "internal-x"}},
		// Positive lookahead, then the whole name must still be consumed.
		{`(?=.*-eu).+`, []string{"orders-eu", "a-eu-b"}, []string{"orders-us"}},
		// Negative lookbehind at the end: names not ending in -tmp.
		{`.*(?<!-tmp)`, []string{"orders", "tmp"}, []string{"orders-tmp"}},
		// Positive lookbehind in the middle.
		{`a(?<=a)b`, []string{"ab"}, []string{"b", "aab"}},
		// Backreference: the same letter twice.
		{`(a|b)\1`, []string{"aa", "bb"}, []string{"ab", "a"}},
		// Java reads \11 as \1 followed by '1' when only one group exists.
		{`(a)\11`, []string{"aa1"}, []string{"aa", "a1"}},
		// Java numbers named groups left to right with the unnamed ones:
		// \2 is (b), \k<n> is (?<n>a).
		{`(?<n>a)(b)\2`, []string{"abb"}, []string{"aba"}},
		{`(?<n>a)(b)\k<n>`, []string{"aba"}, []string{"abb"}},
		// Possessive quantifiers never give back: a++a and a?+a match nothing,
		// while a{1,3}+a can match four a's (three taken, one left).
		{`a++a`, nil, []string{"a", "aa", "aaa"}},
		{`a?+a`, []string{"aa"}, []string{"a", "aaa"}}, // a?+ takes the one optional a and keeps it
		{`a{2}+a|b{3}+`, []string{"aaa", "bbb"}, []string{"aa", "bb"}},
		{`orders\d++`, []string{"orders1", "orders12"}, []string{"orders", "orders1x"}},
		{`(?:ab)*+c`, []string{"c", "ababc"}, []string{"abab"}},
		{`\Qa.\E*+b`, []string{"ab", "a..b"}, []string{"a.", "axb"}}, // the quantifier binds to '.' only
		// Atomic group: (?>a|ab) commits to "a", so "abc" and "ab" fail.
		{`(?>a|ab)c`, []string{"ac"}, []string{"abc"}},
		{`(?>a|ab)`, []string{"a"}, []string{"ab"}},
		// Java POSIX classes (ASCII) together with a lookaround.
		{`\p{Alpha}++`, []string{"abc", "ABC"}, []string{"abc1", ""}},
		{`\p{Lower}+(?!\p{Digit})`, []string{"abc"}, []string{"ABC", "abc1"}},
		{`(?=\p{Alnum}+)\p{Alnum}*\p{Punct}?+`, []string{"a1!", "a1"}, []string{"a1!!", "!"}},
		{`\p{Upper}\p{Space}\p{javaLowerCase}++(?<=c)`, []string{"A bc"}, []string{"A bC", "a bc"}},
		// Embedded flags reach the later entries of the list, \Z and \z.
		{`(?=x)x+, (?i)Orders, \Qa.b\E`, []string{"xx", "ORDERS", "A.B", "a.b"}, []string{"axb"}},
		{`(?!b)a\z, (?!b)c\Z`, []string{"a", "c", "c\n"}, []string{"a\n", "b"}},
		// The list from a tester's file: \p{Alpha}++ , (?<name>x)\1, (?i)Orders, \Qa.b\E.
		{`\p{Alpha}++ , (?<name>x)\1, (?i)Orders, \Qa.b\E`, []string{"xx", "Orders", "ORDERS", "A.B", "abc"}, []string{"x1", "a-b", ""}},
		// Comments mode drops whitespace and #-comments, in classes too.
		{"(?x) (?! b) a [ c ] # comment", []string{"ac"}, []string{"a c", "bc"}},
		// Repetition counts above RE2's limit of 1000.
		{`(?:ab){1001}`, []string{strings.Repeat("ab", 1001)}, []string{strings.Repeat("ab", 1000)}},
	} {
		p, notes, err := CompileJava(ParseList(tc.list), time.Second)
		if err != nil {
			t.Errorf("%q: %v", tc.list, err)
			continue
		}
		if !p.Backtracking() || len(notes) == 0 || !strings.Contains(notes[0], "backtracking engine") {
			t.Errorf("%q: backtracking %v, notes %q", tc.list, p.Backtracking(), notes)
		}
		for _, m := range tc.matches {
			if ok, err := p.MatchString(m); !ok || err != nil {
				t.Errorf("%q should match %q (%v)", tc.list, m, err)
			}
		}
		for _, m := range tc.misses {
			if ok, err := p.MatchString(m); ok || err != nil {
				t.Errorf("%q should not match %q (%v)", tc.list, m, err)
			}
		}
	}
}

func TestCompileJavaFastPathAndErrors(t *testing.T) {
	p, _, err := CompileJava(ParseList(`orders.*, \p{javaLowerCase}+`), 0)
	if err != nil || p.Backtracking() {
		t.Fatalf("RE2-compatible list: %v, backtracking %v", err, p != nil && p.Backtracking())
	}
	if ok, _ := p.MatchString("abc"); !ok {
		t.Error(`\p{javaLowerCase}+ should match "abc"`)
	}
	// {n,m}+ as one entry (a LIST would split it at the comma): a{1,3}+
	// takes up to three a's and never gives one back.
	p, _, err = CompileJava([]string{`a{1,3}+a`}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"aaaa": true, "aaa": false, "aa": false} {
		if ok, _ := p.MatchString(name); ok != want {
			t.Errorf("a{1,3}+a on %q: %v, want %v", name, ok, want)
		}
	}
	if p, _, err := CompileJava(nil, 0); p != nil || err != nil {
		t.Errorf("empty list: %v %v", p, err)
	}
	for _, src := range []string{
		"(?=a", "(?<n>a)\\k<m>", "[a-z&&[^e]]", "a{1,2}(?=b)", `(?!x)\p{InGreek}`, "(?<n>a)(?<n>b)\\1", "a+++", "|*a",
	} {
		_, _, err := CompileJava(ParseList(src), 0)
		var re *RegexError
		if !errors.As(err, &re) {
			t.Errorf("%q: got %v, want a *RegexError", src, err)
		} else if strings.Contains(re.Msg, `\A(?:`) {
			t.Errorf("%q: the message shows the wrapped pattern: %v", src, err)
		}
	}
}

// TestCommaSplitBeforeBacktracking checks that the LIST is split on commas
// before either engine sees it, as ConfigDef does.
func TestCommaSplitBeforeBacktracking(t *testing.T) {
	// "(?!x).*,b" is two entries joined as "(?!x).*|b".
	p, _, err := CompileJava(ParseList(`(?!x).*,b`), 0)
	if err != nil || p.String() != `(?!x).*|b` {
		t.Fatalf("%v %v", p, err)
	}
	// "(?=a{1,2})a+" becomes "(?=a{1|2})a+": Java's "Illegal repetition".
	if _, _, err := CompileJava(ParseList(`(?=a{1,2})a+`), 0); err == nil || !strings.Contains(err.Error(), "illegal repetition") {
		t.Errorf("a comma inside {} must split the entry: %v", err)
	}
}

func TestCatastrophicPatternTimesOut(t *testing.T) {
	name := strings.Repeat("a", 40) + "b"
	// On RE2 (a+)+$ is linear.
	p, _, err := CompileJava([]string{`(a+)+$`}, 0)
	if err != nil || p.Backtracking() {
		t.Fatalf("%v", err)
	}
	if ok, _ := p.MatchString(name); ok {
		t.Error("(a+)+$ matched")
	}
	// The lookahead forces the backtracking engine, where the same
	// pattern takes exponential time; the timeout stops it.
	var mu sync.Mutex
	var got []Warning
	opts := testOptions(nil)
	opts.MatchTimeout = 20 * time.Millisecond
	opts.OnMatchTimeout = func(w Warning) { mu.Lock(); got = append(got, w); mu.Unlock() }
	c := mustParse(t, "clusters=A,B\nA->B.enabled=true\nA->B.topics=(?!x)(a+)+$\n", opts)
	f := c.Flow("A", "B")
	start := time.Now()
	if f.ShouldReplicateTopic(name) {
		t.Error("a timed-out match must count as no match")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("match took %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].File != "mm2.properties" || got[0].Line != 3 || got[0].Key != "A->B.topics" ||
		!strings.Contains(got[0].String(), `mm2.properties:3: key "A->B.topics": regex "(?!x)(a+)+$" took longer than 20ms`) {
		t.Errorf("timeout warnings %v", got)
	}
	if n := f.Topics.Include.Pattern().Timeouts(); n != 1 {
		t.Errorf("Timeouts() = %d", n)
	}
	if !f.ShouldReplicateTopic("aaa") {
		t.Error("a short name must still match")
	}
}

// TestLoadJavaOnlyRegex loads files whose filters Java accepts but RE2
// cannot express: loading succeeds with a warning, and the filters match.
func TestLoadJavaOnlyRegex(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		text         string
		flow         [2]string
		line         int
		match, inner []string
	}{
		"javaregex.properties": {
			text: "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\na->b.enabled = true\n" +
				"a->b.topics = (?!internal).*\nb->a.enabled=true\n" +
				"b->a.topics = \\\\p{Alpha}++ , (?<name>x)\\\\1, (?i)Orders, \\\\Qa.b\\\\E\n",
			flow: [2]string{"b", "a"}, line: 7, match: []string{"xx", "orders", "A.B"}, inner: []string{"x1", "a-b"},
		},
		"look.properties": {
			text: "clusters = a, b\na.bootstrap.servers = 127.0.0.1:1\nb.bootstrap.servers = 127.0.0.1:1\na->b.enabled = true\n" +
				"a->b.topics = orders\\\\d++\n",
			flow: [2]string{"a", "b"}, line: 5, match: []string{"orders1", "orders42"}, inner: []string{"orders", "ordersx"},
		},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !hasWarning(c, tc.line, "backtracking engine") {
			t.Errorf("%s: no backtracking warning on line %d: %v", name, tc.line, c.Warnings)
		}
		f := c.Flow(tc.flow[0], tc.flow[1])
		for _, m := range tc.match {
			if !f.ShouldReplicateTopic(m) {
				t.Errorf("%s: %s should be replicated", name, m)
			}
		}
		for _, m := range tc.inner {
			if f.ShouldReplicateTopic(m) {
				t.Errorf("%s: %s should not be replicated", name, m)
			}
		}
	}
}

// TestJavaPropertiesCompileOnBothEngines checks every java.lang.Character
// property body on RE2 and on the backtracking engine, in and out of a
// class, plain and negated.
func TestJavaPropertiesCompileOnBothEngines(t *testing.T) {
	for name := range javaProperties {
		for _, src := range []string{`\p{` + name + `}`, `\P{` + name + `}`, `[\p{` + name + `}_]`} {
			if _, _, err := CompileJava([]string{src}, 0); err != nil {
				t.Errorf("RE2: %v", err)
			}
			if _, _, err := CompileJava([]string{`(?=.)` + src}, 0); err != nil {
				t.Errorf("backtracking: %v", err)
			}
		}
	}
	p, _, err := CompileJava([]string{`(?=.)\p{javaUpperCase}\p{javaDigit}\P{javaLetter}`}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"A1-": true, "É٣_": true, "a1-": false, "A1b": false} {
		if ok, _ := p.MatchString(name); ok != want {
			t.Errorf("%q: %v, want %v", name, ok, want)
		}
	}
}
