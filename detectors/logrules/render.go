package logrules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
)

// renderSummary fills a Rule.Summary template from a finding. Unknown fields
// render as a neutral phrase ("the target cluster", "MM2"), never as a blank
// or a fake zero.
func renderSummary(tmpl string, f *detectors.Finding, topics []string) string {
	var b strings.Builder
	b.Grow(len(tmpl) + 64)
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(tmpl[:i])
		b.WriteString(placeholder(tmpl[i+1:i+j], f, topics))
		tmpl = tmpl[i+j+1:]
	}
	b.WriteString(tmpl)
	out := b.String()
	if out != "" && out[0] >= 'a' && out[0] <= 'z' {
		out = string(out[0]-'a'+'A') + out[1:]
	}
	return out
}

func placeholder(name string, f *detectors.Finding, topics []string) string {
	switch name {
	case "topic":
		if f.Topic != "" {
			return strconv.Quote(f.Topic)
		}
		if len(topics) > 0 {
			return strconv.Quote(topics[0])
		}
		return "a topic"
	case "topics":
		list := topics
		if len(list) == 0 && f.Topic != "" {
			list = []string{f.Topic}
		}
		if len(list) == 0 {
			return ""
		}
		const shown = 5
		q := make([]string, 0, shown)
		for i, t := range list {
			if i == shown {
				break
			}
			q = append(q, strconv.Quote(t))
		}
		s := " (topic " + strings.Join(q, ", ")
		if len(list) > 1 {
			s = " (topics " + strings.Join(q, ", ")
		}
		if len(list) > shown {
			s += fmt.Sprintf(" and %d more", len(list)-shown)
		}
		return s + ")"
	case "source":
		if f.Source != "" {
			return "source cluster " + strconv.Quote(f.Source)
		}
		return "the source cluster"
	case "target":
		if f.Target != "" {
			return "target cluster " + strconv.Quote(f.Target)
		}
		return "the target cluster"
	case "cluster":
		if f.Cluster != "" {
			return "cluster " + strconv.Quote(f.Cluster)
		}
		return "a cluster"
	case "flow":
		switch {
		case f.Source != "" && f.Target != "":
			return " (flow " + f.Source + "->" + f.Target + ")"
		case f.Source != "":
			return " (source " + f.Source + ")"
		}
		return ""
	case "connector":
		if f.Connector != "" {
			return "connector " + strconv.Quote(f.Connector)
		}
		return "MM2"
	case "task":
		if f.Task != nil && f.Connector != "" {
			return "task " + strconv.Quote(f.Connector+"-"+strconv.Itoa(*f.Task))
		}
		if f.Connector != "" {
			return "connector " + strconv.Quote(f.Connector)
		}
		return "MM2"
	case "group":
		if f.Group != "" {
			return "consumer group " + strconv.Quote(f.Group)
		}
		return "a consumer group"
	case "groupname":
		if f.Group != "" {
			return strconv.Quote(f.Group)
		}
		return "?"
	case "cause":
		if c := shortCause(f.Cause); c != "" {
			return ": " + c
		}
		return ""
	case "partition":
		if len(f.Partitions) > 0 {
			return strconv.Itoa(int(f.Partitions[0]))
		}
		return "?"
	case "alias":
		if a, ok := f.Values["alias"].(string); ok {
			return strconv.Quote(a)
		}
		return "?"
	}
	if v, ok := f.Values[name]; ok {
		return fmt.Sprint(v)
	}
	return "?"
}
