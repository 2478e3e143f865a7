package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// Security protocols, as Kafka's security.protocol names them
// (org.apache.kafka.common.security.auth.SecurityProtocol).
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// SASL mechanisms this package can authenticate with, as Kafka's
// sasl.mechanism names them. GSSAPI (Kafka's default), OAUTHBEARER and
// vendor mechanisms are rejected by FromProps with an "unsupported" error.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

// DefaultClientID is the Kafka client.id the watchdog uses. A client.id in
// the cluster's properties is kept as a prefix ("<client.id>|mm2-watchdog"),
// the way MM2 prefixes its own client ids, so that broker logs show whose
// watchdog it is while quotas on MM2's exact client.id are not shared.
const DefaultClientID = "mm2-watchdog"

// Defaults for the timeouts, the same as the Java client's.
const (
	DefaultRequestTimeout = 30 * time.Second // request.timeout.ms
	DefaultAPITimeout     = 60 * time.Second // default.api.timeout.ms
	DefaultDialTimeout    = 10 * time.Second // socket.connection.setup.timeout.ms
)

// Config is everything needed to connect to one Kafka cluster. Build it
// with FromProps from MM2's client properties for an alias, or fill it in
// directly (tests, the demo).
type Config struct {
	// Alias is the MM2 cluster alias ("source", "backup"); it names the
	// cluster in every error and log line.
	Alias string
	// Seeds are the bootstrap.servers entries, each "host:port".
	Seeds []string
	// SecurityProtocol is one of the Protocol* constants; empty means
	// PLAINTEXT.
	SecurityProtocol string
	// SASL is non-nil for SASL_PLAINTEXT and SASL_SSL.
	SASL *SASLConfig
	// TLS is non-nil for SSL and SASL_SSL. A nil RootCAs means the system
	// roots. It is cloned for every connection.
	TLS *tls.Config
	// ClientID is the Kafka client.id sent with every request; empty means
	// DefaultClientID.
	ClientID string
	// RequestTimeout bounds how long one request waits for its response
	// (request.timeout.ms); zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// APITimeout bounds one whole operation including retries
	// (default.api.timeout.ms): a Snapshot, a Dial, a read, when the
	// caller's context has no earlier deadline. Zero means
	// DefaultAPITimeout.
	APITimeout time.Duration
	// DialTimeout bounds one TCP (and TLS) connection setup
	// (socket.connection.setup.timeout.ms); zero means DefaultDialTimeout.
	DialTimeout time.Duration
}

// SASLConfig is the SASL mechanism and credentials, taken from
// sasl.mechanism and the username/password options of sasl.jaas.config.
type SASLConfig struct {
	Mechanism string // one of the Mechanism* constants
	Username  string
	Password  Secret
}

// Secret is a string that never prints itself: fmt, slog and encoders see
// "[redacted]". Reveal returns the value for the one place that needs it.
type Secret string

const redacted = "[redacted]"

// String returns "[redacted]" (or "" for an empty secret).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString returns a redacted Go literal, for %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue keeps the secret out of slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps the secret out of JSON, YAML and text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Reveal returns the secret value itself.
func (s Secret) Reveal() string { return string(s) }

// FromProps builds a Config from the Kafka client properties of one MM2
// cluster alias, already resolved for precedence and ${...} placeholders
// (MM2's "<alias>.<key>" keys with the prefix removed, MM2-REFERENCE.md §5.2).
//
// Keys read: bootstrap.servers (required), security.protocol, sasl.mechanism,
// sasl.jaas.config, ssl.truststore.{location,type,password,certificates},
// ssl.keystore.{location,type,password,key,certificate.chain},
// ssl.key.password, ssl.endpoint.identification.algorithm,
// ssl.enabled.protocols, client.id, request.timeout.ms,
// default.api.timeout.ms, socket.connection.setup.timeout.ms. Other keys are
// ignored. Values are trimmed, as Kafka's ConfigDef trims them.
//
// Store files are read here, once, so a bad path or password is reported at
// start-up. Every error names the alias and the key, and never contains a
// password or any part of sasl.jaas.config's values.
func FromProps(alias string, props map[string]string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(props[k]) }
	cfg := Config{Alias: alias}

	seeds, err := parseBootstrap(get("bootstrap.servers"))
	if err != nil {
		return Config{}, &KeyError{Alias: alias, Key: "bootstrap.servers", Err: err}
	}
	cfg.Seeds = seeds

	cfg.SecurityProtocol = strings.ToUpper(get("security.protocol"))
	if cfg.SecurityProtocol == "" {
		cfg.SecurityProtocol = ProtocolPlaintext
	}
	switch cfg.SecurityProtocol {
	case ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL:
	default:
		return Config{}, keyErr(alias, "security.protocol", "%q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", cfg.SecurityProtocol)
	}

	if cfg.SecurityProtocol == ProtocolSASLPlaintext || cfg.SecurityProtocol == ProtocolSASLSSL {
		s, err := saslFromProps(alias, get("sasl.mechanism"), get("sasl.jaas.config"))
		if err != nil {
			return Config{}, err
		}
		cfg.SASL = s
	}
	if cfg.SecurityProtocol == ProtocolSSL || cfg.SecurityProtocol == ProtocolSASLSSL {
		t, err := tlsFromProps(alias, props)
		if err != nil {
			return Config{}, err
		}
		cfg.TLS = t
	}

	if id := get("client.id"); id != "" {
		cfg.ClientID = id + "|" + DefaultClientID
	}
	if cfg.RequestTimeout, err = msProp(alias, "request.timeout.ms", get("request.timeout.ms")); err != nil {
		return Config{}, err
	}
	if cfg.APITimeout, err = msProp(alias, "default.api.timeout.ms", get("default.api.timeout.ms")); err != nil {
		return Config{}, err
	}
	if cfg.DialTimeout, err = msProp(alias, "socket.connection.setup.timeout.ms", get("socket.connection.setup.timeout.ms")); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// KeyError is a configuration error about one client property of one
