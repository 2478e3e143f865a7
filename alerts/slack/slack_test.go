package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/alerts"
	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/slack-go/slack"
)

// logSink is a goroutine-safe buffer for a JSON slog handler.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *logSink) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waits records the waits the retry loop asks for, returning at once.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) get() []time.Duration { w.mu.Lock(); defer w.mu.Unlock(); return slices.Clone(w.d) }

type rig struct {
	state *alerts.State
	disp  *alerts.Dispatcher
	reg   *prometheus.Registry
	m     *alerts.Metrics
	logs  *logSink
	waits *waits
	now   time.Time
}

func newRig(t *testing.T, n alerts.Notifier, cfg alerts.Config) *rig {
	t.Helper()
	r := &rig{reg: prometheus.NewRegistry(), logs: &logSink{}, waits: &waits{},
		now: time.Date(2026, 10, 30, 18, 18, 56, 0, time.UTC)}
	r.m = alerts.NewMetrics(r.reg, nil)
	cfg.GroupWait = time.Hour // delivery happens on flush()
	r.disp = alerts.NewDispatcher(n, r.m, cfg, r.logs.logger(), alerts.WithSleep(r.waits.sleep))
	r.state = alerts.NewState(cfg, r.disp, r.m, func() time.Time { return r.now })
	return r
}

