package tailer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nxadm/tail"
)

// The guard tests run a follower in a child process (this test binary, in
// TestHelperFollower) and make the followed path unstat-able while the file
// stays open and keeps growing. nxadm/tail's follow mode calls os.Exit there;
// the same scenario against nxadm/tail shows that the test can fail.

const helperEnv = "TAILER_TEST_HELPER"

// TestHelperFollower is the child process, not a test.
func TestHelperFollower(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	path := os.Getenv("TAILER_TEST_PATH")
	switch mode {
	case "nxadm":
		tl, err := tail.TailFile(path, tail.Config{Follow: true, ReOpen: true, MustExist: false,
			CompleteLines: true, Logger: tail.DiscardingLogger})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		for l := range tl.Lines {
			fmt.Println(l.Text)
		}
		fmt.Fprintln(os.Stderr, "tail stopped:", tl.Err())
		os.Exit(4)
	case "tailer":
		s := &printSink{}
		m, err := New(Config{Globs: []string{path}, NewSink: func(string) Sink { return s },
			PollInterval: 10 * time.Millisecond})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		m.Run(context.Background())
		os.Exit(4)
	}
}

type printSink struct{}

func (printSink) Line(b []byte, _ int64, _ bool) { fmt.Println(string(b)) }
func (printSink) Pending() bool                  { return false }
func (printSink) Flush()                         {}

type child struct {
	lines  chan string
	exited chan struct{} // closed when the process has ended
	err    error         // its Wait result, once exited is closed
}

func startChild(t *testing.T, mode, path string, uid int) *child {
	t.Helper()
	bin := os.Args[0]
	cmd := exec.Command(bin, "-test.run=^TestHelperFollower$", "-test.v=false")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "TAILER_TEST_PATH="+path)
	if uid > 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{lines: make(chan string, 100), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// expectLine waits for the child to print want; it fails if the child exits.
func (c *child) expectLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l := <-c.lines:
			if l == want {
				return
			}
		case <-c.exited:
			t.Fatalf("follower process exited (%v) while waiting for %q", c.err, want)
		case <-timeout:
			t.Fatalf("follower process did not print %q", want)
		}
	}
}

// expectExit waits for the child to exit.
func (c *child) expectExit(t *testing.T) error {
	t.Helper()
	for {
		select {
		case <-c.lines:
		case <-c.exited:
			return c.err
		case <-time.After(20 * time.Second):
			t.Fatal("follower process still running")
		}
	}
}

// breakFn makes the path unstat-able; repair undoes it.
type breakFn func(t *testing.T, sub string) (repair func())

// replaceDirWithFile makes stat fail with ENOTDIR: the directory is moved
// away and a regular file takes its name. Works as root.
func replaceDirWithFile(t *testing.T, sub string) func() {
	mustRename(t, sub, sub+".moved")
	writeFile(t, sub, "")
	return func() {
		if _, err := os.Stat(sub + ".moved"); err == nil {
			os.Remove(sub)
			mustRename(t, sub+".moved", sub)
		}
	}
}

// denySearch makes stat fail with EACCES for a non-root child.
func denySearch(t *testing.T, sub string) func() {
	if err := os.Chmod(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	return func() { os.Chmod(sub, 0o755) }
}

func guardScenario(t *testing.T, mode string, brk breakFn, uid int) *child {
	root := t.TempDir()
	if uid > 0 {
		// Let the unprivileged child reach the test binary and the log.
		for _, d := range []string{filepath.Dir(root), root} {
			os.Chmod(d, 0o755)
		}
		bin := filepath.Join(root, "follower.test")
		copyFile(t, os.Args[0], bin)
		os.Args[0] = bin // restored below
	}
	sub := filepath.Join(root, "logs")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sub, "connect.log")
	writeFile(t, p, "")
	c := startChild(t, mode, p, uid)
	w, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	// Keep writing until the child has seen a line: it may open the file
	// after the first write.
seen:
	for i := 0; ; i++ {
		fmt.Fprintf(w, "before-%d\n", i)
		select {
		case l := <-c.lines:
			if strings.HasPrefix(l, "before-") {
				break seen
			}
		case <-c.exited:
			t.Fatalf("child exited early: %v", c.err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	repair := brk(t, sub)
	t.Cleanup(repair)
	for i := range 20 {
		fmt.Fprintf(w, "during-%d\n", i) // an inotify event per write: tail stats the path
	}
	if mode == "tailer" {
		c.expectLine(t, "during-19") // still reading the open file
		repair()
		writeFile(t, p, "after\n") // a new file at the path
		c.expectLine(t, "after")
	}
	return c
}

func TestGuardStatENOTDIR(t *testing.T) {
	guardScenario(t, "tailer", replaceDirWithFile, 0)
}

// TestNxadmTailFailsOnStatError documents why tailer does not use nxadm/tail
// follow mode: in the same scenarios its process exits (util.Fatal, status 1)
// or its tail stops for good (the Lines channel closes: status 4 here).
func TestNxadmTailFailsOnStatError(t *testing.T) {
	t.Run("ENOTDIR", func(t *testing.T) {
		c := guardScenario(t, "nxadm", replaceDirWithFile, 0)
		t.Logf("nxadm/tail child: %v", nxadmEnd(t, c))
	})
	t.Run("EACCES", func(t *testing.T) {
		uid := 0
		if os.Getuid() == 0 {
			uid = 65534
			defer func(a string) { os.Args[0] = a }(os.Args[0])
		}
		c := guardScenario(t, "nxadm", denySearch, uid)
		t.Logf("nxadm/tail child: %v", nxadmEnd(t, c))
	})
}

func nxadmEnd(t *testing.T, c *child) error {
	t.Helper()
	err := c.expectExit(t)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || (ee.ExitCode() != 1 && ee.ExitCode() != 4) {
		t.Fatalf("nxadm/tail child ended with %v, want exit status 1 (os.Exit) or 4 (tail stopped)", err)
	}
	return err
}

func TestGuardStatEACCES(t *testing.T) {
	if os.Getuid() != 0 {
		// Unprivileged: the directory permission applies to this process.
		guardScenario(t, "tailer", denySearch, 0)
		return
	}
	// Root bypasses permission checks: run the follower as nobody.
	defer func(a string) { os.Args[0] = a }(os.Args[0])
	guardScenario(t, "tailer", denySearch, 65534)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
