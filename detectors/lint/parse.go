package lint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
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
// fails, every *mm2config.Error becomes a lint-syntax finding and Parse
// tries again without the offending lines, so that the other rules can
// still run: a broken topics or groups list is replaced by an empty list
// (which matches nothing, so the broken filter cannot make
// lint-identity-loop fire), any other bad property is dropped, so MM2's
// default applies to it. It returns a nil Config when the file cannot be
// recovered (for example `clusters` is missing or the file is not a
// properties file); the findings then say why.
//
// Errors MM2 would also refuse the file for are critical. A ${file:...},
// ${env:...} or ${directory:...} placeholder that cannot be resolved here
// (the file or variable exists only on the MM2 host) is a warning instead:
// MM2 resolves it where it runs, and leaves an unresolvable one as written
// rather than refusing the file. Such a value is kept as an unresolved
// placeholder (a string setting) or dropped (a setting MM2 parses as a
// boolean, number or enum), and the finding names the rules that could not
// use it.
//
// path names the file in findings (as given, e.g. "conf/mm2.properties").
// popts is handed to mm2config.Parse unchanged; it is the only way Parse
// reaches the environment or other files (for ${file:...} placeholders).
func Parse(path string, data []byte, popts mm2config.Options) (*mm2config.Config, []detectors.Finding) {
	var out []detectors.Finding
	seen := map[string]bool{}
	unresolved := map[int]bool{} // lines whose placeholder was replaced by a marker
	for attempt := 0; ; attempt++ {
		cfg, err := mm2config.Parse(filepath.Base(path), data, popts)
		if err == nil {
			cfg.File = path
			cfg.Warnings = slices.DeleteFunc(cfg.Warnings, func(w mm2config.Warning) bool {
				return strings.Contains(w.Message, unresolvedProvider)
			})
			for i := range out {
				locate(&out[i], cfg.Clusters)
			}
			return cfg, out
		}
		var errs []*mm2config.Error
		collectErrors(err, &errs)
		if len(errs) == 0 {
			out = append(out, syntaxFinding(path, &mm2config.Error{Msg: err.Error()}, ""))
			return nil, out
		}
		fixable := true
		fixes := map[int]lineFix{}
		for _, e := range errs {
			kind := errorKind(e)
			if e.Line > 0 && unresolved[e.Line] {
				// The marker of an unresolved placeholder does not parse
				// as this setting's type: drop the line, already reported.
				fixes[e.Line] = lineFix{key: e.Key}
				continue
			}
			id := fmt.Sprintf("%d\x00%s\x00%s", e.Line, e.Key, e.Msg)
			if !seen[id] {
				seen[id] = true
				out = append(out, syntaxFinding(path, e, sourceLine(data, e.Line)))
			}
			if e.Line <= 0 || e.Key == "" || e.Key == "clusters" {
				fixable = false
				continue
			}
			fix := lineFix{key: e.Key}
			if kind == kindPlaceholder {
				fix.value = unresolvedMarker(e.Msg)
				unresolved[e.Line] = true
			}
			fixes[e.Line] = fix
		}
		if !fixable || attempt >= maxRecoveries {
			return nil, out
		}
		data = rewriteLines(data, fixes)
	}
}

// unresolvedProvider is the provider name of the marker that stands for a
// placeholder Parse could not resolve. mm2config leaves a placeholder of an
// unknown provider as written (and warns, which Parse drops).
const unresolvedProvider = "lint-unresolved"

