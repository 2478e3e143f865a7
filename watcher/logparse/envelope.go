package logparse

import "bytes"

// envelope identifies how a container runtime wrapped each physical line.
type envelope uint8

const (
	envUnknown envelope = iota
	envNone
	envCRI
	envDocker
)

func (e envelope) String() string {
	switch e {
	case envNone:
		return EnvelopeNone
	case envCRI:
		return EnvelopeCRI
	case envDocker:
		return EnvelopeDocker
	}
	return ""
}

// Streams of a container log line; CRI and docker partial pieces are joined
// per stream, so interleaved stdout and stderr lines do not mix.
const (
	streamStdout = 0
	streamStderr = 1
)

// detectEnvelope decides the envelope from the first non-empty line of a
// file.
func detectEnvelope(line []byte) envelope {
	if _, _, _, ok := parseCRI(line); ok {
		return envCRI
	}
	if isDockerLine(line) {
		return envDocker
	}
	return envNone
}

// parseCRI splits a CRI log line ("2026-03-05T11:02:10.118220931Z stdout F
// text", as written by containerd and CRI-O) into the start of its content,
// its stream and whether it is a partial piece ("P" tag). A line that is not
// in that shape reports ok=false.
func parseCRI(line []byte) (content, stream int, partial, ok bool) {
	// Time: RFC 3339 with at least seconds, e.g. 2026-03-05T11:02:10Z.
	sp := -1
	for i := 0; i < len(line) && i < 40; i++ {
		if line[i] == ' ' {
			sp = i
			break
		}
	}
	if sp < 20 || line[4] != '-' || line[7] != '-' || line[10] != 'T' || line[13] != ':' || !isDigit(line[0]) {
		return 0, 0, false, false
	}
	rest := line[sp+1:]
	switch {
	case bytes.HasPrefix(rest, []byte("stdout ")):
		stream = streamStdout
	case bytes.HasPrefix(rest, []byte("stderr ")):
		stream = streamStderr
	default:
		return 0, 0, false, false
	}
	i := sp + 1 + len("stdout ")
	if i >= len(line) {
		return 0, 0, false, false
	}
	switch line[i] {
	case 'P':
		partial = true
	case 'F':
	default:
		return 0, 0, false, false
	}
	// The tag may carry more ":"-separated parts; content starts after the
	// next space. A full line with empty content may lack that space.
	j := i + 1
	for j < len(line) && line[j] != ' ' {
		if line[j] != ':' && !isAlnum(line[j]) {
			return 0, 0, false, false
		}
		j++
	}
	if j < len(line) {
		j++
	}
	return j, stream, partial, true
}

var dockerPrefix = []byte(`{"log":"`)

// isDockerLine reports whether line looks like one docker json-file entry:
// an object with a string "log" and a "stream" member.
func isDockerLine(line []byte) bool {
	it, ok := newObjIter(line)
	if !ok {
		return false
	}
	var hasLog, hasStream bool
	for {
		k, kind, _, _, _, ok := it.next()
		if !ok {
			break
		}
		switch string(k) {
		case "log":
			hasLog = kind == jsonString
		case "stream":
			hasStream = kind == jsonString
		}
	}
	return hasLog && hasStream
}

// decodeDocker extracts the "log" member of a docker json-file line,
// unescaped into *scratch when it has escapes. partial reports a piece without the trailing
// newline (docker splits lines longer than 16 KiB); the newline itself is
// removed. cut reports a "log" string cut by the end of the line (the line
// was longer than the read cap). ok=false means the line is not a docker
// entry; the caller then uses the line as it is.
func decodeDocker(line []byte, scratch *[]byte) (content []byte, stream int, partial, cut, ok bool) {
	var raw, rest []byte
	var esc bool
	if bytes.HasPrefix(line, dockerPrefix) {
		// Fast path: docker always writes "log" first, then "stream", "time".
		s, e, es, c := scanString(line, len(dockerPrefix))
		raw, esc, cut = line[s:e], es, c
		if !c {
			rest = line[e+1:]
		}
		if bytes.Contains(rest, []byte(`"stream":"stderr"`)) {
			stream = streamStderr
		}
		ok = true
	} else {
		it, isObj := newObjIter(line)
		if !isObj {
			return nil, 0, false, false, false
		}
		for {
			k, kind, v, e, c, more := it.next()
			if !more {
				break
			}
			switch string(k) {
			case "log":
				if kind == jsonString {
					raw, esc, cut, ok = v, e, c, true
				}
			case "stream":
				if kind == jsonString && string(v) == "stderr" {
					stream = streamStderr
				}
			}
		}
		if !ok {
			return nil, 0, false, false, false
		}
	}
	if esc {
		*scratch = appendUnescaped((*scratch)[:0], raw)
		content = *scratch
	} else {
		content = raw
	}
	if n := len(content); n > 0 && content[n-1] == '\n' {
		content = content[:n-1]
	} else if !cut {
		partial = true
	}
	if n := len(content); n > 0 && content[n-1] == '\r' {
		content = content[:n-1]
	}
	return content, stream, partial, cut, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
