#!/usr/bin/env python3
# scripts/perturbed-copies.py SRC OUT COPIES (BENCHMARKS.md, "The pass split by bucket range").
# Perturbed copies of a collection: copy c of every file under SRC, one word
# in 30 replaced by a seeded random word, in folders OUT/cNN/ keeping each
# file's path under SRC (path order = order). A second SRC into another OUT
# makes a mixed tree (BENCHMARKS.md, "mix140").
import os, random, sys
src, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sorted(
    os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs
)
texts = [open(os.path.join(src, n), encoding="utf-8", errors="replace").read() for n in names]
rng = random.Random(7)
vocab = [w for t in texts[:50] for w in t.split()][:20000]
for c in range(copies):
    for n, t in zip(names, texts):
        ws = t.split(" ")
        for i in range(0, len(ws), 30):
            j = i + rng.randrange(30)
            if j < len(ws):
                ws[j] = rng.choice(vocab)
        path = os.path.join(out, f"c{c:02d}", n)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w", encoding="utf-8").write(" ".join(ws))
