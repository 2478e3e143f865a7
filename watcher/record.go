package watcher

import "time"

// Record is one MM2 log event: the first line of a log4j record together with
// every continuation line (stack frames, "Caused by:" lines, wrapped config
// dumps) that followed it, after any container envelope was removed.
//
// Fields are empty when the layout does not carry them; a zero Time means the
// timestamp could not be read, never "the epoch".
type Record struct {
	// Time is the record's timestamp as written by log4j (%d), read in the
	// zone given by the parser options (MM2 prints local time with no offset).
	Time time.Time
	// Level is the log4j level as written: "TRACE", "DEBUG", "INFO", "WARN",
	// "ERROR" or "FATAL".
	Level string
	// Context is the Connect MDC value connector.context without its brackets
	// and trailing space, e.g. "MirrorSourceConnector|task-0" or, when MM2 runs
	// on a Connect cluster, "src->dst.MirrorSourceConnector|worker".
	Context string
	// Logger is the log4j logger (%c), usually the fully qualified Java class
	// name, e.g. "org.apache.kafka.connect.mirror.MirrorSourceConnector". Short
	// layouts (%c{1}) give only the simple class name.
	Logger string
	// Thread is the thread name (%t) when the layout has one.
	Thread string
	// Message is the rendered message (%m) of the first line.
	Message string
	// Stack holds the continuation lines in order, without their line breaks.
	Stack []string
	// File is the path the record was read from ("-" for stdin).
	File string
	// Line is the 1-based line number of the record's first line in File.
	// After a rotation the count starts again at 1 in the new file.
	Line int64
	// Text is the record's first line as it appeared after the envelope was
	// removed (the evidence shown to people), capped like Message.
	Text string
	// Truncated reports that the record was cut: a line longer than the
	// configured cap, or more continuation lines than the configured maximum.
	Truncated bool
}
