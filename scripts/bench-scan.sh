#!/usr/bin/env bash
# Measures the throughput of "mm2-watchdog scan" on a generated MM2-like log
# against "LC_ALL=C grep -F -f <the rules' literal prefilters>" on the same
# file: the cost of finding the lines a rule could match, with no parsing and
# no rule logic. Results and the method are recorded in BENCHMARKS.md.
#
# Usage: scripts/bench-scan.sh
#
# Environment:
#   BENCH_DIR  where the log, prefilters and binaries go (default /tmp/mm2-bench)
#   SIZE       size of the generated log (default 1GiB; the log is reused if present)
#   RUNS       runs per side, alternating (default 3); medians are reported
#
# Sides:
#   grep       LC_ALL=C grep -F -f prefilters.txt LOG | wc -l
#   scan       mm2-watchdog scan --format json --fail-on none LOG | wc -l
#              (bench/scanbench, which does the same parse-and-match work, when
#              the command does not build)
#   pipelined  bench/scanbench -pipeline LOG: parsing and matching on two
#              goroutines with records handed over in batches
#              (logparse.ScanFileBatched)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${BENCH_DIR:-/tmp/mm2-bench}
size=${SIZE:-1GiB}
runs=${RUNS:-3}
mkdir -p "$dir"
log="$dir/mm2-$size.log"

if [ ! -s "$log" ]; then
  echo "generating $log ($size)..." >&2
  go run ./bench/loggen -size "$size" -o "$log.tmp"
  mv "$log.tmp" "$log"
fi
go run ./bench/prefilters >"$dir/prefilters.txt"

go build -o "$dir/scanbench" ./bench/scanbench
if go build -o "$dir/mm2-watchdog" ./cmd/mm2-watchdog 2>"$dir/build.err"; then
  scan_cmd=("$dir/mm2-watchdog" scan --format json --fail-on none "$log")
  scan_name="mm2-watchdog scan"
else
  echo "cmd/mm2-watchdog does not build (see $dir/build.err); measuring bench/scanbench instead" >&2
  scan_cmd=("$dir/scanbench" "$log")
  scan_name="bench/scanbench (scan's work)"
fi

bytes=$(stat -c %s "$log")
# Warm the page cache (and count lines) so that every run reads from memory.
lines=$(wc -l <"$log")
cat "$log" >/dev/null

timer=/usr/bin/time
[ -x "$timer" ] || timer=""

# measure NAME CMD...: runs CMD with its standard output piped to wc -l (grep
# stops at the first match when its output is /dev/null) and prints
# "NAME wall user sys maxrss_kb".
measure() {
  local name=$1
  shift
  local out="$dir/time.out"
  if [ -n "$timer" ]; then
    "$timer" -f "%e %U %S %M" -o "$out" sh -c '"$@" | wc -l >/dev/null' sh "$@"
    echo "$name $(tail -n 1 "$out")"
  else
    local TIMEFORMAT="%R %U %S"
    { time sh -c '"$@" | wc -l >/dev/null' sh "$@" 2>/dev/null; } 2>"$out"
    echo "$name $(tail -n 1 "$out") -"
  fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "log: $log, $bytes bytes, $lines lines"
echo "scan side: ${scan_cmd[*]}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
results="$dir/results.txt"
: >"$results"
for i in $(seq 1 "$runs"); do
  measure grep env LC_ALL=C grep -F -f "$dir/prefilters.txt" "$log" | tee -a "$results"
  measure scan "${scan_cmd[@]}" | tee -a "$results"
  measure pipelined "$dir/scanbench" -pipeline "$log" | tee -a "$results"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
printf '%-10s %8s %8s %8s %10s %9s %12s\n' side wall_s user_s sys_s rss_MiB MB/s lines/s
for side in grep scan pipelined; do
  awk -v side="$side" -v bytes="$bytes" -v lines="$lines" '
    $1 == side { n++; w[n] = $2; u[n] = $3; s[n] = $4; m[n] = $5 }
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      mw = median(w, n); mu = median(u, n); ms = median(s, n)
      rss = (m[1] == "-") ? "-" : sprintf("%.1f", median(m, n) / 1024)
      printf "%-10s %8.2f %8.2f %8.2f %10s %9.0f %12.0f\n", side, mw, mu, ms, rss, bytes / mw / 1e6, lines / mw
    }' "$results"
done | tee "$dir/medians.txt"
awk '{ w[$1] = $2; c[$1] = $3 + $4 } END {
  printf "\nratio scan/grep:      %.2f wall, %.2f CPU (user+sys)\n", w["scan"] / w["grep"], c["scan"] / c["grep"]
  printf "ratio pipelined/grep: %.2f wall, %.2f CPU (user+sys)\n", w["pipelined"] / w["grep"], c["pipelined"] / c["grep"]
}' "$dir/medians.txt"
