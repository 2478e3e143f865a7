package alerts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := map[string]string{
		`Post "https://hooks.slack.com/services/T0AB/B0CD/xyzXYZ123": dial tcp: i/o timeout`: `Post "https://hooks.slack.com/services/REDACTED": dial tcp: i/o timeout`,
		"token xoxb-1234-5678-abcDEF rejected":                                               "token xoxb-REDACTED rejected",
		"xoxp-1-2-3 and xapp-1-A0-99":                                                        "xoxp-REDACTED and xapp-REDACTED",
		"https://hooks.slack.com/workflows/T0/A0/123/abc":                                    "https://hooks.slack.com/workflows/REDACTED",
		"nothing secret in topic orders":                                                     "nothing secret in topic orders",
	}
	for in, want := range tests {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoadSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := LoadSecret(write("token", "  xoxb-1-2-abc\n\n"))
	if err != nil || got != "xoxb-1-2-abc" {
		t.Errorf("LoadSecret = %q, %v", got, err)
	}
	if _, err := LoadSecret(write("empty", " \n\t")); err == nil {
		t.Error("empty secret file accepted")
	}
	if _, err := LoadSecret(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing secret file accepted")
	}
	big := write("big", strings.Repeat("x", maxSecretFile+1))
	if _, err := LoadSecret(big); err == nil || strings.Contains(err.Error(), "xxxx") {
		t.Errorf("oversized secret file: err = %v", err)
	}
}
