//! `lineage check`'s findings (docs/algorithms.md §14): what each live page
//! holds copied from a live page of another path that still holds it,
//! judged by the `[check]` policies. A copy whose origin is gone or has
//! changed since is no duplicate now (`stale` tells those), so it counts
//! as the page's own; a page's earlier versions are its own too.

use std::collections::HashMap;
use std::ops::Range;

use lineage_config::check::{CheckConfig, Standing};
use lineage_core::fingerprint::keymap::KeyMap;
use lineage_similar::{SimDoc, minhash};
use lineage_store::index::{IndexError, Read, Status};

use super::query::Row;

/// A passage a page holds that a live page of another path holds too,
/// credited to that page by the origin pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Copy {
    /// The origin page's live version.
    pub origin: u32,
    /// Its tokens in the page.
    pub tokens: Range<u32>,
    /// Where the origin holds it now.
    pub origin_tokens: Range<u32>,
    /// The passage by its content (its shingle keys), not its place: the
    /// same after a reflow or a move (what a baseline accepts).
    pub hash: u64,
}

/// What a policy found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// The page copies more than `max_copied` from pages of other paths.
    MaxCopied,
    /// The page copies more than `max_copied_from_one` from one page.
    MaxCopiedFromOne,
    /// The page copies from a page a `deny` rule names.
    Denied,
    /// Two pages resemble each other at `near_duplicate` or more.
    NearDuplicate,
}

impl Rule {
    /// Every rule, in the order findings are told.
    pub const ALL: [Rule; 4] = [
        Rule::MaxCopied,
        Rule::MaxCopiedFromOne,
        Rule::Denied,
        Rule::NearDuplicate,
    ];

    /// The rule's name, as the config keys and the outputs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::MaxCopied => "max_copied",
            Rule::MaxCopiedFromOne => "max_copied_from_one",
            Rule::Denied => "deny",
            Rule::NearDuplicate => "near_duplicate",
        }
    }
}

/// One failure of one policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Which policy.
    pub rule: Rule,
    /// The page that fails (its live version): the later one of a near
    /// duplicate pair.
    pub page: u32,
    /// The one other page it concerns (from one page, denied, near
    /// duplicate); None for the share from every page.
    pub other: Option<u32>,
    /// The share in percent (the resemblance, for a near duplicate).
    pub percent: f64,
    /// The policy's limit, in the same unit.
    pub limit: f64,
    /// The copied passages behind it (none for a near duplicate).
    pub copies: Vec<Copy>,
}

/// What `check` found over the folder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checked {
    /// Live pages checked.
    pub pages: usize,
    /// Findings by page path, then rule, then the other page's path.
    pub findings: Vec<Finding>,
    /// Every counted copy (not allowed; denied ones too), by page, in
    /// the pages' processing order: what a baseline records.
    pub copies: Vec<(u32, Vec<Copy>)>,
}

/// Which version of each page is live: as the folder is now, or as a past
/// commit left it.
#[derive(Clone, Debug, Default)]
pub struct Live {
    /// The live versions, in processing order.
    ids: Vec<u32>,
    by_path: HashMap<String, u32>,
}

impl Live {
    /// The pages as the index has them now.
    pub fn now(ix: &impl Read, rows: &[Row]) -> Live {
        Live::of((rows.iter().enumerate()).filter_map(|(id, r)| {
            let c = ix.current(&r.path)?;
            (c.id == id as u32 && c.status == Status::Live).then_some((r.path.clone(), c.id))
        }))
    }

    /// The pages `paths` as the versions up to `cut` left them: each
    /// one's newest version at or before `cut`, if it has one.
    pub fn at(rows: &[Row], cut: u32, paths: &std::collections::HashSet<String>) -> Live {
        let mut newest: HashMap<&str, u32> = HashMap::new();
        for (id, r) in rows.iter().enumerate().take(cut as usize + 1) {
            if paths.contains(&r.path) {
                newest.insert(&r.path, id as u32);
            }
        }
        Live::of(newest.into_iter().map(|(p, id)| (p.to_string(), id)))
    }

    fn of(pages: impl Iterator<Item = (String, u32)>) -> Live {
        let by_path: HashMap<String, u32> = pages.collect();
        let mut ids: Vec<u32> = by_path.values().copied().collect();
        ids.sort_unstable();
        Live { ids, by_path }
    }

    /// The live version of `path`.
    pub fn get(&self, path: &str) -> Option<u32> {
        self.by_path.get(path).copied()
    }

    /// The live versions, in processing order.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }
}

