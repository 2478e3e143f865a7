package mm2config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/magiconair/properties"
)

// Options injects the outside world into Load and Parse.
type Options struct {
	// LookupEnv resolves ${env:NAME}; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ReadFile reads the properties file (Load) and the files of
	// ${file:...} and ${directory:...}; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// TargetTopicTemplate names remote topics for a replication.policy.class
	// this package does not know (a custom Java class): "{source}.{topic}",
	// "{topic}", ... (see TemplatePolicy). Ignored for the built-in policies.
	TargetTopicTemplate string
	// MatchTimeout bounds one match of a topic or group filter that needs
	// the backtracking regex engine (see CompileJava); 0 means
	// DefaultMatchTimeout.
	MatchTimeout time.Duration
	// OnMatchTimeout, when not nil, is called (possibly from several
	// goroutines at once) with a Warning naming the file, line and key of
	// a filter whose match timed out; the name then counts as not matching.
	OnMatchTimeout func(Warning)
}

func (o Options) withDefaults() Options {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	return o
}

// Error is a problem with one property, or with the file as a whole when
// Key is empty. Its text never contains a resolved placeholder value or a
// secret: `mm2.properties:12: key "kafka->vast.topics": regex "a(b" does not compile: ...`.
type Error struct {
	File string // base name of the file as given to Load or Parse
	Line int    // 1-based line of Key, 0 when unknown or not in the file
	Key  string // the property as written, e.g. "kafka->vast.topics"
	Msg  string // what is wrong
	Err  error  // the underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(":")
	if e.Key != "" {
		fmt.Fprintf(&b, " key %q:", e.Key)
	}
	b.WriteString(" " + e.Msg)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Warning is a non-fatal finding about the file: something MM2 accepts but
// that this package had to guess or translate, or that a newer MM2 treats
// differently.
type Warning struct {
	File    string
	Line    int // 0 when not tied to a line
	Key     string
	Message string
}

func (w Warning) String() string {
	loc := w.File
	if w.Line > 0 {
		loc += ":" + strconv.Itoa(w.Line)
	}
	if w.Key != "" {
		return fmt.Sprintf("%s: key %q: %s", loc, w.Key, w.Message)
	}
	return loc + ": " + w.Message
}

// Config is one MM2 dedicated-mode properties file, resolved and modelled.
type Config struct {
	File     string   // the path given to Load, or the name given to Parse
	Clusters []string // `clusters`, in file order, duplicates removed
	// Flows are the herders whose connectors replicate (A->B.enabled=true),
	// in clusters order (source-major).
	Flows []*Flow
	// Herders are every herder MM2 starts, in clusters order: the enabled
	// flows and the heartbeat-only ones (MirrorMakerConfig.clusterPairs).
	Herders  []*Flow
	Warnings []Warning

	entries []Entry
	values  map[string]string // resolved, effective (last) values
	lines   map[string]int
	clients map[string]ClientSettings
}

// Load reads and parses an MM2 properties file through opts.ReadFile.
func Load(path string, opts Options) (*Config, error) {
	opts = opts.withDefaults()
	data, err := opts.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading MM2 properties: %w", err)
	}
	c, err := Parse(filepath.Base(path), data, opts)
	if c != nil {
		c.File = path
	}
	return c, err
}

// parser carries the state of one Parse call.
type parser struct {
	name     string
	opts     Options
	values   map[string]string
	lines    map[string]int
	warnings []Warning
	warned   map[string]bool
	errs     []error
}

func (p *parser) warn(line int, key, msg string) {
	p.warnings = append(p.warnings, Warning{File: p.name, Line: line, Key: key, Message: msg})
}

func (p *parser) warnOnce(line int, key, msg string) {
	id := fmt.Sprintf("%d\x00%s\x00%s", line, key, msg)
	if p.warned[id] {
		return
	}
	p.warned[id] = true
	p.warn(line, key, msg)
}

func (p *parser) errorf(line int, key string, err error, format string, args ...any) *Error {
	return &Error{File: p.name, Line: line, Key: key, Msg: fmt.Sprintf(format, args...), Err: err}
}

var libraryErrorLine = regexp.MustCompile(`Line (\d+)`)