// cluster alias, from FromProps. Key is the property without the alias
// prefix, so a caller that knows where the properties came from (the MM2
// file's "<alias>.<key>" or top-level "<key>" line) can point at it. The
// message never contains a password or any part of sasl.jaas.config's
// values.
type KeyError struct {
	Alias string // MM2 cluster alias
	Key   string // client property, e.g. "ssl.truststore.location"
	Err   error  // what is wrong, without the alias and the key
}

// Error returns `cluster "<alias>": <key>: <what is wrong>`.
func (e *KeyError) Error() string {
	return fmt.Sprintf("cluster %q: %s: %v", e.Alias, e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// keyErr formats a configuration error that names the alias and the key.
// Callers must never pass a secret value in args.
func keyErr(alias, key, format string, args ...any) error {
	return &KeyError{Alias: alias, Key: key, Err: fmt.Errorf(format, args...)}
}

// keyWrap wraps err with the alias and key.
func keyWrap(alias, key, what string, err error) error {
	return &KeyError{Alias: alias, Key: key, Err: fmt.Errorf("%s: %w", what, err)}
}

// parseBootstrap checks a bootstrap.servers value the way Kafka's
// ClientUtils.parseAndValidateAddresses does, at start-up rather than as an
// unreachable cluster at run time: every comma-separated entry must be
// host:port (an IPv6 host in brackets) with a port from 1 to 65535. An empty
// entry (",," or a trailing comma) is an error too: it is a typo, although
// Kafka 3.x skips it.
func parseBootstrap(v string) ([]string, error) {
	if v == "" {
		return nil, errors.New("is required")
	}
	var seeds []string
	for i, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("entry %d is empty (two commas in a row, or a comma at an end)", i+1)
		}
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			return nil, fmt.Errorf("entry %q is not host:port", s)
		}
		if host == "" {
			return nil, fmt.Errorf("entry %q has no host", s)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("entry %q: port %q is not a number from 1 to 65535", s, port)
		}
		seeds = append(seeds, s)
	}
	return seeds, nil
}

// msProp parses a millisecond property; "" gives 0 (the default applies).
func msProp(alias, key, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, keyErr(alias, key, "%q is not a positive number of milliseconds", v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func saslFromProps(alias, mechanism, jaas string) (*SASLConfig, error) {
	if mechanism == "" {
		mechanism = "GSSAPI" // Kafka's default
	}
	mechanism = strings.ToUpper(mechanism)
	var wantModule string
	switch mechanism {
	case MechanismPlain:
		wantModule = "PlainLoginModule"
	case MechanismScramSHA256, MechanismScramSHA512:
		wantModule = "ScramLoginModule"
	default:
		if !looksLikeMechanism(mechanism) {
			// The value may have come from a placeholder and be a secret
			// put in the wrong key: do not echo it.
			return nil, keyErr(alias, "sasl.mechanism", "unsupported value; mm2-watchdog supports PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512")
		}
		return nil, keyErr(alias, "sasl.mechanism", "%s is unsupported; mm2-watchdog supports PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512", mechanism)
	}
	if jaas == "" {
		return nil, keyErr(alias, "sasl.jaas.config", "is required for sasl.mechanism %s", mechanism)
	}
	module, opts, err := parseJAAS(jaas)
	if err != nil {
		return nil, keyWrap(alias, "sasl.jaas.config", "parsing", err)
	}
	simple := module[strings.LastIndexByte(module, '.')+1:]
	if simple != wantModule {
		return nil, keyErr(alias, "sasl.jaas.config", "login module %s does not match sasl.mechanism %s (want %s)", safeJAASName(module), mechanism, wantModule)
	}
	user, ok := opts["username"]
	if !ok || user == "" {
		return nil, keyErr(alias, "sasl.jaas.config", "has no username option")
	}
	pass, ok := opts["password"]
	if !ok || pass == "" {
		return nil, keyErr(alias, "sasl.jaas.config", "has no password option")
	}
	return &SASLConfig{Mechanism: mechanism, Username: user, Password: Secret(pass)}, nil
}

// parseJAAS parses a Kafka sasl.jaas.config value: exactly one
// "<LoginModuleClass> <controlFlag> [key=value ...];" entry, where values
// may be bare words or quoted with " or ' and backslash escapes (as Java's
// StreamTokenizer, used by org.apache.kafka.common.security.JaasConfig,
// reads them). Errors describe the structure only: they name the login
// module and options only when the name is a known one, and otherwise count
// positions, because in a malformed entry any word may be part of a password
// (`password=Secret Tail99;` makes "Tail99" look like an option name).
func parseJAAS(s string) (module string, opts map[string]string, err error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return "", nil, err
	}
	i := 0
	next := func() (jaasToken, bool) {
		if i >= len(toks) {
			return jaasToken{}, false
		}
		i++
		return toks[i-1], true
	}
	t, ok := next()
	if !ok || t.kind != tokWord {
		return "", nil, fmt.Errorf("expected a login module class name")
	}
	module = t.text
	t, ok = next()
	if !ok || t.kind != tokWord {
		return "", nil, fmt.Errorf("expected a control flag after the login module %s", safeJAASName(module))
	}
	switch strings.ToLower(t.text) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("invalid control flag after the login module %s (want required, requisite, sufficient or optional)", safeJAASName(module))
	}
	opts = make(map[string]string)
	for n := 1; ; n++ {
		t, ok = next()
		if !ok {
			return "", nil, fmt.Errorf("login module entry is not terminated by ';'")
		}
		if t.kind == tokSemi {
			break
		}
		if t.kind != tokWord {
			return "", nil, fmt.Errorf("expected an option name, got a quoted string")
		}
		key := t.text
		if eq, ok := next(); !ok || eq.kind != tokEq {
			return "", nil, fmt.Errorf("expected '=' after option %d%s", n, optionName(key))
		}
		v, ok := next()
		if !ok || (v.kind != tokWord && v.kind != tokQuoted) {
			return "", nil, fmt.Errorf("expected a value for option %d%s", n, optionName(key))
		}
		opts[key] = v.text
	}
	if i != len(toks) {
		return "", nil, fmt.Errorf("must contain exactly one login module entry")
	}
	return module, opts, nil
}

