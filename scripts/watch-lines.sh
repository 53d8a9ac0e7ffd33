#!/usr/bin/env bash
# What `watch --json` says of a copy of ROOT through its first walk and six
# edits made a second apart (appends to five pages, two deletions, a rename,
# two copies), written to OUT, and the near-duplicate pairs and sketches the
# watcher stored, to OUT.near: run it before and after a change to the
# engine that must not change behaviour, then `cmp` both files.
#
#   cargo build --release && scripts/watch-lines.sh target/release/lineage ROOT /tmp/before.jsonl
#
# LINEAGE_WATCH_ARGS adds options. Timing matters (the debounce is 200 ms):
# run it on a machine that is not busy.
set -euo pipefail
bin=${1:?usage: scripts/watch-lines.sh BIN ROOT OUT}
src=${2:?usage: scripts/watch-lines.sh BIN ROOT OUT}
out=${3:?usage: scripts/watch-lines.sh BIN ROOT OUT}
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -INT $pid 2>/dev/null; rm -rf "$tmp"' EXIT
root=$tmp/root
cp -a "$src" "$root"
# Wait until the output has not grown for $1 seconds.
quiet() {
    local last=-1 n
    while :; do
        n=$(stat -c %s "$out")
        [ "$n" = "$last" ] && return
        last=$n
        sleep "$1"
    done
}
# shellcheck disable=SC2086
"$bin" watch --json --index "$tmp/index" ${LINEAGE_WATCH_ARGS:-} "$root" > "$out" 2> "$out.err" &
pid=$!
sleep 2
quiet 3
mapfile -t files < <(cd "$root" && find . -type f -name '*.*' | sort | head -11)
[ "${#files[@]}" -eq 11 ] || { echo "ROOT needs 11 files at least" >&2; exit 1; }
for i in 0 1 2 3 4; do
    echo " appended line $i with some words" >> "$root/${files[$i]}"
    sleep 1
done
rm "$root/${files[5]}"; sleep 1
rm "$root/${files[6]}"; sleep 1
mv "$root/${files[7]}" "$root/renamed.txt"; sleep 1
cp "$root/${files[8]}" "$root/copy-a.txt"; sleep 1
cat "$root/${files[9]}" "$root/${files[10]}" > "$root/copy-b.txt"; sleep 1
quiet 3
kill -INT $pid
wait $pid || true
pid=
python3 - "$tmp/index/index.db" > "$out.near" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for row in c.execute("SELECT a, b, similarity FROM near ORDER BY a, b"):
    print("pair", *row)
for id_, sketch in c.execute("SELECT id, sketch FROM near_sketches ORDER BY id"):
    print("sketch", id_, bytes(sketch).hex())
PY
echo "$(wc -l < "$out") lines, $(grep -c '^pair' "$out.near") pairs, $(grep -c '^sketch' "$out.near") sketches"
