// Package follow is the `run` daemon's log input: it follows the MM2 worker
// log files named by --log (paths or globs, repeatable) by name, through
// log4j rename rotation, delete-and-recreate and copytruncate, and turns their
// lines into watcher.Records with watcher/logparse.
//
// One goroutine follows each file: it reads complete lines as they are
// written, hands them to that file's logparse.Assembler, and sends every
// assembled record to the caller's channel. A multi-line record (a message
// and its stack trace) is sent when the next record starts, when the file has
// been quiet for Options.FlushAfter, when the file is rotated, and at shutdown.
//
// Glob handling: patterns are expanded at start and every GlobInterval, so
// files that appear later (a new pod's /var/log/pods/*/mm2/*.log) are picked
// up and read from their start. A literal path that does not exist yet is
// followed anyway; until it can be opened the daemon logs that it is waiting
// and mm2_watchdog_log_file_waiting{file} is 1. Rotated siblings are never
// followed as new files: a literal connect.log only ever means that name,
// and when a pattern (connect.log*, *.log) matches both connect.log and a
// rotated name (connect.log.2024-01-01-10, connect-2024-01-01-10.log) only the
// live file is followed, because the rotated file's lines were already read
// from it before the rename; compressed files are skipped too.
//
// Where a file starts: files that exist when Run starts are entered at their
// end (the next line written is the first one read), or at their start with
// FromStart; files that appear later are read from their start. Offsets are
// not remembered across restarts.
//
// Engines (Options.Engine). The default, EngineNative ("native"), is the
// internal tailer package's own bounded reader with one fsnotify watcher on the
// followed files' directories; its documentation explains why it does not use
// github.com/nxadm/tail's follow mode. EngineTail ("tail") follows each file
// with one nxadm/tail v1.4.11 follower (Follow, ReOpen, CompleteLines, inotify
// unless Poll), for operators who know that library. Globs, the waiting gauge,
// FlushAfter, Ready, the line cap and the metrics work the same with both;
// what EngineTail gives up:
//
//   - It can exit the process: nxadm/tail calls os.Exit when a stat of a
//     followed path fails with anything but "not found" (a permission
//     change on the log directory, a directory replaced by a file, ESTALE on
//     NFS). The path and its directory are checked before a follower is
//     started, and a path that fails is only logged, shown as waiting and
//     tried again every GlobInterval; nothing can check it afterwards.
//   - It can lose lines at log4j rename rotation: nxadm/tail does not read
//     the rest of the renamed file, and under a steady writer it sometimes
//     takes the rotation for a truncation and stops reading the new file
//     until the next rotation (measured in the tailer package's
//     TestTailEngineRotation). A truncation refilled past the old size
//     before it looks (copytruncate under a fast writer) is missed.
//   - A long line is held in memory whole before it is cut at MaxLineBytes.
//   - With inotify, a write between nxadm/tail reaching the end of a newly
//     opened file and its watch being in place is read at the next write.
//   - Line numbers count from where following started; Ready says the
//     followers were started, not that they have opened their files; the
//     rotation kind is read from nxadm/tail's own log messages.
//
// What this package deliberately does not do: it does not judge records (the
// detectors do), read compressed or rotated files (the one-shot scan does),
// or close the output channel (the caller owns it).
package follow
