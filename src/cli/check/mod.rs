//! `lineage check ROOT`: the gate for CI and pre-commit. Every live page
//! judged by the `[check]` policies (docs/algorithms.md §14); exit 0 when
//! every policy holds, 1 when one fails, 2 when the check could not run
//! (a bad option, an unreadable index): never 1 for that. The findings in
//! the format CI reads (`--format`), a summary line first, ordered by page
//! so two runs diff readably.

mod baseline;
mod formats;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{Fatal, SourceArgs, StoreArgs};
use baseline::{Baseline, Settings};
use lineage_config::Config;
use lineage_config::check::{CheckConfig, PairRule};
use lineage_core::text::{self, SourceLines, for_each_token, prepare};
use lineage_engine::check::{self as checker, Checked, Finding, Live, Rule};
use lineage_engine::query::{self, Row};
use lineage_store::index::Read;

#[derive(Args, Debug)]
pub(super) struct CheckArgs {
    #[command(flatten)]
    pub(super) source: SourceArgs,
    /// How findings are printed: text (for people), json (`lineage-check/1`,
    /// docs/formats.md §6), sarif (SARIF 2.1.0, for GitHub code scanning),
    /// junit (JUnit XML, a test case per page), gitlab (GitLab code-quality
    /// JSON) or github (workflow annotations, `::error file=…`).
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    format: Format,
    /// The largest share of a page, in percent, copied from pages of other
    /// paths [config: check.max_copied; default: 50].
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    max_copied: Option<f64>,
    /// The largest share of a page, in percent, copied from any one other
    /// page [config: check.max_copied_from_one; default: 100, no limit].
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    max_copied_from_one: Option<f64>,
    /// The fewest tokens a copied passage has to count [config:
    /// check.min_passage; default: 16].
    #[arg(long, value_name = "TOKENS")]
    min_passage: Option<u32>,
    /// Resemblance (Jaccard, 0 to 1) at or over which two pages fail as near
    /// duplicates; 0: off [config: check.near_duplicate; default: 0.9].
    #[arg(long, value_name = "S", value_parser = resemblance)]
    near_duplicate: Option<f64>,
    /// An expected copy, "PAGES <- ORIGINS" (path patterns under ROOT: `*`
    /// within a component, `**` across them); repeatable, added to the
    /// config's check.allow.
    #[arg(long, value_name = "PAIR")]
    allow: Vec<PairRule>,
    /// A copy that always fails, "PAGES <- ORIGINS"; repeatable, added to
    /// the config's check.deny (deny outranks allow).
    #[arg(long, value_name = "PAIR")]
    deny: Vec<PairRule>,
    /// Only what the baseline FILE does not accept fails: a finding with a
    /// copy it does not hold (by page, origin and the passage's words, with
    /// a count), a near-duplicate pair it does not name.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record in --baseline FILE every copy and near-duplicate pair found
    /// now, accepted from then on (FILE written whole or not at all), and
    /// exit 0.
    #[arg(long, requires = "baseline")]
    update_baseline: bool,
    /// The baseline as the folder stood at git revision REV (a branch, a
    /// tag, `HEAD~5`, an id on HEAD's first-parent history, read with the
    /// index's git history): only what is new since fails, with no file to
    /// keep.
    #[arg(long, value_name = "REV", conflicts_with_all = ["baseline", "update_baseline"])]
    baseline_from: Option<String>,
    /// Judge only the pages changed since git revision REV (a new page, or
    /// one whose version differs from REV's), with origins from the whole
    /// folder: a changed page copying an unchanged one is found.
    #[arg(long, value_name = "REV", conflicts_with = "changed_from")]
    changed_since: Option<String>,
    /// Judge only the pages FILE lists, one path a line (under ROOT, or
    /// from here), `-` for standard input: `git diff --name-only main |
    /// lineage check docs --changed-from -`. Paths that are no live page
    /// are left out.
    #[arg(long, value_name = "FILE")]
    changed_from: Option<PathBuf>,
    /// The index is made where none is (a fresh clone in CI), and caught
    /// up with the folder before the check.
    #[command(flatten)]
    store: StoreArgs,
}

