package slack

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm2-watchdog/mm2-watchdog/alerts"
	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/slack-go/slack"
)

// Field caps, in runes, keeping a section well under Slack's 3000-character
// limit for section text and the header under its 150.
const (
	maxField    = 600
	maxSection  = 2900
	maxFallback = 2000
	maxHeader   = 150
)

// mrkdwn escapes the three characters Slack's mrkdwn treats as control
// syntax (<!channel>, <@U…>, <url|text>); slack-go has no helper for it and
// JSON encoding of "<" as \u003c does not help.
var mrkdwn = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// esc escapes s for mrkdwn and caps it at max runes.
func esc(s string, max int) string { return mrkdwn.Replace(truncate(s, max)) }

// code renders s as inline code, escaped; backticks inside become quotes so
// the span cannot be closed early.
func code(s string) string {
	return "`" + esc(strings.ReplaceAll(s, "`", "'"), maxField) + "`"
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

func severityIcon(a *alerts.Alert) string {
	if a.Status == alerts.Resolved {
		return ":white_check_mark:"
	}
	switch a.Severity {
	case detectors.Critical:
		return ":red_circle:"
	case detectors.Warning:
		return ":large_orange_circle:"
	}
	return ":large_blue_circle:"
}

// headline counts the alerts: "2 critical, 1 warning firing, 3 resolved".
// It is also the start of the fallback text.
func headline(as []alerts.Alert) string {
	firing := map[detectors.Severity]int{}
	resolved, repeat := 0, 0
	for i := range as {
		if as[i].Status == alerts.Resolved {
			resolved++
			continue
		}
		firing[as[i].Severity]++
		if as[i].LastReason == alerts.ReasonRepeat {
			repeat++
		}
	}
	var parts []string
	for _, s := range []detectors.Severity{detectors.Critical, detectors.Warning, detectors.Info} {
		if firing[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", firing[s], s))
		}
	}
	var out []string
	if len(parts) > 0 {
		verb := " firing"
		if repeat == len(as)-resolved {
			verb = " still firing"
		}
		out = append(out, strings.Join(parts, ", ")+verb)
	}
	if resolved > 0 {
		out = append(out, fmt.Sprintf("%d resolved", resolved))
	}
	return strings.Join(out, ", ")
}

// render builds the Block Kit blocks and the fallback text for a message
// showing as, in order.
func render(as []alerts.Alert) ([]slack.Block, string) {
	head := truncate("MirrorMaker 2: "+headline(as), maxHeader)
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, head, true, false)),
	}
	fallback := []string{esc(head, maxHeader)}
	for i := range as {
		a := &as[i]
		blocks = append(blocks,
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, section(a), false, false), nil, nil),
			slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, smallPrint(a), false, false)),
		)
		line := a.Rule
		if a.Topic != "" {
			line += " " + a.Topic
		}
		fallback = append(fallback, fmt.Sprintf("[%s] %s", statusWord(a), esc(line+": "+a.Summary, 300)))
	}
	return blocks, truncate(strings.Join(fallback, "\n"), maxFallback)
}

func statusWord(a *alerts.Alert) string {
	if a.Status == alerts.Resolved {
		return "resolved"
	}
	return string(a.Severity)
}

// section is the mrkdwn text of one alert: rule and severity, where, how
// much, summary, cause and hint.
func section(a *alerts.Alert) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s *%s* %s", severityIcon(a), strings.ToUpper(statusWord(a)), code(a.Rule))
	switch a.LastReason {
	case alerts.ReasonChanged:
		b.WriteString(" _(changed)_")
	case alerts.ReasonRepeat:
		b.WriteString(" _(still firing)_")
	}
	b.WriteByte('\n')

	var where []string
	if a.Source != "" || a.Target != "" {
		where = append(where, "*Flow* "+esc(orDash(a.Source), maxField)+" → "+esc(orDash(a.Target), maxField))
	}
	if a.Cluster != "" {
		where = append(where, "*Cluster* "+esc(a.Cluster, maxField))
	}
	if a.Topic != "" {
		where = append(where, "*Topic* "+code(a.Topic))
	}
	if len(a.Partitions) > 0 {
		where = append(where, "*Partitions* "+esc(partitions(a.Partitions), maxField))
	}
	if a.Connector != "" {
		c := a.Connector
		if a.Task != nil {
			c += " task " + strconv.Itoa(*a.Task)
		}
		where = append(where, "*Connector* "+esc(c, maxField))
	}
	if a.Group != "" {
		where = append(where, "*Group* "+code(a.Group))
	}
	if a.Count > 0 {
		where = append(where, "*Count* "+strconv.Itoa(a.Count))
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, "  ·  "))
		b.WriteByte('\n')
	}
	if a.Summary != "" {
		b.WriteString(esc(a.Summary, maxField))
		b.WriteByte('\n')
	}
	if len(a.Values) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(a.Values)) {
			kv = append(kv, fmt.Sprintf("%s=%v", k, a.Values[k]))
		}
		b.WriteString("*Values* " + esc(strings.Join(kv, ", "), maxField) + "\n")
	}
	if a.Cause != "" {
		b.WriteString("*Cause* " + code(a.Cause) + "\n")
	}
	if a.Hint != "" && a.Status != alerts.Resolved {
		b.WriteString("*Hint* " + esc(a.Hint, maxField) + "\n")
	}
	return truncate(strings.TrimRight(b.String(), "\n"), maxSection)
}

// smallPrint is the small print under an alert: fingerprint, times, evidence.
func smallPrint(a *alerts.Alert) string {
	parts := []string{"`" + a.Fingerprint + "`"}
	if !a.StartedAt.IsZero() {
		parts = append(parts, "since "+a.StartedAt.UTC().Format(time.DateTime)+" UTC")
	}
	if !a.EndedAt.IsZero() {
		parts = append(parts, "resolved "+a.EndedAt.UTC().Format(time.DateTime)+" UTC")
	}
	if a.Evidence != nil && a.Evidence.File != "" {
		ev := a.Evidence.File
		if a.Evidence.Line > 0 {
			ev += ":" + strconv.FormatInt(a.Evidence.Line, 10)
		}
		parts = append(parts, esc(ev, 200))
	}
	return strings.Join(parts, "  ·  ")
}

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// partitions renders a sorted partition list, at most 50 numbers.
func partitions(ps []int32) string {
	ps = slices.Clone(ps)
	slices.Sort(ps)
	var b strings.Builder
	for i, p := range ps {
		if i == 50 {
			fmt.Fprintf(&b, " … (%d in all)", len(ps))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}