// Parse parses the text of an MM2 properties file. name is used in errors
// and warnings (e.g. "mm2.properties"). All problems found are returned
// together (errors.Join of *Error values); the Config is nil on error.
func Parse(name string, data []byte, opts Options) (*Config, error) {
	opts = opts.withDefaults()
	p := &parser{name: name, opts: opts, warned: map[string]bool{}}
	text := normalizeNewlines(data)

	entries, err := scanProperties(text)
	if err != nil {
		var se *scanError
		if errors.As(err, &se) {
			return nil, &Error{File: name, Line: se.line, Msg: "malformed properties: " + se.msg}
		}
		return nil, &Error{File: name, Msg: "malformed properties", Err: err}
	}
	props := properties.NewProperties()
	props.DisableExpansion = true
	if err := props.Load([]byte(text), properties.UTF8); err != nil {
		// The scanner accepts what the library accepts, so this is not
		// expected; the library's text may quote a value, so only its line
		// number is kept.
		line := 0
		if m := libraryErrorLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		return nil, &Error{File: name, Line: line, Msg: "malformed properties"}
	}
	p.values = props.Map()
	p.lines = make(map[string]int, len(entries))
	for _, e := range entries {
		if prev, ok := p.lines[e.Key]; ok {
			p.warn(e.Line, e.Key, fmt.Sprintf("set again (first on line %d); this later value wins", prev))
		}
		p.lines[e.Key] = e.Line
	}

	p.resolvePlaceholders()
	c := &Config{File: name, entries: entries, values: p.values, lines: p.lines}
	p.clusters(c)
	if len(p.errs) == 0 {
		p.herders(c)
		p.clientSettings(c)
	}
	p.removedKeys(entries)
	c.Warnings = p.warnings
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// resolvePlaceholders replaces ${provider:path:key} in every value, in file
// order. config.providers* values are left as written.
func (p *parser) resolvePlaceholders() {
	r := newResolver(p)
	keys := slices.SortedFunc(maps.Keys(p.values), func(a, b string) int {
		if d := p.lines[a] - p.lines[b]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		if strings.HasPrefix(k, "config.providers") {
			continue
		}
		v, err := r.resolve(k, p.lines[k], p.values[k])
		if err != nil {
			p.errs = append(p.errs, err)
			continue
		}
		p.values[k] = v
	}
}

// clusters reads the required `clusters` LIST.
func (p *parser) clusters(c *Config) {
	raw, ok := p.values["clusters"]
	if !ok {
		p.errs = append(p.errs, p.errorf(0, "clusters", nil, "required key is missing (MirrorMakerConfig has no default for it)"))
		return
	}
	line := p.lines["clusters"]
	seen := map[string]bool{}
	for _, a := range ParseList(raw) {
		switch {
		case a == "":
			p.errs = append(p.errs, p.errorf(line, "clusters", nil, "contains an empty cluster alias"))
		case seen[a]:
			p.warn(line, "clusters", fmt.Sprintf("alias %q is listed twice", a))
		default:
			seen[a] = true
			c.Clusters = append(c.Clusters, a)
		}
	}
	if len(c.Clusters) == 0 && len(p.errs) == 0 {
		p.errs = append(p.errs, p.errorf(line, "clusters", nil, "lists no cluster alias, so MM2 would start no herder"))
	}
}

// javaParseBoolean is java.lang.Boolean.parseBoolean: "true" in any case,
// untrimmed; anything else is false.
func javaParseBoolean(s string) bool { return strings.EqualFold(s, "true") }

// herders builds every herder of MirrorMakerConfig.clusterPairs: for each
// ordered pair, when `s->t.enabled` or heartbeats are on for the pair, both
// read with Boolean.parseBoolean from the raw properties.
func (p *parser) herders(c *Config) {
	global := true
	if v, ok := p.values["emit.heartbeats.enabled"]; ok {
		global = javaParseBoolean(v)
	}
	for _, s := range c.Clusters {
		for _, t := range c.Clusters {
			if s == t {
				continue
			}
			prefix := s + "->" + t + "."
			enabledRaw, hasEnabled := p.values[prefix+"enabled"]
			pairEnabled := javaParseBoolean(enabledRaw)
			if hasEnabled && !pairEnabled && strings.EqualFold(strings.TrimSpace(enabledRaw), "true") {
				p.warn(p.lines[prefix+"enabled"], prefix+"enabled", "the value has surrounding whitespace: MM2 decides whether the herder exists with Boolean.parseBoolean, which reads it as false, while the connectors read it as true")
			}
			hb := global
			if v, ok := p.values[prefix+"emit.heartbeats.enabled"]; ok {
				hb = javaParseBoolean(v)
			}
			if !pairEnabled && !hb {
				continue
			}
			f := p.flow(c, s, t)
			c.Herders = append(c.Herders, f)
			if f.Enabled {
				c.Flows = append(c.Flows, f)
			}
		}
	}
}

// clientSettings builds ClientSettings for every alias and warns about
// aliases a herder uses that have no bootstrap.servers.
func (p *parser) clientSettings(c *Config) {
	c.clients = map[string]ClientSettings{}
	for _, a := range c.Clusters {
		cs := ClientSettings{Alias: a, Props: map[string]string{}, Overrides: map[string]map[string]string{}}
		prefix := a + "."
		for k, v := range p.values {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok || rest == "" {
				continue
			}
			role, sub, _ := strings.Cut(rest, ".")
			switch role {
			case RoleProducer, RoleConsumer, RoleAdmin:
				if sub != "" {
					if cs.Overrides[role] == nil {
						cs.Overrides[role] = map[string]string{}
					}
					cs.Overrides[role][sub] = v
					continue
				}
			}
			cs.Props[rest] = v
		}
		for k, v := range p.values {
			if isClientConfigKey(k) {
				if _, ok := cs.Props[k]; !ok {
					cs.Props[k] = v
				}
			}
		}
		c.clients[a] = cs
	}
	// An alias of an enabled flow without bootstrap.servers is an error
	// from Client, which every caller that connects asks; warning about it
	// here too would say it twice. A heartbeat-only herder's aliases are
	// not connected to by the watchdog, so for them the warning is all.
	flow, herder := map[string]bool{}, map[string]bool{}
	for _, f := range c.Flows {
		flow[f.Source], flow[f.Target] = true, true
	}
	for _, h := range c.Herders {
		herder[h.Source], herder[h.Target] = true, true
	}
	for _, a := range c.Clusters {
		if herder[a] && !flow[a] && strings.TrimSpace(c.clients[a].Props["bootstrap.servers"]) == "" {
			p.warn(p.lines["clusters"], "clusters", fmt.Sprintf("cluster %q has no bootstrap.servers (set %s.bootstrap.servers); MM2 would fall back to localhost:9092", a, a))
		}
	}
}

// removedKeys warns about keys Kafka 4.0 removed, top-level or prefixed.
func (p *parser) removedKeys(entries []Entry) {
	for _, e := range entries {
		k := e.Key
		if i := strings.Index(k, "->"); i >= 0 {
			if j := strings.IndexByte(k[i:], '.'); j >= 0 {
				k = k[i+j+1:]
			}
		}
		for name, instead := range removedIn40 {
			if k == name || strings.HasSuffix(k, "."+name) {
				p.warn(e.Line, e.Key, fmt.Sprintf("%s was removed in Kafka 4.0 (MM2 4.x ignores it): %s", name, instead))
			}
		}
	}
}

// Entries returns every key = value line in file order, with raw values
// (placeholders unresolved). A later `lint` uses it to report unknown keys.
func (c *Config) Entries() []Entry { return slices.Clone(c.entries) }

// Value returns the effective top-level value of key (placeholders
// resolved) and its line.
func (c *Config) Value(key string) (value string, line int, ok bool) {
	v, ok := c.values[key]
	return v, c.lines[key], ok
}

// Flow returns the herder source->target, or nil when MM2 runs none.
func (c *Config) Flow(source, target string) *Flow {
	for _, f := range c.Herders {
		if f.Source == source && f.Target == target {
			return f
		}
	}
	return nil
}

// Client returns the client settings of alias. It fails with an *Error when
// alias is not in `clusters` or has no bootstrap.servers; the error points
// at the bootstrap.servers line when the key is set but empty, at
// `clusters` when it is not set at all. The form of the value (host:port
// entries, port range) is checked by whoever builds a client from it
// (cluster.FromProps).
func (c *Config) Client(alias string) (ClientSettings, error) {
	cs, ok := c.clients[alias]
	if !ok {
		return ClientSettings{}, &Error{File: filepath.Base(c.File), Line: c.lines["clusters"], Key: "clusters",
			Msg: fmt.Sprintf("cluster alias %q is not listed", alias)}
	}
	if strings.TrimSpace(cs.Props["bootstrap.servers"]) == "" {
		for _, k := range []string{alias + ".bootstrap.servers", "bootstrap.servers"} {
			if _, set := c.values[k]; set {
				return ClientSettings{}, &Error{File: filepath.Base(c.File), Line: c.lines[k], Key: k,
					Msg: fmt.Sprintf("cluster %q has an empty bootstrap.servers", alias)}
			}
		}
		return ClientSettings{}, &Error{File: filepath.Base(c.File), Line: c.lines["clusters"], Key: "clusters",
			Msg: fmt.Sprintf("cluster %q has no bootstrap.servers (expected %q)", alias, alias+".bootstrap.servers")}
	}
	return cs, nil
}
