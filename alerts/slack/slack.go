package slack

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/alerts"
	"github.com/slack-go/slack"
)

// Integration names, the integration label of the notification metrics.
const (
	WebhookIntegration = "slack-webhook"
	BotIntegration     = "slack-bot"
)

// attemptTimeout bounds one HTTP exchange with Slack, whatever the caller's
// context and http.Client say.
const attemptTimeout = 30 * time.Second

// maxMessagesPerAlert bounds how many posted messages are remembered per
// firing alert (a critical alert repeats every few hours): a resolve edits at
// most this many, the newest.
const maxMessagesPerAlert = 8

// Notifier sends alert notifications to Slack. It implements alerts.Notifier.
// Create it with NewWebhook or NewBot. Notify is meant to be called from one
// goroutine at a time (the Dispatcher's), but is safe for concurrent use.
type Notifier struct {
	name    string
	logger  *slog.Logger
	secrets []string // exact strings to scrub besides what alerts.Redact finds

	// webhook
	hookURL string
	hc      *http.Client

	// bot
	api     *slack.Client
	channel string

	mu sync.Mutex
	// byAlert maps a fingerprint to the messages that show the alert firing,
	// oldest first (bot only).
	byAlert map[string][]*message
	// postedSeq is the Seq of the resolved notification whose post step
	// is done (or was empty), so a retry after a failed edit does not post
	// again.
	postedSeq uint64
}

// message is a bot message as last rendered: where it is and what it shows.
type message struct {
	channel, ts string
	alerts      []alerts.Alert
}

// NewWebhook returns a Notifier posting to a Slack incoming webhook. The URL
// must be https (http only for a loopback host); hc is the HTTP client to
// use (nil: one with a 30s timeout); logger nil discards. The error never
// contains the URL.
func NewWebhook(webhookURL string, hc *http.Client, logger *slog.Logger) (*Notifier, error) {
	webhookURL = strings.TrimSpace(webhookURL)
	if err := validateWebhookURL(webhookURL); err != nil {
		return nil, err
	}
	if hc == nil {
		hc = &http.Client{Timeout: attemptTimeout}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{
		name:    WebhookIntegration,
		logger:  logger,
		hookURL: webhookURL,
		hc:      hc,
	}
	n.secrets = []string{webhookURL}
	if u, err := url.Parse(webhookURL); err == nil {
		n.secrets = append(n.secrets, u.String())
		if len(u.EscapedPath()) > 8 {
			n.secrets = append(n.secrets, u.EscapedPath())
		}
	}
	return n, nil
}

// NewBot returns a Notifier posting to channel (an id such as C0123456789,
// or a name) with a bot (xoxb-) or user (xoxp-) token, and editing a firing
// message in place when its alerts resolve. opts are passed to slack.New
// after the notifier's own (an HTTP client with a 30s timeout), so
// slack.OptionAPIURL or slack.OptionHTTPClient may override them. Do not
// pass slack.OptionRetry: retries belong to the Dispatcher. The error never
// contains the token.
func NewBot(token, channel string, opts ...slack.Option) (*Notifier, error) {
	token = strings.TrimSpace(token)
	if err := validateToken(token); err != nil {
		return nil, err
	}
	channel = strings.TrimSpace(channel)
	if channel == "" {
		return nil, errors.New("slack channel is empty")
	}
	all := append([]slack.Option{slack.OptionHTTPClient(&http.Client{Timeout: attemptTimeout})}, opts...)
	return &Notifier{
		name:    BotIntegration,
		logger:  slog.New(slog.DiscardHandler),
		secrets: []string{token},
		api:     slack.New(token, all...),
		channel: channel,
		byAlert: make(map[string][]*message),
	}, nil
}

// Name returns WebhookIntegration or BotIntegration.
func (n *Notifier) Name() string { return n.name }

// Redact scrubs s of this notifier's secrets (its webhook URL or token, as
// given) and of anything alerts.Redact finds.
func (n *Notifier) Redact(s string) string {
	for _, sec := range n.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "REDACTED")
		}
	}
	return alerts.Redact(s)
}

