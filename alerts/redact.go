package alerts

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// maxSecretFile bounds what LoadSecret reads.
const maxSecretFile = 64 << 10

var (
	// tokenRE matches Slack tokens: bot (xoxb-), user (xoxp-), app-level
	// (xapp-), and the other xox?- kinds.
	tokenRE = regexp.MustCompile(`\b(xox[a-z]|xapp)-[A-Za-z0-9-]+`)
	// hookRE matches the secret path of Slack incoming webhook and workflow
	// URLs (https://hooks.slack.com/services/T…/B…/…).
	hookRE = regexp.MustCompile(`/(services|workflows|triggers)/[A-Za-z0-9_\-/]+`)
)

// Redact returns s with Slack tokens replaced by "xoxb-REDACTED" (keeping the
// kind) and the secret path of Slack webhook URLs replaced by
// "/services/REDACTED". Use it on any text that may quote a request URL or a
// token, such as errors from net/http. It knows the shapes of Slack secrets
// only; a notifier also scrubs the exact secrets it was given.
func Redact(s string) string {
	s = tokenRE.ReplaceAllStringFunc(s, func(m string) string {
		return m[:strings.IndexByte(m, '-')+1] + "REDACTED"
	})
	return hookRE.ReplaceAllString(s, "/$1/REDACTED")
}

// LoadSecret reads a secret (a Slack token or webhook URL) from the file at
// path, as mounted from a Kubernetes Secret, and trims surrounding
// whitespace. It fails when the file cannot be read, is larger than 64 KiB,
// or holds only whitespace; errors name the path, never the content.
func LoadSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading secret file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("reading secret file %q: %w", path, err)
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("secret file %q is larger than %d bytes", path, maxSecretFile)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("secret file %q is empty", path)
	}
	return s, nil
}