// knownJAASOptions are option names of the login modules Kafka clients use;
// only these are named in errors.
var knownJAASOptions = map[string]bool{
	"username": true, "password": true, "serviceName": true, "useKeyTab": true, "keyTab": true,
	"principal": true, "storeKey": true, "useTicketCache": true, "debug": true,
	"unsecuredLoginStringClaim_sub": true, "clientId": true, "clientSecret": true, "scope": true,
	"tokenauth": true,
}

// optionName renders an option name for an error: ` ("username")` when it
// is a known option, nothing otherwise.
func optionName(key string) string {
	if knownJAASOptions[key] {
		return fmt.Sprintf(" (%q)", key)
	}
	return ""
}

// safeJAASName shows a login module class only when it looks like a Java
// class name in a package (a dotted identifier ending in LoginModule);
// anything else may be a secret pasted in the wrong place.
func safeJAASName(module string) string {
	if strings.HasSuffix(module, "LoginModule") && strings.Contains(module, ".") && !strings.ContainsAny(module, " \t\"'") {
		return module
	}
	return "(first word)"
}

type jaasTokKind int

const (
	tokWord jaasTokKind = iota
	tokQuoted
	tokEq
	tokSemi
)

type jaasToken struct {
	kind jaasTokKind
	text string
}

func jaasTokens(s string) ([]jaasToken, error) {
	var toks []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '=':
			toks = append(toks, jaasToken{kind: tokEq})
			i++
		case c == ';':
			toks = append(toks, jaasToken{kind: tokSemi})
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				d := s[j]
				if d == c {
					closed = true
					j++
					break
				}
				if d == '\\' && j+1 < len(s) {
					j++
					switch s[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case 'r':
						b.WriteByte('\r')
					case 'b':
						b.WriteByte('\b')
					case 'f':
						b.WriteByte('\f')
					default:
						b.WriteByte(s[j])
					}
					j++
					continue
				}
				b.WriteByte(d)
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quoted value")
			}
			toks = append(toks, jaasToken{kind: tokQuoted, text: b.String()})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r\f=;\"'", rune(s[j])) {
				j++
			}
			toks = append(toks, jaasToken{kind: tokWord, text: s[i:j]})
			i = j
		}
	}
	return toks, nil
}

// knownMechanisms are the SASL mechanism names Kafka clients know (IANA
// registry names plus AWS MSK's AWS_MSK_IAM).
var knownMechanisms = []string{"GSSAPI", "OAUTHBEARER", MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, "AWS_MSK_IAM"}

// looksLikeMechanism reports whether an upper-cased sasl.mechanism value is
// safe to print in an error: shaped like a mechanism name (at most 32 of
// A-Z, 0-9, '_' and '-', starting with a letter or digit) and at most two
// edits from a name in knownMechanisms. Anything else could be a secret.
func looksLikeMechanism(m string) bool {
	if len(m) == 0 || len(m) > 32 {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
	}
	for _, k := range knownMechanisms {
		if editDistance(m, k) <= 2 {
			return true
		}
	}
	return false
}

// editDistance is the Levenshtein distance of two ASCII strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
