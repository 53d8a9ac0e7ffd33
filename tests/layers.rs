//! The layers the compiler cannot check. Each layer of docs/architecture.md
//! is a crate, so a crate naming one above it does not build; what is left
//! is the order of the modules that share a crate: `text` below
//! `fingerprint` (and `bytesize`, `fsio` below both) in lineage-core,
//! `corpus` and `watch` side by side on the walk in lineage-source. Unit
//! tests are held to it too. Cargo refuses only a cycle between crates, so
//! the manifests are read for the rest: each crate below the engine depends
//! only on those its row of docs/architecture.md names, and lineage-config
//! sits above the algorithms and below the engine.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::{Path, PathBuf};

/// Per crate: a module (its first path segment under `src/`) and the
/// modules of its crate it must never name. `*` is every other module.
const RULES: &[(&str, &str, &[&str])] = &[
    ("core", "bytesize", &["*"]),
    ("core", "civil", &["*"]),
    ("core", "fsio", &["*"]),
    ("core", "text", &["fingerprint"]),
    ("source", "corpus", &["watch"]),
    ("source", "watch", &["corpus"]),
    // The history is read from git, never from the folder's watch.
    ("source", "history", &["watch", "corpus"]),
];

/// Per crate (its folder under `crates/`): the lineage crates it may depend
/// on, and those that may depend on it (`lineage`: the binary; `*`: any).
/// Dependencies of every kind count, dev-dependencies too. (lineage-core
/// depends on none: each crate here depends on it, and Cargo refuses a
/// cycle.)
const CRATES: &[(&str, &[&str], &[&str])] = &[
    ("origin", &["core", "testing"], &["*"]),
    ("split", &["origin", "core", "testing"], &["*"]),
    ("source", &["core", "testing"], &["*"]),
    ("similar", &["core", "source"], &["*"]),
    ("store", &["core", "origin", "source", "testing"], &["*"]),
    (
        "config",
        &["core", "origin", "similar", "source", "testing"],
        &["engine", "tui", "lineage"],
    ),
];

