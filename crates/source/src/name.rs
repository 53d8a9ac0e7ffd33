//! Document names: a file's path relative to the root, as the `String` that
//! lineage keys documents by. File names are bytes, and not all of them are
//! UTF-8; replacing what is not (U+FFFD) made `a\xff.md` and `a\xfe.md` one
//! document. So a name is written losslessly: UTF-8 as it is, each byte that
//! is not UTF-8 as [`ESCAPE`] followed by the char of the same number
//! (U+0080..U+00FF), and [`ESCAPE`] itself doubled. A UTF-8 name is its own
//! name; [`bytes`] gives the exact path back for the file system; [`display`]
//! is the lossy form for JSON (see `path_hex` in docs/formats.md §1); [`escaped`] is
//! the form for a terminal, exact and with nothing hidden ([`is_hidden`]).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A noncharacter: never meant for interchange, so names hold it rarely (and
/// then doubled).
pub const ESCAPE: char = '\u{10FFFE}';

/// The name of `bytes` (a relative path, `/`-separated).
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == ESCAPE {
                out.push(ESCAPE);
            }
            out.push(c);
        }
        for &b in chunk.invalid() {
            out.push(ESCAPE);
            out.push(char::from(b));
        }
    }
    out
}

/// The exact bytes a name stands for.
pub fn bytes(name: &str) -> Cow<'_, [u8]> {
    if !name.contains(ESCAPE) {
        return Cow::Borrowed(name.as_bytes());
    }
    let mut out = Vec::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match (c, c == ESCAPE) {
            (_, true) => match chars.next() {
                Some(e) if e == ESCAPE => out.extend_from_slice(ESCAPE.to_string().as_bytes()),
                // Always below 0x100: `encode` wrote it from a byte.
                Some(b) => out.push(u32::from(b) as u8),
                None => {}
            },
            (c, false) => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Cow::Owned(out)
}

/// Whether the name stands for bytes that are not UTF-8.
pub(crate) fn is_lossy(name: &str) -> bool {
    name.contains(ESCAPE) && std::str::from_utf8(&bytes(name)).is_err()
}

/// Unicode's bidirectional formatting characters (embeddings, overrides,
/// isolates and marks): invisible, yet they reorder what a terminal draws
/// after them, so `invoice\u{202e}dm.exe` would show as `invoiceexe.md`.
/// They are among the [`is_hidden`] characters a name never shows raw; a
/// page's text, drawn as it is, shows them as spaces.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Whether `c` is never shown raw in a name or a message ([`escaped`]): C0
/// and C1 controls and DEL, the line and paragraph separators, and Unicode's
/// format characters (general category Cf: zero-width space and joiners,
/// the soft hyphen, the byte order mark, the bidirectional controls, tags).
/// Invisible or nearly so, raw they make two names look alike
/// (`read\u{200b}me.md` and `readme.md`), cut a line, reorder what follows,
/// or take a column the terminal and the view count differently.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_format(c)
}

/// Unicode's general category Cf, as of Unicode 16.
fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// The zero-width joiner: hidden, except between two pictographs, where it
/// makes one emoji of them (`👩\u{200d}💻`, a technologist) and is kept.
const ZWJ: char = '\u{200d}';

/// Whether a ZWJ after `before` (the two chars before it, nearest last)
/// and before `after` joins an emoji sequence. Pictographs are taken as
/// the blocks RGI sequences draw from (Unicode's Extended_Pictographic,
/// approximated by block), a variation selector 16 allowed after the first.
fn joins_emoji(before: [Option<char>; 2], after: Option<char>) -> bool {
    let pictograph = |c: char| {
        matches!(c,
            '\u{2190}'..='\u{21ff}'
                | '\u{2300}'..='\u{23ff}'
                | '\u{2600}'..='\u{27bf}'
                | '\u{2b00}'..='\u{2bff}'
                | '\u{1f000}'..='\u{1faff}')
    };
    let first = match before {
        [p, Some('\u{fe0f}')] => p,
        [_, p] => p,
    };
    first.is_some_and(pictograph) && after.is_some_and(pictograph)
}