// unresolvedMarker turns the error message `placeholder ${file:p:k}` into
// the properties value `${lint-unresolved:file:p:k}`, escaped for a
// properties file.
func unresolvedMarker(msg string) string {
	whole := strings.TrimPrefix(msg, "placeholder ")
	inner := strings.TrimSuffix(strings.TrimPrefix(whole, "${"), "}")
	return strings.ReplaceAll("${"+unresolvedProvider+":"+inner+"}", `\`, `\\`)
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

// The kinds of parse error, each with its own hint.
const (
	kindPlaceholder = "placeholder"
	kindRegex       = "regex"
	kindBoolean     = "boolean"
	kindNumber      = "number"
	kindEnum        = "enum"
	kindClusters    = "clusters"
	kindProperties  = "properties"
	kindPolicy      = "replication-policy"
	kindOther       = "value"
)

// errorKind classifies a parse error by what mm2config reports: a
// placeholder failure is the Error ConfigTransformer-style resolution
// returns (Msg "placeholder ${...}" with the cause in Err); the others by
// the key and the message of the check that failed.
func errorKind(e *mm2config.Error) string {
	switch {
	case e.Err != nil && strings.HasPrefix(e.Msg, "placeholder ${"):
		return kindPlaceholder
	case e.Key == "clusters":
		return kindClusters
	case strings.HasPrefix(e.Msg, "malformed properties"):
		return kindProperties
	case strings.HasPrefix(e.Msg, "expected true or false"):
		return kindBoolean
	case strings.HasPrefix(e.Msg, "expected a whole number"):
		return kindNumber
	case strings.HasPrefix(e.Msg, "must be "):
		return kindEnum
	case strings.HasPrefix(e.Msg, "custom replication policy"):
		return kindPolicy
	case isFilterKey(e.Key):
		return kindRegex
	}
	return kindOther
}

// syntaxHint returns the hint for a parse error of kind about key.
func syntaxHint(kind, key string) string {
	switch kind {
	case kindRegex:
		return "Fix the regex list: MM2 joins the comma-separated Java regexes with | and each must match the whole topic or group name; escape a literal dot as \\. only when it matters."
	case kindBoolean:
		return fmt.Sprintf("Set %s to true or false (MM2 reads booleans case-insensitively, nothing else).", key)
	case kindNumber:
		return fmt.Sprintf("Set %s to a whole number, without units.", key)
	case kindEnum:
		return fmt.Sprintf("Set %s to one of the values the message names.", key)
	case kindClusters:
		return "List the cluster aliases in clusters, comma-separated (for example clusters = kafka, vast); every other key is prefixed with one of them."
	case kindProperties:
		return "Fix the properties syntax on the named line: a line ending in an odd number of backslashes continues on the next line, and \\uXXXX escapes need four hex digits; write a literal backslash as \\\\."
	case kindPlaceholder:
		return fmt.Sprintf("Nothing to fix if the value of %s exists on the MM2 host. To check with it, run lint where the file exists or with the variable exported.", key)
	case kindPolicy:
		return "Give the replication policy's target topic template, or use DefaultReplicationPolicy or IdentityReplicationPolicy."
	}
	return "Fix the value on the named line."
}

// checksReading names the rules (and --probe) that read key's value, for
// the finding about a placeholder that could not be resolved.
func checksReading(key string) string {
	k := key
	if i := strings.LastIndex(k, "->"); i >= 0 {
		if _, rest, ok := strings.Cut(k[i:], "."); ok {
			k = rest
		}
	}
	has := func(suffixes ...string) bool {
		for _, s := range suffixes {
			if k == s || strings.HasSuffix(k, "."+s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("bootstrap.servers"):
		return "lint-missing-bootstrap and --probe"
	case has("enable.idempotence", "emit.offset-syncs.enabled"):
		return RuleIdempotence
	case has("compression.type"):
		return RuleCompression
	case has("exactly.once.source.support"):
		return RuleExactlyOnce
	case has("sync.topic.acls.enabled"):
		return RuleACLSync
	case has("sync.topic.configs.enabled", "use.incremental.alter.configs"):
		return RuleConfigSync
	case has("offset-syncs.topic.location"):
		return RuleOffsetSyncsLocation + " and " + RuleIdempotence
	case isFilterKey(k), has("replication.policy.class", "replication.policy.separator"):
		return RuleIdentityLoop + " and " + RulePrecreate
	case has("enabled"):
		return "every rule about the flow"
	case has("security.protocol"), strings.Contains(k, "ssl."), strings.Contains(k, "sasl."):
		return "--probe (it connects with the cluster's security settings); no other rule"
	}
	return "no rule; --probe connects without it"
}

// syntaxFinding turns a parse error into a lint-syntax finding; text is the
// file's line as written (masked whole when the key is sensitive).
func syntaxFinding(path string, e *mm2config.Error, text string) detectors.Finding {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	kind := errorKind(e)
	where := e.Key
	if where == "" {
		where = "the file"
	}
	if e.Line > 0 {
		where += fmt.Sprintf(" (line %d)", e.Line)
	}
	f := detectors.Finding{Rule: RuleSyntax, Severity: detectors.Critical,
		Summary: "MM2 would refuse this file: " + where + ": " + msg + ".",
		Hint:    syntaxHint(kind, e.Key),
		Values:  map[string]any{"kind": kind}}
	if kind == kindClusters && e.Line == 0 {
		f.Summary = "MM2 would refuse this file: clusters is not set: " + msg + "."
	}
	if kind == kindPlaceholder {
		why := "could not be resolved here"
		if errors.Is(e.Err, fs.ErrNotExist) {
			why = "could not be resolved here: the file does not exist on this machine"
		}
		f.Severity = detectors.Warning
		f.Summary = fmt.Sprintf("%s: %s %s (%s); MM2 resolves it on its own host, or leaves it as written. Checks that could not use the value: %s.",
			where, strings.TrimPrefix(e.Msg, "placeholder "), why, e.Err.Error(), checksReading(e.Key))
	}
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

// lineFix says how Parse rewrites the entry on one line: a filter key keeps
// its key with an empty value, a key with a replacement value gets that
// value, any other key is commented out.
type lineFix struct {
	key   string
	value string // properties-escaped; "" comments the entry out
}

// rewriteLines rewrites the entries starting on the given lines (with
// their continuation lines) as fixes says.
func rewriteLines(data []byte, fixes map[int]lineFix) []byte {
	src := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(src); i++ {
		fix, ok := fixes[i+1]
		if !ok {
			continue
		}
		// Drop the continuation lines of this entry.
		for j, more := i, continues(src[i]); more && j+1 < len(src); {
			j++
			more = continues(src[j])
			src[j] = "#"
		}
		switch {
		case fix.value != "":
			src[i] = escapeKey(fix.key) + " = " + fix.value
		case isFilterKey(fix.key):
			src[i] = escapeKey(fix.key) + " ="
		default:
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
