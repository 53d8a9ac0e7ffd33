#!/usr/bin/env python3
"""Every relative link of the repository's Markdown files leads somewhere:
`[text](path)` names a file or folder that exists, and `[text](path#anchor)`
or `[text](#anchor)` a heading of that Markdown file (GitHub's anchors:
lower case, punctuation and backticks dropped, spaces as `-`, `-1`, `-2`
for repeats). Links inside code (fenced blocks, `spans`) and to other sites
are not checked, nor the corpora (`tests/fixtures/*/`, `assets/demo/`),
whose pages keep the links of the sites they came from. Run from anywhere; prints each broken link, exits 1 if any.

    scripts/check-links.py
"""
import os
import re
import subprocess
import sys

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
files = subprocess.run(
    ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
    capture_output=True, text=True, check=True,
).stdout.split()


def slug(heading):
    heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return heading.replace(" ", "-")


def anchors(path):
    found, seen, fenced = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            if fenced:
                continue
            m = re.match(r"#{1,6}\s+(.*)", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
    return found


broken = checked = 0
for f in files:
    corpus = f.startswith("assets/demo/") or (
        f.startswith("tests/fixtures/") and f.count("/") > 2
    )
    if corpus or not os.path.exists(f):
        continue
    with open(f, encoding="utf-8") as fh:
        text = fh.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        url = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", url):
            continue
        checked += 1
        path, _, frag = url.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(target):
            print(f"{f}: {url}: no such file {target}")
            broken += 1
        elif frag and target.endswith(".md") and frag not in anchors(target):
            print(f"{f}: {url}: no heading #{frag} in {target}")
            broken += 1
print(f"{checked} relative links checked, {broken} broken", file=sys.stderr)
sys.exit(1 if broken else 0)