/// Judge the pages `live` holds by `policy` (see the module's comment):
/// every one, or those of `only` (copies from every page still count, and
/// a near-duplicate pair with one of them in it is told).
pub fn check(
    ix: &impl Read,
    rows: &[Row],
    live: &Live,
    only: Option<&std::collections::HashSet<u32>>,
    policy: &CheckConfig,
) -> Result<Checked, IndexError> {
    let mut held = Held::default();
    let mut findings = Vec::new();
    let mut all = Vec::new();
    let judged = |id: &u32| only.is_none_or(|o| o.contains(id));
    for &id in live.ids().iter().filter(|id| judged(id)) {
        let row = &rows[id as usize];
        // How each origin page stands with the pair rules, asked once.
        let mut standing: HashMap<u32, Standing> = HashMap::new();
        let mut stands = |o: u32| {
            *(standing.entry(o))
                .or_insert_with(|| policy.standing(&row.path, &rows[o as usize].path))
        };
        let copies = copied(
            ix,
            rows,
            live,
            id,
            policy.min_passage,
            &mut held,
            &mut stands,
        )?;
        let mut counted = 0;
        let mut by_origin: HashMap<u32, (u32, Vec<Copy>)> = HashMap::new();
        let mut denied: HashMap<u32, Vec<Copy>> = HashMap::new();
        for c in copies {
            let len = c.tokens.end - c.tokens.start;
            if stands(c.origin) == Standing::Denied {
                denied.entry(c.origin).or_default().push(c.clone());
            }
            counted += len;
            let e = by_origin.entry(c.origin).or_default();
            e.0 += len;
            e.1.push(c);
        }
        let share = |n: u32| 100.0 * f64::from(n) / f64::from(row.tokens.max(1));
        let mut of_page = Vec::new();
        if share(counted) > policy.max_copied {
            let mut all: Vec<Copy> = by_origin.values().flat_map(|(_, c)| c.clone()).collect();
            all.sort_by_key(|c| c.tokens.start);
            of_page.push(Finding {
                rule: Rule::MaxCopied,
                page: id,
                other: None,
                percent: share(counted),
                limit: policy.max_copied,
                copies: all,
            });
        }
        for (&origin, (n, copies)) in &by_origin {
            if share(*n) > policy.max_copied_from_one {
                of_page.push(Finding {
                    rule: Rule::MaxCopiedFromOne,
                    page: id,
                    other: Some(origin),
                    percent: share(*n),
                    limit: policy.max_copied_from_one,
                    copies: copies.clone(),
                });
            }
        }
        for (origin, copies) in denied {
            let n = copies.iter().map(|c| c.tokens.end - c.tokens.start).sum();
            of_page.push(Finding {
                rule: Rule::Denied,
                page: id,
                other: Some(origin),
                percent: share(n),
                limit: 0.0,
                copies,
            });
        }
        findings.extend(of_page);
        let mut counted: Vec<Copy> = by_origin.into_values().flat_map(|(_, c)| c).collect();
        counted.sort_by_key(|c| c.tokens.start);
        if !counted.is_empty() {
            all.push((id, counted));
        }
    }
    if policy.near_duplicate > 0.0 {
        let near = near_duplicates(ix, rows, live.ids(), policy)?;
        findings.extend(
            (near.into_iter()).filter(|f| judged(&f.page) || f.other.is_some_and(|o| judged(&o))),
        );
    }
    let path = |id: u32| rows[id as usize].path.as_bytes();
    findings.sort_by(|a, b| {
        (path(a.page), a.rule, a.other.map(path)).cmp(&(path(b.page), b.rule, b.other.map(path)))
    });
    Ok(Checked {
        pages: live.ids().iter().filter(|id| judged(id)).count(),
        findings,
        copies: all,
    })
}

/// The pairs of live pages whose shingle sets resemble at the policy's
/// threshold or more (MinHash LSH, verified by exact Jaccard), outside
/// allowed pairs: the later page fails, the earlier is its other.
fn near_duplicates(
    ix: &impl Read,
    rows: &[Row],
    live: &[u32],
    policy: &CheckConfig,
) -> Result<Vec<Finding>, IndexError> {
    let mut docs = Vec::with_capacity(live.len());
    for &id in live {
        let mut shingles = ix.shingle_keys(id)?;
        shingles.sort_unstable();
        shingles.dedup();
        docs.push(SimDoc {
            shingles,
            terms: Vec::new(),
        });
    }
    let min = policy.near_duplicate;
    let options = minhash::Options::new(min, minhash::DEFAULT_HASHES);
    let (pairs, _) = minhash::pairs(&docs, min, &options);
    Ok(pairs
        .into_iter()
        .filter_map(|p| {
            let (a, b) = (
                live[p.a as usize].min(live[p.b as usize]),
                live[p.a as usize].max(live[p.b as usize]),
            );
            let (pa, pb) = (&rows[a as usize].path, &rows[b as usize].path);
            (policy.standing(pb, pa) != Standing::Allowed).then_some(Finding {
                rule: Rule::NearDuplicate,
                page: b,
                other: Some(a),
                percent: 100.0 * p.similarity,
                limit: 100.0 * min,
                copies: Vec::new(),
            })
        })
        .collect())
}

