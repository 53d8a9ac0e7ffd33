//! `lineage pocket build|query`: Potthast's pocket index on disk (Potthast).
//!
//! `build` fuzzy-fingerprints the documents of a root and writes the index;
//! `query` fingerprints files outside the index and lists the indexed
//! documents that share a code. A query file has no shingles in the index, so
//! its `similarity` is the fraction of the fuzzification schemes whose code it
//! shares with the document; `jaccard` is the exact resemblance of the two
//! shingle sets when the indexed document can still be read under the root the
//! index was built from, else null.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use rayon::prelude::*;
use serde::Serialize;

use super::{Fatal, SkippedJson, SourceArgs};
use lineage_config::Config;
use lineage_core::fingerprint::polynomial::Polynomial;
use lineage_core::text::{Format, prepare};
use lineage_similar::SimDoc;
use lineage_similar::fuzzy::pocket::{IndexedDoc, Pocket, PocketFile};
use lineage_similar::fuzzy::{FuzzyParams, LangChoice, fingerprint, jaccard, sim_doc};
use lineage_source::corpus;
use lineage_source::{Filter, Skipped};

#[derive(Args, Debug)]
pub(super) struct PocketArgs {
    #[command(subcommand)]
    command: PocketCommand,
}

#[derive(Subcommand, Debug)]
enum PocketCommand {
    /// Index the documents of ROOT by their fuzzy fingerprints.
    Build(BuildArgs),
    /// List the indexed documents that share a fuzzy-fingerprint code with each PATH.
    Query(QueryArgs),
}

#[derive(Args, Debug)]
struct BuildArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Write the index to this file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Language of the prefix classes: auto (detected per document), en or de [default: the config's lang, auto].
    #[arg(long, value_name = "LANG")]
    lang: Option<LangChoice>,
    /// Shingle length in tokens, for the Jaccard of query answers [default: 8].
    #[arg(short = 'k', value_name = "K")]
    k: Option<usize>,
    /// Print JSON instead of a summary.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct QueryArgs {
    /// The index file `pocket build` wrote.
    index: PathBuf,
    /// Files to look up.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print JSON instead of a summary.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: PocketArgs, config: Config) -> Result<(), Fatal> {
    match args.command {
        PocketCommand::Build(a) => build(a, config),
        PocketCommand::Query(a) => query(a, &config.polynomial()),
    }
}

/// A document read for the index: its path, order keys and token key texts.
struct Read {
    path: String,
    terms: Vec<String>,
}

/// Read the root's documents in processing order, with the files left out.
fn read_root(root: &Path, c: &Config) -> Result<(Vec<Read>, Vec<Skipped>), Fatal> {
    let filter = Filter::new(&c.include, &c.exclude)?;
    let corpus = corpus::load_with(
        root,
        &filter,
        c.walk_options(),
        c.max_file_size.0,
        c.order,
        |f, text| {
            let mut terms = Vec::new();
            lineage_core::text::for_each_token(text, |_, key| terms.push(key.to_owned()));
            Read {
                path: f.path.clone(),
                terms,
            }
        },
    )?;
    Ok((corpus.docs, corpus.skipped))
}

#[derive(Serialize)]
struct BuildJson<'a> {
    format: &'static str,
    index: String,
    root: &'a str,
    lang: String,
    schemes: Vec<f64>,
    documents: usize,
    /// Documents with at least one code (the others have no index terms).
    fingerprinted: usize,
    languages: BTreeMap<&'static str, usize>,
    slots: usize,
    postings: usize,
    file_bytes: u64,
    bytes_per_document: f64,
    /// Slots, postings and MPHF only (no paths), per document.
    index_bytes_per_document: f64,
    mphf_bytes: usize,
    mphf_bits_per_key: f64,
    skipped: Vec<SkippedJson>,
}

fn build(args: BuildArgs, mut config: Config) -> Result<(), Fatal> {
    args.source.apply(&mut config);
    super::set(&mut config.k, args.k);
    config.validate()?;
    let params = FuzzyParams {
        lang: args.lang.unwrap_or(config.lang),
        ..FuzzyParams::default()
    };
    let root = &args.source.root;
    let (docs, skipped) = read_root(root, &config)?;
    let prints: Vec<_> = docs
        .par_iter()
        .map(|d| fingerprint(&d.terms, &params))
        .collect();
    let codes: Vec<Vec<u64>> = prints.iter().map(|f| f.codes.clone()).collect();
    let root_abs = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
    let file = PocketFile {
        k: config.k as u32,
        params: params.clone(),
        root: root_abs.to_string_lossy().into_owned(),
        docs: docs
            .iter()
            .zip(&prints)
            .map(|(d, f)| IndexedDoc {
                path: d.path.clone(),
                lang: f.lang,
                codes: f.codes.len() as u8,
            })
            .collect(),
        pocket: Pocket::build(&codes),
    };
    let bytes = file.write(&args.output).map_err(|e| {
        let e = super::one_line(&e);
        Fatal(format!("cannot write {}: {e}", args.output.display()))
    })?;
    let mut languages = BTreeMap::new();
    for f in &prints {
        *languages.entry(f.lang.as_str()).or_insert(0) += 1;
    }
    let p = &file.pocket;
    let report = BuildJson {
        format: "lineage-pocket-build/1",
        index: args.output.display().to_string(),
        root: &file.root,
        lang: params.lang.to_string(),
        schemes: params.schemes.iter().map(|s| s.epsilon).collect(),
        documents: docs.len(),
        fingerprinted: prints.iter().filter(|f| !f.codes.is_empty()).count(),
        languages,
        slots: p.slots(),
        postings: p.postings(),
        file_bytes: bytes,
        bytes_per_document: per(bytes as f64, docs.len()),
        index_bytes_per_document: per(p.bytes() as f64, docs.len()),
        mphf_bytes: p.mphf_bytes(),
        mphf_bits_per_key: p.mphf_bits_per_key(),
        skipped: skipped.iter().map(SkippedJson::new).collect(),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        super::show::json(&mut out, &report)?;
        writeln!(out)?;
    } else {
        for s in &skipped {
            super::skipped_line(&s.path, &s.reason.to_string());
        }
        let langs: Vec<String> = report
            .languages
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        writeln!(
            out,
            "indexed {} documents ({} with codes; {}) into {}",
            report.documents,
            report.fingerprinted,
            langs.join(", "),
            report.index
        )?;
        writeln!(
            out,
            "{} bytes, {:.1} per document ({:.1} without the paths); {} codes, {} postings; MPHF {} bytes, {:.2} bits per key",
            report.file_bytes,
            report.bytes_per_document,
            report.index_bytes_per_document,
            report.slots,
            report.postings,
            report.mphf_bytes,
            report.mphf_bits_per_key
        )?;
    }
    Ok(())
}

