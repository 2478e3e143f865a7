// Package watcher holds what mm2-watchdog observes, before any judgement is
// made: the Record type that one MM2 log event becomes, and, in its
// sub-packages, the pieces that produce observations.
//
//   - watcher/logparse turns raw log lines (with or without a container
//     envelope, in any of the known log4j layouts) into Records, and reads
//     whole files for the one-shot scan.
//   - watcher/follow follows log files by name through rotation with
//     github.com/nxadm/tail and feeds their lines to logparse.
//   - watcher/mm2config reads MM2's own properties file.
//   - watcher/cluster is the only place that talks to Kafka.
//
// Nothing in watcher decides whether something is wrong; that is the job of
// package detectors.
package watcher