/// The lineage crates a manifest depends on (`lineage-core` → `core`), in
/// any `…dependencies` table.
fn lineage_dependencies(manifest: &Path) -> Vec<String> {
    let mut deps = Vec::new();
    let mut in_deps = false;
    for line in std::fs::read_to_string(manifest).unwrap().lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line.trim_end_matches(']').ends_with("dependencies");
        } else if in_deps && let Some(rest) = line.strip_prefix("lineage-") {
            let name = rest.split(|c: char| c == '=' || c.is_whitespace()).next();
            deps.extend(name.map(str::to_string));
        }
    }
    deps
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/` (`text/token.rs` → [text, token];
/// `mod.rs` and `lib.rs` name their folder).
fn module_of(rel: &Path) -> Vec<String> {
    let mut m: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
        m.pop();
    }
    m
}

/// The code without comments, string and character literals (a `crate::x`
/// in a doc comment or a message is no use of it); line breaks kept.
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.extend((b[i] == '\n').then_some('\n'));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !is_ident(b.get(i.wrapping_sub(1)))
        {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (1..=hashes).all(|h| b.get(j + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.extend((b[j] == '\n').then_some('\n'));
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                out.extend((b[i] == '\n').then_some('\n'));
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' && (b.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A character literal ('a', '\n', '\'', '\u{..}'); a lifetime has
            // no closing quote. The escaped character is passed over first.
            i += if next == Some('\\') { 3 } else { 2 };
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The crate's top-level modules a file at `module` names, with their
/// lines: `crate::x`, `crate::{x, y::z}` over several lines, and `super::`
/// chains that climb to the crate root (`super::super::x`).
fn uses(code: &str, module: &[String]) -> Vec<(usize, String)> {
    // Tokens: identifiers and the punctuation that matters, with lines.
    let mut toks: Vec<(usize, String)> = Vec::new();
    let (mut line, mut cur) = (1, String::new());
    for c in code.chars() {
        if c.is_alphanumeric() || c == '_' {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() {
            toks.push((line, std::mem::take(&mut cur)));
        }
        match c {
            '\n' => line += 1,
            ':' | '{' | '}' | ',' => toks.push((line, c.to_string())),
            c if c.is_whitespace() => {}
            _ => toks.push((line, "·".into())),
        }
    }
    let sep = |i: usize| {
        toks.get(i).is_some_and(|t| t.1 == ":") && toks.get(i + 1).is_some_and(|t| t.1 == ":")
    };
    let mut found = Vec::new();
    // Inline modules (`mod tests { … }`) open at brace depths: each is one
    // more `super` to the root.
    let (mut braces, mut inline): (usize, Vec<usize>) = (0, Vec::new());
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i].1;
        match t.as_str() {
            "{" => {
                if i >= 2 && toks[i - 2].1 == "mod" {
                    inline.push(braces);
                }
                braces += 1;
            }
            "}" => {
                braces = braces.saturating_sub(1);
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
            }
            _ => {}
        }
        // Where a path reaches the crate's root: after `crate::`, or after
        // as many `super::` as the module is deep.
        let mut at_root = None;
        if t == "crate" && sep(i + 1) {
            at_root = Some(i + 3);
        } else if t == "super" && !(i >= 2 && sep(i - 2)) {
            let (mut j, mut depth) = (i, module.len() + inline.len());
            while toks.get(j).is_some_and(|t| t.1 == "super") && sep(j + 1) && depth > 0 {
                depth -= 1;
                j += 3;
            }
            if depth == 0 && j > i {
                at_root = Some(j);
            }
        }
        if let Some(j) = at_root {
            roots(&toks, j, &mut found);
        }
        i += 1;
    }
    found
}

/// The first segments of the path tree at `toks[j]`: one name, or each item
/// of a `{…}` group.
fn roots(toks: &[(usize, String)], j: usize, found: &mut Vec<(usize, String)>) {
    match toks.get(j) {
        Some((_, t)) if t == "{" => {
            let (mut depth, mut expect) = (0, true);
            for (line, t) in &toks[j..] {
                match t.as_str() {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    "," if depth == 1 => expect = true,
                    _ if depth == 1 && expect && is_ident(t.chars().next().as_ref()) => {
                        found.push((*line, t.clone()));
                        expect = false;
                    }
                    _ => {}
                }
            }
        }
        Some((line, t)) if is_ident(t.chars().next().as_ref()) => found.push((*line, t.clone())),
        _ => {}
    }
}

#[test]
fn modules_sharing_a_crate_keep_their_order() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for &(krate, module, never) in RULES {
        let src = crates.join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let m = module_of(f.strip_prefix(&src).unwrap());
            if m.first().map(String::as_str) != Some(module) {
                continue;
            }
            checked += 1;
            let code = code_only(&std::fs::read_to_string(&f).unwrap());
            for (line, used) in uses(&code, &m) {
                let bad = used != module
                    && used != "self"
                    && (never.contains(&used.as_str()) || never.contains(&"*"));
                if bad {
                    wrong.push(format!("{}:{line}: {module} uses {used}", f.display()));
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} files: are the crates where RULES says?"
    );
    assert!(
        wrong.is_empty(),
        "uses against the order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn crates_depend_in_their_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut manifests = vec![("lineage".to_string(), root.join("Cargo.toml"))];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = e.unwrap().path();
        if dir.join("Cargo.toml").is_file() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            manifests.push((name, dir.join("Cargo.toml")));
        }
    }
    let mut wrong = Vec::new();
    for &(krate, below, users) in CRATES {
        let mut own = None;
        for (name, manifest) in &manifests {
            let deps = lineage_dependencies(manifest);
            if name == krate {
                for d in deps.iter().filter(|d| !below.contains(&d.as_str())) {
                    wrong.push(format!("lineage-{krate} depends on lineage-{d}"));
                }
                own = Some(deps);
            } else if deps.iter().any(|d| d == krate)
                && !users.contains(&"*")
                && !users.contains(&name.as_str())
            {
                wrong.push(format!("{name} depends on lineage-{krate}"));
            }
        }
        let own = own.unwrap_or_else(|| panic!("no crates/{krate}/Cargo.toml"));
        assert!(
            own.iter().any(|d| d == "core"),
            "lineage-{krate}'s dependencies not read: {own:?}"
        );
    }
    assert!(
        wrong.is_empty(),
        "dependencies against the order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_every_spelling_of_a_use() {
    let code = "use crate::index::x;\nfn f() { crate::text::y(); } // crate::cli\n\
                use crate::{\n    engine::{a, b},\n    source::z,\n};\n\
                const S: &str = \"crate::fake\"; let c = '\"'; let q = ['\\'','\"']; fn g<'a>() {}\n\
                /* crate::nested /* */ crate::also_comment */\n\
                use super::super::tui::y; use super::sibling;\n\
                #[cfg(test)]\nmod tests { use crate::cli; use crate::{self as me}; use super::super::table; }\n\
                mod deeper { mod deepest { use super::super::super::super::cli; } }\n";
    let module: Vec<String> = ["origin".into(), "table".into()].into();
    let names: Vec<String> = uses(&code_only(code), &module)
        .into_iter()
        .map(|u| u.1)
        .collect();
    assert_eq!(
        names,
        [
            "index", "text", "engine", "source", "tui", "cli", "self", "cli"
        ]
    );
    // Lines survive the removal of comments and literals.
    let lines: Vec<usize> = uses(&code_only(code), &module)
        .into_iter()
        .map(|u| u.0)
        .collect();
    assert_eq!(lines, [1, 2, 4, 5, 9, 11, 11, 12]);
    // One `super` from a top-level module is the root already.
    let top: Vec<String> = ["config".into()].into();
    let names: Vec<String> = uses(&code_only("use super::engine::Live;"), &top)
        .into_iter()
        .map(|u| u.1)
        .collect();
    assert_eq!(names, ["engine"]);
    assert_eq!(module_of(Path::new("text/mod.rs")), ["text"]);
}
