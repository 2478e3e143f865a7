package tailer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// isPattern reports whether p has glob metacharacters (filepath.Match syntax).
func isPattern(p string) bool {
	return strings.ContainsAny(p, `*?[\`)
}

// validateGlobs checks every glob's syntax.
func validateGlobs(globs []string) error {
	if len(globs) == 0 {
		return fmt.Errorf("no log path given")
	}
	for _, g := range globs {
		if g == "" {
			return fmt.Errorf("empty log path")
		}
		if _, err := filepath.Match(g, ""); err != nil {
			return fmt.Errorf("log path %q: %w", g, err)
		}
	}
	return nil
}

// expansion is the set of paths to follow at one moment.
type expansion struct {
	paths   []string        // sorted, cleaned
	literal map[string]bool // paths given literally: followed even when missing, never retired
}

// expand resolves the globs. A literal path is always in the result, whether
// it exists or not. A pattern contributes the regular files it matches, except
// compressed files and rotated siblings of another path in the result or in
// following (the paths already followed): when a glob such as connect.log*
// matches both connect.log and connect.log.2024-01-01-10, only connect.log is
// followed, because the rotated file's lines were read from connect.log before
// the rename and reading it too would deliver them twice.
func expand(globs []string, following map[string]bool) expansion {
	e := expansion{literal: map[string]bool{}}
	cand := map[string]bool{}
	for _, g := range globs {
		if !isPattern(g) {
			p := filepath.Clean(g)
			e.literal[p] = true
			cand[p] = true
			continue
		}
		matches, _ := filepath.Glob(g) // syntax checked by validateGlobs
		for _, m := range matches {
			m = filepath.Clean(m)
			if hasCompressedExt(m) {
				continue
			}
			if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			cand[m] = true
		}
	}
	live := make([]string, 0, len(cand)+len(following))
	for p := range cand {
		live = append(live, p)
	}
	for p := range following {
		if !cand[p] {
			live = append(live, p)
		}
	}
	for p := range cand {
		if e.literal[p] || following[p] || !rotatedSiblingOfAny(p, live) {
			e.paths = append(e.paths, p)
		}
	}
	sort.Strings(e.paths)
	return e
}

// hasCompressedExt reports a file that is never followed: a rotated file
// compressed by log4j2 or logrotate does not grow.
func hasCompressedExt(p string) bool {
	switch filepath.Ext(p) {
	case ".gz", ".zip", ".bz2", ".xz", ".zst", ".lz4":
		return true
	}
	return false
}

func rotatedSiblingOfAny(p string, live []string) bool {
	for _, l := range live {
		if l != p && isRotatedSibling(p, l) {
			return true
		}
	}
	return false
}

// isRotatedSibling reports whether name looks like a file that log4j or
// logrotate made by rotating live, in the same directory:
//
//	connect.log.2024-01-01-10  connect.log.1     (log4j 1 DailyRolling / RollingFile, logrotate, kubelet's 0.log.20240101-101010)
//	connect-2024-01-01-10.log  connect-1.log     (log4j2 RollingFile with a %d or %i pattern)
//
// The rotation suffix must start with a digit, so connect.log.old or
// mm2-connect.log are not siblings of connect.log or mm2.log.
func isRotatedSibling(name, live string) bool {
	if filepath.Dir(name) != filepath.Dir(live) {
		return false
	}
	bn, bl := filepath.Base(name), filepath.Base(live)
	if rest, ok := strings.CutPrefix(bn, bl+"."); ok && startsWithDigit(rest) {
		return true
	}
	ext := filepath.Ext(bl)
	if ext == "" {
		return false
	}
	stem := strings.TrimSuffix(bl, ext)
	rest, ok := strings.CutPrefix(bn, stem+"-")
	return ok && startsWithDigit(rest) && (strings.HasSuffix(rest, ext) || strings.Contains(rest, ext+"."))
}

func startsWithDigit(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9'
}