/// `s` (a name, or a message naming files) for a terminal or a text file,
/// nothing hidden and one string for one name: each [`is_hidden`]
/// character as a visible escape (`\n`, `\t`, `\r`, `\x1b` below U+0080,
/// `\u{200b}` above), as ripgrep and `ls` do; a byte of the name that is not
/// UTF-8 as `\xNN` (N ≥ 80, where a control is below); a backslash doubled.
/// So `esc\x1b]0;pwned\x07.md` cannot retitle the terminal, a newline cannot
/// cut a line, U+202E cannot show a name reversed, and `read\u{200b}me.md`
/// does not look like `readme.md`. Escape once, where the text is shown: a
/// message holds names raw.
pub fn escaped(s: &str) -> Cow<'_, str> {
    let needs = |c: char| is_hidden(c) || c == '\\' || c == ESCAPE;
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut before = [None, None];
    let mut chars = s.chars().peekable();
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
            ZWJ if joins_emoji(before, chars.peek().copied()) => out.push(c),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
        before = [before[1], Some(c)];
    }
    Cow::Owned(out)
}

/// The name for JSON (beside [`hex`]): bytes that are not UTF-8 as U+FFFD.
pub fn display(name: &str) -> Cow<'_, str> {
    if !name.contains(ESCAPE) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(String::from_utf8_lossy(&bytes(name)).into_owned())
}

/// The exact bytes as lower-case hex, for JSON, when the name is not UTF-8.
pub fn hex(name: &str) -> Option<String> {
    is_lossy(name).then(|| bytes(name).iter().map(|b| format!("{b:02x}")).collect())
}

/// The file `name` stands for under `root`.
pub fn path(root: &Path, name: &str) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        root.join(std::ffi::OsStr::from_bytes(&bytes(name)))
    }
    #[cfg(not(unix))]
    root.join(name)
}

/// The lossless name of a name given as bytes (a path of a git tree, a
/// Unix name): UTF-8 as it is, anything else [`encode`]d.
pub fn of_bytes(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(u) if !u.contains(ESCAPE) => Cow::Borrowed(u),
        _ => Cow::Owned(encode(b)),
    }
}

