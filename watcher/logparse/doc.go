// Package logparse turns the lines of an MM2 worker log into watcher.Record
// values.
//
// A line goes through three stages:
//
//  1. Envelope. A container runtime may have wrapped each physical line: CRI
//     (containerd, CRI-O: "2026-03-05T11:02:10.118220931Z stdout F <line>",
//     with "P" pieces joined until the next "F") or the docker json-file
//     driver ({"log":"<line>\n","stream":"stdout","time":"…"}). The envelope
//     is detected once per file from its first non-empty line and removed.
//  2. Layout. The log4j layout the worker was configured with: the Apache
//     Kafka default "[%d] %p %X{connector.context}%m (%c:%L)%n" (3.x log4j
//     and 4.x log4j2), the Strimzi layout, two common custom layouts, JSON
//     objects, or any log4j ConversionPattern given by the user. Without
//     one, the layout is detected from the first lines of the file that
//     start with a timestamp or a JSON object (start-up text before them is
//     no evidence); when none fits, one record is made per line that starts
//     with a timestamp (or per line), a warning says so, and the first line
//     a built-in layout reads later switches to it. A line that the detected
//     layout does not read but another built-in layout reads in full starts
//     a record in that layout (files of different workers get
//     concatenated); the first such change is logged as a warning. A layout
//     or pattern given by the user never changes.
//  3. Assembly. A record starts on a line that has the layout's first-line
//     shape; the lines after it that do not (stack frames, "Caused by:",
//     wrapped config dumps) are its Stack.
//
// An Assembler does this for one file fed line by line (the daemon feeds it
// from a follower); ScanFile and ScanReader read whole files (plain, gzip,
// or stdin) for the one-shot scan.
//
// The hot path does no regular-expression matching and no allocation per
// line: layouts are matched by byte scanning, and strings are made only when
// a record is emitted (one string holding all its text, plus the Record and,
// when there is a stack, its slice).
//
// Bounds: a line longer than Options.MaxLineBytes is cut, a record keeps at
// most Options.MaxStackLines continuation lines, and what is cut or dropped
// is counted in Stats and marked with Record.Truncated. Bytes that are not
// valid UTF-8 are passed through as read; they never stop the lines after
// them from being parsed.
//
// This package deliberately does not follow files, handle rotation or decide
// whether a record means trouble: following is watcher/follow's job and
// judging records is the detectors' job.
package logparse
