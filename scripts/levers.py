#!/usr/bin/env python3
"""Score an eviction lever on every collection: `lineage sweep` per folder.

    scripts/levers.py [--corpora DIR | --only NAME ...] [--save OUT.json]
                      [--baseline BEFORE.json] [SWEEP OPTIONS ...]

Runs `lineage sweep FOLDER --order path --json SWEEP OPTIONS` on every folder
of --corpora (default $LINEAGE_CORPORA; a symbolic link to a folder counts, a
file does not), one after another (each sweep uses all cores itself), and
prints per collection and per combination of selector, eviction and
estimation (and alignment: `/aligned` runs with `--aligns on,off`):

  - every size's table size, its capacity as a percent of the collection's
    DISTINCT shingles, DO, TF and overall;
  - the mean overall over the sizes whose table holds at most --limit
    (default 2.5) percent of the distinct shingles: `mean@2.5%`. Against a
    --baseline, the sizes are the baseline's (the same bytes), so a lever
    that fits more entries in a size is scored at the sizes it is compared at.

Options this script does not know are passed to `lineage sweep` unchanged
(`--evictions cc`, `--sizes 64KiB,1MiB`, `--bucket-entries 16`, `-k 10` ...).
Without `--sizes`, sweep takes the paper's eight table fractions of all
shingles, which depend only on the collection and k, so runs with other
eviction options line up size by size.

Distinct shingles: the number of different shingle keys of the whole
collection, which sweep's JSON does not report (its `exact.shingles` counts
every position, and `selected_fraction` is relative to the distinct keys
the selector chose). It is taken from
`lineage scan FOLDER --order path --json --selector all --table-size unbounded`
as `table.occupied` (an unbounded table never evicts, so it holds each
distinct key once; `table.inserts` is the same number), along with the
documents, tokens and shingles of that scan. The count is cached in
--cache (default CORPORA/.levers-cache.json), keyed by folder, k and the
folder's file names, sizes and mtimes.

--save FILE writes everything as JSON (`levers/1`). --baseline FILE compares
with such a file from an earlier run: per size the change in overall, DO and
TF, and the change in mean@limit, with a verdict per collection against the
bar "+5 points mean at <= 2.5 % of distinct shingles, never more than 1 point
worse at any size" (--bar-mean, --bar-worst).

Exit status 0, also when the bar is missed; 2 when a sweep fails.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

# The repository's release build.
DEFAULT_LINEAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "lineage")


def folders(args):
    root = args.corpora
    names = args.only or sorted(
        n
        for n in os.listdir(root)
        if not n.startswith(".") and os.path.isdir(os.path.join(root, n))
    )
    return [(n, os.path.realpath(os.path.join(root, n))) for n in names]


def k_of(passthrough):
    for i, a in enumerate(passthrough):
        if a in ("-k", "--k") and i + 1 < len(passthrough):
            return passthrough[i + 1]
        if a.startswith("-k") and len(a) > 2 and a[2:].isdigit():
            return a[2:]
        if a.startswith("--k="):
            return a[4:]
    return "8"


def fingerprint(path):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
        dirnames.sort()
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            st = os.stat(p)
            h.update(f"{os.path.relpath(p, path)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def run_json(cmd):
    t = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.stderr.write(f"levers: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr.decode()}")
        sys.exit(2)
    return json.loads(r.stdout), time.time() - t


def counts(args, name, path, k, cache):
    key = f"{name}|k={k}|{fingerprint(path)}"
    if key in cache:
        return cache[key]
    cmd = [args.lineage, "scan", path, "--order", "path", "--json", "--selector", "all",
           "--table-size", "unbounded", "-k", k]
    rep, secs = run_json(cmd)
    docs = rep["documents"]
    c = {
        "documents": len(docs),
        "tokens": sum(d["tokens"] for d in docs),
        "shingles": sum(d["shingles"] for d in docs),
        "distinct_shingles": rep["table"]["occupied"],
        "skipped": len(rep.get("skipped", [])),
        # Bytes of the files lineage reads (hidden files and manifests are not).
        "bytes": sum(os.path.getsize(os.path.join(dp, f))
                     for dp, _, fs in os.walk(path, followlinks=True) for f in fs
                     if not f.startswith(".") and not f.endswith(".tsv")),
    }
    print(f"  counted {name}: {c['documents']} documents, {c['distinct_shingles']} distinct "
          f"shingles ({secs:.1f} s)", file=sys.stderr)
    cache[key] = c
    return c


def combo(run):
    aligned = "/aligned" if run.get("align") else ""
    return f"{run['selector']}/{run['eviction']}/{run['estimation']}{aligned}"


def score(runs, distinct, limit):
    """Group runs by combination; per group the runs and mean@limit."""
    groups = {}
    for r in runs:
        cap = r.get("capacity_entries")
        r = dict(r)
        r["distinct_fraction"] = None if cap is None else 100.0 * cap / distinct
        groups.setdefault(combo(r), []).append(r)
    out = {}
    for g, rs in groups.items():
        small = [r for r in rs if r["distinct_fraction"] is not None and r["distinct_fraction"] <= limit]
        out[g] = {
            "runs": rs,
            "sizes_at_limit": [r["table_size"] for r in small],
            "mean_overall_at_limit": (sum(r["overall"] for r in small) / len(small)) if small else None,
        }
    return out


def fmt(x, w=6, signed=False):
    if x is None:
        return "-".rjust(w)
    return (f"{x:+.2f}" if signed else f"{x:.2f}").rjust(w)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Unknown options go to `lineage sweep`. See the module docstring for details.",
    )
    ap.add_argument("--corpora", default=os.environ.get("LINEAGE_CORPORA"), required="LINEAGE_CORPORA" not in os.environ,
                    help="folder of collections (default $LINEAGE_CORPORA)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these collections (folder names)")
    ap.add_argument("--lineage", default=os.environ.get("LINEAGE", DEFAULT_LINEAGE))
    ap.add_argument("--limit", type=float, default=2.5, help="percent of distinct shingles")
    ap.add_argument("--baseline", help="levers/1 JSON of an earlier run to compare with")
    ap.add_argument("--save", help="write this run as levers/1 JSON")
    ap.add_argument("--cache", help="distinct-shingle cache (default CORPORA/.levers-cache.json)")
    ap.add_argument("--bar-mean", type=float, default=5.0)
    ap.add_argument("--bar-worst", type=float, default=-1.0)
    args, passthrough = ap.parse_known_args()
    cache_path = args.cache or os.path.join(args.corpora, ".levers-cache.json")
    try:
        with open(cache_path) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    k = k_of(passthrough)
    base = None
    if args.baseline:
        with open(args.baseline) as f:
            base = json.load(f)

    result = {"format": "levers/1", "sweep_options": passthrough, "limit_percent": args.limit,
              "collections": {}}
    verdicts = []
    for name, path in folders(args):
        c = counts(args, name, path, k, cache)
        try:
            with open(cache_path, "w") as f:
                json.dump(cache, f, indent=1, sort_keys=True)
        except OSError:
            pass
        cmd = [args.lineage, "sweep", path, "--order", "path", "--json", *passthrough]
        sw, secs = run_json(cmd)
        groups = score(sw["runs"], c["distinct_shingles"], args.limit)
        result["collections"][name] = {**c, "exact": sw["exact"], "sweep_seconds": round(secs, 2),
                                       "groups": groups}
        print(f"\n{name}: {c['documents']} documents, {c['tokens']} tokens, "
              f"{c['distinct_shingles']} distinct shingles, sweep {secs:.1f} s")
        bgroups = (base or {}).get("collections", {}).get(name, {}).get("groups", {})
        for g, d in groups.items():
            bg = bgroups.get(g) or (next(iter(bgroups.values())) if len(bgroups) == 1 else None)
            bruns = {r["table_size"]: r for r in (bg or {}).get("runs", [])}
            head = f"  {g:18} {'size':>9} {'%dist':>7} {'DO':>6} {'TF':>6} {'overall':>7}"
            if bg:
                head += f" {'dDO':>6} {'dTF':>6} {'doverall':>8}"
            print(head)
            worst = None
            if bg:
                # The same bytes as the baseline's small sizes: a lever that
                # fits more entries in a size must not drop it from the mean.
                at = [r for r in d["runs"] if r["table_size"] in bg["sizes_at_limit"]]
                d["sizes_at_limit"] = [r["table_size"] for r in at]
                d["mean_overall_at_limit"] = sum(r["overall"] for r in at) / len(at) if at else None
            for r in d["runs"]:
                mark = "*" if r["table_size"] in d["sizes_at_limit"] else " "
                line = (f"  {'':18} {r['table_size']:>9} {fmt(r['distinct_fraction'], 7)}"
                        f" {fmt(r['do'])} {fmt(r['tf'])} {fmt(r['overall'], 7)}{mark}")
                b = bruns.get(r["table_size"])
                if bg and b:
                    dd = r["overall"] - b["overall"]
                    worst = dd if worst is None else min(worst, dd)
                    line += (f" {fmt(r['do'] - b['do'], signed=True)} {fmt(r['tf'] - b['tf'], signed=True)}"
                             f" {fmt(dd, 8, signed=True)}")
                print(line)
            m = d["mean_overall_at_limit"]
            line = f"  {'':18} mean@{args.limit:g}% over {len(d['sizes_at_limit'])} sizes (*): {fmt(m, 0)}"
            if bg:
                bm = bg.get("mean_overall_at_limit")
                dm = None if m is None or bm is None else m - bm
                ok = dm is not None and dm >= args.bar_mean and (worst is None or worst >= args.bar_worst)
                line += (f"  (baseline {fmt(bm, 0)}, change {fmt(dm, 0, signed=True)}, "
                         f"worst size {fmt(worst, 0, signed=True)}: {'MEETS' if ok else 'misses'} the bar)")
                verdicts.append((name, g, dm, worst, ok))
            print(line)

    if base:
        print(f"\nbar: mean@{args.limit:g}% >= {args.bar_mean:+g} points, every size >= {args.bar_worst:+g}")
        for name, g, dm, worst, ok in verdicts:
            print(f"  {name:22} {g:18} mean {fmt(dm, 7, signed=True)}  worst {fmt(worst, 7, signed=True)}"
                  f"  {'MEETS' if ok else 'misses'}")
    if args.save:
        with open(args.save, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
