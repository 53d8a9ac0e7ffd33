//! `lineage stale ROOT [PAGE]`: the copies that went stale
//! (docs/algorithms.md §13), from the index: the passages each page copied
//! from another page whose words have since changed there, with the
//! origin's words now, and the passages a page changed that its origin
//! still holds as they were (a fix made in one place only). Most stale
//! first. Caught up first as `explain` is.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::diff::RangeJson;
use super::explain::{self, TableRegime, VersionJson};
use super::show::show;
use super::{Fatal, IndexAt, PathJson, SourceArgs, commit_line};
use lineage_config::Config;
use lineage_engine::query::Row;
use lineage_engine::{CONTEXT, Stale, StaleKind, StalePassage, Text, Texts};
use lineage_store::index::Read;

#[derive(Args, Debug)]
pub(super) struct StaleArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// Only this page: its path under ROOT (as `scan` and the TUI name it),
    /// or a path to it from here [default: every live page].
    page: Option<PathBuf>,
    /// Print `lineage-stale/1` JSON (docs/formats.md §6) instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: IndexAt,
}

/// How the text output marks the words of the side that did not change,
/// and of the one that did (as `git diff --word-diff` does).
const OLD: [&str; 2] = ["[-", "-]"];
const NEW: [&str; 2] = ["{+", "+}"];

