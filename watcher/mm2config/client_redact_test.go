package mm2config

import (
	"strings"
	"testing"
)

func TestRedactValueMasksMalformedJAAS(t *testing.T) {
	for _, v := range []string{
		"again hunter2",
		"hunter2",
		`org.apache.kafka.common.security.plain.PlainLoginModule required hunter2 username="u";`,
	} {
		if got := RedactValue("sasl.jaas.config", v); strings.Contains(got, "hunter2") {
			t.Errorf("RedactValue(%q) = %q leaks the secret", v, got)
		}
	}
	good := `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="hunter2";`
	got := RedactValue("vast.sasl.jaas.config", good)
	if strings.Contains(got, "hunter2") || !strings.Contains(got, `username="alice"`) || !strings.Contains(got, "PlainLoginModule required") {
		t.Errorf("well-formed entry: %q", got)
	}
}