fn per(x: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { x / n as f64 }
}

#[derive(Serialize)]
struct QueryJson<'a> {
    format: &'static str,
    index: String,
    documents: usize,
    queries: Vec<AnswerJson<'a>>,
}

#[derive(Serialize)]
struct AnswerJson<'a> {
    path: String,
    language: &'static str,
    codes: usize,
    matches: Vec<MatchJson<'a>>,
}

#[derive(Serialize)]
struct MatchJson<'a> {
    id: u32,
    path: &'a str,
    shared_codes: usize,
    /// Shared codes over the query's codes (one per scheme).
    similarity: f64,
    /// Exact Jaccard of the shingle sets, when the indexed file is readable.
    jaccard: Option<f64>,
}

fn query(args: QueryArgs, poly: &Polynomial) -> Result<(), Fatal> {
    let file = PocketFile::read(&args.index)
        .map_err(|e| Fatal(format!("{}: {}", args.index.display(), super::one_line(&e))))?;
    let k = file.k as usize;
    if k == 0 {
        return Err(Fatal(format!(
            "{}: pocket index has k = 0",
            args.index.display()
        )));
    }
    let mut answers = Vec::new();
    for path in &args.paths {
        let q = read_query(path, poly, k)?;
        let f = fingerprint(&q.terms, &file.params);
        let mut shared: BTreeMap<u32, usize> = BTreeMap::new();
        for &c in &f.codes {
            for &d in file.pocket.lookup(c) {
                *shared.entry(d).or_default() += 1;
            }
        }
        let mut matches: Vec<MatchJson> = shared
            .into_par_iter()
            .map(|(id, n)| {
                let doc = &file.docs[id as usize];
                MatchJson {
                    id,
                    path: &doc.path,
                    shared_codes: n,
                    similarity: n as f64 / f.codes.len() as f64,
                    jaccard: indexed_shingles(&file, doc, poly, k)
                        .map(|s| jaccard(&q.shingles, &s)),
                }
            })
            .collect();
        matches.sort_by(|a, b| {
            b.shared_codes
                .cmp(&a.shared_codes)
                .then(
                    b.jaccard
                        .unwrap_or(-1.0)
                        .total_cmp(&a.jaccard.unwrap_or(-1.0)),
                )
                .then(a.id.cmp(&b.id))
        });
        answers.push(AnswerJson {
            path: path.display().to_string(),
            language: f.lang.as_str(),
            codes: f.codes.len(),
            matches,
        });
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = QueryJson {
            format: "lineage-pocket-query/1",
            index: args.index.display().to_string(),
            documents: file.docs.len(),
            queries: answers,
        };
        super::show::json(&mut out, &report)?;
        writeln!(out)?;
    } else {
        for a in &answers {
            writeln!(
                out,
                "{} ({}, {} codes): {} indexed documents share a code",
                super::show::show(&a.path),
                a.language,
                a.codes,
                a.matches.len()
            )?;
            for m in &a.matches {
                let j = m
                    .jaccard
                    .map_or_else(|| "  n/a".to_string(), |j| format!("{j:.3}"));
                writeln!(
                    out,
                    "  {}/{} codes  jaccard {j}  {}",
                    m.shared_codes,
                    a.codes,
                    super::show::show(m.path)
                )?;
            }
        }
    }
    Ok(())
}

/// A query file: a regular file of at most the default `max_file_size`,
/// read whole (any name; HTML by extension), or a clear error.
fn read_query(path: &Path, poly: &Polynomial, k: usize) -> Result<SimDoc, Fatal> {
    let bytes = lineage_source::read_file(path, file_size_cap())
        .map_err(|e| Fatal(format!("cannot read {}: {e}", path.display())))?;
    let name = path.to_string_lossy();
    Ok(sim_doc(&prepare(&bytes, Format::from_path(&name)), poly, k))
}

fn file_size_cap() -> u64 {
    lineage_config::Config::default().max_file_size.0
}

/// The shingles of an indexed document, read again from the index's root.
fn indexed_shingles(
    file: &PocketFile,
    doc: &IndexedDoc,
    poly: &Polynomial,
    k: usize,
) -> Option<Vec<u64>> {
    let path = lineage_source::name::path(Path::new(&file.root), &doc.path);
    let bytes = lineage_source::read_file(&path, file_size_cap()).ok()?;
    Some(sim_doc(&prepare(&bytes, Format::from_path(&doc.path)), poly, k).shingles)
}
