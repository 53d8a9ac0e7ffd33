#!/usr/bin/env python3
"""Turn `lineage sweep --json` output into the paper-comparison tables of
BENCHMARKS.md: seed 003's Table 5/6 (DO/TF of the best selectors with Lucky
eviction and BE estimation) and Table 9 (NHs with CC and Lucky eviction under
NB, E, B and BE), ours beside the paper's at the same table fractions.

    lineage sweep "$LINEAGE_CORPORA"/rust-book-editions --order path --json \
        --selectors nhs,nwin-8,nmod-3,every-4,all --evictions lucky,cc \
        --estimations nb,e,b,be | python3 scripts/paper_tables.py
"""
import json
import sys

# The paper's rows (blogs data set): table fraction of all shingles -> figures.
# Only these rows of Tables 5, 6 and 9 survive in the seed text.
PAPER_FRACTION = {"5000MB": 34.2, "500MB": 3.3, "50MB": 0.3}
T5_DO = {  # Lucky + BE, DO
    "5000MB": {"all": 99.2, "nhs": 98.5, "every-4": 88.9, "nwin-8": 98.0, "nmod-3": 96.3},
    "500MB": {"all": 90.6, "nhs": 93.7, "every-4": 86.0, "nwin-8": 92.9, "nmod-3": 92.0},
    "50MB": {"all": 79.7, "nhs": 84.3, "every-4": 79.6, "nwin-8": 83.5, "nmod-3": 83.1},
    "avg": {"all": 88.0, "nhs": 91.0, "every-4": 84.0, "nwin-8": 90.2, "nmod-3": 89.3},
}
T6_TF = {  # Lucky + BE, TF
    "5000MB": {"all": 98.4, "nhs": 93.6, "every-4": 89.7, "nwin-8": 93.5, "nmod-3": 91.7},
    "500MB": {"all": 90.5, "nhs": 89.6, "every-4": 85.1, "nwin-8": 89.4, "nmod-3": 88.1},
    "50MB": {"all": 81.4, "nhs": 81.6, "every-4": 77.9, "nwin-8": 81.4, "nmod-3": 80.5},
    "avg": {"all": 87.9, "nhs": 87.2, "every-4": 83.2, "nwin-8": 87.0, "nmod-3": 85.8},
}
T3_SSR = {"all": 100, "nhs": 17, "every-4": 25, "nwin-8": 17, "nmod-3": 15}
T9 = {  # NHs; (eviction, estimation) -> DO rows, TF rows
    ("cc", "nb"): ([98.8, 93.1, 78.5, 88.3], [93.5, 88.8, 75.1, 84.2]),
    ("cc", "e"): ([98.8, 93.1, 78.8, 88.7], [93.5, 88.6, 75.5, 84.2]),
    ("cc", "b"): ([97.4, 92.1, 77.9, 87.6], [93.6, 89.3, 76.4, 85.0]),
    ("cc", "be"): ([98.5, 92.7, 79.2, 88.4], [93.6, 88.6, 75.8, 84.5]),
    ("lucky", "nb"): ([98.8, 87.5, 77.8, 86.7], [93.5, 86.0, 77.1, 84.4]),
    ("lucky", "e"): ([98.8, 92.3, 82.4, 89.7], [93.5, 88.4, 80.0, 86.2]),
    ("lucky", "b"): ([97.4, 92.6, 83.0, 89.7], [93.6, 89.5, 81.5, 87.1]),
    ("lucky", "be"): ([98.5, 93.7, 84.3, 91.0], [93.6, 89.6, 81.6, 87.2]),
}
SELECTORS = ["nhs", "nwin-8", "nmod-3", "every-4", "all"]
NAMES = {"nhs": "NHs", "nwin-8": "NW8", "nmod-3": "NM3", "every-4": "4th", "all": "All"}


def runs_of(data, sel, ev, est):
    rs = [r for r in data["runs"] if (r["selector"], r["eviction"], r["estimation"]) == (sel, ev, est)]
    return sorted(rs, key=lambda r: -r["table_fraction"])


