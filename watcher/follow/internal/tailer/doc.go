// Package tailer is the line layer under package follow: it follows log files
// by name, through rotation and truncation, and hands every complete physical
// line to a Sink. It knows nothing about log4j layouts or Records; follow glues
// it to watcher/logparse.
//
// It reads files with its own bounded reader and gets change notifications
// from one fsnotify (inotify) instance per Manager, with a periodic stat as a
// safety net (and as the only mechanism in poll mode). That native engine is
// the default; an engine built on github.com/nxadm/tail's follow mode can be
// chosen with Config.Engine (nxadm.go says what it gives up). The native
// engine deliberately does not use nxadm/tail, for three measured reasons:
//
//   - nxadm/tail v1.4.11 calls os.Exit (util.Fatal) from its watcher
//     goroutines when os.Stat of the followed path fails with anything other
//     than ENOENT (EACCES after a directory permission change, ENOTDIR when a
//     directory is replaced, ESTALE on NFS). No guard outside the library can
//     close that race, because the stat runs on the library's goroutine as
//     soon as the next inotify event for the file arrives. Here every stat or
//     open error only marks the file as waiting and is retried.
//   - nxadm/tail reads a line with bufio.Reader.ReadString, so a 50 MB line is
//     held in memory several times over, whatever MaxLineSize says. Here a
//     line is kept only up to the configured cap; the rest of that physical
//     line is read and dropped, and counted.
//   - nxadm/tail reopens the path after a rename without reading what was left
//     in the old file. Here the old file descriptor is read to its end before
//     the new file is opened, so a log4j rename rotation loses nothing.
//
// What it does not do: it does not remember offsets across restarts (a new
// process starts at the end of each file, or at the start with FromStart), it
// does not read compressed or already-rotated files (that is the one-shot scan
// command's job), and it cannot see a file that was rotated twice between two
// looks (an hourly log4j rotation is far slower than either the inotify wake-up
// or the poll interval).
package tailer
