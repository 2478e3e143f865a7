package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// envPrefix is the prefix of every flag's environment variable: --slack-token
// is MM2_WATCHDOG_SLACK_TOKEN.
const envPrefix = "MM2_WATCHDOG_"

// envName returns the environment variable that sets the flag name.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// stringList is a repeatable flag (--log a --log b); an environment variable
// gives several values separated by commas.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// secretFlags are never echoed back: not in errors, usage defaults or logs.
var secretFlags = map[string]bool{"slack-webhook-url": true, "slack-token": true}

// newFlagSet returns a flag set for a sub-command that writes usage to w.
func newFlagSet(name string, w io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "Usage: mm2-watchdog %s\n\nFlags (each also read from %s<FLAG>):\n", usage, envPrefix)
		printDefaults(fs, w)
	}
	return fs
}

// printDefaults lists the flags with their environment variables, hiding
// secret defaults.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		def := f.DefValue
		if secretFlags[f.Name] && def != "" {
			def = "<redacted>"
		}
		line := fmt.Sprintf("  --%s", f.Name)
		if def != "" && def != "false" && def != "[]" {
			line += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "%s\n      %s [$%s]\n", line, f.Usage, envName(f.Name))
	})
}

// parseFlags parses args, then fills every flag not given on the command line
// from its environment variable (getenv is injected for tests). Flags win over
// the environment. Errors name the flag or variable but never a secret value.
//
// Flags may follow positional arguments (scan FILE --format json); "-"
// stays a positional argument (stdin). Numbers are checked: no flag takes a
// negative duration or count, and the flags of mustBePositive not zero either.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) (string, bool)) error {
	var positional []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		// fs.Parse stopped at a positional argument, or after "--".
		if len(rest)-fs.NArg() > 0 && rest[len(rest)-fs.NArg()-1] == "--" {
			positional = append(positional, fs.Args()...)
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) > 0 {
		if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
			return err
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	for _, name := range names {
		if set[name] {
			continue
		}
		v, ok := getenv(envName(name))
		if !ok || v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			shown := fmt.Sprintf("%q", v)
			if secretFlags[name] {
				shown = "<redacted>"
			}
			errs = append(errs, fmt.Errorf("environment variable %s=%s: %v", envName(name), shown, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return checkNumbers(fs)
}

// mustBePositive names the flags whose zero value makes no sense (a ticker
// of 0, a queue of 0). Every other number may be 0, which means "default" or
// "off" as its usage says.
func mustBePositive(name string) bool {
	switch name {
	case "check-interval", "flush-after", "max-line-bytes", "quiet-period", "repeat-interval",
		"notification-queue-size", "stall-window", "cluster-timeout", "rebalance-window",
		"rebalance-threshold", "probe-timeout":
		return true
	}
	return false
}

// checkNumbers rejects negative durations and counts, and zero for the flags
// of mustBePositive, naming the flag.
func checkNumbers(fs *flag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		var neg, zero bool
		switch v := g.Get().(type) {
		case time.Duration:
			neg, zero = v < 0, v == 0
		case int:
			neg, zero = v < 0, v == 0
		case int64:
			neg, zero = v < 0, v == 0
		case float64:
			neg, zero = v < 0, v == 0
		default:
			return
		}
		switch {
		case neg:
			errs = append(errs, fmt.Errorf("--%s %s: must not be negative", f.Name, f.Value))
		case zero && mustBePositive(f.Name):
			errs = append(errs, fmt.Errorf("--%s %s: must be greater than 0", f.Name, f.Value))
		}
	})
	return errors.Join(errs...)
}

// osGetenv is the real environment lookup.
func osGetenv(k string) (string, bool) { return os.LookupEnv(k) }
