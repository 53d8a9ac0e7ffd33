//! `lineage diff ROOT PAGE`: what a version changed since its predecessor
//! (docs/algorithms.md §12), from
//! the index: the passages new here (with where each was copied from, as
//! the index's origin pass found), those removed (with their words), and
//! those moved within the page. Caught up first as `explain` is.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::explain::{self, VersionJson, Words, status_name};
use super::show::show;
use super::{Fatal, IndexAt, PathJson, SourceArgs};
use lineage_config::{Basis, Config};
use lineage_engine::query::{self, Row};
use lineage_engine::{How, Hunk, OriginView, Predecessor, hunks, token_keys};
use lineage_store::index::Read;

#[derive(Args, Debug)]
pub(super) struct DiffArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// The page: its path under ROOT (as `scan` and the TUI name it), or a
    /// path to it from here. A deleted page is found by its old path.
    path: PathBuf,
    /// Which of its versions (1 is its first) [default: the latest].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    version: Option<u32>,
    /// Compare with this page instead of the predecessor: a path given as
    /// PATH is, at its latest version, or at version N after an `@`.
    #[arg(long, value_name = "PATH[@N]")]
    against: Option<String>,
    /// Compare with the page's predecessor; (`folder`) the same page in the
    /// previous version folder past its own earlier versions; or
    /// (`release`) the page at the newest release before it, a tag matching
    /// the config's `release_tags` on the git history read (the folder basis
    /// where there is none) [default: the config's `basis`, predecessor].
    #[arg(long, value_name = "BASIS", conflicts_with = "against")]
    basis: Option<Basis>,
    /// Print `lineage-diff/1` JSON (docs/formats.md §6) instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: IndexAt,
}

pub(super) fn run(args: DiffArgs, config: Config) -> Result<(), Fatal> {
    let (rules, tags) = (config.predecessor.clone(), config.release_tags.clone());
    let basis = args.basis.unwrap_or(config.basis);
    let (ix, rows, id) =
        explain::read_page(&args.source, &args.store, config, &args.path, args.version)?;
    let base = match &args.against {
        Some(spec) => Some(against(&args.source, &rows, spec)?),
        None => {
            let lineage = lineage_engine::Lineage::new(&ix, &rows, &rules)?;
            (lineage.tags(&tags).base(id, basis)).map(Base::from)
        }
    };
    let view = query::origin_view(&ix, &rows, id, false)?;
    let page = match &view.text {
        Ok(t) => t.as_str(),
        Err(why) => return Err(Fatal(format!("the page's text is not kept: {why}"))),
    };
    let old = match base.as_ref().map(|b| query::text_of(&ix, &rows, b.id)) {
        Some((Err(why), _)) => {
            return Err(Fatal(format!(
                "the predecessor's text is no longer kept ({why}): what changed since it cannot be told"
            )));
        }
        Some((Ok(text), spans)) => Some((text, spans)),
        None => None,
    };
    let (old_text, old_spans) = old.as_ref().map_or(("", &[][..]), |(t, s)| (t.as_str(), s));
    let changes = lineage_engine::changes(&token_keys(old_text), &token_keys(page));
    let diffed = Diffed {
        view: &view,
        base: base.as_ref(),
        page: Side::new(page, &view.spans),
        old: Side::new(old_text, old_spans),
        hunks: hunks(&changes),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        super::show::json(&mut out, &diffed.json(&ix, &rows))?;
        writeln!(out)?;
    } else {
        diffed.text(&ix, &rows, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// The version `--against PATH[@N]` names.
fn against(source: &SourceArgs, rows: &[Row], spec: &str) -> Result<Base, Fatal> {
    let (path, version) = match spec.rsplit_once('@') {
        Some((p, n)) if !p.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            let n = n
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| Fatal(format!("--against {spec}: no version {n}")))?;
            (p, Some(n))
        }
        _ => (spec, None),
    };
    let name = explain::document_name(&source.root, path.as_ref());
    let id =
        explain::pick(rows, &name, version).map_err(|Fatal(e)| Fatal(format!("--against: {e}")))?;
    Ok(Base { id, how: None })
}

/// What the page is compared with: its predecessor, or the version asked.
pub(super) struct Base {
    pub(super) id: u32,
    /// Why it is the predecessor; None: `--against` named it.
    pub(super) how: Option<How>,
}

impl From<Predecessor> for Base {
    fn from(p: Predecessor) -> Base {
        Base {
            id: p.id,
            how: Some(p.how),
        }
    }
}

/// Why it is compared with, as its JSON names it.
fn how_name(how: Option<&How>) -> &'static str {
    match how {
        None => "asked",
        Some(How::Earlier) => "earlier",
        Some(How::Renamed { .. }) => "renamed",
        Some(How::Folder) => "folder",
        Some(How::Rule) => "rule",
        Some(How::Release { .. }) => "release",
    }
}

