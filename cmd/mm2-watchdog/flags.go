package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
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
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) (string, bool)) error {
	if err := fs.Parse(args); err != nil {
		return err
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
	return errors.Join(errs...)
}

// osGetenv is the real environment lookup.
func osGetenv(k string) (string, bool) { return os.LookupEnv(k) }
