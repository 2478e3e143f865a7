// Command mm2-watchdog watches Apache Kafka MirrorMaker 2: it follows MM2's
// worker log, checks both clusters of every flow, and reports what is wrong as
// Prometheus metrics, Slack messages and one-shot reports.
//
// Sub-commands: run (the sidecar daemon), scan (one pass over log files),
// check (one round of cluster checks), lint (static checks of an MM2
// properties file), demo (the whole loop on embedded clusters), version.
//
// main only parses the command line; every sub-command is a function that
// takes a context and options, so tests run the whole program in-process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes shared by every sub-command (CONTRACT.md).
const (
	exitOK       = 0 // nothing at or above --fail-on; or a clean stop on a signal
	exitFindings = 1 // findings at or above --fail-on; or a fatal runtime error in run
	exitUsage    = 2 // usage, configuration or I/O error
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, osGetenv)
	stop()
	os.Exit(code)
}

// env bundles what a sub-command reads from its surroundings, so tests can
// give their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
}

// realMain dispatches to a sub-command and returns the process exit code.
func realMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) (string, bool)) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCommand(ctx, rest, e)
	case "scan":
		return scanCommand(ctx, rest, e)
	case "check":
		return checkCommand(ctx, rest, e)
	case "lint":
		return lintCommand(ctx, rest, e)
	case "demo":
		return demoCommand(ctx, rest, e)
	case "version", "--version", "-version":
		printVersion(stdout)
		return exitOK
	case "help", "-h", "--help", "-help":
		usage(stdout)
		return exitOK
	default:
		fmt.Fprintf(stderr, "mm2-watchdog: unknown command %q\n\n", cmd)
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `mm2-watchdog watches Apache Kafka MirrorMaker 2 and reports what is wrong.

Usage:
  mm2-watchdog run   --log PATH [--mm2-config FILE] [--listen ADDR] [--slack-webhook-url URL | --slack-token T --slack-channel C]
  mm2-watchdog scan  [--format text|json] [--fail-on SEVERITY] FILE...   (FILE may be .gz or - for stdin)
  mm2-watchdog check --mm2-config FILE [--format text|json] [--fail-on SEVERITY]
  mm2-watchdog lint  [--limited ALIAS] [--probe] [--mm2-version 3|4] MM2_PROPERTIES
  mm2-watchdog demo  [--listen ADDR] [--duration D] [--pace F]   (no Kafka needed: in-process clusters and a simulated MM2)
  mm2-watchdog version

Run "mm2-watchdog COMMAND -h" for the flags of a command. Every flag can also be
set with the environment variable MM2_WATCHDOG_<FLAG_IN_UPPER_SNAKE>.
`)
}