/// The name of one path component.
pub fn of_os(s: &std::ffi::OsStr) -> Cow<'_, str> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        of_bytes(s.as_bytes())
    }
    #[cfg(not(unix))]
    s.to_string_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_that_lossy_decoding_merged_stay_apart() {
        let names: Vec<String> = [&b"a\xff.md"[..], b"a\xfe.md", "a\u{FFFD}.md".as_bytes()]
            .iter()
            .map(|b| encode(b))
            .collect();
        assert_ne!(names[0], names[1]);
        assert_ne!(names[0], names[2]);
        assert_eq!(names[2], "a\u{FFFD}.md", "UTF-8 is its own name");
        assert_eq!(display(&names[0]), "a\u{FFFD}.md");
        assert_eq!(hex(&names[0]).as_deref(), Some("61ff2e6d64"));
        assert_eq!(hex(&names[2]), None);
        let esc = format!("x{ESCAPE}.md");
        assert_eq!(bytes(&encode(esc.as_bytes())), esc.as_bytes());
        assert!(!is_lossy(&encode(esc.as_bytes())));
    }

    #[test]
    fn hidden_characters_are_shown_escaped() {
        assert_eq!(escaped("plain/path.md"), "plain/path.md");
        assert!(matches!(escaped("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escaped("esc\x1b]0;pwned\x07.md"),
            "esc\\x1b]0;pwned\\x07.md"
        );
        assert_eq!(escaped("a\nb\tc\rd"), "a\\nb\\tc\\rd");
        assert_eq!(escaped("del\x7f c1\u{9b}"), "del\\x7f c1\\u{9b}");
        assert_eq!(escaped("back\\slash"), "back\\\\slash");
        // A literal backslash-x and an escaped byte differ.
        assert_ne!(escaped("a\\x1b"), escaped("a\x1b"));
        assert_eq!(escaped(&encode(b"a\xfe.md")), "a\\xfe.md");
        assert_eq!(escaped("caf\u{e9} \u{4e2d}"), "caf\u{e9} \u{4e2d}");
        assert_eq!(
            escaped("invoice\u{202e}dm.exe \u{2066}x\u{2069}"),
            "invoice\\u{202e}dm.exe \\u{2066}x\\u{2069}"
        );
        // Zero-width and format characters: visible, so
        // `read\u{200b}me.md` no longer looks like `readme.md`.
        for (c, shown) in [
            ('\u{200b}', "\\u{200b}"),
            ('\u{200d}', "\\u{200d}"),
            ('\u{2060}', "\\u{2060}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{ad}', "\\u{ad}"),
            ('\u{e0001}', "\\u{e0001}"),
            ('\u{2028}', "\\u{2028}"),
        ] {
            assert_eq!(
                escaped(&format!("read{c}me.md")),
                format!("read{shown}me.md")
            );
        }
        // A joiner in an emoji sequence draws one glyph: it stays.
        for emoji in ["👩\u{200d}💻", "❤\u{fe0f}\u{200d}🔥", "👁\u{200d}🗨"] {
            assert_eq!(escaped(&format!("{emoji}.md")), format!("{emoji}.md"));
        }
        assert_eq!(escaped("👩\u{200d}x"), "👩\\u{200d}x");
        assert_eq!(escaped("x\u{200d}💻"), "x\\u{200d}💻");
        assert_eq!(escaped("x\u{fe0f}\u{200d}💻"), "x\u{fe0f}\\u{200d}💻");
    }

    /// The escaped form read back: a name's bytes that are not UTF-8
    /// (`\xNN`, N ≥ 80) as [`encode`] writes them.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut it = s.chars();
        while let Some(c) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let number = |digits: String| u32::from_str_radix(&digits, 16).unwrap();
            match it.next() {
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('x') => {
                    let b = number(it.by_ref().take(2).collect());
                    if b >= 0x80 {
                        out.push(ESCAPE);
                    }
                    out.push(char::from_u32(b).unwrap());
                }
                Some('u') => {
                    assert_eq!(it.next(), Some('{'));
                    let c = char::from_u32(number(it.by_ref().take_while(|&c| c != '}').collect()));
                    let c = c.unwrap();
                    if c == ESCAPE {
                        out.push(ESCAPE);
                    }
                    out.push(c);
                }
                other => panic!("not an escape: {other:?} in {s:?}"),
            }
        }
        out
    }

    /// Names of hidden characters (by the regex crate's Unicode tables, not
    /// ours), pictographs and joiners, backslashes, and bytes that are not
    /// UTF-8.
    fn names() -> impl Strategy<Value = String> {
        let text = "(\\p{Cf}|\\p{Cc}|[\u{2028}\u{2029}]|[a-z/.\\\\]|[👩💻❤\u{fe0f}\u{200d}\u{10fffe}]){0,12}";
        let part = prop_oneof![
            text.prop_map(String::into_bytes),
            any::<u8>().prop_map(|b| vec![b]),
        ];
        proptest::collection::vec(part, 0..6).prop_map(|parts| encode(&parts.concat()))
    }

    proptest! {
        // Cheap, and there are some 240 to draw.
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn every_format_and_control_character_is_hidden(c in "\\p{Cf}|\\p{Cc}|\\p{Zl}|\\p{Zp}") {
            let c = c.chars().next().unwrap();
            prop_assert!(is_hidden(c), "U+{:04X}", c as u32);
        }

        /// Judged by the regex crate's tables, not ours: among letters,
        /// every format, control and separator character is escaped.
        #[test]
        fn hidden_characters_among_letters_show_as_ascii(
            s in "(\\p{Cf}|\\p{Cc}|\\p{Zl}|\\p{Zp}|[a-z\\\\]){0,16}"
        ) {
            let shown = escaped(&s);
            prop_assert!(shown.chars().all(|c| c.is_ascii_graphic()), "{:?}", shown);
        }
    }

    proptest! {

        /// Nothing hidden shows (but a joiner in an emoji), and the
        /// escaped form reads back as the name: distinct names stay
        /// distinct.
        #[test]
        fn the_escaped_form_hides_nothing_and_reads_back(a in names(), b in names()) {
            let shown = escaped(&a);
            let raw: Vec<char> = shown.chars().collect();
            for (i, &c) in raw.iter().enumerate() {
                let joins = c == ZWJ
                    && joins_emoji(
                        [i.checked_sub(2).map(|j| raw[j]), i.checked_sub(1).map(|j| raw[j])],
                        raw.get(i + 1).copied(),
                    );
                prop_assert!(!is_hidden(c) || joins, "U+{:04X} in {:?}", c as u32, shown);
            }
            prop_assert_eq!(unescape(&shown), a.clone());
            if a != b {
                prop_assert_ne!(shown, escaped(&b));
            }
        }

        #[test]
        fn encoding_is_lossless(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            let name = encode(&b);
            prop_assert_eq!(bytes(&name).into_owned(), b.clone());
            prop_assert_eq!(is_lossy(&name), std::str::from_utf8(&b).is_err());
        }

        #[test]
        fn utf8_is_its_own_name(s in "\\PC{0,20}") {
            prop_assume!(!s.contains(ESCAPE));
            prop_assert_eq!(encode(s.as_bytes()), s);
        }
    }
}