/// Why it is compared with, for a person.
pub(super) fn how_text(how: Option<&How>) -> String {
    match how {
        None => "as asked".into(),
        Some(How::Earlier) => "the page's previous version".into(),
        Some(How::Renamed { from }) => {
            format!("the page's previous version, named {} then", show(from))
        }
        Some(How::Folder) => "the same page in the previous version folder".into(),
        Some(How::Rule) => "the page the config's [[predecessor]] rule names".into(),
        Some(How::Release { tag, commit }) => format!(
            "the page at release {} ({})",
            show(tag),
            commit.get(..7).unwrap_or(commit)
        ),
    }
}

/// JSON of a predecessor: the version, why, and its old name.
#[derive(Serialize)]
pub(super) struct PredecessorJson {
    #[serde(flatten)]
    version: VersionJson,
    how: &'static str,
    /// A renamed page's name then.
    #[serde(skip_serializing_if = "Option::is_none")]
    renamed_from: Option<PathJson>,
    /// The release it is the page at (`how: release`).
    #[serde(skip_serializing_if = "Option::is_none")]
    release: Option<ReleaseJson>,
}

/// JSON of a release: its tag and commit.
#[derive(Serialize)]
pub(super) struct ReleaseJson {
    tag: String,
    commit: String,
}

impl PredecessorJson {
    pub(super) fn of(ix: &impl Read, rows: &[Row], b: &Base) -> PredecessorJson {
        PredecessorJson {
            version: VersionJson::of(rows, b.id).with_commit(ix, b.id),
            how: how_name(b.how.as_ref()),
            renamed_from: match &b.how {
                Some(How::Renamed { from }) => Some(PathJson::new(from)),
                _ => None,
            },
            release: match &b.how {
                Some(How::Release { tag, commit }) => Some(ReleaseJson {
                    tag: tag.clone(),
                    commit: commit.clone(),
                }),
                _ => None,
            },
        }
    }
}

/// A text with its token spans and line starts.
pub(super) struct Side<'a> {
    text: &'a str,
    spans: &'a [(u32, u32)],
    /// Byte offset of each line after the first.
    lines: Vec<usize>,
}

impl<'a> Side<'a> {
    pub(super) fn new(text: &'a str, spans: &'a [(u32, u32)]) -> Side<'a> {
        let lines = (text.match_indices('\n')).map(|(i, _)| i + 1).collect();
        Side { text, spans, lines }
    }

    /// The words of tokens `r`, as written.
    pub(super) fn words(&self, r: &Range<u32>) -> &'a str {
        lineage_engine::token_bytes(self.spans, r.clone())
            .and_then(|b| self.text.get(b))
            .unwrap_or("")
    }

    /// The lines (from 1, both included) tokens `r` stand on.
    pub(super) fn lines(&self, r: &Range<u32>) -> [usize; 2] {
        let at = |b: usize| self.lines.partition_point(|&s| s <= b) + 1;
        match lineage_engine::token_bytes(self.spans, r.clone()) {
            Some(b) => [at(b.start), at(b.end.saturating_sub(1).max(b.start))],
            None => [0, 0],
        }
    }
}

/// A diff ready to print.
struct Diffed<'a> {
    view: &'a OriginView,
    base: Option<&'a Base>,
    page: Side<'a>,
    old: Side<'a>,
    hunks: Vec<Hunk>,
}

/// A part of a new passage copied from elsewhere, as the index's origin
/// pass found: its tokens here, the origin, and where it starts there.
struct Copied {
    tokens: Range<u32>,
    origin: u32,
    there: Option<u32>,
}

