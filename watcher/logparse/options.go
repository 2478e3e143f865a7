package logparse

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Names of the built-in layouts, as accepted in Options.Layout and reported
// in Stats.Layout.
const (
	// LayoutKafka is the Apache Kafka default, used by connect-log4j.properties
	// (3.x) and connect-log4j2.yaml (4.x): "[%d] %p %X{connector.context}%m (%c:%L)%n".
	LayoutKafka = "kafka"
	// LayoutStrimzi is the layout of Strimzi Connect and MirrorMaker 2 pods:
	// "%d{yyyy-MM-dd HH:mm:ss,SSS} %p %X{connector.context}%m (%c) [%t]%n".
	LayoutStrimzi = "strimzi"
	// LayoutShort is a common custom log4j2 layout with the thread in
	// brackets and the simple class name: "%d %-5p [%t] %c{1}:%L - %m%n".
	LayoutShort = "short"
	// LayoutColon is the layout of some vendor distributions, with the
	// logger before a colon: "%d{ISO8601} %p %c: %m%n".
	LayoutColon = "colon"
	// LayoutJSON is one JSON object per record (Strimzi's JSON layout, log4j2
	// JsonTemplateLayout, logstash-style encoders). Keys read: "@timestamp",
	// "timestamp" or "time" (RFC 3339 text or epoch milliseconds) or
	// "timeMillis"; "level"; "logger_name", "logger" or "loggerName";
	// "thread_name", "thread" or "threadName"; "message"; "connector.context"
	// at the top level or inside "mdc", "contextMap" or "context"; and the
	// throwable, made into Stack lines as log4j prints it: "stack_trace",
	// "exception" or "error.stack_trace" text; log4j2 JsonLayout's "thrown"
	// object ("name: message", its extendedStackTrace frames, then "Caused
	// by: name: message" per nested "cause"); ECS "error.type" and
	// "error.message" (or an "error" object) when there is no stack trace.
	LayoutJSON = "json"

	// LayoutPattern is reported in Stats.Layout when Options.Pattern is set.
	LayoutPattern = "pattern"
	// LayoutRawTimestamp is reported in Stats.Layout when no layout was
	// recognised and each line that starts with a timestamp starts a record.
	LayoutRawTimestamp = "raw-timestamp"
	// LayoutRawLine is reported in Stats.Layout when no layout was recognised
	// and no sampled line started with a timestamp: every line is a record.
	LayoutRawLine = "raw-line"
)

// Names of the container envelopes reported in Stats.Envelope.
const (
	// EnvelopeNone means lines are the layout's lines as log4j wrote them.
	EnvelopeNone = "none"
	// EnvelopeCRI is the CRI log format written by containerd and CRI-O
	// under /var/log/pods: "<RFC 3339 time> <stream> <P|F> <line>".
	EnvelopeCRI = "cri"
	// EnvelopeDocker is docker's json-file log driver: one JSON object with
	// "log", "stream" and "time" per physical line.
	EnvelopeDocker = "docker"
)

// Defaults applied when the corresponding Options field is zero.
const (
	// DefaultMaxLineBytes is the longest line kept, in bytes, after the
	// envelope is removed: 64 KiB.
	DefaultMaxLineBytes = 64 << 10
	// DefaultMaxStackLines is the most continuation lines kept per record.
	DefaultMaxStackLines = 256
)

// detectCandidates is how many first-line candidates (non-empty lines not
// starting with white space) layout detection looks at before deciding;
// detectMaxLines and detectMaxBytes bound what is held while detecting.
const (
	detectCandidates = 16
	detectMaxLines   = 256
	detectMaxBytes   = 1 << 20
)

// Options configures an Assembler, ScanFile and ScanReader. The zero value
// detects envelope and layout and reads timestamps as UTC.
type Options struct {
	// Layout is one of LayoutNames(); "" detects the layout from the first
	// lines of each file.
	Layout string
	// Pattern is a log4j ConversionPattern (the value of the worker's
	// PatternLayout, e.g. "[%d] %p %X{connector.context}%m (%c:%L)%n"). When
	// set it overrides Layout. See ValidatePattern for what is supported.
	Pattern string
	// Location is the zone used for timestamps that carry no offset (log4j's
	// %d prints the JVM's local time without one). nil means UTC.
	// Record.Time is always given in UTC; the zone only decides the instant.
	Location *time.Location
	// MaxLineBytes caps each line, in bytes, after the envelope is removed;
	// longer lines are cut and their record marked Truncated. 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxStackLines caps the continuation lines kept per record; further ones
	// are counted in Stats.DroppedLines and the record is marked Truncated.
	// 0 means DefaultMaxStackLines.
	MaxStackLines int
	// Logger receives the warning about an unrecognised layout and debug
	// messages about detection. nil discards.
	Logger *slog.Logger
}

// withDefaults returns o with zero fields defaulted, or an error for an
// unknown layout name or a bad pattern.
func (o Options) withDefaults() (Options, error) {
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxStackLines <= 0 {
		o.MaxStackLines = DefaultMaxStackLines
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Pattern == "" && o.Layout != "" && !isLayoutName(o.Layout) {
		return o, fmt.Errorf("unknown log layout %q (known: %v)", o.Layout, LayoutNames())
	}
	return o, nil
}

// LayoutNames returns the names of the built-in layouts, in the order used to
// break ties during detection: "kafka", "strimzi", "short", "colon", "json".
func LayoutNames() []string {
	return []string{LayoutKafka, LayoutStrimzi, LayoutShort, LayoutColon, LayoutJSON}
}

func isLayoutName(s string) bool {
	for _, n := range LayoutNames() {
		if n == s {
			return true
		}
	}
	return false
}

// Stats counts what an Assembler, ScanFile or ScanReader has read.
type Stats struct {
	// Lines is the number of physical lines fed (including CRI and docker
	// partial pieces and empty lines).
	Lines int64
	// Records is the number of records emitted.
	Records int64
	// TruncatedLines is the number of lines cut at the line cap.
	TruncatedLines int64
	// DroppedLines is the number of continuation lines (or JSON stack_trace
	// lines) dropped because a record reached MaxStackLines.
	DroppedLines int64
	// DiscardedBytes is the number of bytes of over-long lines that were
	// never held in memory (ScanFile and ScanReader only).
	DiscardedBytes int64
	// Envelope is the envelope in use: EnvelopeNone, EnvelopeCRI,
	// EnvelopeDocker, or "" before it is known.
	Envelope string
	// LayoutWarnings is the number of warnings logged about the layout: none
	// recognised, a change of layout within the file, or a fixed pattern or
	// layout that read none of the first 64 non-empty lines.
	LayoutWarnings int64
	// Layout is the layout in use: one of LayoutNames(), LayoutPattern,
	// LayoutRawTimestamp, LayoutRawLine, or "" before it is known.
	Layout string
}
