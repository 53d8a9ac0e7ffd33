//! Plain-text output that a hostile file name cannot turn against the
//! terminal, and that a full or closed stderr cannot turn into a panic.
//!
//! Every path and message printed without `--json` goes through [`show`]:
//! control characters (C0, DEL, C1) are written as visible escapes, as
//! ripgrep and `ls` do, so `esc\x1b]0;pwned\x07.md` cannot retitle the
//! terminal and a newline cannot break a table row. A backslash is doubled,
//! so the escaped form stands for one name only; bytes of a name that are
//! not UTF-8 show as `\xNN` (see [`crate::source::name`]).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write as _;

use crate::source::name::ESCAPE;

/// `s` with every control character escaped visibly and unambiguously.
pub(crate) fn show(s: &str) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() || c == '\\' || c == ESCAPE;
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ESCAPE => match chars.next() {
                // A name's byte that is not UTF-8.
                Some(b) if b != ESCAPE => {
                    let _ = write!(out, "\\x{:02x}", u32::from(b));
                }
                _ => out.push_str("\\u{10fffe}"),
            },
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line on stderr; a full or closed stderr is ignored (there is no
/// one left to tell).
pub(crate) fn note(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Progress on stderr, overwriting the line (a terminal only).
pub(crate) fn progress(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[K{text}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(show("plain/path.md"), "plain/path.md");
        assert!(matches!(show("plain"), Cow::Borrowed(_)));
        assert_eq!(show("esc\x1b]0;pwned\x07.md"), "esc\\x1b]0;pwned\\x07.md");
        assert_eq!(show("a\nb\tc\rd"), "a\\nb\\tc\\rd");
        assert_eq!(show("del\x7f c1\u{9b}"), "del\\x7f c1\\u{9b}");
        assert_eq!(show("back\\slash"), "back\\\\slash");
        // A literal backslash-x and an escaped byte differ.
        assert_ne!(show("a\\x1b"), show("a\x1b"));
        let name = crate::source::name::encode(b"a\xff.md");
        assert_eq!(show(&name), "a\\xff.md");
        assert_eq!(show("caf\u{e9} \u{4e2d}"), "caf\u{e9} \u{4e2d}");
    }
}
