package mm2config

import (
	"maps"
	"strings"
	"testing"

	"github.com/magiconair/properties"
)

func TestScanPropertiesLines(t *testing.T) {
	text := strings.Join([]string{
		"# comment = not a key",     // 1
		"! also a comment",          // 2
		"",                          // 3
		"a = 1",                     // 4
		"b:2",                       // 5
		"c 3",                       // 6
		"  d\t=\t  spaced value  ",  // 7
		"e = one, \\",               // 8
		"    two, \\",               // 9
		"    three",                 // 10
		"f = after continuation",    // 11
		"key\\ with\\:escapes = v",  // 12
		"g = \\u00e9\\n",            // 13
		"h",                         // 14
		"i = # not a comment",       // 15
		"j = trailing backslash \\", // 16
		"k = last",                  // 17
	}, "\n")
	got, err := scanProperties(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"a", "1", 4}, {"b", "2", 5}, {"c", "3", 6}, {"d", "spaced value  ", 7},
		{"e", "one, two, three", 8}, {"f", "after continuation", 11},
		{"key with:escapes", "v", 12}, {"g", "é\n", 13}, {"h", "", 14},
		{"i", "# not a comment", 15}, {"j", "trailing backslash k = last", 16},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	assertSameAsLibrary(t, text)
}

func TestScanPropertiesCRLF(t *testing.T) {
	text := normalizeNewlines([]byte("\uFEFFa = 1\r\nb = x, \\\r\n  y\r\nc = 3\r\n"))
	got, err := scanProperties(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"a", "1", 1}, {"b", "x, y", 2}, {"c", "3", 4}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	assertSameAsLibrary(t, text)
}

func TestScanPropertiesErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
	}{
		{"a = 1\nb = \\u12G4\n", 2},
		{"a = 1\n\n= value without key\n", 3},
		{"a = 1\nb = \\", 2},
	} {
		_, err := scanProperties(tc.text)
		se, ok := err.(*scanError)
		if !ok || se.line != tc.line {
			t.Errorf("%q: got %v, want an error on line %d", tc.text, err, tc.line)
		}
		p := properties.NewProperties()
		p.DisableExpansion = true
		if p.Load([]byte(tc.text), properties.UTF8) == nil {
			t.Errorf("%q: magiconair/properties accepted what the scanner rejects", tc.text)
		}
	}
}

// assertSameAsLibrary checks that the scanner agrees with
// magiconair/properties on acceptance, keys and (last) values.
func assertSameAsLibrary(t testing.TB, text string) {
	t.Helper()
	entries, serr := scanProperties(text)
	p := properties.NewProperties()
	p.DisableExpansion = true
	lerr := p.Load([]byte(text), properties.UTF8)
	if (serr == nil) != (lerr == nil) {
		t.Fatalf("scanner error %v, library error %v, for %q", serr, lerr, text)
	}
	if serr != nil {
		return
	}
	m := map[string]string{}
	for _, e := range entries {
		m[e.Key] = e.Value
		if e.Line < 1 || e.Line > strings.Count(text, "\n")+1 {
			t.Fatalf("entry %q has line %d outside the text", e.Key, e.Line)
		}
	}
	if !maps.Equal(m, p.Map()) {
		t.Fatalf("scanner %q, library %q, for %q", m, p.Map(), text)
	}
}

func FuzzScanProperties(f *testing.F) {
	for _, s := range []string{
		"clusters = A, B\nA->B.enabled = true\n",
		"a = 1\\\n  2\n# c\n! d\nb:3\nc 4\n",
		"k\\ ey = \\u0041\\t\\\\\n",
		"a = 1\r\nb = \\\r\n x\r\n",
		"= x\n", "\\", "a\\u12", "\x00\xff = \xfe",
		"A->B.topics = a{1,3}, ${env:X}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text := normalizeNewlines([]byte(s))
		assertSameAsLibrary(t, text)
		// The whole loader must never panic, whatever the input.
		_, _ = Parse("fuzz.properties", []byte(s), Options{
			LookupEnv: func(string) (string, bool) { return "v", true },
			ReadFile:  func(string) ([]byte, error) { return []byte("k = v\n"), nil },
		})
	})
}
