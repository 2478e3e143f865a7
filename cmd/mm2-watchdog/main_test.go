package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mm2-watchdog/mm2-watchdog/detectors"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/lint"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/logrules"
	"github.com/mm2-watchdog/mm2-watchdog/detectors/parity"
)

func noEnv(string) (string, bool) { return "", false }

// runMain runs the program in-process and returns exit code, stdout, stderr.
func runMain(t *testing.T, getenv func(string) (string, bool), stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if getenv == nil {
		getenv = noEnv
	}
	code := realMain(context.Background(), args, strings.NewReader(stdin), &out, &errb, getenv)
	return code, out.String(), errb.String()
}

func decodeFindings(t *testing.T, s string) []detectors.Finding {
	t.Helper()
	var out []detectors.Finding
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var f detectors.Finding
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("not NDJSON: %q: %v", sc.Text(), err)
		}
		out = append(out, f)
	}
	return out
}

func TestScanFieldCaseJSON(t *testing.T) {
	code, out, stderr := runMain(t, nil, "", "scan", "--format", "json", "../../testdata/field-cases/case11-record-too-large-task-killed.log")
	if code != exitFindings {
		t.Fatalf("exit code %d, want %d (stderr %s)", code, exitFindings, stderr)
	}
	fs := decodeFindings(t, out)
	if len(fs) != 1 {
		t.Fatalf("want exactly one finding, got %d: %s", len(fs), out)
	}
	f := fs[0]
	if f.Rule != "record-too-large" || f.Severity != detectors.Critical || f.Task == nil || *f.Task != 0 || f.Topic != "document-archive" {
		t.Errorf("unexpected finding: %+v", f)
	}
	if !strings.Contains(f.Cause, "org.apache.kafka.common.errors.RecordTooLargeException") {
		t.Errorf("cause %q lacks RecordTooLargeException", f.Cause)
	}
}

func TestScanExitCodesAndFailOn(t *testing.T) {
	healthy := filepath.Join(t.TempDir(), "connect.log")
	if err := os.WriteFile(healthy, []byte("[2026-10-30 18:18:56,123] INFO [MirrorSourceConnector|worker] refreshing topics took 35 ms (org.apache.kafka.connect.mirror.Scheduler:95)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runMain(t, nil, "", "scan", healthy); code != exitOK || !strings.Contains(out, "no findings") {
		t.Errorf("healthy log: code %d out %q", code, out)
	}
	// case09 has critical findings; --fail-on none always exits 0.
	if code, _, _ := runMain(t, nil, "", "scan", "--fail-on", "none", "../../testdata/field-cases/case09-herder-exit-offsets-topic-denied.log"); code != exitOK {
		t.Errorf("--fail-on none: code %d", code)
	}
	missing := filepath.Join(t.TempDir(), "nope.log")
	code, _, stderr := runMain(t, nil, "", "scan", missing)
	if code != exitUsage || !strings.Contains(stderr, "nope.log") {
		t.Errorf("missing file: code %d stderr %q", code, stderr)
	}
	if code, _, stderr := runMain(t, nil, "", "scan", "--format", "xml", healthy); code != exitUsage || !strings.Contains(stderr, "--format") {
		t.Errorf("bad format: code %d stderr %q", code, stderr)
	}
	if code, _, stderr := runMain(t, nil, "", "scan", "--log-pattern", "%d %Q %m%n", healthy); code != exitUsage || !strings.Contains(stderr, "Q") {
		t.Errorf("bad pattern: code %d stderr %q", code, stderr)
	}
}

func TestScanStdinAndEnv(t *testing.T) {
	data, err := os.ReadFile("../../testdata/field-cases/case18-circular-replication-prefix-chain.log")
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		if k == "MM2_WATCHDOG_FORMAT" {
			return "json", true
		}
		return "", false
	}
	code, out, stderr := runMain(t, env, string(data), "scan", "-")
	if code != exitFindings {
		t.Fatalf("code %d stderr %s", code, stderr)
	}
	fs := decodeFindings(t, out) // the environment chose json
	var loops int
	for _, f := range fs {
		if f.Rule == "replication-loop" {
			loops++
		}
		if f.Rule == "topic-not-created" {
			t.Errorf("must not report topic-not-created: %+v", f)
		}
	}
	if loops != 1 {
		t.Errorf("want one replication-loop finding, got %d in %s", loops, out)
	}
}

// TestReadmeListsEveryRule keeps the README's rule catalogue in step with the
// rule tables.
func TestReadmeListsEveryRule(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "#### ") {
			headings = append(headings, l)
		}
	}
	ids := map[string]bool{}
	for _, r := range logrules.Rules() {
		ids[r.ID] = true
	}
	for _, r := range parity.Rules() {
		ids[r.ID] = true
	}
	for _, r := range lint.Rules() {
		if !strings.Contains(string(readme), "`"+r.ID+"`") {
			t.Errorf("README.md does not list the lint rule %s", r.ID)
		}
	}
	for id := range ids {
		re := regexp.MustCompile(`(^|[ ,/])` + regexp.QuoteMeta(id) + `($|[ ,/])`)
		found := false
		for _, h := range headings {
			found = found || re.MatchString(strings.TrimPrefix(h, "#### "))
		}
		if !found {
			t.Errorf("README.md has no '#### %s' section", id)
		}
	}
}

// TestDockerfileBuildCommand runs the build stage's go build command with the
// same flags, since no Docker engine is available to build the image.
func TestDockerfileBuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 .*go build .*) -o \S+ (\./cmd/mm2-watchdog)$`).FindStringSubmatch(string(df))
	if m == nil {
		t.Fatal("Dockerfile has no 'RUN CGO_ENABLED=0 … go build … -o … ./cmd/mm2-watchdog' line")
	}
	for _, want := range []string{"-trimpath", "USER 65532", "distroless/static"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	out := filepath.Join(t.TempDir(), "mm2-watchdog")
	script := strings.NewReplacer("${VERSION}", "test", "${COMMIT}", "abc").Replace(m[1]) + " -o " + out + " " + m[2]
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	b, err := exec.Command(out, "version").Output()
	if err != nil || !strings.Contains(string(b), "mm2-watchdog test (commit abc") {
		t.Fatalf("built binary version: %q %v", b, err)
	}
	if b, _ := exec.Command("file", out).Output(); len(b) > 0 && !strings.Contains(string(b), "statically linked") {
		t.Errorf("binary is not static: %s", b)
	}
}
