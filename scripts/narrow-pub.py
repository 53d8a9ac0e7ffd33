#!/usr/bin/env python3
"""`pub` only what another crate uses: narrow every `pub` item (fn, struct,
enum, trait, type, const, static) of the library crates to `pub(crate)`, then
widen back, build after build, what the compiler says another crate, a test,
a bench or a public signature needs. What stays narrowed is left as a diff to
review; DEAD names an item nothing but its own crate's tests uses (move it
into them). Run on a clean tree from the repository's root; a few minutes:

    python3 scripts/narrow-pub.py          # narrow, then widen until it builds
    python3 scripts/narrow-pub.py resume   # go on from the diff (more builds)
"""
import json, re, subprocess, sys, glob, os, collections
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
ITEM = re.compile(r'^(\s*)pub (?=(?:unsafe |async |const )*(fn|struct|enum|trait|type|const|static|union) )')
NAME = re.compile(r'^\s*pub(?:\(crate\))? (?:unsafe |async |const )*(?:fn|struct|enum|trait|type|const|static|union) ([A-Za-z_][A-Za-z0-9_]*)')
cands = {}  # (file, line1) -> name
if len(sys.argv) > 1 and sys.argv[1] == 'resume':
    diff = subprocess.run(['git', 'diff', '-U0', '--', 'crates'], capture_output=True, text=True).stdout
    f = None
    for ln in diff.splitlines():
        if ln.startswith('+++ b/'): f = ln[6:]
        elif ln.startswith('@@'):
            cur = int(re.search(r'\+(\d+)', ln).group(1))
        elif ln.startswith('+') and not ln.startswith('+++'):
            m = NAME.match(ln[1:])
            if m and 'pub(crate) ' in ln: cands[(f, cur)] = m.group(1)
            cur += 1
else:
  for f in glob.glob('crates/*/src/**/*.rs', recursive=True):
    lines = open(f).read().split('\n')
    changed = False
    for i, ln in enumerate(lines):
        if ITEM.match(ln):
            m = NAME.match(ln)
            # `is_empty` stays beside a public `len` (clippy: len_without_is_empty).
            if not m or m.group(1) == 'is_empty': continue
            lines[i] = ITEM.sub(lambda mm: mm.group(1) + 'pub(crate) ', ln, count=1)
            cands[(f, i + 1)] = m.group(1)
            changed = True
    if changed:
        open(f, 'w').write('\n'.join(lines))
print('narrowed', len(cands), file=sys.stderr)
widened = set(); deadw = set()
def widen(key):
    if key in widened or key not in cands: return False
    f, ln = key
    lines = open(f).read().split('\n')
    lines[ln - 1] = lines[ln - 1].replace('pub(crate) ', 'pub ', 1)
    open(f, 'w').write('\n'.join(lines))
    widened.add(key)
    return True
by_name = collections.defaultdict(list)
for k, n in cands.items(): by_name[n].append(k)
NAMES_IN = re.compile(r'`(?:[A-Za-z0-9_]+::)*([A-Za-z_][A-Za-z0-9_]*)`')
for it in range(40):
    out = subprocess.run(['cargo', 'check', '--workspace', '--all-targets', '--message-format=json'],
                         capture_output=True, text=True).stdout
    n_before = len(widened)
    problems = 0
    for line in out.splitlines():
        try: msg = json.loads(line)
        except: continue
        if msg.get('reason') != 'compiler-message': continue
        m = msg['message']
        level = m['level']; code = (m.get('code') or {}).get('code'); text = m['message']
        if level not in ('error', 'warning'): continue
        problems += 1
        spans = []
        def walk(mm):
            for s in mm.get('spans', []):
                spans.append((os.path.relpath(s['file_name']), s['line_start']))
            for c in mm.get('children', []): walk(c)
        walk(m)
        hit = False
        if level == 'warning' and ('never used' in text or 'never constructed' in text or 'never read' in text or 'are never' in text):
            for sp in spans:
                if sp in cands: deadw.add(sp)
            continue
        for sp in spans:
            if sp in cands: hit |= widen(sp)
        if not hit:
            for name in NAMES_IN.findall(text):
                for k in by_name.get(name, []): hit |= widen(k)
        if not hit and level == 'error':
            print('UNHANDLED', code, text, spans[:3], file=sys.stderr)
    print(f'iteration {it}: {problems} messages, widened {len(widened)}, dead {len(deadw)}', file=sys.stderr)
    if len(widened) == n_before:
        break
    deadw = set()
print('kept narrow', len(cands) - len(widened), file=sys.stderr)
for k in sorted(deadw - widened): print('DEAD', k[0], k[1], cands[k])
for k in sorted(set(cands) - widened): print('NARROW', k[0], k[1], cands[k])
