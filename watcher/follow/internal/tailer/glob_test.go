package tailer

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestIsRotatedSibling(t *testing.T) {
	cases := []struct {
		name, live string
		want       bool
	}{
		{"connect.log.2024-01-01-10", "connect.log", true},
		{"connect.log.1", "connect.log", true},
		{"connect-2024-01-01-10.log", "connect.log", true},
		{"connect-2024-01-01-10.log.gz", "connect.log", true},
		{"connect-3.log", "connect.log", true},
		{"0.log.20240101-101010", "0.log", true},
		{"connect.log.old", "connect.log", false},
		{"mm2-connect.log", "mm2.log", false},
		{"connect.log", "connect.log", false},
		{"other.log", "connect.log", false},
		{"1.log", "0.log", false},
	}
	for _, c := range cases {
		if got := isRotatedSibling("/l/"+c.name, "/l/"+c.live); got != c.want {
			t.Errorf("isRotatedSibling(%q, %q) = %v, want %v", c.name, c.live, got, c.want)
		}
	}
	if isRotatedSibling("/a/connect.log.1", "/b/connect.log") {
		t.Error("files in different directories are not siblings")
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"connect.log", "connect.log.2024-01-01-10", "connect-2024-01-01-09.log",
		"connect-2024-01-01-08.log.gz", "other.log"} {
		writeFile(t, filepath.Join(dir, n), "")
	}
	os.Mkdir(filepath.Join(dir, "sub.log"), 0o755)
	j := func(n ...string) []string {
		for i := range n {
			n[i] = filepath.Join(dir, n[i])
		}
		return n
	}
	cases := []struct {
		globs     []string
		following map[string]bool
		want      []string
	}{
		{[]string{filepath.Join(dir, "*")}, nil, j("connect.log", "other.log")},
		{[]string{filepath.Join(dir, "connect*")}, nil, j("connect.log")},
		// Only rotated names match: nothing live to compare with.
		{[]string{filepath.Join(dir, "connect.log.*")}, nil, j("connect.log.2024-01-01-10")},
		// ... unless the live file is already followed.
		{[]string{filepath.Join(dir, "connect.log.*")}, map[string]bool{filepath.Join(dir, "connect.log"): true}, nil},
		// A literal path is followed whether or not it exists.
		{[]string{filepath.Join(dir, "missing.log")}, nil, j("missing.log")},
	}
	for _, c := range cases {
		got := expand(c.globs, c.following).paths
		if !slices.Equal(got, c.want) {
			t.Errorf("expand(%q, %v) = %q, want %q", c.globs, c.following, got, c.want)
		}
	}
}

// TestGlobPicksUpNewFilesAndForgetsGoneOnes is the Kubernetes case: a pod's
// log directory appears after start, and disappears when the pod is gone.
func TestGlobPicksUpNewFilesAndForgetsGoneOnes(t *testing.T) {
	root := t.TempDir()
	glob := filepath.Join(root, "*", "mm2", "*.log")
	h := startHarness(t, Config{Globs: []string{glob}, GlobInterval: 10 * time.Millisecond})
	dir := filepath.Join(root, "ns_pod-1_uid", "mm2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "0.log")
	writeFile(t, p, joinLines(0, 20))
	select {
	case got := <-h.newOne:
		if got != p {
			t.Fatalf("following %q, want %q", got, p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("new file not picked up")
	}
	s := h.sink(p)
	s.waitLines(t, 20, 10*time.Second) // a file found later is read from its start
	// kubelet rotates 0.log to 0.log.<timestamp>: not a new file to follow.
	mustRename(t, p, p+".20260101-101010")
	writeFile(t, p, joinLines(20, 30))
	s.waitLines(t, 30, 10*time.Second)
	checkSeq(t, s.snapshot(), 30)
	if err := os.RemoveAll(filepath.Join(root, "ns_pod-1_uid")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-h.forgot:
		if got != p {
			t.Fatalf("forgot %q, want %q", got, p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gone file still followed")
	}
	select {
	case got := <-h.newOne:
		t.Fatalf("also followed %q", got)
	default:
	}
	if got := testutil.ToFloat64(h.metrics(p).Renames); got != 1 {
		t.Errorf("renames = %v, want 1", got)
	}
}
