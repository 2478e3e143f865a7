package mm2config

import (
	"errors"
	"fmt"
	"testing"
)

func TestParseList(t *testing.T) {
	for in, want := range map[string][]string{
		"":                {},
		"   ":             {},
		"a":               {"a"},
		" a ,b\t,  c ":    {"a", "b", "c"},
		"a,":              {"a", ""},
		",a":              {"", "a"},
		"a{1,3}, b":       {"a{1", "3}", "b"},
		"orders.*|pay, x": {"orders.*|pay", "x"},
	} {
		if got := ParseList(in); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("ParseList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFilterLists(t *testing.T) {
	for _, tc := range []struct {
		list    string
		matches []string
		misses  []string
	}{
		{DefaultTopicsInclude, []string{"a", "", "x.y"}, nil},
		{DefaultTopicsExclude, []string{"a.internal", "a-internal", "x.replica", "__consumer_offsets"}, []string{"internal", "a.replica2", "orders"}},
		{DefaultGroupsExclude, []string{"console-consumer-1", "connect-x", "__g"}, []string{"billing"}},
		{"", nil, []string{"", "a"}},                                     // empty list matches nothing
		{"a,", []string{"a", ""}, []string{"b"}},                         // a trailing empty entry matches ""
		{"orders", []string{"orders"}, []string{"orders2", "my-orders"}}, // full match
		{"orders.*|pay", []string{"orders", "orders-eu", "pay"}, []string{"payments"}},
		{"(?i)ORDERS, b", []string{"orders", "B"}, []string{"c"}}, // Java flags reach the later entries too
		{`\Qa.b\E`, []string{"a.b"}, []string{"axb"}},
		{`\u0061+`, []string{"aaa"}, []string{"b"}},
		{`\p{Lower}+\d`, []string{"abc1"}, []string{"ABC1"}},
		{`[\p{Upper}_]+`, []string{"A_B"}, []string{"a"}},
		{`(?<name>x)y`, []string{"xy"}, nil},
		{`a\h b`, []string{"a  b", "a\t b"}, []string{"a\n b"}},
		{`\x{41}\0101`, []string{"AA"}, nil},
		{`(?u)[a-z]+`, []string{"abc"}, nil},
		{`x{2}?`, []string{"xx"}, []string{"x"}},
		{`[]a]`, []string{"]", "a"}, nil},
		{`\é`, []string{"é"}, nil},
	} {
		re, _, err := CompileJava(ParseList(tc.list), 0)
		if err != nil {
			t.Errorf("%q: %v", tc.list, err)
			continue
		}
		if re != nil && re.Backtracking() {
			t.Errorf("%q needs no backtracking engine", tc.list)
		}
		l := FilterList{re: re}
		for _, m := range tc.matches {
			if !l.Matches(m) {
				t.Errorf("%q should match %q (Go regex %v)", tc.list, m, re)
			}
		}
		for _, m := range tc.misses {
			if l.Matches(m) {
				t.Errorf("%q should not match %q (Go regex %v)", tc.list, m, re)
			}
		}
	}
}

func TestUnsupportedJavaRegex(t *testing.T) {
	for _, src := range []string{
		"(?=a)b", "(?!a)b", "(?<=a)b", "(?<!a)b", "(?>a)", `(a)\1`, `(?<n>a)\k<n>`,
		"a*+", "a++", "a?+", "a{2}+", "[a-z&&[^e]]", "[a[bc]]", `\Ga`,
		"a{1", "a{x}", "{", `\p{InGreek}`,
	} {
		_, _, err := TranslateJavaRegex(src)
		var re *RegexError
		if !errors.As(err, &re) || re.Pattern != src {
			t.Errorf("%q: got %v, want a *RegexError", src, err)
		}
	}
}

func TestTranslationNotes(t *testing.T) {
	_, notes, err := TranslateJavaRegex(`\u0041\e(?d)x`)
	if err != nil || len(notes) != 3 {
		t.Errorf("notes %q, err %v", notes, err)
	}
	c := mustParse(t, "clusters=A,B\nA->B.enabled=true\nA->B.topics=\\\\u0061.*\n", testOptions(nil))
	if !hasWarning(c, 3, `Java regex translated for Go: \uXXXX written as \x{XXXX}`) {
		t.Errorf("warnings %v", c.Warnings)
	}
	if !c.Flow("A", "B").ShouldReplicateTopic("abc") {
		t.Error("translated \\u0061 does not match")
	}
}
