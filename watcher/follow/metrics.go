package follow

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mm2-watchdog/mm2-watchdog/watcher/follow/internal/tailer"
)

// Metric names (namespace mm2_watchdog_). The file label is the path as
// configured or as expanded from a glob, so its values are bounded by the
// files that exist; a file's series are deleted when it stops being followed.
const (
	// MetricLines counts physical log lines read, per file.
	MetricLines = "mm2_watchdog_log_lines_total"
	// MetricLastRecordTimestamp is the timestamp, in Unix seconds, of the
	// newest record read from the file: the time written in the log line
	// (log4j %d, read in logparse.Options.Location), or the time it was read
	// when the line carries no timestamp the layout could parse.
	MetricLastRecordTimestamp = "mm2_watchdog_log_last_record_timestamp_seconds"
	// MetricTruncatedLines counts physical lines longer than
	// Options.MaxLineBytes, whose excess was read and dropped.
	MetricTruncatedLines = "mm2_watchdog_log_truncated_lines_total"
	// MetricFileWaiting is 1 while the path does not exist or cannot be
	// opened (missing, permission denied, not a file), 0 while it is read.
	MetricFileWaiting = "mm2_watchdog_log_file_waiting"
	// MetricRotations counts rotations noticed, by kind: "rename" (a new
	// file at the path: log4j rename rotation, delete and recreate) or
	// "truncate" (cut in place: copytruncate).
	MetricRotations = "mm2_watchdog_log_rotations_total"
)

// Metrics are the log-following instruments. Make one with NewMetrics and
// share it between Runs only if they follow different files.
type Metrics struct {
	lines      *prometheus.CounterVec
	lastRecord *prometheus.GaugeVec
	truncated  *prometheus.CounterVec
	waiting    *prometheus.GaugeVec
	rotations  *prometheus.CounterVec
}

// NewMetrics creates the instruments and registers them with reg; a nil reg
// registers nothing (for callers that do not export metrics). It panics if
// the names are already registered with reg, like prometheus.MustRegister.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		lines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricLines, Help: "Physical log lines read from the followed MM2 log file.",
		}, []string{"file"}),
		lastRecord: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricLastRecordTimestamp,
			Help: "Unix time of the newest log record read from the file: its log4j timestamp, or the read time when it has none.",
		}, []string{"file"}),
		truncated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricTruncatedLines, Help: "Log lines longer than the line cap; their excess was dropped.",
		}, []string{"file"}),
		waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricFileWaiting, Help: "1 while the log file does not exist or cannot be opened.",
		}, []string{"file"}),
		rotations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRotations, Help: "Log rotations noticed: rename (a new file at the path) or truncate (cut in place).",
		}, []string{"file", "kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.lines, m.lastRecord, m.truncated, m.waiting, m.rotations)
	}
	return m
}

// forFile binds and pre-initialises the series of one file.
func (m *Metrics) forFile(file string) tailer.FileMetrics {
	return tailer.FileMetrics{
		Lines:          m.lines.WithLabelValues(file),
		TruncatedLines: m.truncated.WithLabelValues(file),
		Waiting:        m.waiting.WithLabelValues(file),
		Renames:        m.rotations.WithLabelValues(file, tailer.KindRename),
		Truncations:    m.rotations.WithLabelValues(file, tailer.KindTruncate),
	}
}

// recordTime returns the gauge of the file's newest record time.
func (m *Metrics) recordTime(file string) prometheus.Gauge {
	return m.lastRecord.WithLabelValues(file)
}

// forget deletes the series of a file no longer followed.
func (m *Metrics) forget(file string) {
	m.lines.DeleteLabelValues(file)
	m.lastRecord.DeleteLabelValues(file)
	m.truncated.DeleteLabelValues(file)
	m.waiting.DeleteLabelValues(file)
	m.rotations.DeleteLabelValues(file, tailer.KindRename)
	m.rotations.DeleteLabelValues(file, tailer.KindTruncate)
}