def nearest(rs, fraction):
    return min(rs, key=lambda r: abs(r["table_fraction"] - fraction))


def avg(rs, key):
    return sum(r[key] for r in rs) / len(rs)


def main():
    data = json.load(sys.stdin)
    ex = data["exact"]
    print(f"Exact result: {ex['documents']} documents, {ex['shingles']} shingles, "
          f"{ex['with_dominant_origin']} with a dominant origin, "
          f"{ex['fresh_token_percent']:.1f} % of tokens fresh.\n")

    for title, key, paper in (("DO", "do", T5_DO), ("TF", "tf", T6_TF)):
        print(f"#### {title}, Lucky eviction + BE estimation (paper: Table {'5' if key == 'do' else '6'})\n")
        print("| table fraction | " + " | ".join(NAMES[s] for s in SELECTORS) + " |")
        print("| --- |" + " --- |" * len(SELECTORS))
        rows = {s: runs_of(data, s, "lucky", "be") for s in SELECTORS}
        for i in range(len(rows["nhs"])):
            f = rows["nhs"][i]["table_fraction"]
            cells = []
            for s in SELECTORS:
                cells.append(f"{rows[s][i][key]:.1f}")
            print(f"| {f:.1f} % | " + " | ".join(cells) + " |")
        print("| **avg (ours)** | " + " | ".join(f"**{avg(rows[s], key):.1f}**" for s in SELECTORS) + " |")
        for m, frac in PAPER_FRACTION.items():
            print(f"| paper {m} ({frac} %) | " + " | ".join(f"{paper[m][s]}" for s in SELECTORS) + " |")
        print("| paper avg | " + " | ".join(f"{paper['avg'][s]}" for s in SELECTORS) + " |")
        print()
    print("#### ssr (paper: Table 3, blogs)\n")
    print("| | " + " | ".join(NAMES[s] for s in SELECTORS) + " |")
    print("| --- |" + " --- |" * len(SELECTORS))
    print("| ours | " + " | ".join(f"{runs_of(data, s, 'lucky', 'be')[0]['ssr']:.1f}" for s in SELECTORS) + " |")
    print("| paper | " + " | ".join(str(T3_SSR[s]) for s in SELECTORS) + " |\n")

    print("#### NHs with CC and Lucky eviction, four estimations (paper: Table 9)\n")
    combos = [(ev, est) for ev in ("cc", "lucky") for est in ("nb", "e", "b", "be")]
    head = " | ".join(f"{'CC' if ev == 'cc' else 'LS'} {est.upper()}" for ev, est in combos)
    for metric, idx, key in (("DO", 0, "do"), ("TF", 1, "tf")):
        print(f"{metric}:\n")
        print(f"| table fraction | {head} |")
        print("| --- |" + " --- |" * len(combos))
        rows = {c: runs_of(data, "nhs", *c) for c in combos}
        n = len(rows[combos[0]])
        for i in range(n):
            f = rows[("lucky", "be")][i]["table_fraction"]
            print(f"| {f:.1f} % | " + " | ".join(f"{rows[c][i][key]:.1f}" for c in combos) + " |")
        print("| **avg (ours)** | " + " | ".join(f"**{avg(rows[c], key):.1f}**" for c in combos) + " |")
        for j, (m, frac) in enumerate(PAPER_FRACTION.items()):
            print(f"| paper {m} ({frac} %) | " + " | ".join(f"{T9[c][idx][j]}" for c in combos) + " |")
        print("| paper avg | " + " | ".join(f"{T9[c][idx][3]}" for c in combos) + " |\n")
    print("Overall (mean of average DO and average TF):\n")
    print(f"| | {head} |")
    print("| --- |" + " --- |" * len(combos))
    rows = {c: runs_of(data, "nhs", *c) for c in combos}
    print("| ours | " + " | ".join(f"{(avg(rows[c], 'do') + avg(rows[c], 'tf')) / 2:.1f}" for c in combos) + " |")
    print("| paper | " + " | ".join(f"{(T9[c][0][3] + T9[c][1][3]) / 2:.1f}" for c in combos) + " |")


if __name__ == "__main__":
    main()
