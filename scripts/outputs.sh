#!/usr/bin/env bash
# Every JSON output of lineage on one folder, written to OUT/, with the
# measured times and the moments versions were seen left out (any key ending
# in "seconds", and "seen_ms"): run it before and
# after a change that must not change behaviour (issue 26's move into
# crates), then `diff -r BEFORE AFTER`.
#
#   cargo build --release && scripts/outputs.sh assets/demo /tmp/before
#
# Run both on the same folder, untouched between (documents are processed in
# modification-time order). LINEAGE names another binary.
set -euo pipefail
root=${1:?usage: scripts/outputs.sh ROOT OUT}
out=${2:?usage: scripts/outputs.sh ROOT OUT}
bin=${LINEAGE:-target/release/lineage}
mkdir -p "$out"
# One fixed place for the index (its path is in the pocket's output).
index=${TMPDIR:-/tmp}/lineage-outputs-index
rm -rf "$index"
mkdir -p "$index"
trap 'rm -rf "$index"' EXIT

untimed() {
    python3 -c '
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not k.endswith("seconds") and k != "seen_ms"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
json.dump(strip(json.load(sys.stdin)), sys.stdout, indent=1, ensure_ascii=False)
print()'
}

run() {
    local name=$1
    shift
    "$bin" "$@" --json | untimed >"$out/$name.json"
}

run scan "scan" "$root"
run scan-sampled "scan" "$root" --table-size 64KiB --selector nhs --eviction lucky --estimation be
run pairs "pairs" "$root"
run sweep "sweep" "$root" --sizes 16KiB,256KiB
run index "index" "$root" --index "$index" --documents
# A page that copies (the first with an origin), and who copies the first page.
page=$(python3 -c '
import json, sys
docs = json.load(open(sys.argv[1]))["documents"]
print(next((d["path"] for d in docs if d["dominant_origin"] not in (None, d["id"])), docs[0]["path"]))' \
    "$out/scan.json")
first=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["documents"][0]["path"])' \
    "$out/scan.json")
run explain "explain" "$root" "$root/$page" --index "$index"
run explain-exact "explain" "$root" "$root/$page" --index "$index" --exact
run copies "copies" "$root" "$root/$first" --index "$index"
run shared "shared" "$root" "$root/$page" --index "$index"
"$bin" pocket build "$root" -o "$index/pocket" --json | untimed >"$out/pocket-build.json"
"$bin" pocket query "$index/pocket" "$root/$page" --json | untimed >"$out/pocket-query.json"
ls "$out"
