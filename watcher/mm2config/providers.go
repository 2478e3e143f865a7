package mm2config

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/magiconair/properties"
)

// placeholderPattern is the variable pattern of Kafka's ConfigTransformer
// (clients/.../common/config/ConfigTransformer.java, DEFAULT_PATTERN):
// ${provider:[path:]key}. Group 1 is the provider name, group 3 the optional
// path, group 4 the key. Go's leftmost-first matching with lazy quantifiers
// gives the same matches as java.util.regex Matcher.find here.
var placeholderPattern = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// The ConfigProvider classes shipped with Apache Kafka
// (org.apache.kafka.common.config.provider).
const (
	fileProviderClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	envProviderClass       = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	directoryProviderClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

type providerKind int

const (
	providerCustom providerKind = iota
	providerFile
	providerEnv
	providerDirectory
)

func (k providerKind) className() string {
	switch k {
	case providerFile:
		return fileProviderClass
	case providerEnv:
		return envProviderClass
	case providerDirectory:
		return directoryProviderClass
	}
	return "a custom ConfigProvider"
}

// kindByName is the built-in provider a conventional provider name stands
// for, used when config.providers or the .class key is missing.
func kindByName(name string) providerKind {
	switch name {
	case "file":
		return providerFile
	case "env":
		return providerEnv
	case "directory", "dir":
		return providerDirectory
	}
	return providerCustom
}

func kindByClass(class string) providerKind {
	switch class {
	case fileProviderClass:
		return providerFile
	case envProviderClass:
		return providerEnv
	case directoryProviderClass:
		return providerDirectory
	}
	return providerCustom
}

// resolver resolves ${provider:path:key} placeholders the way MM2's
// MirrorMakerConfig.transform does, with the I/O injected through Options.
type resolver struct {
	p        *parser
	declared map[string]providerKind // nil when config.providers is not set
	files    map[string]map[string]string
	warned   map[string]bool
}

func newResolver(p *parser) *resolver {
	r := &resolver{p: p, files: map[string]map[string]string{}, warned: map[string]bool{}}
	raw, ok := p.values["config.providers"]
	if !ok {
		return r
	}
	r.declared = map[string]providerKind{}
	line := p.lines["config.providers"]
	for _, name := range ParseList(raw) {
		if name == "" {
			continue
		}
		classKey := "config.providers." + name + ".class"
		class, ok := p.values[classKey]
		class = strings.TrimSpace(class)
		switch {
		case !ok || class == "":
			kind := kindByName(name)
			r.declared[name] = kind
			msg := fmt.Sprintf("provider %q is declared without %s; MM2 will not instantiate it and leaves its ${%s:...} placeholders unresolved", name, classKey, name)
			if kind != providerCustom {
				msg += fmt.Sprintf("; resolved here as %s", kind.className())
			}
			p.warn(line, "config.providers", msg)
		default:
			kind := kindByClass(class)
			r.declared[name] = kind
			if kind == providerCustom {
				p.warn(p.lines[classKey], classKey, fmt.Sprintf("custom ConfigProvider %q cannot be run here; ${%s:...} placeholders are left as written", class, name))
			}
		}
	}
	return r
}

// resolve returns value with every resolvable placeholder replaced. key and
// line name the property for errors and warnings. Errors name the
// placeholder (provider, path and key), never the value it resolves to.
func (r *resolver) resolve(key string, line int, value string) (string, error) {
	matches := placeholderPattern.FindAllStringSubmatchIndex(value, -1)
	if matches == nil {
		return value, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		whole := value[m[0]:m[1]]
		name := value[m[2]:m[3]]
		path := ""
		if m[6] >= 0 {
			path = value[m[6]:m[7]]
		}
		varKey := value[m[8]:m[9]]
		b.WriteString(value[last:m[0]])
		last = m[1]

		kind, ok := r.kindFor(name, key, line, whole)
		if !ok || kind == providerCustom {
			b.WriteString(whole)
			continue
		}
		v, err := r.lookup(kind, path, varKey)
		if err != nil {
			return "", r.p.errorf(line, key, err, "placeholder %s", whole)
		}
		b.WriteString(v)
	}
	b.WriteString(value[last:])
	return b.String(), nil
}

// kindFor decides whether a placeholder's provider is resolved, warning once
// per provider name about lenient or impossible resolution.
func (r *resolver) kindFor(name, key string, line int, whole string) (providerKind, bool) {
	if r.declared != nil {
		kind, ok := r.declared[name]
		if !ok {
			r.warnOnce(name, line, key, fmt.Sprintf("placeholder %s names provider %q, which config.providers does not declare; MM2 leaves it unresolved and so does this reader", whole, name))
		}
		return kind, ok
	}
	kind := kindByName(name)
	if kind == providerCustom {
		r.warnOnce(name, line, key, fmt.Sprintf("placeholder %s names provider %q and config.providers is not set; left unresolved", whole, name))
		return kind, false
	}
	r.warnOnce(name, line, key, fmt.Sprintf("placeholder %s is used but config.providers is not set, so MM2 leaves it unresolved; resolved here as %s", whole, kind.className()))
	return kind, true
}

func (r *resolver) warnOnce(name string, line int, key, msg string) {
	if r.warned[name] {
		return
	}
	r.warned[name] = true
	r.p.warn(line, key, msg)
}

var (
	errNoSuchKey   = errors.New("key not found")
	errNoSuchEnv   = errors.New("environment variable not set")
	errPathNeeded  = errors.New("a path is required")
	errPathRefused = errors.New("EnvVarConfigProvider takes no path")
	errBadDirKey   = errors.New("the key must be a file name inside the directory")
)

func (r *resolver) lookup(kind providerKind, path, key string) (string, error) {
	switch kind {
	case providerEnv:
		if path != "" {
			return "", errPathRefused
		}
		v, ok := r.p.opts.LookupEnv(key)
		if !ok {
			return "", errNoSuchEnv
		}
		return v, nil
	case providerFile:
		if path == "" {
			return "", errPathNeeded
		}
		props, err := r.propertiesFile(path)
		if err != nil {
			return "", err
		}
		v, ok := props[key]
		if !ok {
			return "", fmt.Errorf("%s: %w", path, errNoSuchKey)
		}
		return v, nil
	case providerDirectory:
		if path == "" {
			return "", errPathNeeded
		}
		if key == "" || strings.ContainsAny(key, `/\`) || key == "." || key == ".." {
			return "", errBadDirKey
		}
		data, err := r.p.opts.ReadFile(filepath.Join(path, key))
		if err != nil {
			return "", fmt.Errorf("reading directory entry: %w", err)
		}
		return string(data), nil
	}
	return "", fmt.Errorf("provider kind %d: %w", kind, errors.ErrUnsupported)
}

// propertiesFile reads and caches a FileConfigProvider file. A syntax error
// is reported by line only, so no secret from the file reaches the error.
func (r *resolver) propertiesFile(path string) (map[string]string, error) {
	if m, ok := r.files[path]; ok {
		return m, nil
	}
	data, err := r.p.opts.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading properties file: %w", err)
	}
	text := normalizeNewlines(data)
	if _, err := scanProperties(text); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := properties.NewProperties()
	p.DisableExpansion = true
	if err := p.Load([]byte(text), properties.UTF8); err != nil {
		return nil, fmt.Errorf("%s: malformed properties file", path)
	}
	m := p.Map()
	r.files[path] = m
	return m, nil
}
