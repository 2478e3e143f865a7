package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFromProps(t *testing.T) {
	cfg, err := FromProps("vast", map[string]string{
		"bootstrap.servers":      " b1:9092 , b2:9093 ",
		"security.protocol":      "sasl_plaintext",
		"sasl.mechanism":         "SCRAM-SHA-512",
		"sasl.jaas.config":       `org.apache.kafka.common.security.scram.ScramLoginModule required username='svc mm2' password="p\"w\\d;x=1" ;`,
		"client.id":              "A->B",
		"request.timeout.ms":     "1500",
		"default.api.timeout.ms": "7000",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Seeds, ","); got != "b1:9092,b2:9093" {
		t.Errorf("seeds = %s", got)
	}
	if cfg.SecurityProtocol != ProtocolSASLPlaintext || cfg.TLS != nil || cfg.SASL == nil {
		t.Fatalf("cfg = %+v", cfg)
	}
	if cfg.SASL.Mechanism != MechanismScramSHA512 || cfg.SASL.Username != "svc mm2" || cfg.SASL.Password.Reveal() != `p"w\d;x=1` {
		t.Errorf("sasl = %q %q %q", cfg.SASL.Mechanism, cfg.SASL.Username, cfg.SASL.Password.Reveal())
	}
	if cfg.ClientID != "A->B|mm2-watchdog" || cfg.RequestTimeout != 1500*time.Millisecond || cfg.APITimeout != 7*time.Second {
		t.Errorf("client id %q, timeouts %v %v", cfg.ClientID, cfg.RequestTimeout, cfg.APITimeout)
	}

	plain, err := FromProps("src", map[string]string{"bootstrap.servers": "localhost:9092"})
	if err != nil || plain.SecurityProtocol != ProtocolPlaintext || plain.SASL != nil || plain.TLS != nil || plain.ClientID != "" {
		t.Errorf("plaintext cfg = %+v, %v", plain, err)
	}
	tlsCfg, err := FromProps("src", map[string]string{"bootstrap.servers": "localhost:9092", "security.protocol": "SSL"})
	if err != nil || tlsCfg.TLS == nil || tlsCfg.TLS.RootCAs != nil || tlsCfg.TLS.InsecureSkipVerify {
		t.Errorf("SSL without truststore = %+v, %v; want system roots and verification", tlsCfg.TLS, err)
	}
}

func TestFromPropsErrors(t *testing.T) {
	pw := "Sekr1t-" + canary
	good := func(extra map[string]string) map[string]string {
		m := map[string]string{"bootstrap.servers": "b:9092", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": jaas("plain.PlainLoginModule", "u", pw)}
		for k, v := range extra {
			if v == "-" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		key   string
		text  string
	}{
		{"no bootstrap", good(map[string]string{"bootstrap.servers": "-"}), "bootstrap.servers", "required"},
		{"no port", good(map[string]string{"bootstrap.servers": "broker"}), "bootstrap.servers", "host:port"},
		{"empty port", good(map[string]string{"bootstrap.servers": "broker:"}), "bootstrap.servers", "1 to 65535"},
		{"port too big", good(map[string]string{"bootstrap.servers": "127.0.0.1:99999"}), "bootstrap.servers", `port "99999" is not a number from 1 to 65535`},
		{"port zero", good(map[string]string{"bootstrap.servers": "b:0"}), "bootstrap.servers", "1 to 65535"},
		{"no host", good(map[string]string{"bootstrap.servers": ":9092"}), "bootstrap.servers", "no host"},
		{"empty entry", good(map[string]string{"bootstrap.servers": "a:1,,b:2"}), "bootstrap.servers", "entry 2 is empty"},
		{"only commas", good(map[string]string{"bootstrap.servers": " , "}), "bootstrap.servers", "entry 1 is empty"},
		{"bad protocol", good(map[string]string{"security.protocol": "TLS"}), "security.protocol", "not one of"},
		{"default GSSAPI", good(map[string]string{"sasl.mechanism": "-"}), "sasl.mechanism", "GSSAPI is unsupported"},
		{"OAUTHBEARER", good(map[string]string{"sasl.mechanism": "OAUTHBEARER"}), "sasl.mechanism", "OAUTHBEARER is unsupported"},
		{"misspelt mechanism named", good(map[string]string{"sasl.mechanism": "scram-sha256"}), "sasl.mechanism", "SCRAM-SHA256 is unsupported"},
		{"MSK IAM named", good(map[string]string{"sasl.mechanism": "AWS_MSK_IAM"}), "sasl.mechanism", "AWS_MSK_IAM is unsupported"},
		// A value that is not a mechanism name (here a password put in the
		// wrong key through a placeholder) is not echoed.
		{"secret as mechanism", good(map[string]string{"sasl.mechanism": pw}), "sasl.mechanism", "unsupported value;"},
		{"word as mechanism", good(map[string]string{"sasl.mechanism": "hunter2hunter2"}), "sasl.mechanism", "unsupported value;"},
		{"no jaas", good(map[string]string{"sasl.jaas.config": "-"}), "sasl.jaas.config", "required"},
		{"module mismatch", good(map[string]string{"sasl.mechanism": "SCRAM-SHA-256"}), "sasl.jaas.config", "does not match"},
		{"unterminated", good(map[string]string{"sasl.jaas.config": `x.PlainLoginModule required username="u" password="` + pw + `"`}), "sasl.jaas.config", "not terminated"},
		{"unclosed quote", good(map[string]string{"sasl.jaas.config": `x.PlainLoginModule required username="u" password="` + pw + `;`}), "sasl.jaas.config", "unterminated"},
		{"bad flag", good(map[string]string{"sasl.jaas.config": `x.PlainLoginModule maybe password="` + pw + `";`}), "sasl.jaas.config", "control flag"},
		{"no password", good(map[string]string{"sasl.jaas.config": `x.PlainLoginModule required username="u";`}), "sasl.jaas.config", "no password"},
		{"two modules", good(map[string]string{"sasl.jaas.config": jaas("plain.PlainLoginModule", "u", pw) + jaas("plain.PlainLoginModule", "u", pw)}), "sasl.jaas.config", "exactly one"},
		{"bad timeout", good(map[string]string{"request.timeout.ms": "soon"}), "request.timeout.ms", "milliseconds"},
		{"missing truststore", good(map[string]string{"ssl.truststore.location": "/nonexistent/ts.jks"}), "ssl.truststore.location", "no such file"},
		{"bad store type", good(map[string]string{"ssl.truststore.location": "/dev/null", "ssl.truststore.type": "BKS"}), "ssl.truststore.location", "unsupported store type"},
		{"bad endpoint alg", good(map[string]string{"ssl.endpoint.identification.algorithm": "ldap"}), "ssl.endpoint.identification.algorithm", "https"},
		{"half inline key", good(map[string]string{"ssl.keystore.key": "x"}), "ssl.keystore.key", "both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromProps("vast", tc.props)
			if err == nil {
				t.Fatal("no error")
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != tc.key || ke.Alias != "vast" {
				t.Errorf("error %v is not a *KeyError for key %s", err, tc.key)
			}
			msg := err.Error()
			if !strings.Contains(msg, `cluster "vast"`) || !strings.Contains(msg, tc.key) || !strings.Contains(msg, tc.text) {
				t.Errorf("error %q does not name the alias, key %s and %q", msg, tc.key, tc.text)
			}
			if strings.Contains(msg, pw) || strings.Contains(msg, canary) {
				t.Errorf("error contains the password: %s", msg)
			}
		})
	}
}

// The password never shows in formatted Configs, logs or JSON.
func TestSecretNeverPrints(t *testing.T) {
	cfg, err := FromProps("vast", map[string]string{"bootstrap.servers": "b:9092", "security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas("plain.PlainLoginModule", "u", canary)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("cfg", "sasl", cfg.SASL, "password", cfg.SASL.Password, "cfg", cfg)
	j, err := json.Marshal(cfg.SASL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprintf("%v %+v %#v %s %q %x", *cfg.SASL, *cfg.SASL, *cfg.SASL, cfg.SASL.Password, cfg.SASL.Password, cfg.SASL.Password),
		fmt.Sprintf("%+v", cfg), buf.String(), string(j),
	} {
		if strings.Contains(s, canary) || strings.Contains(s, fmt.Sprintf("%x", canary)) {
			t.Errorf("secret leaked: %s", s)
		}
	}
	if cfg.SASL.Password.Reveal() != canary {
		t.Error("Reveal lost the value")
	}
}

// A store file that is none of the known types says which types were tried,
// once, without the PKCS12 parser's ASN.1 dump; with the type set, the
// parser's own error is given once.
func TestUnrecognisedStoreFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "truststore.jks")
	if err := os.WriteFile(path, []byte("this is not a keystore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{"bootstrap.servers": "b:9092", "security.protocol": "SSL",
		"ssl.truststore.location": path, "ssl.truststore.password": canary}
	_, err := FromProps("vast", props)
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "ssl.truststore.location" {
		t.Fatalf("error %v is not a *KeyError for ssl.truststore.location", err)
	}
	msg := err.Error()
	for _, want := range []string{path, "ssl.truststore.type is not set", "not PEM", "not JKS", "not PKCS12"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "asn1") || strings.Contains(msg, canary) {
		t.Errorf("error %q contains the ASN.1 dump or the password", msg)
	}

	props["ssl.truststore.type"] = "PKCS12"
	_, err = FromProps("vast", props)
	if err == nil || strings.Count(err.Error(), "asn1:") != 1 || !strings.Contains(err.Error(), "loading PKCS12 truststore") {
		t.Errorf("declared PKCS12: error %v: want the parser's error once", err)
	}

	delete(props, "ssl.truststore.type")
	props["ssl.keystore.location"] = path
	delete(props, "ssl.truststore.location")
	_, err = FromProps("vast", props)
	if !errors.As(err, &ke) || ke.Key != "ssl.keystore.location" || !strings.Contains(err.Error(), "ssl.keystore.type is not set") {
		t.Errorf("keystore: error %v", err)
	}
}
