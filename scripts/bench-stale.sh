#!/usr/bin/env bash
# `lineage stale` over a folder and `lineage diff` of one page against the
# catch-up they both start with (`lineage index` with no change), medians of
# RUNS alternated runs (BENCHMARKS.md, "Stale copies and diffs").
# Usage: scripts/bench-stale.sh ROOT INDEX PAGE [RUNS]; INDEX made already
# (`lineage index ROOT --index INDEX ...`); needs a release build.
set -euo pipefail
root=$1; ix=$2; page=$3; runs=${4:-7}
bin=${LINEAGE_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/lineage}
secs() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)] / 1e6}'; }
c=(); s=(); d=()
for _ in $(seq "$runs"); do
    c+=("$(secs "$bin" index "$root" --index "$ix")")
    s+=("$(secs "$bin" stale "$root" --index "$ix")")
    d+=("$(secs "$bin" diff "$root" "$page" --index "$ix")")
done
cm=$(printf '%s\n' "${c[@]}" | median); sm=$(printf '%s\n' "${s[@]}" | median)
dm=$(printf '%s\n' "${d[@]}" | median)
echo "catch-up $cm s, stale $sm s ($(echo "scale=2; $sm / $cm" | bc)x), diff $dm s"
