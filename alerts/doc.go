// Package alerts turns findings into alerts and alerts into notifications.
//
// It owns four things:
//
//   - Alert identity and state. An alert is identified by the finding's
//     Fingerprint (rule plus the identifying fields). A pure function, decide,
//     says for one alert and one observation whether to notify and why: the
//     alert fired for the first time, changed materially (severity went up,
//     or its partitions or rule-marked values changed), is still firing
//     critical after the repeat interval, resolved, or nothing to say.
//   - State, which applies those decisions to two kinds of sources. Event
//     sources (the log rules) report "seen again" with Observe and resolve by
//     a Recovered finding or after a quiet period without observations.
//     Snapshot sources (the cluster checks) report the complete set of
//     current findings of a named scope with Sync; whatever the scope fired
//     before and no longer reports resolves. A scope that could not be checked
//     reports SyncUnknown, which neither resolves nor fires anything.
//   - Dispatch: alerts that fire together are grouped into one Notification,
//     queued in a bounded FIFO and delivered by one retry loop that backs off,
//     honours Retry-After and never loses a notification while the
//     destination is down (only what overflows the queue is dropped, oldest
//     first, and counted).
//   - The Prometheus metrics of all this (metrics.go).
//
// Notifiers (the Slack one lives in alerts/slack, a log notifier here) only
// render and send one Notification and classify a failure as retryable or
// not; they never retry or sleep themselves.
//
// The package deliberately does not detect anything, read logs or talk to
// Kafka, does not persist state across restarts (a restart starts with no
// alerts; conditions that still hold fire again), and does not silence or
// inhibit alerts.
package alerts
