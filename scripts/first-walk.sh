#!/usr/bin/env bash
# Seconds from starting `watch --json` on a fresh index of ROOT to its first
# output line and to its N-th (one line per page: N = the pages of ROOT).
# Polls the output every 20 ms; gives up after 10 minutes.
#
#   cargo build --release && scripts/first-walk.sh target/release/lineage ROOT N
set -euo pipefail
bin=${1:?usage: scripts/first-walk.sh BIN ROOT N}
root=${2:?usage: scripts/first-walk.sh BIN ROOT N}
n=${3:?usage: scripts/first-walk.sh BIN ROOT N}
tmp=$(mktemp -d)
trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
ms() { echo $(( $(date +%s%N) / 1000000 )); }
start=$(ms)
"$bin" watch --json --index "$tmp/index" "$root" > "$tmp/out" 2>/dev/null &
pid=$!
first=
while :; do
    lines=$(wc -l < "$tmp/out")
    now=$(ms)
    [ -z "$first" ] && [ "$lines" -gt 0 ] && first=$((now - start))
    [ "$lines" -ge "$n" ] && break
    [ $((now - start)) -gt 600000 ] && { echo "only $lines of $n lines in 10 minutes" >&2; exit 1; }
    sleep 0.02
done
printf 'first %d.%03d s, last %d.%03d s\n' $((first / 1000)) $((first % 1000)) $(((now - start) / 1000)) $(((now - start) % 1000))
