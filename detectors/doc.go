// Package detectors turns observations into findings.
//
// It defines the Finding type shared by every detector and every output (the
// JSON shape of CONTRACT.md), and the detectors themselves: the log rules
// (detectors/logrules) that map MM2 log Records to findings without any I/O,
// and the cluster detectors that judge snapshots of both clusters.
//
// Detectors never send notifications, export metrics or decide when an alert
// resolves; package alerts does that from the findings they return.
package detectors
