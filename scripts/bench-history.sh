#!/usr/bin/env bash
# The git history import against `index` over the same versions written out
# as files in commit order (issue 51's target: within 1.5x), alternated, and
# the git reading alone (`git cat-file` of every blob the import reads, its
# floor). Usage: scripts/bench-history.sh REPO [SUBDIR] [RUNS]
#   REPO: a clone (e.g. of rust-lang/book), SUBDIR its folder of pages (src).
# Prints each run's seconds and the medians; needs python3 and a release build.
set -euo pipefail
repo=$(cd "$1" && pwd); sub=${2:-src}; runs=${3:-5}
bin=${LINEAGE_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/lineage}
work=$(mktemp -d "${TMPDIR:-/tmp}/lineage-bench-history.XXXXXX")
trap 'rm -rf "$work"' EXIT
flat="$work/flat"; mkdir "$flat"
# Every version a first-parent commit wrote under SUBDIR, as its own file,
# named and timed in commit order (renames as git takes them: -M).
python3 - "$repo" "$sub" "$flat" <<'PY'
import os, subprocess, sys
repo, sub, flat = sys.argv[1:]
git = lambda *a: subprocess.run(['git', '-C', repo, *a], capture_output=True, text=True, check=True).stdout
commits = git('rev-list', '--first-parent', '--reverse', 'HEAD').split()
cat = subprocess.Popen(['git', '-C', repo, 'cat-file', '--batch'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
prev, n = '4b825dc642cb6eb9a060e54bf8d69288fbee4904', 0
for c in commits:
    for line in git('diff-tree', '-r', '-M', '--no-commit-id', '--raw', prev, c, '--', sub).splitlines():
        meta, paths = line.split('\t', 1)
        f = meta.split()
        if f[4].startswith('D') or not paths.endswith('.md'):
            continue
        cat.stdin.write((f[3] + '\n').encode()); cat.stdin.flush()
        size = int(cat.stdout.readline().split()[2]); data = cat.stdout.read(size); cat.stdout.read(1)
        n += 1
        name = os.path.join(flat, '%05d-%s' % (n, paths.split('\t')[-1].replace('/', '_')))
        open(name, 'wb').write(data)
        os.utime(name, (1_000_000 + n, 1_000_000 + n))
    prev = c
print(f'{len(commits)} commits, {n} versions written out', file=sys.stderr)
PY
secs() { /usr/bin/time -f %e "$@" >/dev/null 2>"$work/t" || { cat "$work/t"; exit 1; }; tail -1 "$work/t"; }
imports=(); flats=()
for i in $(seq "$runs"); do
  rm -rf "$work/ix-git" "$work/ix-flat"
  imports+=("$(secs "$bin" index "$repo/$sub" --index "$work/ix-git" --history git)")
  flats+=("$(secs "$bin" index "$flat" --index "$work/ix-flat" --history folder --order mtime)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "import: ${imports[*]} s; median $(median "${imports[@]}") s"
echo "files:  ${flats[*]} s; median $(median "${flats[@]}") s"
awk -v a="$(median "${imports[@]}")" -v b="$(median "${flats[@]}")" 'BEGIN {printf "ratio: %.2fx\n", a / b}'
"$bin" index "$repo/$sub" --index "$work/ix-git" --documents --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["history"]), "versions imported")'
