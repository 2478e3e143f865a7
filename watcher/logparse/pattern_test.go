package logparse

import (
	"strings"
	"testing"
)

func TestValidatePatternErrors(t *testing.T) {
	cases := map[string]string{
		"%d{ISO8601} %Q %m%n":           `log pattern "%d{ISO8601} %Q %m%n": unknown conversion %Q at column 13`,
		"%d %-5p [%t] %z - %m%n":        "unknown conversion %z at column 14",
		"%d %p %m %msg%n":               "more than one message conversion at column 10",
		"%d{yyyy-MM-dd HH:mm %m%n":      "unterminated { at column 3",
		"%d{yyyy-qq-dd} %m%n":           `unsupported field "qq"`,
		"%d{yyyy-MM-dd 'T} %m%n":        "unterminated quote",
		"%m%n trailing":                 "text after %n at column 6",
		"%m%n%p":                        "conversion %p after %n at column 5",
		"%d %p %":                       "dangling % at column 7",
		"%-.p %m":                       "missing width after '.' at column 1",
		"":                              "log pattern is empty",
		"%d{HH:mm:ss}{Nowhere/Zone} %m": "time zone \"Nowhere/Zone\"",
		"%n":                            "no conversion or text to match",
	}
	for p, w := range cases {
		err := ValidatePattern(p)
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("ValidatePattern(%q) = %v, want error containing %q", p, err, w)
		}
	}
	for _, p := range []string{
		"[%d] %p %X{connector.context}%m (%c:%L)%n",
		"%d{yyyy-MM-dd HH:mm:ss,SSS} %p %X{connector.context}%m (%c) [%t]%n",
		"%d %-5p [%t] %c{1}:%L - %m%n",
		"%d{ISO8601} %p %c: %m%n",
		"%d{ABSOLUTE} %5p %c{1}:%L - %m%n%ex",
		"%date{DATE} %level %logger %thread %msg%n%xEx",
		"%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %r [%t] %-5level %C{1.} %M %F %l %x %X %% %message%n",
		"%d{UNIX_MILLIS} %p %m%n",
		"%-20.30c %m",
	} {
		if err := ValidatePattern(p); err != nil {
			t.Errorf("ValidatePattern(%q) = %v", p, err)
		}
	}
}

