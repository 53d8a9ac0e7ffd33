//! `lineage copies ROOT PATH`: the reverse of `explain`. Every live page
//! of another path that copies from this one, most copied first (or newest
//! first), with the passages it took and where each stands in the page:
//! what a writer checks before editing a page, as the other pages carrying
//! the same text may have to change too.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::explain::{VersionJson, Words, params_json, read_page, status_name};
use super::show::ParamsJson;
use super::show::show;
use super::{Fatal, IndexAt, PathJson, SourceArgs};
use lineage_config::Config;
use lineage_engine::PageCopy;
use lineage_engine::query::{self, Row};
use lineage_origin::Run;
use lineage_store::index::Read;

#[derive(Args, Debug)]
pub(super) struct CopiesArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// The page: its path under ROOT (as `scan` and the TUI name it), or a
    /// path to it from here.
    path: PathBuf,
    /// Copies of its text up to this version (1 is its first) [default: the
    /// latest]: a passage the page kept from an earlier version is credited
    /// to that version.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    version: Option<u32>,
    /// List each copy's passages under its line, with their words (passages
    /// shorter than a shingle are counted, not listed).
    #[arg(long)]
    passages: bool,
    /// The latest copies first instead of the most copied.
    #[arg(long)]
    newest: bool,
    /// Print `lineage-copies/2` JSON (docs/formats.md §6) instead of text:
    /// every copy and passage, short ones too.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: IndexAt,
}

pub(super) fn run(args: CopiesArgs, config: Config) -> Result<(), Fatal> {
    let (ix, rows, id) = read_page(&args.source, &args.store, config, &args.path, args.version)?;
    let mut copies = query::copies(&ix, &rows, id)?;
    if !args.newest {
        query::by_share(&mut copies);
    }
    let found = Found::new(&ix, &rows, id, &copies);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        super::show::json(&mut out, &found.json(&ix))?;
        writeln!(out)?;
    } else {
        let order = if args.newest {
            "newest first"
        } else {
            "most copied first"
        };
        found.text(&mut out, order, args.passages)?;
    }
    out.flush()?;
    Ok(())
}

/// The copies with the words of each passage, in the copy and in the page.
struct Found<'a> {
    rows: &'a [Row],
    /// The shingle length: a passage shorter is folded into a count.
    k: u32,
    id: u32,
    status: lineage_engine::VersionStatus,
    copies: &'a [PageCopy],
    /// Per copy, per passage: (its text in the copy, the page's text there).
    texts: Vec<Vec<(Option<String>, Option<String>)>>,
}

impl<'a> Found<'a> {
    fn new(ix: &impl Read, rows: &'a [Row], id: u32, copies: &'a [PageCopy]) -> Found<'a> {
        let mut words = Words::new(ix, rows);
        let texts = (copies.iter())
            .map(|c| {
                (c.passages.iter().zip(&c.targets))
                    .map(|(p, t)| {
                        let len = p.end - p.start;
                        let there = t.and_then(|t| words.of(t.id, t.token, t.token + len));
                        (words.of(c.id, p.start, p.end), there)
                    })
                    .collect()
            })
            .collect();
        Found {
            rows,
            k: ix.params().k as u32,
            id,
            status: query::status_of(ix, rows, id),
            copies,
            texts,
        }
    }

    fn name(&self, id: u32) -> String {
        let r = &self.rows[id as usize];
        format!("{} v{}", show(&r.path), r.version)
    }

    /// Whether passage `p` is shorter than a shingle: a few tokens that
    /// happen to match, listed in JSON only.
    fn short(&self, p: &Run) -> bool {
        p.end - p.start < self.k
    }

    /// A line per copy, `order` as told; a copy of short passages only is
    /// folded into one count at the end.
    fn text(&self, out: &mut impl Write, order: &str, passages: bool) -> std::io::Result<()> {
        let r = &self.rows[self.id as usize];
        let status = (self.status.describe(r.version)).unwrap_or_else(|| "live".into());
        let pages = match self.copies.len() {
            0 => "no other live page copies from it".to_string(),
            1 => "1 other live page copies from it".to_string(),
            n => format!("{n} other live pages copy from it, {order}"),
        };
        writeln!(out, "{} ({status}): {pages}", self.name(self.id))?;
        let mut folded = 0;
        for (c, texts) in self.copies.iter().zip(&self.texts) {
            let short = c.passages.iter().filter(|p| self.short(p)).count();
            if short == c.passages.len() {
                folded += 1;
                continue;
            }
            let shorter = match short {
                0 => String::new(),
                1 => ", 1 shorter than a shingle".to_string(),
                n => format!(", {n} shorter than a shingle"),
            };
            let n = c.passages.len();
            writeln!(
                out,
                "{:6.1} %  {}  ({} of {} tokens, {n} passage{}{shorter})",
                c.percent(),
                self.name(c.id),
                c.copied(),
                c.tokens,
                if n == 1 { "" } else { "s" },
            )?;
            if !passages {
                continue;
            }
            for ((p, t), (text, _)) in c.passages.iter().zip(&c.targets).zip(texts) {
                if self.short(p) {
                    continue;
                }
                let origin = p.origin.map_or(String::new(), |o| self.name(o));
                let at = t.map_or(String::new(), |t| {
                    format!(" tokens {}–{}", t.token, t.token + p.end - p.start)
                });
                writeln!(out, "    tokens {}–{} from {origin}{at}", p.start, p.end)?;
                for line in text.as_deref().unwrap_or("").lines() {
                    writeln!(out, "      │ {}", show(line))?;
                }
            }
        }
        if folded > 0 {
            let pages = if folded == 1 { "page" } else { "pages" };
            writeln!(
                out,
                "  and {folded} {pages} copying only passages shorter than a shingle ({} tokens; --json lists them)",
                self.k
            )?;
        }
        Ok(())
    }

    fn json(&self, ix: &impl Read) -> CopiesJson {
        let r = &self.rows[self.id as usize];
        CopiesJson {
            format: "lineage-copies/2",
            path: PathJson::new(&r.path),
            version: r.version,
            status: status_name(self.status),
            params: params_json(ix),
            copies: (self.copies.iter().zip(&self.texts))
                .map(|(c, texts)| CopyJson {
                    path: PathJson::new(&c.path),
                    version: c.version,
                    tokens: c.tokens,
                    copied_tokens: c.copied(),
                    percent: c.percent(),
                    short_passages: c.passages.iter().filter(|p| self.short(p)).count(),
                    passages: (c.passages.iter().zip(&c.targets).zip(texts))
                        .map(|((p, t), (text, origin_text))| PassageJson {
                            tokens: [p.start, p.end],
                            text: text.clone(),
                            origin: p
                                .origin
                                .map(|o| VersionJson::of(self.rows, o).with_commit(ix, o)),
                            origin_tokens: t.map(|t| [t.token, t.token + p.end - p.start]),
                            origin_text: origin_text.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct CopiesJson {
    format: &'static str,
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    status: &'static str,
    params: ParamsJson,
    copies: Vec<CopyJson>,
}

#[derive(Serialize)]
struct CopyJson {
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    tokens: u32,
    copied_tokens: u32,
    percent: f64,
    /// Its passages shorter than a shingle (the text folds them into a count).
    short_passages: usize,
    passages: Vec<PassageJson>,
}

#[derive(Serialize)]
struct PassageJson {
    tokens: [u32; 2],
    text: Option<String>,
    origin: Option<VersionJson>,
    origin_tokens: Option<[u32; 2]>,
    origin_text: Option<String>,
}