/// The formats of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Sarif,
    Junit,
    Gitlab,
    Github,
}

fn percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("a share in percent, 0 to 100, not {s:?}")),
    }
}

fn resemblance(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("a resemblance, 0 to 1, not {s:?}")),
    }
}

impl CheckArgs {
    /// The policies: the config's, then these flags.
    fn policy(&self, config: &Config) -> CheckConfig {
        let mut p = config.check.clone();
        super::set(&mut p.max_copied, self.max_copied);
        super::set(&mut p.max_copied_from_one, self.max_copied_from_one);
        super::set(&mut p.min_passage, self.min_passage);
        super::set(&mut p.near_duplicate, self.near_duplicate);
        p.allow.extend(self.allow.iter().cloned());
        p.deny.extend(self.deny.iter().cloned());
        p
    }
}

/// Run the check; Ok(false) when a policy failed (exit 1).
pub(super) fn run(args: CheckArgs, mut config: Config) -> Result<bool, Fatal> {
    args.source.apply(&mut config);
    args.store.apply(&mut config);
    config.validate()?;
    let policy = args.policy(&config);
    let root = args.source.root.as_path();
    let (ix, rows, regime) = super::explain::open_index(root, &args.store.at, &config, true)?;
    let live = Live::now(&ix, &rows);
    let only = match (&args.changed_since, &args.changed_from) {
        (Some(rev), _) => {
            let then = live_at(root, &config, &ix, &rows, "--changed-since", rev)?;
            let changed = (live.ids().iter().copied())
                .filter(|&id| then.get(&rows[id as usize].path) != Some(id));
            Some(changed.collect())
        }
        (None, Some(file)) => Some(listed(root, file, &live)?),
        (None, None) => None,
    };
    let mut checked = checker::check(&ix, &rows, &live, only.as_ref(), &policy)?;
    let settings = Settings {
        k: ix.params().k,
        fingerprint_seed: config.fingerprint_seed,
    };
    let baseline = match (&args.baseline, &args.baseline_from) {
        (_, Some(rev)) => Some(at_revision(root, &config, &ix, &rows, &policy, rev)?),
        (Some(file), None) if args.update_baseline => {
            let b = Baseline::of(&checked, &rows);
            b.write(file, &settings)?;
            let (copies, pairs) = b.len();
            super::show::note(&format!(
                "lineage check: baseline {} records {copies} copied passages and {pairs} near-duplicate pairs, accepted from now on",
                super::show::show(&file.display().to_string())
            ));
            Some(b)
        }
        (Some(file), None) => {
            let pages: HashSet<&str> = (live.ids().iter())
                .map(|&id| rows[id as usize].path.as_str())
                .collect();
            Some(Baseline::read(file, &settings, &pages)?)
        }
        (None, None) => None,
    };
    let judged = baseline.map(|b| Judged::apply(&mut checked, &b, &rows));
    let report = Report::new(
        &ix,
        &rows,
        root,
        &policy,
        &checked,
        judged,
        regime.map(|r| (r.name, r.sentence)),
    );
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Text => formats::text(&report, &mut out)?,
        Format::Json => formats::json(&report, &mut out)?,
        Format::Sarif => formats::sarif(&report, &mut out)?,
        Format::Junit => formats::junit(&report, &mut out)?,
        Format::Gitlab => formats::gitlab(&report, &mut out)?,
        Format::Github => formats::github(&report, &mut out)?,
    }
    out.flush()?;
    Ok(report.findings.is_empty())
}

/// What a baseline made of the findings: the new copies, and how many
/// findings it accepted.
pub(super) struct Judged {
    /// The copies it does not accept, as (page, first token).
    new: HashSet<(u32, u32)>,
    /// Findings it accepted whole, now left out.
    accepted: usize,
}

