package alerts

import (
	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of this package. They are part of the external contract
// (CONTRACT.md, "Metrics").
const (
	MetricFindingsTotal        = "mm2_watchdog_findings_total"
	MetricAlertsFiring         = "mm2_watchdog_alerts_firing"
	MetricNotificationsTotal   = "mm2_watchdog_notifications_total"
	MetricNotificationQueueLen = "mm2_watchdog_notification_queue_length"
	MetricNotificationsDropped = "mm2_watchdog_notifications_dropped_total"
	MetricBuildInfo            = "mm2_watchdog_build_info"
)

// Values of the result label of mm2_watchdog_notifications_total.
const (
	resultSuccess = "success"
	resultFailed  = "failure"
	resultRetry   = "retry"
	resultDropped = "dropped"
)

// RuleSeverity is a rule id with a severity it can report, used to
// pre-initialise the per-rule series at 0 so that they exist before the
// first finding.
type RuleSeverity struct {
	Rule     string
	Severity detectors.Severity
}

// Metrics are the Prometheus metrics of alerting. A nil *Metrics is valid
// and records nothing.
type Metrics struct {
	findings      *prometheus.CounterVec
	firing        *prometheus.GaugeVec
	notifications *prometheus.CounterVec
	queueLength   prometheus.Gauge
	dropped       *prometheus.CounterVec
	buildInfo     *prometheus.GaugeVec
}

// NewMetrics creates the alerting metrics and registers them with reg (when
// reg is not nil). The known rule/severity pairs get their
// mm2_watchdog_findings_total and mm2_watchdog_alerts_firing series at 0.
// It panics if the metrics are already registered with reg, like
// prometheus.MustRegister, since that is a programming error.
//
// The metrics:
//   - mm2_watchdog_findings_total{rule,severity}: counter of observations
//     (one per Observe call, and one per finding per Sync round);
//   - mm2_watchdog_alerts_firing{rule,severity}: gauge of firing alerts;
//   - mm2_watchdog_notifications_total{integration,result}: counter of
//     delivery attempts, result success, failure (permanent), retry (a
//     retryable failure that will be tried again) or dropped (given up
//     unsent: queue overflow, or the shutdown deadline);
//   - mm2_watchdog_notification_queue_length: notifications waiting or in
//     delivery;
//   - mm2_watchdog_notifications_dropped_total{integration}: notifications
//     given up unsent;
//   - mm2_watchdog_build_info{version,goversion,revision}: 1, see
//     SetBuildInfo.
func NewMetrics(reg prometheus.Registerer, known []RuleSeverity) *Metrics {
	m := &Metrics{
		findings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricFindingsTotal,
			Help: "Observations of findings by rule and severity: one per log observation, one per finding per cluster-check round.",
		}, []string{"rule", "severity"}),
		firing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricAlertsFiring,
			Help: "Alerts currently firing, by rule and severity.",
		}, []string{"rule", "severity"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricNotificationsTotal,
			Help: "Notification delivery attempts by integration and result (success, failure, retry, dropped).",
		}, []string{"integration", "result"}),
		queueLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricNotificationQueueLen,
			Help: "Notifications waiting for delivery, including the one being delivered.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricNotificationsDropped,
			Help: "Notifications given up without being delivered: the queue overflowed (oldest first) or the shutdown deadline passed.",
		}, []string{"integration"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricBuildInfo,
			Help: "A metric with a constant value of 1, labelled with the version, Go version and revision mm2-watchdog was built from.",
		}, []string{"version", "goversion", "revision"}),
	}
	for _, k := range known {
		m.findings.WithLabelValues(k.Rule, string(k.Severity))
		m.firing.WithLabelValues(k.Rule, string(k.Severity))
	}
	if reg != nil {
		reg.MustRegister(m.findings, m.firing, m.notifications, m.queueLength, m.dropped, m.buildInfo)
	}
	return m
}

// SetBuildInfo sets mm2_watchdog_build_info{version,goversion,revision} to 1.
// goversion is normally runtime.Version(). Call it once at start-up.
func (m *Metrics) SetBuildInfo(version, goversion, revision string) {
	if m == nil {
		return
	}
	m.buildInfo.WithLabelValues(version, goversion, revision).Set(1)
}

// initIntegration creates the notification series of one integration at 0.
func (m *Metrics) initIntegration(name string) {
	if m == nil {
		return
	}
	for _, r := range []string{resultSuccess, resultFailed, resultRetry, resultDropped} {
		m.notifications.WithLabelValues(name, r)
	}
	m.dropped.WithLabelValues(name)
}

func (m *Metrics) observed(rule string, severity detectors.Severity) {
	if m == nil {
		return
	}
	m.findings.WithLabelValues(rule, string(severity)).Inc()
}

func (m *Metrics) setFiring(rule string, severity detectors.Severity, n int) {
	if m == nil {
		return
	}
	m.firing.WithLabelValues(rule, string(severity)).Set(float64(n))
}

func (m *Metrics) result(integration, result string) {
	if m == nil {
		return
	}
	m.notifications.WithLabelValues(integration, result).Inc()
}

func (m *Metrics) drop(integration string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.notifications.WithLabelValues(integration, resultDropped).Add(float64(n))
	m.dropped.WithLabelValues(integration).Add(float64(n))
}

func (m *Metrics) queue(n int) {
	if m == nil {
		return
	}
	m.queueLength.Set(float64(n))
}