impl Diffed<'_> {
    /// Token counts: kept, removed, new, moved.
    fn counts(&self) -> [u32; 4] {
        let mut n = [0; 4];
        for h in &self.hunks {
            let (i, r) = match h {
                Hunk::Kept { new, .. } => (0, new),
                Hunk::Removed { old } => (1, old),
                Hunk::New { new } => (2, new),
                Hunk::Moved { new, .. } => (3, new),
            };
            n[i] += r.end - r.start;
        }
        n
    }

    /// The parts of the page's tokens `r` that the index's outcome says
    /// were copied from another version.
    fn copied(&self, r: &Range<u32>) -> Vec<Copied> {
        let v = self.view;
        (v.runs.iter().zip(&v.targets))
            .filter_map(|(run, target)| {
                let origin = run.origin.filter(|&o| o != v.id)?;
                let (s, e) = (run.start.max(r.start), run.end.min(r.end));
                (s < e).then(|| Copied {
                    tokens: s..e,
                    origin,
                    there: target.map(|t| t.token + (s - run.start)),
                })
            })
            .collect()
    }

    fn name(rows: &[Row], id: u32) -> String {
        let r = &rows[id as usize];
        format!("{} v{}", show(&r.path), r.version)
    }

    fn text(&self, ix: &impl Read, rows: &[Row], out: &mut impl Write) -> std::io::Result<()> {
        let v = self.view;
        let status = v
            .status
            .describe(v.version)
            .unwrap_or_else(|| "live".into());
        writeln!(
            out,
            "{}, version {} ({status}), {} tokens",
            show(&v.path),
            v.version,
            v.spans.len()
        )?;
        let Some(base) = self.base else {
            writeln!(
                out,
                "no predecessor: a first version, with no earlier version folder holding the page; everything is new"
            )?;
            return self.passages(ix, rows, out);
        };
        let [kept, removed, new, moved] = self.counts();
        writeln!(
            out,
            "since {} ({}), {} tokens: {kept} kept, {removed} removed, {new} new, {moved} moved",
            Self::name(rows, base.id),
            how_text(base.how.as_ref()),
            self.old.spans.len()
        )?;
        self.passages(ix, rows, out)
    }

    fn passages(&self, ix: &impl Read, rows: &[Row], out: &mut impl Write) -> std::io::Result<()> {
        let mut words = Words::new(ix, rows);
        let lines = |s: &Side, r: &Range<u32>| {
            let [a, b] = s.lines(r);
            if a == b {
                format!("line {a}")
            } else {
                format!("lines {a}–{b}")
            }
        };
        let quote = |out: &mut dyn Write, mark: &str, text: &str| -> std::io::Result<()> {
            for line in text.lines() {
                writeln!(out, "  {mark} │ {}", show(line))?;
            }
            Ok(())
        };
        for h in &self.hunks {
            match h {
                Hunk::Kept { .. } => {}
                Hunk::Removed { old } => {
                    writeln!(
                        out,
                        "\nremoved: its tokens {}–{} ({})",
                        old.start,
                        old.end,
                        lines(&self.old, old)
                    )?;
                    quote(out, "-", self.old.words(old))?;
                }
                Hunk::Moved { old, new } => {
                    writeln!(
                        out,
                        "\nmoved: tokens {}–{} ({}), from its tokens {}–{} ({})",
                        new.start,
                        new.end,
                        lines(&self.page, new),
                        old.start,
                        old.end,
                        lines(&self.old, old)
                    )?;
                    quote(out, "~", self.page.words(new))?;
                }
                Hunk::New { new } => {
                    writeln!(
                        out,
                        "\nnew: tokens {}–{} ({})",
                        new.start,
                        new.end,
                        lines(&self.page, new)
                    )?;
                    quote(out, "+", self.page.words(new))?;
                    for c in self.copied(new) {
                        let at = c.there.map(|t| {
                            let n = c.tokens.end - c.tokens.start;
                            match words.of(c.origin, t, t + n) {
                                Some(_) => format!(", its tokens {}–{}", t, t + n),
                                None => format!(", its tokens {}–{} (text not kept)", t, t + n),
                            }
                        });
                        writeln!(
                            out,
                            "  tokens {}–{} copied from {}{}",
                            c.tokens.start,
                            c.tokens.end,
                            Self::name(rows, c.origin),
                            at.unwrap_or_default()
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    fn json(&self, ix: &impl Read, rows: &[Row]) -> DiffJson {
        let v = self.view;
        let [kept, removed, new, moved] = self.counts();
        let mut words = Words::new(ix, rows);
        let range = |s: &Side, r: &Range<u32>| RangeJson {
            tokens: [r.start, r.end],
            lines: s.lines(r),
        };
        let hunks = (self.hunks.iter())
            .map(|h| match h {
                Hunk::Kept { old, new } => HunkJson {
                    kind: "kept",
                    old: Some(range(&self.old, old)),
                    new: Some(range(&self.page, new)),
                    text: None,
                    copied: Vec::new(),
                },
                Hunk::Removed { old } => HunkJson {
                    kind: "removed",
                    old: Some(range(&self.old, old)),
                    new: None,
                    text: Some(self.old.words(old).to_string()),
                    copied: Vec::new(),
                },
                Hunk::Moved { old, new } => HunkJson {
                    kind: "moved",
                    old: Some(range(&self.old, old)),
                    new: Some(range(&self.page, new)),
                    text: Some(self.page.words(new).to_string()),
                    copied: Vec::new(),
                },
                Hunk::New { new } => HunkJson {
                    kind: "new",
                    old: None,
                    new: Some(range(&self.page, new)),
                    text: Some(self.page.words(new).to_string()),
                    copied: (self.copied(new).into_iter())
                        .map(|c| {
                            let n = c.tokens.end - c.tokens.start;
                            CopiedJson {
                                tokens: [c.tokens.start, c.tokens.end],
                                origin: VersionJson::of(rows, c.origin).with_commit(ix, c.origin),
                                origin_tokens: c.there.map(|t| [t, t + n]),
                                origin_text: c.there.and_then(|t| words.of(c.origin, t, t + n)),
                            }
                        })
                        .collect(),
                },
            })
            .collect();
        DiffJson {
            format: "lineage-diff/1",
            path: PathJson::new(&v.path),
            version: v.version,
            status: status_name(v.status),
            tokens: v.spans.len() as u32,
            predecessor: self.base.map(|b| PredecessorJson::of(ix, rows, b)),
            predecessor_tokens: self.base.map(|_| self.old.spans.len() as u32),
            kept,
            removed,
            new,
            moved,
            hunks,
        }
    }
}

#[derive(Serialize)]
struct DiffJson {
    format: &'static str,
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    status: &'static str,
    tokens: u32,
    /// None: a first version with no predecessor, everything new.
    predecessor: Option<PredecessorJson>,
    predecessor_tokens: Option<u32>,
    kept: u32,
    removed: u32,
    new: u32,
    moved: u32,
    hunks: Vec<HunkJson>,
}

#[derive(Serialize)]
pub(super) struct RangeJson {
    pub(super) tokens: [u32; 2],
    pub(super) lines: [usize; 2],
}

#[derive(Serialize)]
struct HunkJson {
    kind: &'static str,
    /// In the predecessor (kept, removed, moved).
    #[serde(skip_serializing_if = "Option::is_none")]
    old: Option<RangeJson>,
    /// In the page (kept, new, moved).
    #[serde(skip_serializing_if = "Option::is_none")]
    new: Option<RangeJson>,
    /// The words (not for kept passages).
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// Of a new passage: its parts copied from elsewhere.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    copied: Vec<CopiedJson>,
}

#[derive(Serialize)]
struct CopiedJson {
    tokens: [u32; 2],
    origin: VersionJson,
    origin_tokens: Option<[u32; 2]>,
    origin_text: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_from_one_at_each_newline() {
        let text = "a b\nc\n\nd e";
        let spans = [(0, 1), (2, 3), (4, 5), (7, 8), (9, 10)];
        let s = Side::new(text, &spans);
        assert_eq!(s.lines(&(0..2)), [1, 1]);
        assert_eq!(s.lines(&(1..3)), [1, 2]);
        assert_eq!(s.lines(&(3..5)), [4, 4]);
        assert_eq!(s.words(&(1..3)), "b\nc");
    }
}
