// Command prefilters prints the distinct literal prefilters of the log rule
// table, one per line, in table order. The list is what "grep -F -f" needs to
// find every line the rules could match, the baseline that
// scripts/bench-scan.sh compares "mm2-watchdog scan" with.
//
// Usage: go run ./bench/prefilters > prefilters.txt
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/mm2-watchdog/mm2-watchdog/detectors/logrules"
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	for _, p := range logrules.Prefilters() {
		fmt.Fprintln(w, p)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "prefilters:", err)
		os.Exit(1)
	}
}