/// Each live version's shingle keys by where they first stand, read once.
#[derive(Default)]
struct Held(HashMap<u32, KeyMap<u32>>);

impl Held {
    /// The most versions kept at once: a folder's origins are few pages
    /// each, and memory stays bounded on a large one.
    const MOST: usize = 512;

    fn of(&mut self, ix: &impl Read, id: u32) -> Result<&KeyMap<u32>, IndexError> {
        if !self.0.contains_key(&id) {
            if self.0.len() >= Self::MOST {
                self.0.clear();
            }
            let keys = ix.shingle_keys(id)?;
            let mut at = KeyMap::with_capacity_and_hasher(keys.len(), Default::default());
            for (i, key) in keys.into_iter().enumerate() {
                at.entry(key).or_insert(i as u32);
            }
            self.0.insert(id, at);
        }
        Ok(&self.0[&id])
    }
}

/// The passages of live version `id` that the origin pass credits to a
/// page of another path and that page's live version still holds: the
/// stretches of the run's shingles found there, `min` tokens or more;
/// none from a page `stands` allows (not counted, so not looked for).
fn copied(
    ix: &impl Read,
    rows: &[Row],
    live: &Live,
    id: u32,
    min: u32,
    held: &mut Held,
    stands: &mut impl FnMut(u32) -> Standing,
) -> Result<Vec<Copy>, IndexError> {
    let row = &rows[id as usize];
    let k = ix.params().k as u32;
    let Some(outcome) = ix.outcome(id)? else {
        return Err(IndexError::Missing(id));
    };
    let mut keys = None;
    let mut out = Vec::new();
    for r in &outcome.runs {
        let Some(o) = r.origin else { continue };
        let origin = &rows[o as usize].path;
        if *origin == row.path || r.end - r.start < k {
            continue;
        }
        let Some(now) = live.get(origin) else {
            continue;
        };
        if stands(now) == Standing::Allowed {
            continue;
        }
        if keys.is_none() {
            keys = Some(ix.shingle_keys(id)?);
        }
        let keys = keys.as_deref().unwrap_or_default();
        if keys.is_empty() {
            // Its fingerprints are no longer kept: nothing to place.
            break;
        }
        let there = held.of(ix, now)?;
        // Shingle i covers tokens i..i + k: those inside the run.
        let last = (r.end - k).min(keys.len().saturating_sub(1) as u32);
        let mut i = r.start;
        while i <= last {
            if !there.contains_key(&keys[i as usize]) {
                i += 1;
                continue;
            }
            let first = i;
            while i <= last && there.contains_key(&keys[i as usize]) {
                i += 1;
            }
            let tokens = first..i - 1 + k;
            if tokens.end - tokens.start < min {
                continue;
            }
            let at = there[&keys[first as usize]];
            let stretch = &keys[first as usize..i as usize];
            let end = (at + tokens.end - tokens.start).min(rows[now as usize].tokens);
            out.push(Copy {
                origin: now,
                origin_tokens: at..end,
                tokens,
                hash: content_hash(stretch),
            });
        }
    }
    Ok(out)
}

