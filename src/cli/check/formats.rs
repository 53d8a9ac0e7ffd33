//! The formats `check` prints its report in: text for people, its own
//! JSON, and what CI services read (SARIF 2.1.0, JUnit XML, GitLab code
//! quality, GitHub workflow annotations). Each holds the same findings in
//! the same order.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{Passage, Report};
use crate::cli::show::show;
use lineage_engine::check::Rule;

/// What each rule checks, for the formats that describe their rules.
fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::MaxCopied => {
            "A page copies more of its text from pages of other paths than max_copied allows"
        }
        Rule::MaxCopiedFromOne => {
            "A page copies more of its text from one other page than max_copied_from_one allows"
        }
        Rule::Denied => "A page copies from a page that a deny rule forbids it to copy",
        Rule::NearDuplicate => "Two pages resemble each other at near_duplicate or more",
    }
}

/// A page's name in JSON: bytes that are not UTF-8 as U+FFFD (`path_hex`
/// has them exactly, as every format of docs/formats.md).
fn display(name: &str) -> String {
    lineage_source::name::display(name).into_owned()
}

fn hex(h: u64) -> String {
    format!("{h:016x}")
}

/// "lines 3–10" (or "line 3"), or "" where the text is not at hand.
fn lines(l: [usize; 2]) -> String {
    match l {
        [0, _] => String::new(),
        [a, b] if a == b => format!("line {a}"),
        [a, b] => format!("lines {a}–{b}"),
    }
}

/// One passage in words: where it stands, where its origin holds it.
fn passage(p: &Passage) -> String {
    let n = p.tokens[1] - p.tokens[0];
    let mut s = format!("{} ({n} tokens) from {}", lines(p.lines), show(&p.origin));
    if p.origin_lines[0] > 0 {
        s.push(' ');
        s.push_str(&lines(p.origin_lines));
    }
    s.trim_start().to_string()
}

/// The summary line: passed or failed, pages, findings per rule, and
/// what a baseline accepted.
fn summary(r: &Report) -> String {
    let pages = match r.pages {
        1 => "1 page".to_string(),
        n => format!("{n} pages"),
    };
    let accepted = match r.accepted {
        None => String::new(),
        Some(1) => "; 1 finding accepted by the baseline".into(),
        Some(n) => format!("; {n} findings accepted by the baseline"),
    };
    if r.findings.is_empty() {
        return format!("lineage check: passed: {pages}, every policy holds{accepted}");
    }
    let failing = {
        let mut p: Vec<&str> = r.findings.iter().map(|f| f.page.path.as_str()).collect();
        p.dedup();
        p.len()
    };
    let counts: Vec<String> = (r.counts.iter())
        .map(|(rule, n)| format!("{} {n}", rule.name()))
        .collect();
    let n = r.findings.len();
    let new = if r.accepted.is_some() { "new " } else { "" };
    format!(
        "lineage check: failed: {n} {new}finding{} in {failing} of {pages} ({}){accepted}",
        if n == 1 { "" } else { "s" },
        counts.join(", ")
    )
}

/// Whether a CI service should be told of passage `p`: not one the
/// baseline accepts.
fn alerts(p: &Passage) -> bool {
    p.new != Some(false)
}

pub(super) fn text(r: &Report, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", summary(r))?;
    if let Some((_, regime)) = &r.regime {
        writeln!(out, "table: {}", show(regime))?;
    }
    for f in &r.findings {
        let [a, b] = f.lines();
        writeln!(
            out,
            "{}:{a}-{b}: {}: {}",
            show(&f.page.file),
            f.rule.name(),
            f.message
        )?;
        for p in &f.passages {
            let mark = match p.new {
                Some(true) => "new: ",
                Some(false) => "accepted: ",
                None => "",
            };
            writeln!(out, "    {mark}{}", passage(p))?;
        }
    }
    Ok(())
}

fn passage_json(p: &Passage) -> Value {
    json!({
        "tokens": p.tokens,
        "lines": p.lines,
        "origin": display(&p.origin),
        "origin_file": p.origin_file,
        "origin_tokens": p.origin_tokens,
        "origin_lines": p.origin_lines,
        "hash": hex(p.hash),
        "new": p.new,
    })
}