func TestPatternParsing(t *testing.T) {
	cases := []struct {
		pattern, line string
		want          want
		match         int
	}{
		{
			pattern: "%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} [%t] %-5p %c - %X{traceId}%m%n",
			line:    "2026-10-30T20:18:56.123+0200 [main thread] INFO  org.apache.kafka.connect.mirror.MirrorMaker - Kafka MirrorMaker starting",
			want:    want{level: "INFO", logger: "org.apache.kafka.connect.mirror.MirrorMaker", thread: "main thread", msg: "Kafka MirrorMaker starting", time: ts},
			match:   fullMatch,
		},
		{
			pattern: "%d{ABSOLUTE} %5p %c{1}:%L - %m%n",
			line:    "18:18:56,123  WARN MirrorSourceConnector:412 - Could not create topic-partitions for orders.",
			want:    want{level: "WARN", logger: "MirrorSourceConnector", msg: "Could not create topic-partitions for orders."},
			match:   fullMatch,
		},
		{
			pattern: "%d{DATE} %-5p [%t] %m (%C:%L)%n",
			line:    "30 Oct 2026 18:18:56,123 DEBUG [t-1] a message (with parens) (org.example.Thing:?)",
			want:    want{level: "DEBUG", logger: "org.example.Thing", thread: "t-1", msg: "a message (with parens)", time: ts},
			match:   fullMatch,
		},
		{
			pattern: "%d{UNIX_MILLIS} %p %% %m%n",
			line:    "1793384336123 ERROR % boom",
			want:    want{level: "ERROR", msg: "boom", time: ts},
			match:   fullMatch,
		},
		{
			pattern: "%m [%p] %d{yyyy-MM-dd HH:mm:ss}%n",
			line:    "message first [WARN] 2026-10-30 18:18:56",
			want:    want{level: "WARN", msg: "message first", time: "2026-10-30T18:18:56.000Z"},
			match:   fullMatch,
		},
		{
			pattern: "[%d] %p %X{connector.context}%m (%c:%L)%n",
			line:    "[2026-10-30 18:18:56,123] INFO a message whose end is on a later line",
			want:    want{level: "INFO", msg: "a message whose end is on a later line", time: ts},
			match:   headMatch,
		},
		{
			pattern: "[%d] %p %X{connector.context}%m (%c:%L)%n",
			line:    "[2026-10-30 18:18:56,123] NOTICE x (a.B:1)",
			match:   noMatch,
		},
		{
			pattern: "[%d] %p %X{connector.context}%m (%c:%L)%n",
			line:    "[2026-13-30 18:18:56,123] INFO x (a.B:1)",
			match:   noMatch,
		},
		{
			pattern: "%d %p %c: %m%n",
			line:    "2026-10-30 18:18:56,123 INFO Kafka version: 3.9.0",
			match:   noMatch, // a logger has no spaces
		},
	}
	for _, c := range cases {
		pp, err := compilePattern(c.pattern, nil)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		var f fields
		m := pp.parse([]byte(c.line), &f)
		if m != c.match {
			t.Errorf("%q on %q: match %d, want %d", c.pattern, c.line, m, c.match)
			continue
		}
		if m == noMatch {
			continue
		}
		recs, _ := feedAll(t, Options{Pattern: c.pattern}, c.line)
		if len(recs) != 1 {
			t.Fatalf("%d records", len(recs))
		}
		checkRecord(t, recs[0], c.want)
		if st := recs[0]; st.Text != c.line {
			t.Errorf("Text %q", st.Text)
		}
	}
}

func TestDateFormats(t *testing.T) {
	cases := []struct{ format, text, want string }{
		{"", "2026-10-30 18:18:56,123", ts},
		{"ISO8601", "2026-10-30 18:18:56,123", ts}, // log4j 1 ISO8601
		{"ISO8601", "2026-10-30T18:18:56.123", ts}, // log4j 2 ISO8601 (and period)
		{"ISO8601_OFFSET_DATE_TIME_HHCMM", "2026-10-30T19:18:56,123+01:00", ts},
		{"ISO8601_BASIC", "20261030T181856,123", ts},
		{"COMPACT", "20261030181856123", ts},
		{"DATE", "30 Oct 2026 18:18:56,123", ts},
		{"dd/MM/yy hh:mm:ss a", "30/10/26 06:18:56 PM", "2026-10-30T18:18:56.000Z"},
		{"EEE MMM d HH:mm:ss.SSSSSS yyyy", "Fri Oct 30 18:18:56.123000 2026", ts},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2026-10-30T18:18:56.123Z", ts},
		{"UNIX", "1793384336", "2026-10-30T18:18:56.000Z"},
	}
	for _, c := range cases {
		df, err := compileDateFormat(c.format)
		if err != nil {
			t.Fatalf("%q: %v", c.format, err)
		}
		tm, n, ok := df.parse([]byte(c.text+" rest"), nil)
		if !ok || n != len(c.text) {
			t.Errorf("%q on %q: ok=%v n=%d", c.format, c.text, ok, n)
			continue
		}
		if got := tm.UTC().Format("2006-01-02T15:04:05.000Z07:00"); got != c.want {
			t.Errorf("%q on %q: %s, want %s", c.format, c.text, got, c.want)
		}
	}
	for _, bad := range []string{"2026-10-30 25:18:56,123", "2026-10-3", "2026-00-30 18:18:56,123", "x"} {
		df, _ := compileDateFormat("")
		if _, _, ok := df.parse([]byte(bad), nil); ok {
			t.Errorf("parsed %q", bad)
		}
	}
}
