package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Notification is one message's worth of alerts. All alerts in it share
// Status: a group that fired (first, changed or repeat, see Alert.LastReason)
// or a group that resolved. Alerts are sorted critical first. A
// notification never holds more than MaxAlertsPerNotification alerts.
type Notification struct {
	// Seq numbers notifications of one Dispatcher from 1 in the order they
	// were formed; delivery keeps this order.
	Seq uint64
	// Status is Firing or Resolved.
	Status Status
	// Alerts are copies; a notifier may keep them.
	Alerts []Alert
}

// Receipt says what a notifier did with a Notification, for debug logs.
type Receipt struct {
	// Refs are destination references of the messages posted or edited (for
	// Slack "channel/ts"); empty when the destination gives none. They never
	// contain secrets.
	Refs []string
}

// Notifier delivers notifications to one destination.
//
// Notify makes one attempt and does not retry or sleep: the Dispatcher's
// loop does that. It classifies a failure by its return value: a
// *RetryableError (see Retryable) means "try again later"; any other error is
// permanent and the notification is given up. Returned errors must not
// contain secrets (tokens, webhook URLs). Notify is called from one goroutine
// at a time.
type Notifier interface {
	// Name is the integration label of the metrics, e.g. "slack-webhook".
	Name() string
	Notify(ctx context.Context, n Notification) (Receipt, error)
}

// RetryableError marks a delivery failure that may succeed when tried again,
// such as an HTTP 429 or 5xx or a network error.
type RetryableError struct {
	// Err is the underlying error (already free of secrets).
	Err error
	// RetryAfter is the wait the destination asked for (HTTP Retry-After);
	// zero when it asked for none, and the loop then backs off on its own.
	RetryAfter time.Duration
}

// Retryable wraps err as a *RetryableError with the given Retry-After (zero
// for none). It returns nil for a nil err.
func Retryable(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryableError{Err: err, RetryAfter: retryAfter}
}

// Error implements error.
func (e *RetryableError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%v (retry after %s)", e.Err, e.RetryAfter)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *RetryableError) Unwrap() error { return e.Err }

// IsRetryable reports whether err is or wraps a *RetryableError, and the
// Retry-After it carries.
func IsRetryable(err error) (bool, time.Duration) {
	var re *RetryableError
	if errors.As(err, &re) {
		return true, re.RetryAfter
	}
	return false, 0
}

// LogNotifier writes notifications to a slog logger, one record per alert:
// WARN for a firing alert, INFO for a resolved one, with the finding's fields
// as attributes. It is the destination when no Slack destination is set; with
// a JSON handler each record is one JSON line. It never fails.
type LogNotifier struct {
	logger *slog.Logger
}

// NewLogNotifier returns a LogNotifier writing to logger (nil discards).
func NewLogNotifier(logger *slog.Logger) *LogNotifier {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &LogNotifier{logger: logger}
}

// Name returns "log".
func (l *LogNotifier) Name() string { return "log" }

// Notify logs each alert of n.
func (l *LogNotifier) Notify(ctx context.Context, n Notification) (Receipt, error) {
	for i := range n.Alerts {
		a := &n.Alerts[i]
		level, msg := slog.LevelWarn, "alert firing"
		if a.Status == Resolved {
			level, msg = slog.LevelInfo, "alert resolved"
		}
		attrs := []slog.Attr{
			slog.String("fingerprint", a.Fingerprint),
			slog.String("reason", string(a.LastReason)),
			slog.String("rule", a.Rule),
			slog.String("severity", string(a.Severity)),
			slog.String("summary", a.Summary),
		}
		for _, kv := range [][2]string{
			{"source", a.Source}, {"target", a.Target}, {"cluster", a.Cluster},
			{"topic", a.Topic}, {"connector", a.Connector}, {"group", a.Group},
			{"cause", a.Cause}, {"hint", a.Hint}, {"scope", a.Scope},
		} {
			if kv[1] != "" {
				attrs = append(attrs, slog.String(kv[0], kv[1]))
			}
		}
		if len(a.Partitions) > 0 {
			attrs = append(attrs, slog.Any("partitions", a.Partitions))
		}
		if a.Task != nil {
			attrs = append(attrs, slog.Int("task", *a.Task))
		}
		if a.Count > 0 {
			attrs = append(attrs, slog.Int("count", a.Count))
		}
		if len(a.Values) > 0 {
			attrs = append(attrs, slog.Any("values", a.Values))
		}
		l.logger.LogAttrs(ctx, level, msg, attrs...)
	}
	return Receipt{}, nil
}
