//! Document names: a file's path relative to the root, as the `String` that
//! lineage keys documents by. File names are bytes, and not all of them are
//! UTF-8; replacing what is not (U+FFFD) made `a\xff.md` and `a\xfe.md` one
//! document. So a name is written losslessly: UTF-8 as it is, each byte that
//! is not UTF-8 as [`ESCAPE`] followed by the char of the same number
//! (U+0080..U+00FF), and [`ESCAPE`] itself doubled. A UTF-8 name is its own
//! name; [`bytes`] gives the exact path back for the file system; [`display`]
//! is the lossy form for people and JSON (see `path_hex` in the README).

use std::borrow::Cow;
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

/// The name for people: bytes that are not UTF-8 shown as U+FFFD.
/// Unicode's bidirectional formatting characters (embeddings, overrides,
/// isolates and marks): invisible, yet they reorder what a terminal draws
/// after them, so `invoice\u{202e}dm.exe` would show as `invoiceexe.md`.
/// Every place a name reaches a person escapes them, as it escapes
/// control characters.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

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

/// The name of one path component.
pub fn of_os(s: &std::ffi::OsStr) -> Cow<'_, str> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        match s.to_str() {
            Some(u) if !u.contains(ESCAPE) => Cow::Borrowed(u),
            _ => Cow::Owned(encode(s.as_bytes())),
        }
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

    proptest! {
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