impl Judged {
    /// Keep the findings of `checked` that `b` does not accept whole.
    fn apply(checked: &mut Checked, b: &Baseline, rows: &[Row]) -> Judged {
        let new = b.new_copies(checked, rows);
        let before = checked.findings.len();
        let path = |id: u32| rows[id as usize].path.as_str();
        checked.findings.retain(|f| match (f.rule, f.other) {
            (Rule::NearDuplicate, Some(o)) => !b.accepts_near(path(f.page), path(o)),
            _ => (f.copies.iter()).any(|c| new.contains(&(f.page, c.tokens.start))),
        });
        Judged {
            accepted: before - checked.findings.len(),
            new,
        }
    }
}

/// The baseline as the folder stood at `rev`, judged as now.
fn at_revision(
    root: &Path,
    config: &Config,
    ix: &impl Read,
    rows: &[Row],
    policy: &CheckConfig,
    rev: &str,
) -> Result<Baseline, Fatal> {
    let live = live_at(root, config, ix, rows, "--baseline-from", rev)?;
    let then = checker::check(ix, rows, &live, None, policy)?;
    Ok(Baseline::of(&then, rows))
}

/// The pages as the folder stood at `rev` (`flag` names it in errors):
/// the commit's tree, each page at its newest version up to the commit's,
/// from the index's git history.
fn live_at(
    root: &Path,
    config: &Config,
    ix: &impl Read,
    rows: &[Row],
    flag: &str,
    rev: &str,
) -> Result<Live, Fatal> {
    use lineage_source::history::Repo;
    let shown = super::show::show(rev).into_owned();
    let cannot = |why: &str| Fatal(format!("{flag} {shown}: {why}"));
    let repo = Repo::discover(root)?.ok_or_else(|| cannot("ROOT is not in a git work tree"))?;
    let commit = repo.resolve(rev)?;
    let head = repo
        .head()?
        .ok_or_else(|| cannot("the repository has no commit"))?;
    let chain = repo.chain(&head, None)?;
    let at = (chain.commits.iter().position(|c| *c == commit))
        .ok_or_else(|| cannot("not in the first-parent history of HEAD"))?;
    let upto: HashSet<&str> = chain.commits[..=at].iter().map(String::as_str).collect();
    let (mut cut, mut read) = (None, false);
    for id in 0..rows.len() as u32 {
        if let Some(c) = ix.commit_of(id)? {
            read = true;
            if upto.contains(c.id.as_str()) {
                cut = Some(id);
            }
        }
    }
    if !read {
        return Err(cannot(
            "the index holds no git history (history = \"folder\"); check with --history git",
        ));
    }
    if cut.is_none() && !config.history_since.is_empty() {
        return Err(cannot(&format!(
            "the index's history starts after it (history_since = {:?})",
            config.history_since
        )));
    }
    let filter = lineage_source::Filter::new(&config.include, &config.exclude)?;
    let pages: HashSet<String> = repo.pages_at(&commit, &filter)?.into_iter().collect();
    Ok(cut.map_or_else(Live::default, |cut| Live::at(rows, cut, &pages)))
}

