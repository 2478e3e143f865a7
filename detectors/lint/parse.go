package lint

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/watcher/mm2config"
)

// filterKeys are the connector settings whose values are regex lists; a
// broken one is replaced by an empty list (which matches nothing) when Parse
// recovers.
var filterKeys = []string{"topics", "topics.exclude", "topics.blacklist", "groups", "groups.exclude", "groups.blacklist"}

// maxRecoveries bounds how often Parse re-parses after removing bad lines.
const maxRecoveries = 5

// Parse parses an MM2 properties file for linting. Where mm2config.Parse
// fails, every *mm2config.Error becomes a critical lint-syntax finding (MM2
// would refuse the file) and Parse tries again without the offending
// lines, so that the other rules can still run: a broken topics or groups
// list is replaced by an empty list (which matches nothing, so the broken
// filter cannot make lint-identity-loop fire), any other bad property is
// dropped, so MM2's default applies to it. It returns a nil Config when the
// file cannot be recovered (for example `clusters` is missing or the file
// is not a properties file); the findings then say why.
//
// path names the file in findings (as given, e.g. "conf/mm2.properties").
// popts is handed to mm2config.Parse unchanged; it is the only way Parse
// reaches the environment or other files (for ${file:...} placeholders).
func Parse(path string, data []byte, popts mm2config.Options) (*mm2config.Config, []detectors.Finding) {
	var out []detectors.Finding
	seen := map[string]bool{}
	for attempt := 0; ; attempt++ {
		cfg, err := mm2config.Parse(filepath.Base(path), data, popts)
		if err == nil {
			cfg.File = path
			return cfg, out
		}
		var errs []*mm2config.Error
		collectErrors(err, &errs)
		if len(errs) == 0 {
			out = append(out, syntaxFinding(path, &mm2config.Error{Msg: err.Error()}, ""))
			return nil, out
		}
		fixable := true
		lines := map[int]string{}
		for _, e := range errs {
			id := fmt.Sprintf("%d\x00%s\x00%s", e.Line, e.Key, e.Msg)
			if !seen[id] {
				seen[id] = true
				out = append(out, syntaxFinding(path, e, sourceLine(data, e.Line)))
			}
			if e.Line <= 0 || e.Key == "" || e.Key == "clusters" {
				fixable = false
				continue
			}
			lines[e.Line] = e.Key
		}
		if !fixable || attempt >= maxRecoveries {
			return nil, out
		}
		data = blankLines(data, lines)
	}
}

// collectErrors flattens errors.Join trees into the *mm2config.Error values.
func collectErrors(err error, out *[]*mm2config.Error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			collectErrors(e, out)
		}
		return
	}
	var me *mm2config.Error
	if errors.As(err, &me) {
		*out = append(*out, me)
	}
}

// sourceLine returns line n (1-based) of data, trimmed, or "".
func sourceLine(data []byte, n int) string {
	if n <= 0 {
		return ""
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}

// syntaxFinding turns a parse error into a lint-syntax finding; text is the
// file's line as written (masked whole when the key is sensitive).
func syntaxFinding(path string, e *mm2config.Error, text string) detectors.Finding {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	f := detectors.Finding{Rule: RuleSyntax, Severity: detectors.Critical,
		Summary: "MM2 would refuse this file: " + strings.TrimSpace(e.Key+" "+msg) + ".",
		Hint:    "Fix the value on the named line; Java regexes are joined with | and must match the whole topic or group name.",
		Values:  map[string]any{}}
	if e.Key != "" {
		f.Values["key"] = e.Key
	}
	if e.Line > 0 {
		f.Values["line"] = e.Line
		if text == "" || maskValue(e.Key, "x") != "x" {
			text = e.Key + " = [redacted]"
		}
		f.Evidence = &detectors.Evidence{File: path, Line: int64(e.Line), Text: text}
	}
	return f
}

// blankLines rewrites the entries starting on the given lines (with their
// continuation lines): a filter key keeps its key with an empty value, any
// other key is commented out.
func blankLines(data []byte, lines map[int]string) []byte {
	src := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(src); i++ {
		key, ok := lines[i+1]
		if !ok {
			continue
		}
		// Drop the continuation lines of this entry.
		for j, more := i, continues(src[i]); more && j+1 < len(src); {
			j++
			more = continues(src[j])
			src[j] = "#"
		}
		if isFilterKey(key) {
			src[i] = escapeKey(key) + " ="
		} else {
			src[i] = "#" + src[i]
		}
	}
	return []byte(strings.Join(src, "\n"))
}

func isFilterKey(k string) bool {
	for _, f := range filterKeys {
		if k == f || strings.HasSuffix(k, "."+f) {
			return true
		}
	}
	return false
}

// continues reports whether a properties line ends with an odd number of
// backslashes (a continuation).
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// escapeKey escapes the characters that end a properties key.
func escapeKey(k string) string {
	return strings.NewReplacer(`\`, `\\`, " ", `\ `, "=", `\=`, ":", `\:`, "#", `\#`, "!", `\!`).Replace(k)
}
