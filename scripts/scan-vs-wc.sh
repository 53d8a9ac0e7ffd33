#!/usr/bin/env bash
# scan against `wc -w` over the same files, in alternation so both see the
# same drift of the machine (BENCHMARKS.md, "Memory: `scan` streams").
#
#   scripts/scan-vs-wc.sh BIN DIR RUNS [scan options...]
#
# BIN is a lineage binary (target/release/lineage), DIR the tree, RUNS how
# many of each; prints the medians and their ratio, then every run.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BIN DIR RUNS [scan options...]" >&2; exit 2; }
bin=$1 dir=$2 runs=$3
shift 3
mapfile -t files < <(find "$dir" -type f | sort)
scan=() wc=()
for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$bin" scan "$dir" --json --order path "$@" >/dev/null
    t1=$(date +%s%N)
    wc -w "${files[@]}" >/dev/null
    t2=$(date +%s%N)
    scan+=($(((t1 - t0) / 1000000)))
    wc+=($(((t2 - t1) / 1000000)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
s=$(median "${scan[@]}") w=$(median "${wc[@]}")
echo "scan median $s ms, wc -w median $w ms, ratio $(awk "BEGIN {printf \"%.3f\", $s / $w}")"
echo "scan: ${scan[*]}; wc -w: ${wc[*]}"
