#!/usr/bin/env bash
# `lineage check` against `lineage scan` and jscpd over one folder, medians
# of RUNS alternated runs, with each command's peak memory (BENCHMARKS.md,
# "The gate"): scan; check from a fresh index; check of an index that is
# current; check of one page (--changed-from); and jscpd where JSCPD names
# its binary (`npm install jscpd@5.3.3` in a folder of your own).
# Usage: scripts/bench-check.sh ROOT PAGE [RUNS] [FLAGS...]; FLAGS go to
# scan and check alike (--order version, --history folder); needs a
# release build.
set -euo pipefail
root=$1; page=$2; runs=${3:-5}; shift $(( $# < 3 ? $# : 3 ))
flags=("$@")
bin=${LINEAGE_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/lineage}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Wall seconds and peak KiB of one run, stdin from $in.
run() { /usr/bin/time -f "%e %M" -o "$work/t" "$@" <"${in:-/dev/null}" >/dev/null 2>&1 || true; cat "$work/t" | tail -1; }
median() { sort -n | awk '{a[NR] = $1} END {printf "%s", a[int((NR + 1) / 2)]}'; }
declare -A secs mem
add() { secs[$1]+="$2"$'\n'; mem[$1]+="$3"$'\n'; }
echo "$page" >"$work/page"
for _ in $(seq "$runs"); do
    read -r t m < <(run "$bin" scan "$root" "${flags[@]}"); add scan "$t" "$m"
    rm -rf "$work/ix"
    read -r t m < <(run "$bin" check "$root" --index "$work/ix" "${flags[@]}"); add "check, fresh index" "$t" "$m"
    read -r t m < <(run "$bin" check "$root" --index "$work/ix" "${flags[@]}"); add "check, index current" "$t" "$m"
    read -r t m < <(in="$work/page" run "$bin" check "$root" --index "$work/ix" --changed-from - "${flags[@]}"); add "check, one page" "$t" "$m"
    if [ -n "${JSCPD:-}" ]; then
        read -r t m < <(run "$JSCPD" -f markdown --formats-exts markdown:md:txt:rst -r json -o "$work/jscpd" --silent "$root"); add jscpd "$t" "$m"
    fi
done
for k in scan "check, fresh index" "check, index current" "check, one page" jscpd; do
    [ -n "${secs[$k]:-}" ] || continue
    printf '%-22s %6s s  %7s MB\n' "$k" "$(printf '%s' "${secs[$k]}" | median)" \
        "$(( $(printf '%s' "${mem[$k]}" | median) / 1024 ))"
done