// Notify makes one attempt to deliver nn. Errors are classified for the
// retry loop of package alerts (see the package doc) and never contain the
// webhook URL or token.
func (n *Notifier) Notify(ctx context.Context, nn alerts.Notification) (alerts.Receipt, error) {
	if len(nn.Alerts) == 0 {
		return alerts.Receipt{}, nil
	}
	if n.api == nil {
		return alerts.Receipt{}, n.postWebhook(ctx, nn.Alerts)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if nn.Status == alerts.Resolved {
		return n.resolveBot(ctx, nn)
	}
	ref, err := n.postBot(ctx, nn.Alerts)
	if err != nil {
		return alerts.Receipt{}, err
	}
	return alerts.Receipt{Refs: []string{ref}}, nil
}

func (n *Notifier) postWebhook(ctx context.Context, as []alerts.Alert) error {
	blocks, text := render(as)
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	err := slack.PostWebhookCustomHTTPContext(ctx, n.hookURL, n.hc, &slack.WebhookMessage{
		Text:   text,
		Blocks: &slack.Blocks{BlockSet: blocks},
	})
	if err != nil {
		return n.classify("posting to the Slack webhook", err)
	}
	n.logger.Debug("posted to the Slack webhook", "alerts", len(as))
	return nil
}

// postBot posts a new message showing as and remembers it for each firing
// alert. Caller holds n.mu.
func (n *Notifier) postBot(ctx context.Context, as []alerts.Alert) (string, error) {
	blocks, text := render(as)
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	ch, ts, err := n.api.PostMessageContext(ctx, n.channel,
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return "", n.classify("chat.postMessage", err)
	}
	m := &message{channel: ch, ts: ts, alerts: as}
	for i := range as {
		if as[i].Status != alerts.Firing {
			continue
		}
		fp := as[i].Fingerprint
		ms := append(n.byAlert[fp], m)
		if len(ms) > maxMessagesPerAlert {
			ms = ms[len(ms)-maxMessagesPerAlert:]
		}
		n.byAlert[fp] = ms
	}
	return ch + "/" + ts, nil
}

// resolveBot edits every remembered message that shows a now resolved alert
// as firing, and posts the resolved alerts it has no message for. The post
// is done first and at most once per notification; edits are idempotent, so
// a retry after a failed edit redoes only what is left. Caller holds n.mu.
func (n *Notifier) resolveBot(ctx context.Context, nn alerts.Notification) (alerts.Receipt, error) {
	var rcpt alerts.Receipt
	if n.postedSeq != nn.Seq || nn.Seq == 0 {
		var unknown []alerts.Alert
		for _, a := range nn.Alerts {
			if len(n.byAlert[a.Fingerprint]) == 0 {
				unknown = append(unknown, a)
			}
		}
		if len(unknown) > 0 {
			ref, err := n.postBot(ctx, unknown)
			if err != nil {
				return rcpt, err
			}
			rcpt.Refs = append(rcpt.Refs, ref)
		}
		n.postedSeq = nn.Seq
	}

	resolved := make(map[string]alerts.Alert, len(nn.Alerts))
	var edits []*message
	seen := map[*message]bool{}
	for _, a := range nn.Alerts {
		resolved[a.Fingerprint] = a
		for _, m := range n.byAlert[a.Fingerprint] {
			if !seen[m] {
				seen[m] = true
				edits = append(edits, m)
			}
		}
	}
	for _, m := range edits {
		shown := make([]alerts.Alert, len(m.alerts))
		for i, a := range m.alerts {
			if r, ok := resolved[a.Fingerprint]; ok && a.Status == alerts.Firing {
				a = r
			}
			shown[i] = a
		}
		blocks, text := render(shown)
		uctx, cancel := context.WithTimeout(ctx, attemptTimeout)
		_, _, _, err := n.api.UpdateMessageContext(uctx, m.channel, m.ts,
			slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		cancel()
		if err != nil {
			var se slack.SlackErrorResponse
			if !errors.As(err, &se) || (se.Err != "message_not_found" && se.Err != "cant_update_message" && se.Err != "edit_window_closed") {
				return rcpt, n.classify("chat.update", err)
			}
			// The message is gone or can no longer be edited: forget it; the
			// resolve was already said by the post step when nothing else
			// showed the alert, and otherwise by the other messages.
			n.logger.Debug("slack message cannot be edited, forgetting it", "ref", m.channel+"/"+m.ts, "error", se.Err)
		} else {
			rcpt.Refs = append(rcpt.Refs, m.channel+"/"+m.ts)
		}
		m.alerts = shown
		for fp := range resolved {
			n.byAlert[fp] = removeMessage(n.byAlert[fp], m)
			if len(n.byAlert[fp]) == 0 {
				delete(n.byAlert, fp)
			}
		}
	}
	return rcpt, nil
}

func removeMessage(ms []*message, m *message) []*message {
	out := ms[:0]
	for _, x := range ms {
		if x != m {
			out = append(out, x)
		}
	}
	return out
}

// classify turns a slack-go error into a scrubbed error, wrapped in
// *alerts.RetryableError when trying again may help:
//   - *slack.RateLimitedError (HTTP 429 with Retry-After): retryable after
//     the given wait;
//   - slack.StatusCodeError: 408, 429 and 5xx retryable, other codes not;
//   - slack.SlackErrorResponse (ok:false): ratelimited, internal_error,
//     fatal_error, service_unavailable and request_timeout retryable; the rest
//     (invalid_auth, channel_not_found, not_in_channel, ...) not;
//   - network errors and timeouts: retryable;
//   - a Retry-After that is not a number of seconds: retryable without a wait;
//   - anything else: not retryable.
//
// The cause of context cancellation stays visible to errors.Is.
func (n *Notifier) classify(op string, err error) error {
	safe := &scrubbed{msg: op + ": " + n.Redact(err.Error())}
	switch {
	case errors.Is(err, context.Canceled):
		safe.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		safe.cause = context.DeadlineExceeded
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return alerts.Retryable(safe, rl.RetryAfter)
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		if sc.Code == http.StatusTooManyRequests || sc.Code == http.StatusRequestTimeout || sc.Code >= 500 {
			return alerts.Retryable(safe, 0)
		}
		return safe
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "rate_limited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return alerts.Retryable(safe, 0)
		}
		return safe
	}
	var ne net.Error
	var ue *url.Error
	var numErr *strconv.NumError
	if errors.As(err, &ne) || errors.As(err, &ue) || errors.As(err, &numErr) || safe.cause == context.DeadlineExceeded {
		return alerts.Retryable(safe, 0)
	}
	return safe
}

// scrubbed is an error whose text was redacted; it wraps nothing but a
// context error, so that no unredacted text can be reached through it.
type scrubbed struct {
	msg   string
	cause error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }
