#!/usr/bin/env python3
"""Build the versioned test collections for lineage's accuracy measurements.

Every collection is a folder of text files whose path order is the
chronological order, so run lineage on it with `--order path`. The builder
reads a bare (or ordinary) clone of the source repository with plain `git`
and writes the same bytes every time for the same history: no clocks, no
network, seeded random choices only (Python 3 standard library).

Collections and their sources:

  laws    German federal laws in Markdown, https://github.com/bundestag/gesetze
          Snapshots at ten first-parent commits (2012-08-03 ... 2022-03-26);
          laws with at least three different versions among them, mid-sized
          ones first; a law's text is written into a snapshot folder when it
          differs from the version last written (and its first version).
          Layout: <YYYY-MM-DD>/<law slug>.md

  docs    git's own documentation, https://github.com/git/git
          Documentation/**/*.txt|*.adoc (not RelNotes/) at six release tags
          (v2.0.0, v2.10.0, v2.20.0, v2.30.0, v2.40.0, v2.50.0), the whole tree
          at each release, unchanged pages too (as a docs site would publish).
          Layout: <NN>-<tag>/<path below Documentation>.txt

  wiki    Revision histories of Python Enhancement Proposals,
          https://github.com/python/peps (pep-NNNN.txt, pep-NNNN.rst and
          peps/pep-NNNN.rst are one document): for PEPs with many revisions,
          every commit that changed the text beyond whitespace, at most 12 per
          PEP evenly spread over its history (first and last included), one
          file per revision, numbered in commit-time order over all PEPs.
          Layout: <NNNNN>-<YYYYmmddTHHMMSSZ>-pep-<NNNN>.rst

  mails   A seeded generator (no public mail archive with HTML parts could be
          fetched here; the lore.kernel.org archives on GitHub are plain text
          and too large): 4000 messages in threads on three mailing lists,
          MIME headers, multipart/alternative with a quoted-printable text
          part and a quoted-printable HTML part (client-specific boilerplate
          with hex colours `color=3D"#1f497d"`, `size=3D"2"`, soft line
          breaks), replies quoting their parent (`> `, nested `> > `,
          `On ..., X wrote:`), forwards, per-sender signatures, list footers,
          a few base64 attachments. The prose is sentences of the PEPs at a
          fixed commit of python/peps, so the bodies are real English text.
          Layout: <NNNNN>.txt in date order

  spamassassin
          The SpamAssassin public corpus (2002-2003: ham from mailing lists
          and personal mail, spam with HTML and quoted-printable parts) as
          the copy in https://github.com/johnmyleswhite/ML_for_Hackers keeps
          it (03-Classification/data: easy_ham, easy_ham_2, hard_ham,
          hard_ham_2, spam, spam_2; 6,292 real messages, raw RFC 822 with all
          headers). Ordered by their Date header (messages without a
          parseable one last, in folder order), written as they are.
          Layout: <NNNNN>.txt in date order

Commands (each takes the git directory of a clone of the source repository):

  scripts/corpora.py laws  --git-dir /path/to/gesetze/.git  --out "$LINEAGE_CORPORA"/gesetze-de
  scripts/corpora.py docs  --git-dir /path/to/git/.git      --out "$LINEAGE_CORPORA"/git-docs
  scripts/corpora.py wiki  --git-dir /path/to/peps/.git     --out "$LINEAGE_CORPORA"/wiki-revisions
  scripts/corpora.py mails --git-dir /path/to/peps/.git     --out "$LINEAGE_CORPORA"/mails
  scripts/corpora.py spamassassin --git-dir /path/to/ML_for_Hackers/.git --out "$LINEAGE_CORPORA"/spamassassin

The output folder is emptied first (it must not exist or must hold only what
an earlier run of this script wrote: a `.corpora` marker file is checked).
Each collection gets a `manifest.tsv` (not a document for lineage: `.tsv` is
not in its include list) with one line per file: path, source commit, date,
source path.
"""

import argparse
import base64
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections import defaultdict

MARKER = ".corpora"


# --------------------------------------------------------------------------
# git access