pub(super) fn run(args: StaleArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    config.validate()?;
    let root = args.source.root.as_path();
    let (ix, rows, regime) = explain::read_index(root, &args.store, &config)?;
    let only = match &args.page {
        Some(p) => {
            let name = explain::document_name(root, p);
            let id = explain::pick(&rows, &name, None)?;
            Some(rows[id as usize].path.clone())
        }
        None => None,
    };
    let (stale, texts) = lineage_engine::stale(&ix, &rows, only.as_deref())?;
    let found = Found {
        rows: &rows,
        stale: &stale,
        texts: &texts,
        regime: regime.as_ref(),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        super::show::json(&mut out, &found.json(&ix))?;
        writeln!(out)?;
    } else {
        found.text(&ix, only.is_some(), &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// What `stale` found, ready to print.
struct Found<'a> {
    rows: &'a [Row],
    stale: &'a Stale,
    texts: &'a Texts,
    regime: Option<&'a TableRegime>,
}

impl Found<'_> {
    fn side(&self, id: u32) -> Option<&Text> {
        self.texts.peek(id)
    }

    fn name(&self, id: u32) -> String {
        let r = &self.rows[id as usize];
        format!("{} v{}", show(&r.path), r.version)
    }

    /// The version's number, with its commit where it has one.
    fn version_with_commit(&self, ix: &impl Read, id: u32) -> String {
        let v = format!("v{}", self.rows[id as usize].version);
        match ix.commit_of(id).ok().flatten() {
            Some(c) => format!("{v} ({})", commit_line(&c)),
            None => v,
        }
    }

    fn text(&self, ix: &impl Read, one: bool, out: &mut impl Write) -> std::io::Result<()> {
        let passages: usize = self.stale.pages.iter().map(|p| p.passages.len()).sum();
        let tokens: u32 = self.stale.pages.iter().map(|p| p.stale_tokens()).sum();
        if passages == 0 {
            let what = if one { "this page" } else { "no page" };
            let tail = if one { " has none" } else { " has any" };
            writeln!(
                out,
                "{what}{tail}: every passage copied from another page is as its origin has it now"
            )?;
        } else {
            writeln!(
                out,
                "{} with stale passages: {}, {}",
                plural(self.stale.pages.len(), "page", "pages"),
                plural(passages, "passage", "passages"),
                plural(tokens as usize, "token", "tokens")
            )?;
        }
        match self.regime {
            Some(r) if r.name == "exact" => writeln!(out, "table {}", r.sentence)?,
            Some(r) => writeln!(
                out,
                "table {}: the passages are those the index's estimate credits to another page; a copied passage it missed is not here",
                r.sentence
            )?,
            None => writeln!(
                out,
                "table: held by a running lineage, its regime not known here; the passages are those the index's estimate credits"
            )?,
        }
        if self.stale.unaligned > 0 {
            writeln!(
                out,
                "{} without their words: a version's text is no longer kept (history_budget)",
                plural(self.stale.unaligned as usize, "passage", "passages")
            )?;
        }
        for p in &self.stale.pages {
            writeln!(
                out,
                "\n{}: {}, {} stale",
                self.name(p.id),
                plural(p.passages.len(), "passage", "passages"),
                plural(p.stale_tokens() as usize, "token", "tokens")
            )?;
            for x in &p.passages {
                self.passage(ix, p.id, x, out)?;
            }
        }
        Ok(())
    }

    fn passage(
        &self,
        ix: &impl Read,
        id: u32,
        x: &StalePassage,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let at = match self.side(id) {
            Some(s) if !x.tokens.is_empty() => lines_text(s.lines(&x.tokens)),
            _ => format!("tokens {}–{}", x.tokens.start, x.tokens.end),
        };
        let origin = &self.rows[x.origin as usize];
        let what = match (x.kind, x.changed_in) {
            (StaleKind::Changed | StaleKind::Removed, Some(v)) => format!(
                "copied from {}: {} there in {}",
                self.name(x.origin),
                if x.kind == StaleKind::Removed {
                    "removed"
                } else {
                    "changed"
                },
                self.version_with_commit(ix, v)
            ),
            (_, v) => format!(
                "copied from {}: changed here in {}; {} v{} still has it as copied",
                self.name(x.origin),
                v.map_or_else(|| "?".into(), |v| self.version_with_commit(ix, v)),
                show(&origin.path),
                x.origin_now.map_or(0, |n| self.rows[n as usize].version)
            ),
        };
        writeln!(out, "  {at}, {what}")?;
        let there = x.origin_now.and_then(|n| self.texts.peek(n));
        let (Some(page), Some(there)) = (self.texts.peek(id), there) else {
            return Ok(());
        };
        for d in &x.differences {
            // The side that moved on is marked new, the other old.
            let ([ho, hc], [to, tc]) = if x.kind.in_origin() {
                (OLD, NEW)
            } else {
                (NEW, OLD)
            };
            let h = marked(page, &d.here, &x.tokens, ho, hc);
            let t = marked(there, &d.there, &x.there, to, tc);
            quote(out, "here ", &h)?;
            quote(out, "there", &t)?;
        }
        Ok(())
    }

    fn json(&self, ix: &impl Read) -> StaleJson {
        let range = |s: Option<&Text>, r: &Range<u32>| RangeJson {
            tokens: [r.start, r.end],
            lines: s.map_or([0, 0], |s| s.lines(r)),
        };
        let words = |s: Option<&Text>, r: &Range<u32>| s.map(|s| s.words(r).to_string());
        let version = |id: u32| VersionJson::of(self.rows, id).with_commit(ix, id);
        let pages = (self.stale.pages.iter())
            .map(|p| {
                let page = self.side(p.id);
                let row = &self.rows[p.id as usize];
                PageJson {
                    path: PathJson::new(&row.path),
                    version: row.version,
                    stale_tokens: p.stale_tokens(),
                    passages: (p.passages.iter())
                        .map(|x| {
                            let there = x.origin_now.and_then(|n| self.side(n));
                            PassageJson {
                                kind: kind_name(x.kind),
                                here: range(page, &x.tokens),
                                text: words(page, &x.tokens),
                                copied_from: version(x.origin),
                                origin_now: x.origin_now.map(version),
                                there: x.origin_now.map(|_| range(there, &x.there)),
                                origin_text: words(there, &x.there),
                                changed_in: x.changed_in.map(version),
                                copied_tokens: x.copied,
                                stale_tokens: x.stale_tokens,
                                differences: (x.differences.iter())
                                    .map(|d| DifferenceJson {
                                        here: range(page, &d.here),
                                        here_text: words(page, &d.here),
                                        there: range(there, &d.there),
                                        there_text: words(there, &d.there),
                                    })
                                    .collect(),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        StaleJson {
            format: "lineage-stale/1",
            regime: self.regime.map(|r| r.name),
            unaligned: self.stale.unaligned,
            pages,
        }
    }
}

/// "1 page", "2 pages".
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn lines_text([a, b]: [usize; 2]) -> String {
    if a == b {
        format!("line {a}")
    } else {
        format!("lines {a}–{b}")
    }
}

/// The words of `r` in `t` with [`CONTEXT`] tokens either side (inside
/// `within`), the changed ones between `open` and `close`.
fn marked(t: &Text, r: &Range<u32>, within: &Range<u32>, open: &str, close: &str) -> String {
    let [before, words, after] = t.around(r, within, CONTEXT);
    format!("{before}{open}{words}{close}{after}")
}

fn quote(out: &mut impl Write, mark: &str, text: &str) -> std::io::Result<()> {
    for line in text.lines() {
        writeln!(out, "    {mark} │ {}", show(line))?;
    }
    Ok(())
}

/// A kind as the JSON names it.
fn kind_name(k: StaleKind) -> &'static str {
    match k {
        StaleKind::Changed => "changed",
        StaleKind::Removed => "removed",
        StaleKind::ChangedHere => "changed_here",
    }
}

#[derive(Serialize)]
struct StaleJson {
    format: &'static str,
    /// The table's regime (`table.regime`); None where a running lineage
    /// holds the index.
    regime: Option<&'static str>,
    unaligned: u32,
    pages: Vec<PageJson>,
}

#[derive(Serialize)]
struct PageJson {
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    stale_tokens: u32,
    passages: Vec<PassageJson>,
}

#[derive(Serialize)]
struct PassageJson {
    kind: &'static str,
    /// Where it stands in the page's newest version.
    here: RangeJson,
    text: Option<String>,
    copied_from: VersionJson,
    origin_now: Option<VersionJson>,
    /// Where it stands in the origin's newest version.
    there: Option<RangeJson>,
    origin_text: Option<String>,
    changed_in: Option<VersionJson>,
    copied_tokens: u32,
    stale_tokens: u32,
    differences: Vec<DifferenceJson>,
}

#[derive(Serialize)]
struct DifferenceJson {
    here: RangeJson,
    here_text: Option<String>,
    there: RangeJson,
    there_text: Option<String>,
}
