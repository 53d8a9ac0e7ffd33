//! Plain-text output that a hostile file name cannot turn against the
//! terminal, and that a full or closed stderr cannot turn into a panic.
//!
//! Every path and message printed without `--json` goes through [`show`]:
//! control characters (C0, DEL, C1) and bidirectional formatting
//! characters are written as visible escapes, as ripgrep and `ls` do, so
//! `esc\x1b]0;pwned\x07.md` cannot retitle the terminal, a newline cannot
//! break a table row and U+202E cannot show a name reversed. A backslash is
//! doubled, so the escaped form stands for one name only; bytes of a name
//! that are not UTF-8 show as `\xNN` (see [`lineage_source::name`]). JSON
//! goes through [`json`], which writes the bidirectional characters as
//! `\uXXXX` escapes: the same strings to a JSON reader, inert in a terminal.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write as _;

use lineage_source::name::{ESCAPE, is_bidi_control};

/// `s` with every control character escaped visibly and unambiguously.
pub(crate) fn show(s: &str) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() || is_bidi_control(c) || c == '\\' || c == ESCAPE;
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
            c if c.is_control() || is_bidi_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Write `value` as JSON to `out`, bidirectional formatting characters
/// escaped (see the module's comment).
pub(crate) fn json<W: std::io::Write, T: serde::Serialize + ?Sized>(
    out: W,
    value: &T,
) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(
        out,
        BidiEscaped,
    ))
}

/// serde_json's compact output, with [`is_bidi_control`] characters in
/// strings written as `\uXXXX`.
struct BidiEscaped;

impl serde_json::ser::Formatter for BidiEscaped {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| is_bidi_control(c)) {
            w.write_all(&rest.as_bytes()[..at])?;
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
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
        let name = lineage_source::name::encode(b"a\xff.md");
        assert_eq!(show(&name), "a\\xff.md");
        assert_eq!(show("caf\u{e9} \u{4e2d}"), "caf\u{e9} \u{4e2d}");
        // Bidirectional overrides and isolates show, instead of reordering.
        assert_eq!(
            show("invoice\u{202e}dm.exe \u{2066}x\u{2069}"),
            "invoice\\u{202e}dm.exe \\u{2066}x\\u{2069}"
        );
    }

    #[test]
    fn json_escapes_bidirectional_characters_to_the_same_strings() {
        let v = serde_json::json!({"path": "invoice\u{202e}dm.exe", "plain": "caf\u{e9}\n"});
        let mut out = Vec::new();
        json(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\"path\":\"invoice\\u202edm.exe\",\"plain\":\"caf\u{e9}\\n\"}"
        );
        assert!(!text.contains('\u{202e}'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
