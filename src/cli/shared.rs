//! `lineage shared ROOT PATH`: which pages carry this page's text. Every
//! live page of another path that shares shingles with it, whoever had the
//! text first (`copies` credits a passage to its earliest origin only, so
//! two pages that took the same paragraph from a third do not show there),
//! most of the page first: what a writer changing a passage must look at.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::explain::{Words, params_json, read_page, status_name};
use super::show::ParamsJson;
use super::show::show;
use super::{Fatal, IndexAt, PathJson, SourceArgs};
use lineage_config::Config;
use lineage_engine::PageShare;
use lineage_engine::query::{self, Row};
use lineage_store::index::Read;

#[derive(Args, Debug)]
pub(super) struct SharedArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// The page: its path under ROOT (as `scan` and the TUI name it), or a
    /// path to it from here.
    path: PathBuf,
    /// Which of its versions (1 is its first) [default: the latest].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    version: Option<u32>,
    /// List each page's shared passages under its line, with their words.
    #[arg(long)]
    passages: bool,
    /// Print `lineage-shared/1` JSON (docs/formats.md §6) instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: IndexAt,
}

pub(super) fn run(args: SharedArgs, config: Config) -> Result<(), Fatal> {
    let (ix, rows, id) = read_page(&args.source, &args.store, config, &args.path, args.version)?;
    let shares = query::shared(&ix, &rows, id)?;
    let found = Found::new(&ix, &rows, id, &shares);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        super::show::json(&mut out, &found.json(&ix))?;
        writeln!(out)?;
    } else {
        found.text(&mut out, args.passages)?;
    }
    out.flush()?;
    Ok(())
}

/// The pages with the words of each shared passage on both sides.
struct Found<'a> {
    rows: &'a [Row],
    id: u32,
    status: lineage_engine::VersionStatus,
    shares: &'a [PageShare],
    /// Per page, per passage: (its words there, the page's words).
    texts: Vec<Vec<(Option<String>, Option<String>)>>,
}

impl<'a> Found<'a> {
    fn new(ix: &impl Read, rows: &'a [Row], id: u32, shares: &'a [PageShare]) -> Found<'a> {
        let mut words = Words::new(ix, rows);
        let texts = (shares.iter())
            .map(|s| {
                (s.passages.iter())
                    .map(|p| {
                        let there = words.of(s.id, p.there.0, p.there.1);
                        (there, words.of(id, p.page.0, p.page.1))
                    })
                    .collect()
            })
            .collect();
        Found {
            rows,
            id,
            status: query::status_of(ix, rows, id),
            shares,
            texts,
        }
    }

    fn name(&self, id: u32) -> String {
        let r = &self.rows[id as usize];
        format!("{} v{}", show(&r.path), r.version)
    }

    fn text(&self, out: &mut impl Write, passages: bool) -> std::io::Result<()> {
        let r = &self.rows[self.id as usize];
        let status = (self.status.describe(r.version)).unwrap_or_else(|| "live".into());
        let pages = match self.shares.len() {
            0 => "no other live page shares its text".to_string(),
            1 => "1 other live page shares its text".to_string(),
            n => format!("{n} other live pages share its text, most of it first"),
        };
        writeln!(
            out,
            "{} ({status}, {} tokens): {pages}",
            self.name(self.id),
            r.tokens
        )?;
        for (s, texts) in self.shares.iter().zip(&self.texts) {
            let n = s.passages.len();
            writeln!(
                out,
                "{:6.1} %  {}  ({} tokens here in {n} passage{}; {:.1} % of its {} tokens)",
                s.page_percent,
                self.name(s.id),
                s.page_tokens,
                if n == 1 { "" } else { "s" },
                s.percent,
                s.tokens,
            )?;
            if !passages {
                continue;
            }
            for (p, (there, here)) in s.passages.iter().zip(texts) {
                writeln!(
                    out,
                    "    tokens {}–{} here, {}–{} there",
                    p.page.0, p.page.1, p.there.0, p.there.1
                )?;
                for line in here.as_deref().unwrap_or("").lines() {
                    writeln!(out, "      │ {}", show(line))?;
                }
                // The same shingles in other words (case, punctuation,
                // markup): show theirs too.
                if there.is_some() && there != here {
                    writeln!(out, "    there:")?;
                    for line in there.as_deref().unwrap_or("").lines() {
                        writeln!(out, "      │ {}", show(line))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn json(&self, ix: &impl Read) -> SharedJson {
        let r = &self.rows[self.id as usize];
        SharedJson {
            format: "lineage-shared/1",
            path: PathJson::new(&r.path),
            version: r.version,
            status: status_name(self.status),
            tokens: r.tokens,
            params: params_json(ix),
            shared: (self.shares.iter().zip(&self.texts))
                .map(|(s, texts)| ShareJson {
                    path: PathJson::new(&s.path),
                    version: s.version,
                    tokens: s.tokens,
                    shared_tokens: s.shared_tokens,
                    percent: s.percent,
                    page_tokens: s.page_tokens,
                    page_percent: s.page_percent,
                    passages: (s.passages.iter().zip(texts))
                        .map(|(p, (there, here))| PassageJson {
                            tokens: [p.there.0, p.there.1],
                            text: there.clone(),
                            page_tokens: [p.page.0, p.page.1],
                            page_text: here.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct SharedJson {
    format: &'static str,
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    status: &'static str,
    tokens: u32,
    params: ParamsJson,
    shared: Vec<ShareJson>,
}

#[derive(Serialize)]
struct ShareJson {
    #[serde(flatten)]
    path: PathJson,
    version: u32,
    tokens: u32,
    shared_tokens: u32,
    percent: f64,
    page_tokens: u32,
    page_percent: f64,
    passages: Vec<PassageJson>,
}

#[derive(Serialize)]
struct PassageJson {
    tokens: [u32; 2],
    text: Option<String>,
    page_tokens: [u32; 2],
    page_text: Option<String>,
}
