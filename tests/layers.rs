//! The layers of docs/architecture.md hold in code: outside test code, a
//! module of `src/` names (`crate::…`) only modules of lower layers, and the
//! TUI reaches the index only through the engine.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use std::path::{Path, PathBuf};

/// Lowest first; a module may use the modules of the layers before its own.
const LAYERS: &[&[&str]] = &[
    &["bytesize", "fsio"],
    &["text"],
    &["fingerprint"],
    &["origin", "similar"],
    &["source"],
    &["config"],
    &["corpus"],
    &["index"],
    &["engine"],
    &["tui"],
    &["cli"],
];

/// Uses that the order alone would allow but the design forbids.
const FORBIDDEN: &[(&str, &str)] = &[("tui", "index"), ("tui", "corpus")];

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` has no layer in tests/layers.rs"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            // Unit-test folders (src/tui/tests/) are test code.
            if p.file_name().is_some_and(|n| n != "tests") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs")
            && p.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(p);
        }
    }
}

/// The file's text before its unit tests (`#[cfg(test)]` then `mod`).
fn production(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim() == "#[cfg(test)]" && text[at + line.len()..].trim_start().starts_with("mod ")
        {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// Every `crate::NAME` in `code`, with its line.
fn uses(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        for (i, _) in line.match_indices("crate::") {
            let name: String = line[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((n + 1, name));
            }
        }
        // `use crate::{a, b}` names several.
        if let Some(rest) = line.split("crate::{").nth(1) {
            for part in rest.split([',', '}']) {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push((n + 1, name));
                }
            }
        }
    }
    out
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (line, used) in uses(production(&text)) {
            if used == module {
                continue;
            }
            let bad = layer(&used) >= layer(&module)
                || FORBIDDEN.contains(&(module.as_str(), used.as_str()));
            if bad {
                wrong.push(format!("{}:{line}: {module} uses {used}", rel.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_uses_and_skips_unit_tests() {
    let code = "use crate::index::x;\nfn f() { crate::text::y(); } // crate::cli\n\
                use crate::{engine, source::z};\n#[cfg(test)]\nmod tests { use crate::cli; }\n";
    let names: Vec<String> = uses(production(code)).into_iter().map(|u| u.1).collect();
    assert_eq!(names, ["index", "text", "engine", "source"]);
    assert!(layer("cli") > layer("tui") && layer("text") < layer("origin"));
}
