package alerts

import "time"

// Defaults for the zero values of Config.
const (
	DefaultQuietPeriod    = 30 * time.Minute
	DefaultRepeatInterval = 4 * time.Hour
	DefaultGroupWait      = 10 * time.Second
	DefaultGroupInterval  = 5 * time.Minute
	DefaultQueueSize      = 1000
	DefaultFlushTimeout   = 10 * time.Second
)

// MaxAlertsPerNotification caps how many alerts one Notification carries; a
// larger group is split into several notifications in order. It keeps one
// Slack message within Block Kit's limit of 50 blocks.
const MaxAlertsPerNotification = 20

// Config holds the timings and bounds of alerting. A zero field takes its
// default; negative durations are treated as zero and then defaulted.
type Config struct {
	// QuietPeriod is how long an alert from an event source (a log rule)
	// stays firing without a new observation before it resolves. Default 30m.
	QuietPeriod time.Duration
	// RepeatInterval is how long after its last notification a still-firing
	// critical alert is notified again. Warnings and infos are not repeated.
	// Default 4h.
	RepeatInterval time.Duration
	// GroupWait is how long the first alerts of a quiet period are held so
	// that alerts which fire together go out in one notification. Default 10s.
	GroupWait time.Duration
	// GroupInterval is the least time between two notifications of the
	// group: alerts that arrive after a notification was sent wait until this
	// much time has passed since it, and then go out together. Default 5m.
	GroupInterval time.Duration
	// QueueSize bounds the notifications waiting for delivery. Past the
	// bound the oldest waiting notification is dropped and counted in
	// mm2_watchdog_notifications_dropped_total. Default 1000.
	QueueSize int
	// FlushTimeout bounds the final flush of Dispatcher.Run at shutdown.
	// Default 10s.
	FlushTimeout time.Duration
	// MaterialValues lists, per rule id, the keys of Finding.Values whose
	// change is material: a firing alert whose value under one of these keys
	// differs from the value last notified is notified again as "changed".
	// A change of Finding.Partitions is always material.
	MaterialValues map[string][]string
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	dur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	dur(&c.QuietPeriod, DefaultQuietPeriod)
	dur(&c.RepeatInterval, DefaultRepeatInterval)
	dur(&c.GroupWait, DefaultGroupWait)
	dur(&c.GroupInterval, DefaultGroupInterval)
	dur(&c.FlushTimeout, DefaultFlushTimeout)
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	return c
}
