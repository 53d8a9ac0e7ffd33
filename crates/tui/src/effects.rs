//! What a key asks of the terminal itself rather than of the state: copying
//! to the clipboard, running an editor. [`update`] only records them
//! ([`App::effects`]); the UI loop does them, so `update` stays free of I/O.
//!
//! [`update`]: super::app::update
//! [`App::effects`]: super::app::App::effects

use std::path::PathBuf;

use super::editor::EditorCall;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Effect {
    /// Put these bytes (a path) on the clipboard.
    Copy(Vec<u8>),
    /// Run an editor, with the terminal, until it exits.
    Edit(EditorCall),
    /// Write an export (`rows` rows) to `path`, unless it is inside `root`.
    Export {
        path: PathBuf,
        root: PathBuf,
        bytes: Vec<u8>,
        rows: usize,
    },
    /// Save these keys of adopted settings in the folder's table of the
    /// config file (answered by `Msg::Saved`).
    Save(lineage_origin::Params, Vec<&'static str>),
    /// Save the basis of the changed and removed shares in the folder's
    /// table of the config file.
    SaveBasis(lineage_config::Basis),
}

/// The OSC 52 sequence that asks the terminal to put `bytes` on the
/// clipboard: `ESC ] 52 ; c ; <base64> BEL`. The payload is base64, so no
/// byte of a path (a BEL, an ESC) can end the sequence early.
pub(crate) fn osc52(bytes: &[u8]) -> String {
    format!("\x1b]52;c;{}\x07", base64(bytes))
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_rfc_4648_says() {
        // RFC 4648 §10's test vectors.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn the_clipboard_sequence_holds_the_path_in_base64() {
        assert_eq!(osc52(b"/tmp/a b.md"), "\x1b]52;c;L3RtcC9hIGIubWQ=\x07");
        // A BEL, an ESC, a string terminator, a newline, a non-UTF-8 byte:
        // one sequence still, ended only by its own BEL.
        let nasty = b"/x/a\x07b\x1b\\c\nd\xff.md";
        let s = osc52(nasty);
        let payload = s
            .strip_prefix("\x1b]52;c;")
            .and_then(|p| p.strip_suffix('\x07'))
            .unwrap();
        assert!(
            payload
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        );
        assert_eq!(s.matches('\x1b').count(), 1);
        assert_eq!(s.matches('\x07').count(), 1);
    }
}
