#!/usr/bin/env bash
# `scan` over P processes on localhost against one process, alternating so
# both see the same drift of the machine (BENCHMARKS.md, "Over many
# processes"); checks that process 0's report is the one process's.
#
#   scripts/scan-processes.sh BIN DIR RUNS P [scan options...]
#
# BIN is a lineage binary (target/release/lineage), DIR the tree, RUNS how
# many of each, P the processes (ports 7400 on); prints the medians and
# their ratio, then every run.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BIN DIR RUNS P [scan options...]" >&2; exit 2; }
bin=$1 dir=$2 runs=$3 procs=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 0 $((procs - 1))); do echo "127.0.0.1:$((7400 + i))"; done >"$tmp/hosts"
one=() many=()
for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$bin" scan "$dir" --json --order path "$@" >"$tmp/one.json"
    t1=$(date +%s%N)
    for i in $(seq 1 $((procs - 1))); do
        "$bin" scan "$dir" --json --order path --hosts "$tmp/hosts" --process "$i" "$@" >/dev/null 2>&1 &
    done
    "$bin" scan "$dir" --json --order path --hosts "$tmp/hosts" --process 0 "$@" >"$tmp/many.json"
    wait
    t2=$(date +%s%N)
    cmp -s "$tmp/one.json" "$tmp/many.json" || { echo "process 0's report differs" >&2; exit 1; }
    one+=($(((t1 - t0) / 1000000)))
    many+=($(((t2 - t1) / 1000000)))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
o=$(median "${one[@]}") m=$(median "${many[@]}")
echo "one process median $o ms, $procs processes median $m ms, ratio $(awk "BEGIN {printf \"%.2f\", $m / $o}")"
echo "one: ${one[*]}; $procs processes: ${many[*]}"
