package mm2config

import (
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Client roles MM2 recognises as prefixes inside a cluster's settings
// (MirrorMakerConfig.clusterProps, MirrorClientConfig).
const (
	RoleProducer = "producer"
	RoleConsumer = "consumer"
	RoleAdmin    = "admin"
)

// ClientSettings are the Kafka client settings of one cluster alias as MM2
// resolves them in MirrorMakerConfig.clusterProps: every `<alias>.<k>` key,
// then the top-level unprefixed client keys (bootstrap.servers,
// security.protocol, ssl.*, sasl.*) as defaults. Placeholders are resolved.
//
// The struct holds secrets. Its String, GoString and LogValue methods mask
// them; print Props or the role maps only through Redacted.
type ClientSettings struct {
	Alias string
	// Props are the cluster-level settings (keys without the alias prefix
	// and without a producer./consumer./admin. role prefix). Besides Kafka
	// client keys they hold whatever else was set for the alias (for example
	// worker keys such as offset.flush.interval.ms), which clients ignore.
	Props map[string]string
	// Overrides are `<alias>.producer.<k>`, `<alias>.consumer.<k>` and
	// `<alias>.admin.<k>`, by role, with both prefixes removed.
	Overrides map[string]map[string]string
}

// isClientConfigKey reports whether k belongs to MirrorClientConfig's
// CLIENT_CONFIG_DEF (bootstrap.servers, security.protocol and the client SSL
// and SASL keys), the keys whose top-level values are defaults for every
// cluster.
func isClientConfigKey(k string) bool {
	return k == "bootstrap.servers" || k == "security.protocol" ||
		strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "sasl.")
}

// For returns the settings a client of the given role (RoleProducer,
// RoleConsumer or RoleAdmin) gets: Props with that role's overrides on top,
// so `<alias>.admin.k` beats `<alias>.k`, which beats top-level `k`. Any
// other role returns a copy of Props.
func (c ClientSettings) For(role string) map[string]string {
	m := maps.Clone(c.Props)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, c.Overrides[role])
	return m
}

// BootstrapServers returns bootstrap.servers as a list (ConfigDef LIST).
func (c ClientSettings) BootstrapServers() []string {
	return ParseList(c.Props["bootstrap.servers"])
}

// Redacted returns Props plus every role override (as "producer.<k>",
// "consumer.<k>", "admin.<k>") with secret values masked by RedactValue.
func (c ClientSettings) Redacted() map[string]string {
	out := make(map[string]string, len(c.Props))
	for k, v := range c.Props {
		out[k] = RedactValue(k, v)
	}
	for role, m := range c.Overrides {
		for k, v := range m {
			out[role+"."+k] = RedactValue(k, v)
		}
	}
	return out
}

// String lists the redacted settings in key order.
func (c ClientSettings) String() string {
	r := c.Redacted()
	var b strings.Builder
	fmt.Fprintf(&b, "ClientSettings{alias=%s", c.Alias)
	for _, k := range slices.Sorted(maps.Keys(r)) {
		fmt.Fprintf(&b, " %s=%s", k, r[k])
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String, so that %#v does not print secrets either.
func (c ClientSettings) GoString() string { return c.String() }

// LogValue makes slog print the redacted settings.
func (c ClientSettings) LogValue() slog.Value {
	r := c.Redacted()
	attrs := []slog.Attr{slog.String("alias", c.Alias)}
	for _, k := range slices.Sorted(maps.Keys(r)) {
		attrs = append(attrs, slog.String(k, r[k]))
	}
	return slog.GroupValue(attrs...)
}

// Redaction mask used in place of a secret.
const redactedMask = "[redacted]"

// IsSensitiveKey reports whether the value of key (with or without an alias,
// flow or role prefix) is secret: sasl.jaas.config, basic.auth.user.info,
// ssl.keystore.key, and anything whose name contains "password" or
// "secret" (ssl.truststore.password, sasl.oauthbearer...client.secret, ...).
func IsSensitiveKey(key string) bool {
	k := strings.ToLower(key)
	return strings.HasSuffix(k, "sasl.jaas.config") || strings.HasSuffix(k, "basic.auth.user.info") ||
		strings.HasSuffix(k, "ssl.keystore.key") || strings.Contains(k, "password") ||
		strings.Contains(k, "secret")
}

// jaasOption matches one `name=value` option of a JAAS login module line,
// the value quoted or bare.
var jaasOption = regexp.MustCompile(`([\w.-]+)(\s*=\s*)("(?:[^"\\]|\\.)*"?|[^\s;]+)`)

// jaasPublicOptions are JAAS options whose values are not secret; every
// other option value is masked.
var jaasPublicOptions = map[string]bool{
	"username": true, "user": true, "serviceName": true, "principal": true, "useKeyTab": true,
	"storeKey": true, "keyTab": true, "useTicketCache": true, "debug": true, "clientId": true,
	"scope": true, "tokenauth": true,
}

// jaasShape is what remains of a well-formed JAAS entry once its options are
// removed: the login module class and the control flag.
var jaasShape = regexp.MustCompile(`^\s*[\w.$]+\s+(?i:required|requisite|sufficient|optional)\s*;?\s*$`)

// RedactValue returns value safe to print for key: a sasl.jaas.config keeps
// its login module and the options known to be public (username,
// serviceName, principal, keyTab, ...) and has every other option value
// (password, clientSecret, ...) masked; other sensitive keys
// (IsSensitiveKey) are masked whole, and so is a sasl.jaas.config that does
// not have the shape of a JAAS entry; the rest is returned unchanged.
func RedactValue(key, value string) string {
	if !IsSensitiveKey(key) {
		return value
	}
	if strings.HasSuffix(strings.ToLower(key), "sasl.jaas.config") {
		// Anything but "<LoginModule> <flag> name=value ...;" is masked whole:
		// a value that does not parse may hold a secret anywhere.
		if !jaasShape.MatchString(jaasOption.ReplaceAllString(value, "")) {
			return redactedMask
		}
		return jaasOption.ReplaceAllStringFunc(value, func(opt string) string {
			m := jaasOption.FindStringSubmatch(opt)
			if jaasPublicOptions[m[1]] {
				return opt
			}
			return m[1] + m[2] + `"` + redactedMask + `"`
		})
	}
	if value == "" {
		return ""
	}
	return redactedMask
}
