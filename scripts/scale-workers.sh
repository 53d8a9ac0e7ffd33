#!/usr/bin/env bash
# The split pass's scaling on a many-core machine (BENCHMARKS.md, "The pass
# split by bucket range"): the pass alone (the split bench), then scan
# --workers N against wc -w on two trees of perturbed copies of EDITIONS,
# each tree's report at 16 workers checked against 1 worker's, the threads'
# CPU at 1 and 16 workers (the thread that runs alone), and processes on
# the one machine (2 x 8, 4 x 4).
#
#   scripts/scale-workers.sh BIN BENCH EDITIONS [OTHER]
#
# BIN: target/release/lineage; BENCH: the split bench's binary
# (`cargo bench --bench split --no-run` names it); EDITIONS: a copy of
# rust-book-editions (CONTRIBUTING.md, "Benchmarks"); OTHER: another docs
# tree, mixed into mix140 (12 copies of EDITIONS, 9 of OTHER; without it,
# 24 of EDITIONS).
set -u
[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: $0 BIN BENCH EDITIONS [OTHER]" >&2; exit 2; }
bin=$1 bench=$2 editions=$3 other=${4:-}
here=$(dirname "$0")
nproc
python3 "$here/perturbed-copies.py" "$editions" /tmp/docs43 7
if [ -n "$other" ]; then
    python3 "$here/perturbed-copies.py" "$editions" /tmp/mix140/book 12
    python3 "$here/perturbed-copies.py" "$other" /tmp/mix140/docs 9
else
    python3 "$here/perturbed-copies.py" "$editions" /tmp/mix140 24
fi
du -sh /tmp/docs43 /tmp/mix140
DOCS=20000 TABLE=64MiB REPS=3 timeout 150 "$bench" 2>&1 | tail -12
for tree in /tmp/docs43 /tmp/mix140; do
    echo "## scan vs wc -w on $tree"
    for w in 1 2 4 8 16; do
        echo -n "workers $w: "
        timeout 120 "$here/scan-vs-wc.sh" "$bin" "$tree" 3 --workers "$w" | head -1
    done
    cmp -s <("$bin" scan "$tree" --json --order path --workers 16) \
        <("$bin" scan "$tree" --json --order path --workers 1) &&
        echo "16 workers' report = 1 worker's" || echo "16 workers' report DIFFERS"
    for w in 1 16; do
        echo -n "threads, $w workers: "
        timeout 60 python3 "$here/threads.py" "$bin" scan "$tree" --json --order path --workers "$w"
    done
done
echo "## processes on /tmp/mix140"
timeout 120 "$here/scan-processes.sh" "$bin" /tmp/mix140 3 2 --workers 8 | head -1
timeout 120 "$here/scan-processes.sh" "$bin" /tmp/mix140 3 4 --workers 4 | head -1