func (r *rig) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.disp.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func (r *rig) counter(t *testing.T, integration, result string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != alerts.MetricNotificationsTotal {
			continue
		}
		for _, m := range mf.GetMetric() {
			lv := map[string]string{}
			for _, l := range m.GetLabel() {
				lv[l.GetName()] = l.GetValue()
			}
			if lv["integration"] == integration && lv["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func mm2Finding(rule string, sev detectors.Severity, topic string) detectors.Finding {
	return detectors.Finding{Rule: rule, Severity: sev, Source: "kafka", Target: "vast", Topic: topic,
		Partitions: []int32{3, 4}, Count: 3, Connector: "MirrorSourceConnector", Task: detectors.TaskPtr(0),
		Summary: "MM2 could not create topic-partitions for " + topic + " on vast.",
		Cause:   "org.apache.kafka.common.errors.UnsupportedVersionException: CreatePartitions is not supported",
		Hint:    "Give the target CreatePartitions, or add the partitions by hand."}
}

func TestWebhookFiringGroupedThenResolved(t *testing.T) {
	fs := newFakeSlack(t)
	n, err := NewWebhook(fs.hookURL(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, n, alerts.Config{})
	r.state.Observe(mm2Finding("partitions-not-created", detectors.Critical, "orders"))
	r.state.Observe(mm2Finding("partitions-not-created", detectors.Critical, "payments"))
	r.state.Observe(mm2Finding("send-retrying", detectors.Warning, "orders"))
	r.flush(t)

	calls := fs.okCalls()
	if len(calls) != 1 {
		t.Fatalf("want the 3 alerts that fired together in 1 message, got %d", len(calls))
	}
	c := calls[0]
	if h := c.header(); h != "MirrorMaker 2: 2 critical, 1 warning firing" {
		t.Errorf("header = %q", h)
	}
	secs := c.sectionTexts()
	if len(secs) != 3 {
		t.Fatalf("want 3 sections, got %d: %q", len(secs), secs)
	}
	for _, want := range []string{"*CRITICAL* `partitions-not-created`", "*Flow* kafka → vast", "*Topic* `orders`",
		"*Partitions* 3, 4", "*Count* 3", "*Connector* MirrorSourceConnector task 0",
		"*Cause* `org.apache.kafka.common.errors.UnsupportedVersionException", "*Hint* Give the target"} {
		if !strings.Contains(secs[0], want) {
			t.Errorf("first section lacks %q:\n%s", want, secs[0])
		}
	}
	if !strings.Contains(secs[2], "WARNING") {
		t.Errorf("warning not last: %q", secs)
	}
	if !strings.Contains(c.text, "[critical] partitions-not-created orders") {
		t.Errorf("fallback text = %q", c.text)
	}

	rf := mm2Finding("partitions-not-created", detectors.Critical, "orders")
	rf.Recovered = true
	r.now = r.now.Add(time.Minute)
	r.state.Observe(rf)
	r.flush(t)
	calls = fs.okCalls()
	if len(calls) != 2 {
		t.Fatalf("want a resolved message, got %d calls", len(calls))
	}
	if h := calls[1].header(); h != "MirrorMaker 2: 1 resolved" {
		t.Errorf("resolved header = %q", h)
	}
	if s := calls[1].sectionTexts(); len(s) != 1 || !strings.Contains(s[0], ":white_check_mark: *RESOLVED*") || strings.Contains(s[0], "*Hint*") {
		t.Errorf("resolved section = %q", s)
	}
}

func TestBotEditsInPlace(t *testing.T) {
	fs := newFakeSlack(t)
	n, err := NewBot("xoxb-1234-5678-abcdef", "C0ALERTS", slack.OptionAPIURL(fs.apiURL()))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, n, alerts.Config{})
	a := mm2Finding("task-failed", detectors.Critical, "orders")
	b := mm2Finding("record-too-large", detectors.Critical, "payments")
	r.state.Observe(a)
	r.state.Observe(b)
	r.flush(t)

	calls := fs.okCalls()
	if len(calls) != 1 || calls[0].path != "/api/chat.postMessage" || calls[0].token != "xoxb-1234-5678-abcdef" {
		t.Fatalf("firing: got %+v", calls)
	}

	// Resolving part of the group re-renders the group message.
	ra := a
	ra.Recovered = true
	r.state.Observe(ra)
	r.flush(t)
	calls = fs.okCalls()
	if len(calls) != 2 || calls[1].path != "/api/chat.update" || calls[1].ts != "1700000000.000001" {
		t.Fatalf("partial resolve: want chat.update of ts 1700000000.000001, got %+v", calls[1:])
	}
	if h := calls[1].header(); h != "MirrorMaker 2: 1 critical firing, 1 resolved" {
		t.Errorf("edited header = %q", h)
	}
	secs := calls[1].sectionTexts()
	if len(secs) != 2 || !strings.Contains(secs[0], "RESOLVED") == !strings.Contains(secs[1], "RESOLVED") {
		t.Errorf("edited sections = %q", secs)
	}

	rb := b
	rb.Recovered = true
	r.state.Observe(rb)
	r.flush(t)
	calls = fs.okCalls()
	if len(calls) != 3 || calls[2].path != "/api/chat.update" || calls[2].ts != "1700000000.000001" ||
		calls[2].header() != "MirrorMaker 2: 2 resolved" {
		t.Fatalf("full resolve: got %+v", calls[2:])
	}

	// A resolve the notifier has no message for (e.g. after a restart) is posted.
	c := mm2Finding("worker-died", detectors.Critical, "")
	r.state.Observe(c)
	r.flush(t)
	n.mu.Lock()
	n.byAlert = map[string][]*message{} // forget, as a restart would
	n.mu.Unlock()
	rc := c
	rc.Recovered = true
	r.state.Observe(rc)
	r.flush(t)
	calls = fs.okCalls()
	if last := calls[len(calls)-1]; last.path != "/api/chat.postMessage" || last.header() != "MirrorMaker 2: 1 resolved" {
		t.Fatalf("unknown resolve: got %+v", last)
	}
}

func TestBotPartialFailureDoesNotPostTwice(t *testing.T) {
	fs := newFakeSlack(t)
	n, err := NewBot("xoxb-1234-5678-abcdef", "C0ALERTS", slack.OptionAPIURL(fs.apiURL()))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, n, alerts.Config{})
	a := mm2Finding("task-failed", detectors.Critical, "orders")
	r.state.Observe(a)
	r.flush(t)
	unknown := mm2Finding("worker-died", detectors.Critical, "")
	r.state.Observe(unknown)
	r.flush(t)
	n.mu.Lock()
	delete(n.byAlert, unknown.Fingerprint()) // as if posted before a restart
	n.mu.Unlock()

	// One resolved notification needs a post (worker-died) and an edit (task-failed);
	// the edit fails once with a 503.
	fs.mu.Lock()
	fs.script = []reply{{}, {status: http.StatusServiceUnavailable}}
	fs.mu.Unlock()
	a.Recovered, unknown.Recovered = true, true
	r.state.Observe(a)
	r.state.Observe(unknown)
	r.flush(t)
	var posts, updates int
	for _, c := range fs.got()[2:] {
		switch c.path {
		case "/api/chat.postMessage":
			posts++
		case "/api/chat.update":
			updates++
		}
	}
	if posts != 1 || updates != 2 {
		t.Errorf("after a failed edit: %d posts, %d updates; want 1 post, 2 updates (one retried)", posts, updates)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	for _, kind := range []string{"webhook", "bot"} {
		t.Run(kind, func(t *testing.T) {
			fs := newFakeSlack(t, reply{status: http.StatusTooManyRequests, retryAfter: "7"})
			var n *Notifier
			var err error
			if kind == "webhook" {
				n, err = NewWebhook(fs.hookURL(), nil, nil)
			} else {
				n, err = NewBot("xoxb-1234-5678-abcdef", "C0ALERTS", slack.OptionAPIURL(fs.apiURL()))
			}
			if err != nil {
				t.Fatal(err)
			}
			r := newRig(t, n, alerts.Config{})
			r.state.Observe(mm2Finding("task-failed", detectors.Critical, "orders"))
			r.flush(t)
			if w := r.waits.get(); !slices.Equal(w, []time.Duration{7 * time.Second}) {
				t.Errorf("waits = %v, want [7s] from Retry-After", w)
			}
			if got := len(fs.got()); got != 2 {
				t.Errorf("requests = %d, want 2", got)
			}
			if v := r.counter(t, n.Name(), "retry"); v != 1 {
				t.Errorf("retry = %v", v)
			}
			if v := r.counter(t, n.Name(), "success"); v != 1 {
				t.Errorf("success = %v", v)
			}
		})
	}
}

func TestOutageThenRecoveryLosesNothingInOrder(t *testing.T) {
	down := make([]reply, 5)
	for i := range down {
		down[i] = reply{status: http.StatusServiceUnavailable}
	}
	fs := newFakeSlack(t, down...)
	n, err := NewWebhook(fs.hookURL(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, n, alerts.Config{})
	var set []detectors.Finding
	for i := range 45 {
		set = append(set, mm2Finding("unmirrored-partitions", detectors.Critical, fmt.Sprintf("topic-%02d", i)))
	}
	r.state.Sync("parity", set)
	r.state.Sync("parity", nil) // all resolve before anything could be sent
	r.flush(t)

	calls := fs.okCalls()
	if len(calls) != 6 {
		for _, c := range calls {
			t.Log(c.header(), len(c.sectionTexts()))
		}
		t.Fatalf("want 3 firing + 3 resolved messages, got %d", len(calls))
	}
	var order []string
	for i, c := range calls {
		wantResolved := i >= 3
		if strings.Contains(c.header(), "resolved") != wantResolved {
			t.Errorf("message %d header %q", i, c.header())
		}
		for _, s := range c.sectionTexts() {
			at := strings.Index(s, "`topic-")
			order = append(order, s[at+1:at+9])
		}
	}
	var want []string
	for range 2 {
		for i := range 45 {
			want = append(want, fmt.Sprintf("topic-%02d", i))
		}
	}
	if !slices.Equal(order, want) {
		t.Errorf("delivered topics out of order or lost:\n%v", order)
	}
	if v := r.counter(t, WebhookIntegration, "retry"); v != 5 {
		t.Errorf("retry = %v, want 5", v)
	}
	if w := r.waits.get(); len(w) != 5 || w[4] <= w[0] {
		t.Errorf("waits = %v, want 5 growing backoffs", w)
	}
}

func TestQueueOverflowCountedAsDropped(t *testing.T) {
	fs := newFakeSlack(t)
	n, err := NewWebhook(fs.hookURL(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, n, alerts.Config{QueueSize: 2})
	var set []detectors.Finding
	for i := range 2*alerts.MaxAlertsPerNotification + 1 {
		set = append(set, mm2Finding("unmirrored-partitions", detectors.Critical, fmt.Sprintf("topic-%02d", i)))
	}
	r.state.Sync("parity", set) // 3 notifications into a queue of 2
	r.flush(t)
	if got := len(fs.okCalls()); got != 2 {
		t.Errorf("delivered %d, want 2", got)
	}
	if v := r.counter(t, WebhookIntegration, "dropped"); v != 1 {
		t.Errorf("notifications_total{result=dropped} = %v, want 1", v)
	}
	if err := testutil.GatherAndCompare(r.reg, strings.NewReader(`
# HELP mm2_watchdog_notifications_dropped_total Notifications given up without being delivered: the queue overflowed (oldest first) or the shutdown deadline passed.
# TYPE mm2_watchdog_notifications_dropped_total counter
mm2_watchdog_notifications_dropped_total{integration="slack-webhook"} 1
`), alerts.MetricNotificationsDropped); err != nil {
		t.Error(err)
	}
	if !strings.Contains(r.logs.String(), "queue full") {
		t.Errorf("drop not logged:\n%s", r.logs)
	}
}

func TestMentionsAreEscaped(t *testing.T) {
	fs := newFakeSlack(t)
	n, err := NewWebhook(fs.hookURL(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, n, alerts.Config{})
	f := mm2Finding("partitions-not-created", detectors.Critical, "<!channel>")
	f.Summary = "Could not create topic-partitions for <!here> & <@U123>."
	f.Cause = "java.lang.Exception: `<https://evil.example|click>`"
	f.Group = "<!everyone>"
	f.Values = map[string]any{"note": "<#C123>"}
	r.state.Observe(f)
	r.flush(t)
	calls := fs.okCalls()
	if len(calls) != 1 {
		t.Fatalf("got %d calls", len(calls))
	}
	for _, s := range calls[0].allStrings() {
		if strings.ContainsAny(s, "<>") {
			t.Errorf("unescaped control syntax in %q", s)
		}
	}
	sec := calls[0].sectionTexts()[0]
	for _, want := range []string{"*Topic* `&lt;!channel&gt;`", "&lt;!here&gt; &amp; &lt;@U123&gt;", "'&lt;https://evil.example|click&gt;'"} {
		if !strings.Contains(sec, want) {
			t.Errorf("section lacks %q:\n%s", want, sec)
		}
	}
}

func TestNoSecretLeaks(t *testing.T) {
	const token = "xoxb-111-222-CanaryTokenValue"
	// A port nothing listens on: net/http's error quotes the full URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String()
	ln.Close()

	fs := newFakeSlack(t,
		reply{status: http.StatusInternalServerError}, reply{status: http.StatusNotFound},
		reply{body: `{"ok":false,"error":"invalid_auth"}`})
	cases := []struct {
		name    string
		secrets []string
		mk      func(logger *slog.Logger) (*Notifier, error)
	}{
		{"webhook 500 then 404", []string{fs.hookURL(), "B000/XXXX"}, func(l *slog.Logger) (*Notifier, error) {
			return NewWebhook(fs.hookURL(), nil, l)
		}},
		{"webhook refused", []string{deadURL + hookPath, "B000/XXXX"}, func(l *slog.Logger) (*Notifier, error) {
			return NewWebhook(deadURL+hookPath, nil, l)
		}},
		{"bot invalid_auth", []string{token, "CanaryTokenValue"}, func(*slog.Logger) (*Notifier, error) {
			return NewBot(token, "C0ALERTS", slack.OptionAPIURL(fs.apiURL()))
		}},
		{"bot refused", []string{token, "CanaryTokenValue"}, func(*slog.Logger) (*Notifier, error) {
			return NewBot(token, "C0ALERTS", slack.OptionAPIURL(deadURL+"/api/"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logSink{}
			n, err := tc.mk(logs.logger())
			if err != nil {
				t.Fatal(err)
			}
			r := newRig(t, n, alerts.Config{FlushTimeout: 200 * time.Millisecond})
			r.logs = logs
			r.disp = alerts.NewDispatcher(n, r.m, alerts.Config{GroupWait: time.Hour, FlushTimeout: 200 * time.Millisecond},
				logs.logger(), alerts.WithSleep(func(ctx context.Context, d time.Duration) error {
					if len(r.waits.get()) >= 3 { // enough attempts: wait out the flush deadline
						<-ctx.Done()
						return ctx.Err()
					}
					return r.waits.sleep(ctx, d)
				}))
			r.state = alerts.NewState(alerts.Config{}, r.disp, r.m, nil)
			r.state.Observe(mm2Finding("task-failed", detectors.Critical, "orders"))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := r.disp.Run(ctx); err != nil {
				t.Fatal(err)
			}
			lastErr := r.disp.LastError()
			if lastErr == nil {
				t.Fatal("no delivery error recorded")
			}
			var expo bytes.Buffer
			mfs, err := r.reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				if _, err := expfmt.MetricFamilyToText(&expo, mf); err != nil {
					t.Fatal(err)
				}
			}
			haystacks := map[string]string{"logs": logs.String(), "error": lastErr.Error(), "metrics": expo.String()}
			for where, text := range haystacks {
				for _, sec := range tc.secrets {
					if strings.Contains(text, sec) {
						t.Errorf("%s contain the secret %q:\n%s", where, sec, text)
					}
				}
			}
			if !strings.Contains(logs.String(), "will retry") && !strings.Contains(logs.String(), "failed permanently") {
				t.Errorf("logs do not show the failure:\n%s", logs)
			}
			t.Logf("last error: %v", lastErr)
		})
	}
}

func TestConstructorsValidateWithoutLeaking(t *testing.T) {
	const secret = "SuperSecretPathValue"
	webhooks := map[string]bool{
		"https://hooks.slack.com/services/T0/B0/" + secret: true,
		"http://127.0.0.1:8080/services/T0/B0/" + secret:   true,
		"http://localhost/services/T0/B0/" + secret:        true,
		"http://[::1]:9/services/T0/B0/" + secret:          true,
		"http://hooks.slack.com/services/T0/B0/" + secret:  false,
		"ftp://hooks.slack.com/services/T0/B0/" + secret:   false,
		"hooks.slack.com/services/T0/B0/" + secret:         false,
		"https://%zz/services/" + secret:                   false,
		"":                                                 false,
	}
	for u, ok := range webhooks {
		_, err := NewWebhook(u, nil, nil)
		if (err == nil) != ok {
			t.Errorf("NewWebhook(%q) err = %v, want ok=%v", u, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("NewWebhook error leaks the URL: %v", err)
		}
	}
	tokens := map[string]bool{
		"xoxb-1-2-" + secret:        true,
		"xoxp-1-2-" + secret:        true,
		" xoxb-1-2-" + secret:       true, // trimmed
		"xoxa-1-2-" + secret:        false,
		secret:                      false,
		"xoxb-1 2-" + secret:        false,
		"xoxb-":                     false,
		"Bearer xoxb-1-2-" + secret: false,
	}
	for tok, ok := range tokens {
		_, err := NewBot(tok, "C0ALERTS")
		if (err == nil) != ok {
			t.Errorf("NewBot(%q) err = %v, want ok=%v", tok, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("NewBot error leaks the token: %v", err)
		}
	}
	if _, err := NewBot("xoxb-1-2-abc", " "); err == nil {
		t.Error("NewBot accepted an empty channel")
	}
}

func TestClassify(t *testing.T) {
	n := &Notifier{secrets: []string{"xoxb-1-2-zzz"}}
	urlErr := &url.Error{Op: "Post", URL: "https://slack.com/api/chat.postMessage?token=xoxb-1-2-zzz", Err: errors.New("connection reset by peer")}
	tests := []struct {
		name      string
		err       error
		retryable bool
		after     time.Duration
	}{
		{"rate limited", &slack.RateLimitedError{RetryAfter: 7 * time.Second}, true, 7 * time.Second},
		{"429 without Retry-After", slack.StatusCodeError{Code: 429, Status: "429 Too Many Requests"}, true, 0},
		{"503", slack.StatusCodeError{Code: 503, Status: "503 Service Unavailable"}, true, 0},
		{"404 no_service", slack.StatusCodeError{Code: 404, Status: "404 Not Found"}, false, 0},
		{"403", slack.StatusCodeError{Code: 403, Status: "403 Forbidden"}, false, 0},
		{"invalid_auth", slack.SlackErrorResponse{Err: "invalid_auth"}, false, 0},
		{"channel_not_found", slack.SlackErrorResponse{Err: "channel_not_found"}, false, 0},
		{"internal_error", slack.SlackErrorResponse{Err: "internal_error"}, true, 0},
		{"network", urlErr, true, 0},
		{"unknown", errors.New("marshal failed"), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := n.classify("op", tt.err)
			retry, after := alerts.IsRetryable(err)
			if retry != tt.retryable || after != tt.after {
				t.Errorf("classify(%v) = retryable %v after %v, want %v %v", tt.err, retry, after, tt.retryable, tt.after)
			}
			if strings.Contains(err.Error(), "zzz") {
				t.Errorf("classified error leaks the token: %v", err)
			}
		})
	}
	if err := n.classify("op", fmt.Errorf("post: %w", context.Canceled)); !errors.Is(err, context.Canceled) {
		t.Errorf("context cancellation lost: %v", err)
	}
}
