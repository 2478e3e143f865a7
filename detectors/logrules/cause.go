package logrules

import "strings"

// maxCause caps Finding.Cause, in bytes.
const maxCause = 1000

// rootCause returns the root cause of a stack trace: the innermost top-level
// "Caused by:" line without that prefix, or else the first exception line
// ("pkg.SomeException: message"). Lines of suppressed exceptions (indented)
// are only used when the top-level chain has none. It returns "" when the
// stack holds no exception.
func rootCause(stack []string) string {
	var indented string
	for i := len(stack) - 1; i >= 0; i-- {
		l := stack[i]
		if rest, ok := strings.CutPrefix(l, "Caused by: "); ok {
			return capCause(rest)
		}
		if indented == "" {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "Caused by: "); ok {
				indented = rest
			}
		}
	}
	for _, l := range stack {
		if t := strings.TrimSpace(l); isExceptionLine(t) {
			return capCause(t)
		}
	}
	return capCause(indented)
}

func capCause(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxCause {
		s = s[:maxCause] + "…"
	}
	return s
}

// isExceptionLine reports whether t (trimmed) starts with a fully qualified
// class name followed by ": " or the end of the line, like
// "org.apache.kafka.common.errors.TimeoutException: …". Stack frames ("at …"),
// "... 12 more" and config dumps ("acks = -1") are not.
func isExceptionLine(t string) bool {
	name := t
	if i := strings.IndexByte(t, ':'); i >= 0 {
		name = t[:i]
		if i+1 < len(t) && t[i+1] != ' ' {
			return false
		}
	}
	if name == "" || !strings.Contains(name, ".") {
		return false
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" || last[0] < 'A' || last[0] > 'Z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '.' || c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isFrame reports whether a stack line is a frame or an elision ("at …",
// "... 12 more"), which never name a cause.
func isFrame(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "...")
}

// findInException returns the first of the message and the non-frame stack
// lines that contains lit, and whether one did. It does not allocate.
func findInException(msg string, stack []string, lit string) (string, bool) {
	if strings.Contains(msg, lit) {
		return msg, true
	}
	for _, l := range stack {
		if isFrame(l) {
			continue
		}
		if strings.Contains(l, lit) {
			return l, true
		}
	}
	return "", false
}

// shortCause renders a cause for a summary: the simple class name and the
// message, cut at 200 bytes.
func shortCause(c string) string {
	if c == "" {
		return ""
	}
	name, msg, _ := strings.Cut(c, ": ")
	if i := strings.LastIndexByte(name, '.'); i >= 0 && !strings.Contains(name, " ") {
		name = name[i+1:]
	}
	s := name
	if msg != "" {
		s += ": " + msg
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimRight(s, ". ")
}
