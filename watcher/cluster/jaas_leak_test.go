package cluster

import (
	"strings"
	"testing"
)

// TestJAASErrorsNeverShowPasswordFragments: in a malformed entry any word may
// belong to a password; errors count positions instead of quoting words.
func TestJAASErrorsNeverShowPasswordFragments(t *testing.T) {
	for _, jaas := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password=Secret Tail99;`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password=Secret Tail99=;`,
		`Secret99 required;`,
		`Secret99 Tail99 username="u";`,
	} {
		_, err := FromProps("a", map[string]string{
			"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_PLAINTEXT",
			"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas,
		})
		if err == nil {
			t.Errorf("%q: want an error", jaas)
			continue
		}
		for _, secret := range []string{"Secret", "Tail99"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%q: error %q shows %q", jaas, err, secret)
			}
		}
	}
}