/// A passage's content as one number: FNV-1a over its shingle keys, in
/// order.
pub fn content_hash(keys: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for key in keys {
        for b in key.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::time::{Duration, SystemTime};

    use proptest::prelude::*;

    use super::*;
    use crate::Indexer;
    use lineage_core::fingerprint::polynomial::standard;
    use lineage_origin::Params;
    use lineage_source::{Filter, Order, WalkOptions};
    use lineage_store::index::Quiet;
    use lineage_testing::{TempDir, text};

    /// Pages of paragraphs from a shared pool (so they copy each other),
    /// written in order, some later rewritten or deleted; the index of
    /// them.
    fn indexed(pages: &[Vec<usize>], rewritten: &[usize], deleted: &[usize]) -> (TempDir, Indexer) {
        let base = TempDir::new("check-prop");
        let (root, dir) = (base.0.join("root"), base.0.join("index"));
        std::fs::create_dir_all(&root).unwrap();
        let pool: Vec<String> = (0..6).map(|i| text(100 + i, 20 + 7 * i as usize)).collect();
        let write = |name: &str, body: &str, secs: u64| {
            let p = root.join(name);
            std::fs::write(&p, body).unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
                .unwrap();
        };
        let body = |paras: &[usize], own: u64| {
            let mut b = text(own, 10);
            for &p in paras {
                b.push_str("\n\n");
                b.push_str(&pool[p]);
            }
            b
        };
        let mut ix = Indexer::open(&root, &dir, Params::default(), standard(), &mut Quiet).unwrap();
        let sync = |ix: &mut Indexer| {
            let walk = lineage_source::walk_with(
                &root,
                &Filter::default_patterns(),
                WalkOptions::default(),
            )
            .unwrap();
            ix.reconcile(walk, 1 << 20, Order::Mtime, &mut Quiet)
                .unwrap();
        };
        for (i, paras) in pages.iter().enumerate() {
            write(&format!("p{i}.md"), &body(paras, i as u64), 1000 + i as u64);
        }
        sync(&mut ix);
        for &i in rewritten.iter().filter(|&&i| i < pages.len()) {
            // Its own words and its paragraphs in reverse, without the first.
            let mut paras: Vec<usize> = pages[i].iter().rev().copied().collect();
            paras.pop();
            write(
                &format!("p{i}.md"),
                &body(&paras, 50 + i as u64),
                2000 + i as u64,
            );
        }
        for &i in deleted.iter().filter(|&&i| i < pages.len()) {
            let _ = std::fs::remove_file(root.join(format!("p{i}.md")));
        }
        sync(&mut ix);
        (base, ix)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Every counted copy is in its page and still in its origin's live
        /// version, word for word (by shingle keys), long enough, disjoint,
        /// hashed by its keys; and every stretch the definition counts is
        /// there: the copies are exactly what the definition says.
        #[test]
        fn the_copies_are_what_the_definition_counts(
            pages in proptest::collection::vec(proptest::collection::vec(0usize..6, 1..5), 2..7),
            rewritten in proptest::collection::vec(0usize..7, 0..3),
            deleted in proptest::collection::vec(0usize..7, 0..2),
            min in 8u32..60,
        ) {
            let (_t, indexer) = indexed(&pages, &rewritten, &deleted);
            let ix = indexer.index();
            let rows = crate::query::rows(ix).unwrap();
            let live = Live::now(ix, &rows);
            let policy = CheckConfig { min_passage: min, near_duplicate: 0.0, ..CheckConfig::default() };
            let checked = check(ix, &rows, &live, None, &policy).unwrap();
            let k = ix.params().k as u32;
            let mut found: HashMap<u32, Vec<Copy>> = checked.copies.into_iter().collect();
            for &id in live.ids() {
                let row = &rows[id as usize];
                let keys = ix.shingle_keys(id).unwrap();
                // The definition, brute force: each run credited to another
                // live path, its shingles the origin's live version holds,
                // in maximal consecutive stretches of at least `min` tokens.
                let mut want: Vec<(u32, Range<u32>)> = Vec::new();
                for r in &ix.outcome(id).unwrap().unwrap().runs {
                    let Some(o) = r.origin else { continue };
                    let opath = &rows[o as usize].path;
                    if *opath == row.path || r.end - r.start < k { continue; }
                    let Some(now) = live.get(opath) else { continue };
                    let theirs: HashSet<u64> = ix.shingle_keys(now).unwrap().into_iter().collect();
                    let held: Vec<bool> = (r.start..=r.end - k).map(|i| theirs.contains(&keys[i as usize])).collect();
                    let mut i = 0;
                    while i < held.len() {
                        if !held[i] { i += 1; continue; }
                        let s = i;
                        while i < held.len() && held[i] { i += 1; }
                        let tokens = r.start + s as u32..r.start + i as u32 - 1 + k;
                        if tokens.end - tokens.start >= min { want.push((now, tokens)); }
                    }
                }
                let got = found.remove(&id).unwrap_or_default();
                let got_places: Vec<(u32, Range<u32>)> = got.iter().map(|c| (c.origin, c.tokens.clone())).collect();
                prop_assert_eq!(&got_places, &want, "{}", row.path);
                for c in &got {
                    let stretch = &keys[c.tokens.start as usize..=(c.tokens.end - k) as usize];
                    prop_assert_eq!(c.hash, content_hash(stretch));
                    // Where the origin holds it: its first shingle there.
                    let theirs = ix.shingle_keys(c.origin).unwrap();
                    prop_assert_eq!(theirs[c.origin_tokens.start as usize], stretch[0]);
                }
            }
            prop_assert!(found.is_empty(), "copies of pages not live: {:?}", found.keys());
        }
    }
}
