package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with
// -ldflags "-X main.version=v1.2.3 -X main.commit=abc123"; when they are not,
// the module and VCS information embedded by the Go toolchain is used.
var (
	version = ""
	commit  = ""
)

// buildVersion returns the version, commit and Go version of this binary.
func buildVersion() (ver, rev, goVersion string) {
	ver, rev = version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if ver == "" {
		ver = "dev"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev, runtime.Version()
}

func printVersion(w io.Writer) {
	ver, rev, gov := buildVersion()
	fmt.Fprintf(w, "mm2-watchdog %s (commit %s, %s, %s/%s)\n", ver, rev, gov, runtime.GOOS, runtime.GOARCH)
}
