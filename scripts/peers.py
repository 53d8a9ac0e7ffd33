#!/usr/bin/env python3
"""Peers of `lineage pairs`: datasketch's MinHashLSH and gaoya's MinHash index
on the same corpus and threshold, scored against `lineage pairs --method exact`.

Not run in CI. Needs `pip install datasketch gaoya regex` and a built binary:

    cargo build --release
    python3 scripts/peers.py "$LINEAGE_CORPORA"/rust-book-editions --threshold 0.8

`--race N` times only lineage's minhash and simhash (whole commands) and
gaoya (index + query), N rounds alternating lineage minhash, gaoya, lineage
simhash, and prints medians and F1 (issue 15's comparison); the truth is
still one run of `--method exact`.

Documents are read as lineage reads them (default include patterns, hidden
files left out, UTF-8 with replacement) and tokenized as CONTRACT §1 says; the
truth is lineage's exact Jaccard of 8-shingle sets. Times: wall time of each
lineage command (reading and tokenizing included), and for the peers the time
to sketch, index and query (the shared reading and tokenizing is timed apart).
"""

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
import unicodedata

import regex

INCLUDE = (".txt", ".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".org", ".tex")
TOKEN = regex.compile(r"[\p{Alphabetic}\p{N}][\p{Alphabetic}\p{N}\p{M}]*")


def documents(root):
    """(path, tokens) for every document, by path. HTML is not stripped here:
    the corpora measured have none."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.startswith(".") or not f.lower().endswith(INCLUDE):
                continue
            full = os.path.join(folder, f)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            text = open(full, "rb").read().decode("utf-8", errors="replace")
            toks = [unicodedata.normalize("NFC", t.lower()) for t in TOKEN.findall(text)]
            out.append((rel, toks))
    out.sort(key=lambda d: d[0].encode())
    return out


def shingles(tokens, k):
    return {"\x1f".join(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def lineage(binary, root, args):
    start = time.perf_counter()
    out = subprocess.run(
        [binary, "pairs", root, "--json", "--order", "path", *args],
        check=True,
        capture_output=True,
    )
    secs = time.perf_counter() - start
    report = json.loads(out.stdout)
    pairs = {(p["a"], p["b"]) for p in report["pairs"]}
    return pairs, secs, report.get("stats", {})


def ordered(a, b):
    return (a, b) if a.encode() < b.encode() else (b, a)


def score(found, truth):
    hits = len(found & truth)
    p = hits / len(found) if found else 1.0
    r = hits / len(truth) if truth else 1.0
    return p, r


def f1(p, r):
    return 2 * p * r / (p + r) if p + r else 0.0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def gaoya_run(texts, sets, paths, t, k, num_perm):
    import gaoya

    start = time.perf_counter()
    g = gaoya.minhash.MinHashStringIndex(
        hash_size=32,
        jaccard_threshold=t,
        num_bands=None,
        band_size=None,
        num_hashes=num_perm,
        analyzer="word",
        lowercase=False,
        ngram_range=(k, k),
    )
    for i, (text, shs) in enumerate(zip(texts, sets)):
        if shs:
            g.insert_document(i, text)
    found = set()
    for i, (text, shs) in enumerate(zip(texts, sets)):
        if shs:
            found |= {ordered(paths[i], paths[j]) for j in g.query(text) if j != i}
    secs = time.perf_counter() - start
    return found, secs, str(g).split("{")[1].split(", size")[0].strip()


def race(a, t, k, common, truth, exact_secs):
    """Medians of a.race rounds: lineage minhash, gaoya, lineage simhash."""
    docs = documents(a.root)
    sets = [shingles(toks, k) for _, toks in docs]
    paths = [p for p, _ in docs]
    texts = [" ".join(toks) for _, toks in docs]
    runs = {"minhash": [], "gaoya": [], "simhash": []}
    found = {}
    notes = {}
    for _ in range(a.race):
        f, secs, stats = lineage(a.lineage, a.root, ["--method", "minhash", *common])
        runs["minhash"].append(secs)
        found["minhash"] = f
        notes["minhash"] = (
            f"b, r = {stats.get('bands')}, {stats.get('rows')}; "
            f"{stats.get('candidates')} candidates; engine {stats.get('seconds', 0):.3f} s"
        )
        f, secs, note = gaoya_run(texts, sets, paths, t, k, a.num_perm)
        runs["gaoya"].append(secs)
        found["gaoya"] = f
        notes["gaoya"] = note
        f, secs, stats = lineage(a.lineage, a.root, ["--method", "simhash", *common])
        runs["simhash"].append(secs)
        found["simhash"] = f
        notes["simhash"] = f"h {stats.get('hamming_distance')}; {stats.get('candidates')} candidates"
    print(f"{a.root}: {len(docs)} documents, J >= {t}, k = {k}, {a.race} rounds; "
          f"{len(truth)} true pairs (exact {exact_secs:.3f} s)\n")
    print("| method | pairs | precision | recall | F1 | median seconds | runs | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    g = median(runs["gaoya"])
    for key, label in [
        ("minhash", "lineage minhash (whole command)"),
        ("simhash", "lineage simhash (whole command)"),
        ("gaoya", f"gaoya MinHashStringIndex, {a.num_perm} hashes (index + query)"),
    ]:
        p, r = score(found[key], truth)
        m = median(runs[key])
        vs = f"; {g / m:.1f}x gaoya's speed" if key != "gaoya" else ""
        runs_s = " ".join(f"{x:.3f}" for x in runs[key])
        print(f"| {label} | {len(found[key])} | {p:.3f} | {r:.3f} | {f1(p, r):.3f} | "
              f"{m:.3f} | {runs_s} | {notes[key]}{vs} |")


def jaccard(a, b):
    u = len(a | b)
    return len(a & b) / u if u else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("-k", type=int, default=8)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--lineage", default="target/release/lineage")
    ap.add_argument("--race", type=int, default=0, metavar="N",
                    help="only lineage minhash, simhash and gaoya, N alternating rounds, medians")
    a = ap.parse_args()
    t, k = a.threshold, a.k
    common = ["--min-similarity", str(t), "-k", str(k)]

    truth, exact_secs, _ = lineage(a.lineage, a.root, ["--method", "exact", *common])
    if a.race:
        return race(a, t, k, common, truth, exact_secs)
    rows = [("lineage exact (truth)", truth, exact_secs, "")]
    found, secs, stats = lineage(a.lineage, a.root, ["--method", "minhash", *common])
    rows.append(("lineage minhash", found, secs,
                 f"b, r = {stats.get('bands')}, {stats.get('rows')}, engine {stats.get('seconds', 0):.3f} s"))
    for label, extra in [
        ("lineage simhash, verified", []),
        ("lineage simhash, unverified", ["--no-verify"]),
        ("lineage simhash, verified, SQLite", ["--simhash-index", "sqlite"]),
    ]:
        found, secs, stats = lineage(a.lineage, a.root, ["--method", "simhash", *common, *extra])
        note = f"h {stats.get('hamming_distance')}, engine {stats.get('seconds', 0):.3f} s"
        rows.append((label, found, secs, note))

    start = time.perf_counter()
    docs = documents(a.root)
    sets = [shingles(toks, k) for _, toks in docs]
    read_secs = time.perf_counter() - start
    paths = [p for p, _ in docs]

    import datasketch

    start = time.perf_counter()
    lsh = datasketch.MinHashLSH(threshold=t, num_perm=a.num_perm)
    hashes = datasketch.MinHash.bulk(
        [[s.encode() for s in shs] for shs in sets], num_perm=a.num_perm
    )
    for i, (m, shs) in enumerate(zip(hashes, sets)):
        if shs:
            lsh.insert(i, m)
    cands = set()
    for i, (m, shs) in enumerate(zip(hashes, sets)):
        if shs:
            cands |= {ordered(paths[i], paths[j]) for j in lsh.query(m) if j != i}
    ds_secs = time.perf_counter() - start
    rows.append(
        (f"datasketch MinHashLSH, {a.num_perm} perm, candidates", cands, ds_secs, f"b, r = {lsh.b}, {lsh.r}")
    )
    start = time.perf_counter()
    index = {p: s for p, s in zip(paths, sets)}
    verified = {c for c in cands if jaccard(index[c[0]], index[c[1]]) >= t}
    rows.append(
        ("datasketch + exact verification", verified, ds_secs + time.perf_counter() - start, "")
    )

    texts = [" ".join(toks) for _, toks in docs]
    found, secs, note = gaoya_run(texts, sets, paths, t, k, a.num_perm)
    rows.append((f"gaoya MinHashStringIndex, {a.num_perm} hashes", found, secs, note))

    print(f"{a.root}: {len(docs)} documents, J >= {t}, k = {k}; "
          f"Python read + tokenize + shingle {read_secs:.2f} s\n")
    print("| method | pairs | precision | recall | F1 | seconds | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, found, secs, note in rows:
        p, r = score(found, truth)
        print(f"| {label} | {len(found)} | {p:.3f} | {r:.3f} | {f1(p, r):.3f} | {secs:.3f} | {note} |")


if __name__ == "__main__":
    sys.exit(main())
