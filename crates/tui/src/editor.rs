//! `e`: the user's editor on the document, at the line being looked at:
//! `$VISUAL`, else `$EDITOR`, else `vi`, run as `editor +LINE FILE`. Building
//! the command is pure (here); running it with the terminal is the UI loop's
//! (`tui::run`).

use std::ffi::OsString;
use std::path::Path;

/// A program with its arguments, to run with the terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EditorCall {
    pub program: String,
    pub args: Vec<OsString>,
}

/// The editor setting: `$VISUAL` if set and not empty, else `$EDITOR`, else `vi`.
pub(crate) fn from_env() -> String {
    ["VISUAL", "EDITOR"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(|v| v.to_string_lossy().trim().to_string())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "vi".into())
}

/// `editor` (a command with arguments, as a shell would split it: `code -w`,
/// `"/opt/My Editor/ed" --wait`) opening `file` at `line` (from 1).
pub(crate) fn call(editor: &str, line: usize, file: &Path) -> Result<EditorCall, String> {
    let mut words = split(editor)?.into_iter();
    let program = words.next().ok_or("the editor setting is empty")?;
    let mut args: Vec<OsString> = words.map(OsString::from).collect();
    args.push(format!("+{}", line.max(1)).into());
    args.push(file.as_os_str().to_owned());
    Ok(EditorCall { program, args })
}

/// Words as a POSIX shell splits them, quotes and backslashes included (no
/// expansions).
fn split(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed quote in editor '{s}'")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(format!("unclosed quote in editor '{s}'")),
                        },
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed quote in editor '{s}'")),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.next());
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// The line (from 1) of the file that byte `at` of its prepared text is on,
/// when preparing kept the file's lines (plain text: decoding changes no
/// newline); None for HTML, whose tags and entities are gone.
pub(crate) fn file_line(text: &str, at: usize, html: bool) -> Option<usize> {
    if html {
        return None;
    }
    let at = at.min(text.len());
    Some(
        text.as_bytes()[..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(c: &EditorCall) -> Vec<String> {
        c.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn an_editor_with_arguments_gets_the_line_and_the_file_last() {
        let f = Path::new("/home/ana/docs/v1/a b.md");
        let c = call("code -w", 12, f).unwrap();
        assert_eq!(c.program, "code");
        assert_eq!(args(&c), ["-w", "+12", "/home/ana/docs/v1/a b.md"]);
        let c = call("vi", 0, f).unwrap();
        assert_eq!((c.program.as_str(), args(&c)[0].as_str()), ("vi", "+1"));
        let c = call(r#""/opt/My Editor/ed" --wait 'x y' a\ b"#, 3, f).unwrap();
        assert_eq!(c.program, "/opt/My Editor/ed");
        assert_eq!(args(&c)[..3], ["--wait", "x y", "a b"]);
        assert!(call("   ", 1, f).is_err());
        assert!(call("'vi", 1, f).is_err());
    }

    #[test]
    fn a_non_utf8_file_name_reaches_the_editor_unchanged() {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let f = Path::new(std::ffi::OsStr::from_bytes(b"/d/caf\xe9.md"));
            let c = call("vi", 2, f).unwrap();
            assert_eq!(c.args[1].as_bytes(), b"/d/caf\xe9.md");
        }
    }

    #[test]
    fn lines_count_the_newlines_before_the_byte() {
        let t = "one\ntwo\n\nfour";
        assert_eq!(file_line(t, 0, false), Some(1));
        assert_eq!(file_line(t, 4, false), Some(2));
        assert_eq!(file_line(t, t.len(), false), Some(4));
        assert_eq!(file_line(t, 4, true), None);
    }
}
