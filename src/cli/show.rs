//! Plain-text output that a hostile file name cannot turn against the
//! terminal, and that a full or closed stderr cannot turn into a panic.
//!
//! Every path and message printed without `--json` goes through [`show`]
//! once, where it is printed ([`lineage_source::name::escaped`]: control
//! and format characters as visible escapes, a backslash doubled, bytes of
//! a name that are not UTF-8 as `\xNN`); a message holds names raw. JSON
//! goes through [`json`], which writes those characters that serde_json
//! leaves raw (DEL, C1 controls, format characters, U+2028 and U+2029) as
//! `\uXXXX` escapes: the same strings to a JSON reader, inert in a terminal.

use std::borrow::Cow;
use std::io::Write as _;

use lineage_source::name::{escaped, is_hidden};

/// `s` with every hidden character escaped visibly and unambiguously.
pub(crate) fn show(s: &str) -> Cow<'_, str> {
    escaped(s)
}

/// Write `value` as JSON to `out`, hidden characters escaped (see the
/// module's comment).
pub(crate) fn json<W: std::io::Write, T: serde::Serialize + ?Sized>(
    out: W,
    value: &T,
) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(
        out,
        HiddenEscaped,
    ))
}

/// serde_json's compact output, with [`is_hidden`] characters in strings
/// written as `\uXXXX` (a surrogate pair above U+FFFF, as JSON spells
/// them). serde_json has already escaped C0 controls, `"` and `\\`.
struct HiddenEscaped;

impl serde_json::ser::Formatter for HiddenEscaped {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // Below DEL nothing is hidden (serde_json escaped C0): keys and most
        // paths, which would otherwise be decoded a char at a time.
        if fragment.bytes().all(|b| b < 0x7f) {
            return w.write_all(fragment.as_bytes());
        }
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| is_hidden(c)) {
            w.write_all(&rest.as_bytes()[..at])?;
            let mut units = [0; 2];
            for u in c.encode_utf16(&mut units) {
                write!(w, "\\u{:04x}", u)?;
            }
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
    fn json_escapes_hidden_characters_to_the_same_strings() {
        let v = serde_json::json!({"path": "del\x7f c1\u{9b} read\u{200b}me \u{e0001} \u{2028}"});
        let mut out = Vec::new();
        json(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\"path\":\"del\\u007f c1\\u009b read\\u200bme \\udb40\\udc01 \\u2028\"}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
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

/// A run's settings as the JSON formats write them (docs/formats.md §6):
/// `scan`'s, or an index's (`explain`, `copies`, `shared`), which keeps no
/// processing order.
#[derive(serde::Serialize)]
pub(super) struct ParamsJson {
    k: usize,
    selector: String,
    table_size: String,
    eviction: String,
    eviction_ties: String,
    estimation: String,
    bridge_limit: u32,
    bucket_entries: u16,
    seed: u64,
    align: bool,
    fingerprint_seed: u64,
    /// P without its x^64 term, in hex (a u64 does not survive every JSON
    /// reader as a number).
    polynomial: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    order: Option<String>,
}

impl ParamsJson {
    pub(super) fn new(
        p: &lineage_origin::Params,
        poly: &lineage_core::fingerprint::polynomial::Polynomial,
        order: Option<lineage_source::Order>,
    ) -> ParamsJson {
        ParamsJson {
            k: p.k,
            selector: p.selector.to_string(),
            table_size: p.table_size.to_string(),
            eviction: p.eviction.to_string(),
            eviction_ties: p.ties.to_string(),
            estimation: p.estimation.to_string(),
            bridge_limit: p.bridge_limit,
            bucket_entries: p.bucket_entries,
            seed: p.seed,
            align: p.align,
            fingerprint_seed: poly.seed(),
            polynomial: poly.hex(),
            order: order.map(|o| o.to_string()),
        }
    }
}
