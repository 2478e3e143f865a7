// Package slack delivers alert notifications to Slack through
// github.com/slack-go/slack, either by an incoming webhook or by a bot token
// and a channel.
//
// A Notifier renders one alerts.Notification as a Block Kit message (a header
// with the severity counts, one section per alert, and a plain-text fallback)
// and makes one attempt to send it. With a bot token it remembers where each
// firing alert was posted and, when the alert resolves, edits that message in
// place (chat.update) rather than posting a new one; a webhook cannot edit, so
// resolves are posted as messages of their own.
//
// Every string that comes from a log or a cluster (topics, causes, summaries,
// ...) is escaped for Slack mrkdwn, so that a topic named "<!channel>" is
// shown, not obeyed. Failures are classified for the retry loop of package
// alerts (rate limits, 429 and 5xx and network errors are retryable;
// invalid_auth, channel_not_found and other 4xx are not) and scrubbed of the
// webhook URL and the token: net/http quotes the request URL in its errors,
// and a webhook URL is a credential (see Notifier.Redact and alerts.Redact).
// Secrets may be read from files with alerts.LoadSecret.
//
// The package deliberately does not retry, sleep, queue or group: package
// alerts does all of that. It keeps no state across restarts, so a resolve
// after a restart is posted as a new message.
package slack