pub(super) fn json(r: &Report, out: &mut impl Write) -> io::Result<()> {
    let p = &r.policy;
    let v = json!({
        "format": "lineage-check/1",
        "passed": r.findings.is_empty(),
        "pages": r.pages,
        "summary": summary(r),
        "accepted": r.accepted,
        "counts": r.counts.iter().map(|(rule, n)| (rule.name().to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "policy": {
            "max_copied": p.max_copied,
            "max_copied_from_one": p.max_copied_from_one,
            "min_passage": p.min_passage,
            "near_duplicate": p.near_duplicate,
            "allow": p.allow.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "deny": p.deny.iter().map(ToString::to_string).collect::<Vec<_>>(),
        },
        "regime": r.regime.as_ref().map(|(name, _)| name),
        "table": r.regime.as_ref().map(|(_, sentence)| sentence),
        "findings": r.findings.iter().map(|f| json!({
            "rule": f.rule.name(),
            "path": display(&f.page.path),
            "path_hex": lineage_source::name::hex(&f.page.path),
            "file": f.page.file,
            "other": f.other.as_ref().map(|o| display(&o.path)),
            "percent": f.percent,
            "limit": f.limit,
            "lines": f.lines(),
            "message": f.message,
            "fingerprint": hex(f.fingerprint),
            "passages": f.passages.iter().map(passage_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    crate::cli::show::json(&mut *out, &v)?;
    writeln!(out)
}

/// A SARIF physical location: the file (a URI reference), and its lines
/// where known.
fn location(uri: &str, l: [usize; 2]) -> Value {
    let mut loc = json!({"artifactLocation": {"uri": uri}});
    if l[0] > 0 {
        loc["region"] = json!({"startLine": l[0], "endLine": l[1].max(l[0])});
    }
    loc
}

/// One SARIF result per passage (a code-scanning alert stands on lines),
/// one for a finding without passages (a near duplicate).
pub(super) fn sarif(r: &Report, out: &mut impl Write) -> io::Result<()> {
    let rules: Vec<Value> = (Rule::ALL.iter())
        .map(|&rule| {
            json!({
                "id": rule.name(),
                "shortDescription": {"text": describe(rule)},
                "defaultConfiguration": {"level": "error"},
            })
        })
        .collect();
    let index = |rule: Rule| Rule::ALL.iter().position(|&x| x == rule).unwrap_or(0);
    let mut results = Vec::new();
    for f in &r.findings {
        let mut result = |lines: [usize; 2], text: String, fp: u64, other: Option<Value>| {
            let mut v = json!({
                "ruleId": f.rule.name(),
                "ruleIndex": index(f.rule),
                "level": "error",
                "message": {"text": text},
                "locations": [{"physicalLocation": location(&f.page.uri, lines)}],
                "partialFingerprints": {"lineageFinding/v1": hex(fp)},
            });
            if let Some(o) = other {
                v["relatedLocations"] = json!([o]);
            }
            results.push(v);
        };
        // The other side, in the message's words: "the [origin](1)".
        let related = |file: &str, l: [usize; 2], text: String| json!({"id": 1, "physicalLocation": location(file, l), "message": {"text": text}});
        if f.passages.is_empty() {
            let other = (f.other.as_ref()).map(|o| {
                related(
                    &o.uri,
                    [1, o.lines.max(1)],
                    format!("the other page, {}", o.path),
                )
            });
            result(f.lines(), f.message.clone(), f.fingerprint, other);
        }
        for p in f.passages.iter().filter(|p| alerts(p)) {
            let text = format!("{}: this passage, {}", f.message, passage(p));
            let origin = related(
                &p.origin_uri,
                p.origin_lines,
                format!("its origin, {}", p.origin),
            );
            result(p.lines, text, p.fingerprint, Some(origin));
        }
    }
    let v = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "lineage",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    crate::cli::show::json(&mut *out, &v)?;
    writeln!(out)
}

/// `s` as XML 1.0 character data or attribute value: the five specials as
/// entities, characters XML 1.0 cannot hold (most C0 controls) as U+FFFD.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test case per page and rule that failed, so a CI's test
/// view lists the pages; a passed check is one passing case.
pub(super) fn junit(r: &Report, out: &mut impl Write) -> io::Result<()> {
    let n = r.findings.len();
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(
        out,
        "<testsuites name=\"lineage check\" tests=\"{}\" failures=\"{n}\">",
        n.max(1)
    )?;
    writeln!(
        out,
        "  <testsuite name=\"lineage check\" tests=\"{}\" failures=\"{n}\" errors=\"0\">",
        n.max(1)
    )?;
    if r.findings.is_empty() {
        writeln!(
            out,
            "    <testcase classname=\"lineage.check\" name=\"{}\"/>",
            xml(&summary(r))
        )?;
    }
    for f in &r.findings {
        let [a, b] = f.lines();
        writeln!(
            out,
            "    <testcase classname=\"lineage.check.{}\" name=\"{}\" file=\"{}\" line=\"{a}\">",
            f.rule.name(),
            xml(&show(&f.page.path)),
            xml(&show(&f.page.file))
        )?;
        writeln!(
            out,
            "      <failure type=\"{}\" message=\"{}\">{}:{a}-{b}: {}",
            f.rule.name(),
            xml(&f.message),
            xml(&show(&f.page.file)),
            xml(&f.message)
        )?;
        for p in &f.passages {
            writeln!(out, "  {}", xml(&passage(p)))?;
        }
        writeln!(out, "</failure>")?;
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>")?;
    writeln!(out, "</testsuites>")
}

/// GitLab code quality: one issue per passage (one per finding without
/// passages), each with its fingerprint so merge requests show what is new.
pub(super) fn gitlab(r: &Report, out: &mut impl Write) -> io::Result<()> {
    let mut issues = Vec::new();
    let issue = |desc: String, fp: u64, file: &str, l: [usize; 2]| {
        json!({
            "description": desc,
            "check_name": "",
            "fingerprint": hex(fp),
            "severity": "major",
            "location": {"path": file, "lines": {"begin": l[0].max(1), "end": l[1].max(l[0]).max(1)}},
        })
    };
    for f in &r.findings {
        let mut push = |desc: String, fp: u64, l: [usize; 2]| {
            let mut v = issue(desc, fp, &f.page.file, l);
            v["check_name"] = json!(f.rule.name());
            issues.push(v);
        };
        if f.passages.is_empty() {
            push(f.message.clone(), f.fingerprint, f.lines());
        }
        for p in f.passages.iter().filter(|p| alerts(p)) {
            push(
                format!("{}: this passage, {}", f.message, passage(p)),
                p.fingerprint,
                p.lines,
            );
        }
    }
    crate::cli::show::json(&mut *out, &issues)?;
    writeln!(out)
}

/// `s` as a GitHub workflow command's message: `%`, CR and LF encoded.
fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// `s` as a workflow command's property value: also `:` and `,`.
fn gh_property(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub workflow annotations: an `::error` per passage (per finding
/// without passages), then the summary as a notice.
pub(super) fn github(r: &Report, out: &mut impl Write) -> io::Result<()> {
    for f in &r.findings {
        let mut line = |l: [usize; 2], text: String| {
            let at = if l[0] > 0 {
                format!(",line={},endLine={}", l[0], l[1].max(l[0]))
            } else {
                String::new()
            };
            writeln!(
                out,
                "::error file={}{at},title={}::{}",
                gh_property(&f.page.file),
                gh_property(&format!("lineage {}", f.rule.name())),
                gh_data(&text)
            )
        };
        if f.passages.is_empty() {
            line(f.lines(), f.message.clone())?;
        }
        for p in f.passages.iter().filter(|p| alerts(p)) {
            line(
                p.lines,
                format!("{}: this passage, {}", f.message, passage(p)),
            )?;
        }
    }
    let kind = if r.findings.is_empty() {
        "notice"
    } else {
        "error"
    };
    writeln!(
        out,
        "::{kind} title=lineage check::{}",
        gh_data(&summary(r))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_ci_reads_is_escaped_for_it() {
        assert_eq!(gh_property("a,b:c%\n"), "a%2Cb%3Ac%25%0A");
        assert_eq!(gh_data("50 %\r\n::x"), "50 %25%0D%0A::x");
        assert_eq!(
            xml("<script>&\"'\u{1}"),
            "&lt;script&gt;&amp;&quot;&apos;\u{fffd}"
        );
    }
}