class Git:
    def __init__(self, git_dir):
        self.git_dir = git_dir
        self._batch = None

    def run(self, *args):
        return subprocess.run(
            ["git", "--git-dir", self.git_dir, *args],
            check=True,
            stdout=subprocess.PIPE,
        ).stdout.decode("utf-8", "replace")

    def blob(self, sha):
        """The bytes of one object, through one long-lived cat-file --batch."""
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "--git-dir", self.git_dir, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            raise SystemExit(f"corpora: object {sha} missing in {self.git_dir}")
        size = int(header[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)  # the newline after the object
        return data

    def tree(self, rev, *paths):
        """(path, blob sha, size) of every file under paths at rev."""
        out = self.run("ls-tree", "-r", "-l", "--full-tree", rev, "--", *paths)
        rows = []
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, sha, size = meta.split()
            # A size of BAD: the object is absent (a partial clone or a
            # snapshot without its largest files); none of them is text we read.
            if kind == "blob" and size.isdigit():
                rows.append((path, sha, int(size)))
        return rows

    def commit_date(self, rev):
        return self.run("log", "-1", "--format=%cs", rev).strip()

    def resolve(self, rev):
        return self.run("rev-parse", rev + "^{commit}").strip()


def prepare_out(out):
    if os.path.exists(out):
        if not os.path.exists(os.path.join(out, MARKER)):
            raise SystemExit(
                f"corpora: {out} exists and was not written by this script "
                f"(no {MARKER} file); remove it or choose another --out"
            )
        shutil.rmtree(out)
    os.makedirs(out)
    with open(os.path.join(out, MARKER), "w") as f:
        f.write("written by scripts/corpora.py; the whole folder is replaced on a rebuild\n")


def write(out, rel, data):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_manifest(out, rows):
    with open(os.path.join(out, "manifest.tsv"), "w") as f:
        f.write("path\tcommit\tdate\tsource\n")
        for row in rows:
            f.write("\t".join(row) + "\n")


def summary(out, rows):
    size = sum(os.path.getsize(os.path.join(out, r[0])) for r in rows)
    print(f"{out}: {len(rows)} documents, {size / 1e6:.1f} MB", file=sys.stderr)


# --------------------------------------------------------------------------
# laws: bundestag/gesetze

# First-parent commits of bundestag/gesetze master, spread over its history
# (the import, then each wave of updates). Abbreviated ids are resolved.
LAW_SNAPSHOTS = [
    "27ae8b60",  # 2012-08-03 import with fixed YAML headers
    "41161112",  # 2012-08-07
    "d21d7c7f",  # 2012-09-16
    "8214d998",  # 2012-10-02
    "fa28c31f",  # 2012-10-18
    "d26b3963",  # 2012-12-02
    "0f369b0d",  # 2012-12-30
    "c0deb02d",  # 2013-01-11
    "ce3b4435",  # 2022-01-31
    "77abca2c",  # 2022-03-26
]


def build_laws(args):
    git = Git(args.git_dir)
    snaps = []
    for rev in LAW_SNAPSHOTS:
        full = git.resolve(rev)
        snaps.append((full, git.commit_date(full)))
    versions = defaultdict(list)  # law -> [(snapshot index, sha, size)]
    for i, (commit, _) in enumerate(snaps):
        for path, sha, size in git.tree(commit):
            if path.endswith("/index.md"):
                versions[path].append((i, sha, size))
    candidates = []
    for path, vs in versions.items():
        kept, prev = [], None
        for i, sha, size in vs:
            if sha != prev:
                kept.append((i, sha, size))
                prev = sha
        mean = sum(s for _, _, s in kept) / len(kept)
        if len(kept) >= args.min_versions and args.min_size <= mean <= args.max_size:
            candidates.append((path, kept))
    # Most versions first, then by name: deterministic.
    candidates.sort(key=lambda c: (-len(c[1]), c[0]))
    chosen, total = [], 0
    for path, kept in candidates:
        size = sum(s for _, _, s in kept)
        if len(chosen) >= args.laws or total + size > args.budget:
            continue
        chosen.append((path, kept))
        total += size
    prepare_out(args.out)
    rows = []
    for path, kept in sorted(chosen):
        slug = path.split("/")[-2]
        for i, sha, _ in kept:
            commit, date = snaps[i]
            rel = f"{date}/{slug}.md"
            write(args.out, rel, git.blob(sha))
            rows.append((rel, commit, date, path))
    rows.sort()
    write_manifest(args.out, rows)
    summary(args.out, rows)


# --------------------------------------------------------------------------
# docs: git/git Documentation

DOC_TAGS = ["v2.0.0", "v2.10.0", "v2.20.0", "v2.30.0", "v2.40.0", "v2.50.0"]


def build_docs(args):
    git = Git(args.git_dir)
    prepare_out(args.out)
    rows = []
    for n, tag in enumerate(args.tags):
        commit = git.resolve(tag)
        date = git.commit_date(commit)
        for path, sha, _ in git.tree(commit, "Documentation/"):
            rel_src = path[len("Documentation/"):]
            if rel_src.startswith("RelNotes/"):
                continue
            stem, ext = os.path.splitext(rel_src)
            if ext not in (".txt", ".adoc"):
                continue
            # One extension for all releases (git renamed .txt to .adoc in
            # 2.49), so a page keeps its name from release to release.
            rel = f"{n:02d}-{tag}/{stem}.txt"
            write(args.out, rel, git.blob(sha))
            rows.append((rel, commit, date, path))
    write_manifest(args.out, rows)
    summary(args.out, rows)


# --------------------------------------------------------------------------
# wiki: python/peps revision histories

PEP_PATH = re.compile(r"^(?:peps/)?pep-(\d{4})\.(?:txt|rst)$")


def pep_history(git):
    """pep number -> [(commit time, commit, blob, path)] in commit order."""
    out = git.run(
        "log",
        "--reverse",
        "--format=C %H %ct",
        "--raw",
        "--no-renames",
        "--no-abbrev",
        "--",
        "pep-*.txt",
        "pep-*.rst",
        "peps/pep-*.rst",
    )
    hist = defaultdict(list)
    commit = when = None
    for line in out.splitlines():
        if line.startswith("C "):
            _, commit, when = line.split()
            when = int(when)
        elif line.startswith(":"):
            meta, path = line.split("\t", 1)
            fields = meta.split()
            sha, status = fields[3], fields[4]
            m = PEP_PATH.match(path)
            if not m or status == "D" or set(sha) == {"0"}:
                continue
            hist[m.group(1)].append((when, commit, sha, path))
    return hist


def spread(items, k):
    """k items evenly spread over items, first and last included."""
    if len(items) <= k:
        return list(items)
    step = (len(items) - 1) / (k - 1)
    return [items[round(i * step)] for i in range(k)]


def build_wiki(args):
    git = Git(args.git_dir)
    hist = pep_history(git)
    chosen = []
    for pep, revs in hist.items():
        # Distinct texts beyond whitespace, in commit order (a rename or a
        # revert to the previous text is not a revision).
        kept, prev = [], None
        for when, commit, sha, path in sorted(revs, key=lambda r: r[0]):
            data = git.blob(sha)
            norm = b" ".join(data.split())
            if norm == prev:
                continue
            prev = norm
            kept.append((when, commit, sha, path, len(data)))
        if len(kept) < args.min_revisions:
            continue
        picked = spread(kept, args.per_pep)
        mean = sum(r[4] for r in picked) / len(picked)
        if mean > args.max_size:
            continue
        chosen.append((pep, picked))
    chosen.sort(key=lambda c: (-len(c[1]), c[0]))
    sel, total = [], 0
    for pep, picked in chosen:
        size = sum(r[4] for r in picked)
        if len(sel) >= args.peps or total + size > args.budget:
            continue
        sel.append((pep, picked))
        total += size
    revisions = sorted(
        (when, pep, commit, sha, path)
        for pep, picked in sel
        for when, commit, sha, path, _ in picked
    )
    prepare_out(args.out)
    rows = []
    for n, (when, pep, commit, sha, path) in enumerate(revisions, 1):
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
        rel = f"{n:05d}-{stamp}-pep-{pep}.rst"
        write(args.out, rel, git.blob(sha))
        rows.append((rel, commit, time.strftime("%Y-%m-%d", time.gmtime(when)), path))
    write_manifest(args.out, rows)
    summary(args.out, rows)


# --------------------------------------------------------------------------
# mails: a seeded generator on real prose

FIRST = (
    "Anna Ben Carla David Elena Felix Greta Hugo Ines Jonas Karin Lukas Maria "
    "Nils Olga Paul Rita Simon Tanja Uwe Vera Wolf Yara Zoe Amir Beatriz Chen "
    "Dmitri Emeka Fatima Gustavo Hana Ivan Jana Kenji Leila Mateo Noor Oskar "
    "Priya Quentin Rosa Sven Tomasz Ugo Valeria Wei Ximena Yusuf"
).split()
LAST = (
    "Adler Becker Costa Dietrich Evans Fischer Garcia Hoffmann Ito Jensen "
    "Keller Lang Meyer Novak Okafor Petrov Quinn Richter Schulz Tanaka Ueda "
    "Vogel Weber Xu Young Zimmermann Moreau Rossi Nguyen Kowalski"
).split()
DOMAINS = (
    "example.org example.com mail.example.net corp.example dev.example.io "
    "uni-beispiel.de lists.example.org post.example.fr"
).split()
LISTS = [
    ("python-ideas", "Python Ideas", "lists.example.org"),
    ("packaging-sig", "Packaging SIG", "lists.example.org"),
    ("core-dev", "Core development", "lists.example.org"),
]
CLIENTS = ["outlook", "gmail", "apple", "thunderbird", "mutt"]
TITLES = (
    "Senior Engineer|Release Manager|Maintainer|Software Developer|"
    "Research Associate|Product Owner|Consultant|PhD Student|Team Lead"
).split("|")
COMPANIES = (
    "Example Systems GmbH|Acme Analytics Ltd.|Beispiel AG|Northwind Labs|"
    "Contoso Research|Globex Corporation|Initech|Umbrella Software"
).split("|")


def pep_sentences(git, rev):
    """English sentences from the PEPs' prose paragraphs at rev."""
    sents = []
    for path, sha, _ in sorted(git.tree(rev)):
        if not PEP_PATH.match(path):
            continue
        text = git.blob(sha).decode("utf-8", "replace")
        for para in re.split(r"\n\s*\n", text):
            lines = para.splitlines()
            if not lines or any(
                l.startswith((" ", "\t", "..", ":", "=", "-", "*", "#", ">")) for l in lines
            ):
                continue
            flat = " ".join(l.strip() for l in lines)
            if "``" in flat or "::" in flat or len(flat) < 80:
                continue
            for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", flat):
                if 40 <= len(s) <= 240 and s[-1] in ".!?":
                    sents.append(s)
    return sents


def qp_encode(text):
    """Quoted-printable (RFC 2045): `=` and non-ASCII escaped, soft breaks at 76."""
    out = []
    for line in text.split("\n"):
        enc = []
        for ch in line:
            if ch == "=" or ord(ch) > 126 or (ord(ch) < 32 and ch != "\t"):
                enc.append("".join(f"={b:02X}" for b in ch.encode("utf-8")))
            else:
                enc.append(ch)
        if enc and enc[-1] in (" ", "\t"):
            enc[-1] = f"={ord(enc[-1]):02X}"
        cur = ""
        for tok in enc:
            if len(cur) + len(tok) > 75:
                out.append(cur + "=")
                cur = ""
            cur += tok
        out.append(cur)
    return "\n".join(out)


def html_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Person:
    def __init__(self, rng, i):
        self.first = rng.choice(FIRST)
        self.last = rng.choice(LAST)
        self.name = f"{self.first} {self.last}"
        dom = rng.choice(DOMAINS)
        self.addr = f"{self.first.lower()}.{self.last.lower()}{i % 7 or ''}@{dom}"
        self.client = rng.choice(CLIENTS)
        self.colour = rng.choice(["#1f497d", "#000000", "#222222", "#0b5394", "#444444", "#002060"])
        self.font = rng.choice(["Calibri", "Arial", "Helvetica", "Verdana", "Segoe UI", "Georgia"])
        self.size = rng.choice(["2", "3", "11pt", "10pt"])
        kind = rng.random()
        title, company = rng.choice(TITLES), rng.choice(COMPANIES)
        phone = f"+49 {rng.randint(30, 899)} {rng.randint(100000, 9999999)}"
        if kind < 0.3:
            self.sig = f"-- \n{self.first}"
        elif kind < 0.75:
            self.sig = f"-- \n{self.name}\n{title}, {company}\nPhone {phone}"
        else:
            self.sig = (
                f"Best regards,\n{self.name}\n\n{title}\n{company}\n"
                f"Phone: {phone} | {self.addr}\n"
                "This e-mail may contain confidential information. If you are not the "
                "intended recipient, please notify the sender and delete it."
            )
        self.tz = rng.choice(["+0000", "+0100", "+0200", "-0500", "-0800", "+0900"])


def rfc_date(t, tz):
    return time.strftime("%a, %d %b %Y %H:%M:%S ", time.gmtime(t)) + tz


def html_part(person, paragraphs, quoted_html, footer):
    c, f, s = person.colour, person.font, person.size
    if person.client == "outlook":
        head = (
            '<html xmlns:o="urn:schemas-microsoft-com:office:office">\n<head>\n'
            '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n'
            '<style><!-- p.MsoNormal {margin:0cm; font-size:11.0pt; font-family:"Calibri",sans-serif;} '
            "a:link {color:#0563C1; text-decoration:underline;} --></style>\n</head>\n"
            '<body lang="EN-US" link="#0563C1" vlink="#954F72">\n<div class="WordSection1">\n'
        )
        para = lambda p: (
            f'<p class="MsoNormal"><span style="font-size:{s};font-family:&quot;{f}&quot;;'
            f'color:{c}">{html_escape(p)}<o:p></o:p></span></p>\n'
            '<p class="MsoNormal"><span style="color:#1f497d"><o:p>&nbsp;</o:p></span></p>\n'
        )
        sep = (
            '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">\n'
        )
        tail = "</div>\n</body>\n</html>"
    elif person.client == "gmail":
        head = '<div dir="ltr">'
        para = lambda p: f"<div>{html_escape(p)}</div><div><br></div>"
        sep = '<br><div class="gmail_quote"><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">'
        tail = "</div>"
    elif person.client == "apple":
        head = '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head><body style="word-wrap: break-word; -webkit-nbsp-mode: space; line-break: after-white-space;" dir="auto">'
        para = lambda p: f'<div><font face="{f}" color="{c}" size="{s}">{html_escape(p)}</font></div><div><br></div>'
        sep = '<div><br><blockquote type="cite"><div>'
        tail = "</body></html>"
    else:
        head = (
            '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">\n'
            '</head>\n<body text="#000000" bgcolor="#ffffff">\n'
            f'<table width="600" cellpadding="0" cellspacing="0" border="0" bgcolor="#ffffff"><tr><td>\n'
        )
        para = lambda p: f'<p><font color="{c}" size="{s}" face="{f}">{html_escape(p)}</font></p>\n'
        sep = '<div class="moz-cite-prefix"><blockquote type="cite" cite="mid:">\n'
        tail = "</td></tr></table>\n</body>\n</html>"
    body = head + "".join(para(p) for p in paragraphs)
    body += "<br>" + html_escape(person.sig).replace("\n", "<br>\n")
    if quoted_html:
        body += sep + quoted_html + "</blockquote></div>"
    if footer:
        body += (
            '<br><table width="100%" bgcolor="#f2f2f2"><tr><td><font size="1" color="#808080">'
            + html_escape(footer).replace("\n", "<br>")
            + "</font></td></tr></table>"
        )
    return body + tail


def build_mails(args):
    rng = random.Random(args.seed)
    git = Git(args.git_dir)
    sents = pep_sentences(git, args.rev)
    if len(sents) < 1000:
        raise SystemExit(f"corpora: only {len(sents)} sentences at {args.rev}")
    people = [Person(rng, i) for i in range(args.people)]
    t = 1546300800  # 2019-01-01T00:00:00Z
    mails = []  # dicts, in date order
    threads = []  # [list, subject, [mail indices]]
    for n in range(args.count):
        t += rng.randint(60, 5400)
        sender = rng.choice(people)
        reply_to = None
        live = [th for th in threads[-60:] if len(th[2]) < 40]
        if live and rng.random() < 0.72:
            th = rng.choice(live)
            reply_to = rng.choice(th[2][-5:])
        else:
            lst = rng.choice(LISTS)
            subj_words = rng.choice(sents).rstrip(".!?").split()
            start = rng.randint(0, max(0, len(subj_words) - 6))
            subject = " ".join(subj_words[start : start + rng.randint(3, 7)])
            if rng.random() < 0.25:
                subject = "[PATCH] " + subject
            th = [lst, subject, []]
            threads.append(th)
        paragraphs = []
        for _ in range(rng.randint(1, 4)):
            k = rng.randint(1, 5)
            i = rng.randrange(len(sents) - k)
            paragraphs.append(" ".join(sents[i : i + k]))
        greeting = rng.choice(["Hi all,", "Hello,", "Hi {},", "Dear {},", "", "Thanks for writing this up.", ""])
        mails.append(
            dict(
                n=n,
                t=t,
                sender=sender,
                thread=th,
                parent=reply_to,
                paragraphs=paragraphs,
                greeting=greeting,
                forward=reply_to is not None and rng.random() < 0.06,
                attach=rng.random() < 0.05,
                msgid=f"<{rng.getrandbits(64):016x}.{n}@{sender.addr.split('@')[1]}>",
                hdr=rng.getrandbits(48),
            )
        )
        th[2].append(n)

    prepare_out(args.out)
    texts, htmls = {}, {}
    rows = []
    for m in mails:
        p = m["sender"]
        lst, subject, _ = m["thread"]
        list_addr = f"{lst[0]}@{lst[2]}"
        parent = mails[m["parent"]] if m["parent"] is not None else None
        greeting = m["greeting"]
        if "{}" in greeting:
            greeting = greeting.format(parent["sender"].first if parent else "all")
        footer = (
            f"_______________________________________________\n"
            f"{lst[1]} mailing list -- {list_addr}\n"
            f"To unsubscribe send an email to {lst[0]}-leave@{lst[2]}\n"
            f"https://{lst[2]}/mailman3/lists/{list_addr}/\n"
            f"Code of Conduct: https://{lst[2]}/conduct/"
        )
        # Text part: greeting, wrapped paragraphs, quote of the parent, signature.
        lines = [greeting, ""] if greeting else []
        for para in m["paragraphs"]:
            lines += textwrap.wrap(para, 72) + [""]
        lines.append(p.sig)
        quoted_html = ""
        if parent:
            ptext = texts[parent["n"]]
            if m["forward"]:
                lines += [
                    "",
                    "-----Original Message-----",
                    f"From: {parent['sender'].name} <{parent['sender'].addr}>",
                    f"Sent: {rfc_date(parent['t'], parent['sender'].tz)}",
                    f"To: {list_addr}",
                    f"Subject: {subject}",
                    "",
                    ptext,
                ]
            else:
                intro = f"On {rfc_date(parent['t'], parent['sender'].tz)}, {parent['sender'].name} wrote:"
                quote = [("> " + l) if l and not l.startswith(">") else (">" + l if l else ">") for l in ptext.split("\n")]
                # Top posters quote it all below; others trim the parent.
                if p.client in ("outlook", "gmail", "apple"):
                    lines += ["", intro] + quote
                else:
                    cut = max(4, len(quote) // 2)
                    lines = [intro] + quote[:cut] + [""] + lines
            quoted_html = htmls[parent["n"]]
        text = "\n".join(lines).rstrip("\n")
        texts[m["n"]] = text
        html = html_part(p, ([greeting] if greeting else []) + m["paragraphs"], quoted_html, "")
        htmls[m["n"]] = html
        text_full = text + "\n" + footer + "\n"
        html_full = html_part(p, ([greeting] if greeting else []) + m["paragraphs"], quoted_html, footer)

        subj = subject if not parent else ("Re: " + subject if not m["forward"] else "Fwd: " + subject)
        boundary = f"_000_{m['hdr']:012x}_"
        hdr = [
            f"Return-Path: <{lst[0]}-bounces@{lst[2]}>",
            f"Received: from mx.{lst[2]} (mx.{lst[2]} [192.0.2.{m['hdr'] % 250 + 1}])",
            f"\tby {lst[2]} (Postfix) with ESMTP id {m['hdr'] & 0xFFFFFFFFFF:010X}",
            f"\tfor <{list_addr}>; {rfc_date(m['t'] + 3, '+0000')}",
            f"From: {p.name} <{p.addr}>",
            f"To: {list_addr}",
            f"Subject: {subj}",
            f"Date: {rfc_date(m['t'], p.tz)}",
            f"Message-ID: {m['msgid']}",
        ]
        if parent:
            refs = [parent["msgid"]]
            anc = parent
            while anc["parent"] is not None and len(refs) < 6:
                anc = mails[anc["parent"]]
                refs.insert(0, anc["msgid"])
            hdr += [f"In-Reply-To: {parent['msgid']}", "References: " + "\n ".join(refs)]
        hdr += [
            "MIME-Version: 1.0",
            f"List-Id: {lst[1]} <{lst[0]}.{lst[2]}>",
            f"List-Unsubscribe: <mailto:{lst[0]}-leave@{lst[2]}>",
            f"List-Archive: <https://{lst[2]}/archives/list/{list_addr}/>",
            "Precedence: list",
        ]
        if p.client == "mutt" and not m["attach"]:
            hdr += [
                "Content-Type: text/plain; charset=utf-8",
                "Content-Disposition: inline",
                "Content-Transfer-Encoding: quoted-printable",
                "User-Agent: Mutt/2.2.12 (2023-09-09)",
                "",
                qp_encode(text_full),
            ]
        else:
            outer = "mixed" if m["attach"] else "alternative"
            mailer = {
                "outlook": "Microsoft Outlook 16.0",
                "gmail": "Gmail",
                "apple": "Apple Mail (2.3774.500.171.1.1)",
                "thunderbird": "Mozilla Thunderbird 115.6.0",
                "mutt": "Mutt/2.2.12",
            }[p.client]
            hdr += [f'Content-Type: multipart/{outer}; boundary="{boundary}"', f"X-Mailer: {mailer}", ""]
            alt = [
                f"--{boundary}" if not m["attach"] else f"--{boundary}b",
                'Content-Type: text/plain; charset="utf-8"',
                "Content-Transfer-Encoding: quoted-printable",
                "",
                qp_encode(text_full),
                "",
                f"--{boundary}" if not m["attach"] else f"--{boundary}b",
                'Content-Type: text/html; charset="utf-8"',
                "Content-Transfer-Encoding: quoted-printable",
                "",
                qp_encode(html_full),
                "",
                f"--{boundary}--" if not m["attach"] else f"--{boundary}b--",
            ]
            if m["attach"]:
                blob = rng.randbytes(rng.randint(600, 3000))
                name = rng.choice(["log", "trace", "profile", "patch", "screenshot"])
                hdr += [
                    f"--{boundary}",
                    f'Content-Type: multipart/alternative; boundary="{boundary}b"',
                    "",
                    *alt,
                    "",
                    f"--{boundary}",
                    f'Content-Type: application/octet-stream; name="{name}-{m["n"]}.bin"',
                    f'Content-Disposition: attachment; filename="{name}-{m["n"]}.bin"',
                    "Content-Transfer-Encoding: base64",
                    "",
                    "\n".join(textwrap.wrap(base64.b64encode(blob).decode(), 76)),
                    "",
                    f"--{boundary}--",
                ]
            else:
                hdr += alt
        rel = f"{m['n']:05d}.txt"
        write(args.out, rel, ("\n".join(hdr) + "\n").encode("utf-8"))
        rows.append((rel, "", time.strftime("%Y-%m-%d", time.gmtime(m["t"])), f"generated seed {args.seed}"))
    write_manifest(args.out, rows)
    summary(args.out, rows)


# --------------------------------------------------------------------------
# spamassassin: the public corpus, as johnmyleswhite/ML_for_Hackers keeps it

SPAM_DIRS = ["easy_ham", "easy_ham_2", "hard_ham", "hard_ham_2", "spam", "spam_2"]


def build_spamassassin(args):
    import email.parser
    import email.utils

    git = Git(args.git_dir)
    rev = git.resolve(args.rev)
    mails = []
    for folder in SPAM_DIRS:
        base = f"03-Classification/data/{folder}"
        for path, sha, _ in sorted(git.tree(rev, base)):
            name = path.rsplit("/", 1)[1]
            if name == "cmds":  # the corpus's own list of commands, not a message
                continue
            data = git.blob(sha)
            header = email.parser.BytesHeaderParser().parsebytes(data)
            try:
                when = email.utils.parsedate_to_datetime(str(header.get("Date", ""))).timestamp()
            except (TypeError, ValueError, IndexError, OverflowError):
                when = None
            mails.append((when, path, data))
    dated = sorted((m for m in mails if m[0] is not None), key=lambda m: m[0])
    undated = [m for m in mails if m[0] is None]
    prepare_out(args.out)
    rows = []
    for n, (when, path, data) in enumerate(dated + undated):
        rel = f"{n:05d}.txt"
        write(args.out, rel, data)
        date = "" if when is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
        rows.append((rel, rev, date, path))
    write_manifest(args.out, rows)
    summary(args.out, rows)


# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("laws", help="bundestag/gesetze snapshots")
    p.add_argument("--git-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--laws", type=int, default=250, help="at most this many laws")
    p.add_argument("--min-versions", type=int, default=3)
    p.add_argument("--min-size", type=int, default=4000, help="mean version size, bytes")
    p.add_argument("--max-size", type=int, default=60000, help="mean version size, bytes")
    p.add_argument("--budget", type=int, default=30_000_000, help="total bytes")
    p.set_defaults(func=build_laws)

    p = sub.add_parser("docs", help="git/git Documentation at release tags")
    p.add_argument("--git-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tags", nargs="+", default=DOC_TAGS)
    p.set_defaults(func=build_docs)

    p = sub.add_parser("wiki", help="python/peps revision histories")
    p.add_argument("--git-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--peps", type=int, default=250, help="at most this many PEPs")
    p.add_argument("--per-pep", type=int, default=12, help="revisions per PEP at most")
    p.add_argument("--min-revisions", type=int, default=8)
    p.add_argument("--max-size", type=int, default=60000, help="mean revision size, bytes")
    p.add_argument("--budget", type=int, default=30_000_000, help="total bytes")
    p.set_defaults(func=build_wiki)

    p = sub.add_parser("mails", help="generated mailing-list archive on PEP prose")
    p.add_argument("--git-dir", required=True, help="python/peps clone (prose source)")
    p.add_argument("--rev", default="ba4deeb7969588d937da609008d05bb83a47b1ab", help="python/peps commit")
    p.add_argument("--out", required=True)
    p.add_argument("--count", type=int, default=4000)
    p.add_argument("--people", type=int, default=150)
    p.add_argument("--seed", type=int, default=2009)
    p.set_defaults(func=build_mails)

    p = sub.add_parser("spamassassin", help="the SpamAssassin public corpus from ML_for_Hackers")
    p.add_argument("--git-dir", required=True, help="johnmyleswhite/ML_for_Hackers clone")
    p.add_argument("--rev", default="HEAD", help="ML_for_Hackers commit")
    p.add_argument("--out", required=True)
    p.set_defaults(func=build_spamassassin)

    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