/// The live pages `file` lists (`-`: standard input), one path a line.
fn listed(root: &Path, file: &Path, live: &Live) -> Result<HashSet<u32>, Fatal> {
    use std::io::Read as _;
    let shown = super::show::show(&file.display().to_string()).into_owned();
    let cannot = |e: &dyn std::fmt::Display| Fatal(format!("--changed-from {shown}: {e}"));
    let bytes = if file == Path::new("-") {
        let mut b = Vec::new();
        (std::io::stdin().lock().take(LIST_MAX + 1))
            .read_to_end(&mut b)
            .map_err(|e| cannot(&e))?;
        if b.len() as u64 > LIST_MAX {
            return Err(cannot(&"more than 64 MiB of paths"));
        }
        b
    } else {
        lineage_core::fsio::read_bounded(file, LIST_MAX).map_err(|e| cannot(&e))?
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok((text.lines())
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .filter_map(|l| live.get(&super::explain::document_name(root, Path::new(l))))
        .collect())
}

/// The most bytes of paths `--changed-from` reads.
const LIST_MAX: u64 = 64 << 20;

/// What the check found, each place resolved to file and lines: what
/// every format prints.
pub(super) struct Report {
    /// Live pages checked.
    pages: usize,
    /// Findings per rule, in [`Rule::ALL`]'s order.
    counts: Vec<(Rule, usize)>,
    findings: Vec<Found>,
    policy: CheckConfig,
    /// Findings a baseline accepted (left out), where one was given.
    accepted: Option<usize>,
    /// The table's regime after the catch-up, as `scan` says it (None when
    /// a running lineage holds the index and keeps it current).
    regime: Option<(&'static str, String)>,
}

/// One finding, resolved.
struct Found {
    rule: Rule,
    /// The failing page: its path under the root, and as CI names the file
    /// (from where lineage ran, `/` separators).
    page: Place,
    /// The other page it concerns, if one.
    other: Option<Place>,
    percent: f64,
    limit: f64,
    /// What failed, in one sentence (names escaped for a terminal).
    message: String,
    passages: Vec<Passage>,
    /// The finding by content: rule, both paths, its passages' hashes.
    fingerprint: u64,
}

/// A page as the outputs name it.
struct Place {
    /// Under the root.
    path: String,
    /// From where lineage ran (ROOT joined with it).
    file: String,
    /// The same as a relative URI reference: its exact bytes, each outside
    /// the unreserved set percent-encoded (a name that is not UTF-8 too).
    uri: String,
    /// Lines of the page (its last line), for a finding about all of it.
    lines: usize,
}

/// A copied passage, resolved.
struct Passage {
    /// Whether the baseline does not accept it (None: no baseline).
    new: Option<bool>,
    /// The page it was copied from: under the root, and from where
    /// lineage ran.
    origin: String,
    origin_file: String,
    origin_uri: String,
    tokens: [u32; 2],
    /// Lines from 1, both included; [0, 0] where the text is not at hand.
    lines: [usize; 2],
    origin_tokens: [u32; 2],
    origin_lines: [usize; 2],
    /// The passage by content.
    hash: u64,
    /// Rule, both paths and the passage's hash: what a code-scanning
    /// service follows across runs.
    fingerprint: u64,
}

impl Report {
    fn new(
        ix: &impl Read,
        rows: &[Row],
        root: &Path,
        policy: &CheckConfig,
        checked: &Checked,
        judged: Option<Judged>,
        regime: Option<(&'static str, String)>,
    ) -> Report {
        let mut texts = Texts::default();
        let new = judged.as_ref().map(|j| &j.new);
        let findings = (checked.findings.iter())
            .map(|f| Found::new(ix, rows, root, policy, f, new, &mut texts))
            .collect();
        let counts = (Rule::ALL.iter())
            .map(|&r| (r, checked.findings.iter().filter(|f| f.rule == r).count()))
            .collect();
        Report {
            pages: checked.pages,
            counts,
            findings,
            policy: policy.clone(),
            accepted: judged.map(|j| j.accepted),
            regime,
        }
    }
}

/// Where the lines of versions' texts start, each read once.
#[derive(Default)]
struct Texts(std::collections::HashMap<u32, Option<Lines>>);

/// A text's token spans and where its bytes stand on the file's lines.
struct Lines {
    spans: Vec<(u32, u32)>,
    /// The prepared text, and where its pieces stand in the file.
    text: String,
    lines: SourceLines,
    /// The file's lines.
    count: usize,
}

impl Texts {
    /// Version `id`'s lines, None where its text is not at hand.
    fn get(&mut self, ix: &impl Read, rows: &[Row], id: u32) -> Option<&Lines> {
        (self.0.entry(id))
            .or_insert_with(|| {
                let bytes = query::bytes_of(ix, rows, id).ok()?;
                let format = text::Format::from_path(&rows[id as usize].path);
                let text = prepare(&bytes, format).into_owned();
                let mut spans = Vec::new();
                for_each_token(&text, |s, _| spans.push((s.start as u32, s.end as u32)));
                let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
                // A last line ended by a newline is the last: no empty one after it.
                let count = newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
                Some(Lines {
                    spans,
                    lines: SourceLines::new(&bytes, format, &text),
                    text,
                    count: count.max(1),
                })
            })
            .as_ref()
    }
}

impl Lines {
    /// The file's lines (from 1, both included) tokens `r` stand on.
    fn lines(&self, r: &std::ops::Range<u32>) -> [usize; 2] {
        let line = |b: usize| self.lines.line(&self.text, b);
        match lineage_engine::token_bytes(&self.spans, r.clone()) {
            Some(b) => [line(b.start), line(b.end.saturating_sub(1).max(b.start))],
            None => [0, 0],
        }
    }

    /// How many lines the file has.
    fn count(&self) -> usize {
        self.count
    }
}

impl Found {
    fn new(
        ix: &impl Read,
        rows: &[Row],
        root: &Path,
        policy: &CheckConfig,
        f: &Finding,
        new: Option<&HashSet<(u32, u32)>>,
        texts: &mut Texts,
    ) -> Found {
        let place = |id: u32, texts: &mut Texts| {
            let path = rows[id as usize].path.clone();
            Place {
                file: file_name(root, &path),
                uri: file_uri(root, &path),
                lines: texts.get(ix, rows, id).map_or(0, Lines::count),
                path,
            }
        };
        let page = place(f.page, texts);
        let other = f.other.map(|o| place(o, texts));
        let passages = (f.copies.iter())
            .map(|c| {
                let lines = |id: u32, r: &std::ops::Range<u32>, texts: &mut Texts| {
                    texts.get(ix, rows, id).map_or([0, 0], |t| t.lines(r))
                };
                let origin = &rows[c.origin as usize].path;
                Passage {
                    new: new.map(|n| n.contains(&(f.page, c.tokens.start))),
                    origin: origin.clone(),
                    origin_file: file_name(root, origin),
                    origin_uri: file_uri(root, origin),
                    tokens: [c.tokens.start, c.tokens.end],
                    lines: lines(f.page, &c.tokens, texts),
                    origin_tokens: [c.origin_tokens.start, c.origin_tokens.end],
                    origin_lines: lines(c.origin, &c.origin_tokens, texts),
                    hash: c.hash,
                    fingerprint: fingerprint(&[
                        f.rule.name().as_bytes(),
                        page.path.as_bytes(),
                        origin.as_bytes(),
                        &c.hash.to_le_bytes(),
                    ]),
                }
            })
            .collect::<Vec<_>>();
        let mut parts: Vec<&[u8]> = vec![f.rule.name().as_bytes(), page.path.as_bytes()];
        if let Some(o) = &other {
            parts.push(o.path.as_bytes());
        }
        let hashes: Vec<[u8; 8]> = passages.iter().map(|p| p.hash.to_le_bytes()).collect();
        parts.extend(hashes.iter().map(|h| h.as_slice()));
        Found {
            rule: f.rule,
            message: message(f, policy, &page, other.as_ref(), rows),
            fingerprint: fingerprint(&parts),
            page,
            other,
            percent: f.percent,
            limit: f.limit,
            passages,
        }
    }

    /// The lines the finding stands on in its page: its first passage's,
    /// or the whole page.
    fn lines(&self) -> [usize; 2] {
        match self.passages.first() {
            Some(p) if p.lines[0] > 0 => p.lines,
            _ => [1, self.page.lines.max(1)],
        }
    }
}

/// What failed, in one sentence.
fn message(
    f: &Finding,
    policy: &CheckConfig,
    page: &Place,
    other: Option<&Place>,
    rows: &[Row],
) -> String {
    let show = |p: &Place| super::show::show(&p.path).into_owned();
    let other = other.map(show).unwrap_or_default();
    let tokens = rows[f.page as usize].tokens;
    let n = f.copies.len();
    let passages = format!("{n} passage{}", if n == 1 { "" } else { "s" });
    match f.rule {
        Rule::MaxCopied => format!(
            "{} copies {:.1} % of its {tokens} tokens from other pages, over max_copied = {} ({passages})",
            show(page),
            f.percent,
            f.limit
        ),
        Rule::MaxCopiedFromOne => format!(
            "{} copies {:.1} % of its {tokens} tokens from {other}, over max_copied_from_one = {} ({passages})",
            show(page),
            f.percent,
            f.limit
        ),
        Rule::Denied => {
            let from = &rows[f.other.unwrap_or(f.page) as usize].path;
            let rule = (policy.deny.iter())
                .find(|r| r.names(&rows[f.page as usize].path, from))
                .map(|r| super::show::show(&r.to_string()).into_owned())
                .unwrap_or_default();
            format!(
                "{} copies {:.1} % of its tokens from {other}, which deny = \"{rule}\" forbids ({passages})",
                show(page),
                f.percent
            )
        }
        Rule::NearDuplicate => format!(
            "{} resembles {other} at {:.3}, at or over near_duplicate = {}",
            show(page),
            f.percent / 100.0,
            f.limit / 100.0
        ),
    }
}

/// `path` (under `root`) as named from where lineage ran: ROOT joined with
/// it, `/` separators, no leading `./`.
fn file_name(root: &Path, path: &str) -> String {
    lineage_source::name::display(&joined(root, path)).into_owned()
}

/// [`file_name`] as a URI (RFC 3986): its exact bytes, each outside the
/// unreserved set and `/` percent-encoded; a relative reference where the
/// name is relative (CI reads it against the checkout), a `file:` URI
/// where it is absolute (a relative reference that begins with `/` is an
/// error to SARIF's validator, rule SARIF1004).
fn file_uri(root: &Path, path: &str) -> String {
    let joined = joined(root, path);
    let name = lineage_source::name::bytes(&joined);
    let mut s = String::from(if name.starts_with(b"/") {
        "file://"
    } else {
        ""
    });
    for &b in name.iter() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                s.push(b as char)
            }
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    s
}

/// ROOT joined with `path`, losslessly (as the index names pages).
fn joined(root: &Path, path: &str) -> String {
    let root = lineage_source::name::of_os(root.as_os_str()).into_owned();
    let root = root.trim_end_matches('/');
    let joined = match root {
        "" | "." => path.to_string(),
        r => format!("{r}/{path}"),
    };
    let mut s = joined.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}

/// FNV-1a over `parts`, each ended by a zero byte so no two lists of parts
/// run together.
fn fingerprint(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain([0u8].iter()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_from_where_lineage_ran_and_as_a_uri_by_its_bytes() {
        assert_eq!(file_name(Path::new("./docs/"), "a.md"), "docs/a.md");
        assert_eq!(file_name(Path::new("."), "a.md"), "a.md");
        assert_eq!(
            file_uri(Path::new("docs"), "a b#?.md"),
            "docs/a%20b%23%3F.md"
        );
        assert_eq!(file_uri(Path::new("d"), "é"), "d/%C3%A9");
        // A name that is not UTF-8: its own byte, not U+FFFD's three.
        let raw = lineage_source::name::of_bytes(b"x\xff.md").into_owned();
        assert_eq!(file_uri(Path::new("."), &raw), "x%FF.md");
        // An absolute name: a file URI, never a reference that starts with `/`.
        assert_eq!(file_uri(Path::new("/d/"), "a b.md"), "file:///d/a%20b.md");
    }
}
