#!/usr/bin/env bash
# One round of the cluster checks (`mm2-watchdog check`) against two kfake
# clusters with 1,000 and 10,000 topics of 10 partitions each: wall time and
# peak RSS of the watchdog process alone (the clusters run in another
# process). Prints one line per run and a median per size.
#
# Usage: scripts/bench-check.sh [SIZES...]   (default: 1000 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-$(mktemp -d)}
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
runs=${RUNS:-3}

go build -o "$dir/mm2-watchdog" ./cmd/mm2-watchdog
go build -o "$dir/kfakeserve" ./bench/kfakeserve
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

for n in "${sizes[@]}"; do
  props="$dir/mm2-$n.properties"
  rm -f "$props"
  "$dir/kfakeserve" -topics "$n" -props "$props" > "$dir/serve-$n.out" 2>&1 &
  serve=$!
  trap 'kill $serve 2>/dev/null || true' EXIT
  for _ in $(seq 1 600); do grep -q ready "$dir/serve-$n.out" 2>/dev/null && break; sleep 0.2; done
  grep -q ready "$dir/serve-$n.out" || { echo "kfakeserve did not start"; cat "$dir/serve-$n.out"; exit 1; }
  walls=()
  for r in $(seq 1 "$runs"); do
    /usr/bin/time -f '%e %M %U %S' -o "$dir/time.out" \
      "$dir/mm2-watchdog" check --mm2-config "$props" --format json --fail-on none > "$dir/check.out" 2>/dev/null
    read -r wall rss user sys < "$dir/time.out"
    findings=$(wc -l < "$dir/check.out")
    printf 'topics=%-6s run=%d wall=%ss user=%ss sys=%ss maxrss=%sMiB findings=%s\n' "$n" "$r" "$wall" "$user" "$sys" "$((rss / 1024))" "$findings"
    walls+=("$wall")
  done
  median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  echo "topics=$n median wall=${median}s"
  kill "$serve"; wait "$serve" 2>/dev/null || true
  trap - EXIT
done
