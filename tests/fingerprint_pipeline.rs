//! The public pipeline end to end: prepared text → token fingerprints → shingle
//! keys, against the test vectors of docs/algorithms.md §1.7.
#![allow(clippy::unwrap_used)] // a test, bench or example: a panic is its failure

use lineage_core::fingerprint::polynomial::standard;
use lineage_core::fingerprint::{ShingleRoller, fmix64, key, shingle_keys, token_fps};
use lineage_core::text::{Format, prepare};

#[test]
fn k3_shingle_vectors_through_the_tokenizer() {
    let text = prepare(
        b"The QUICK brown fox -- jumps over\nthe lazy dog.",
        Format::Plain,
    );
    let t = token_fps(standard(), &text);
    assert_eq!(t.fps.len(), 9);
    let mut raw = Vec::new();
    ShingleRoller::new(standard(), 3).fingerprints(&t.fps, &mut raw);
    assert_eq!(
        &raw[..3],
        &[
            0x2a85_1ca0_d4b2_1c81,
            0x9408_3bfb_0cb1_b656,
            0x334d_1f13_7d1a_21bf
        ]
    );
    let mut keys = Vec::new();
    shingle_keys(standard(), &t.fps, 3, &mut keys);
    assert_eq!(keys, raw.iter().map(|&f| key(f)).collect::<Vec<_>>());
    assert_eq!(keys[0], fmix64(0x2a85_1ca0_d4b2_1c81) >> 2);
}

#[test]
fn html_and_plain_spellings_give_the_same_shingles() {
    let html = prepare(
        b"<html><head><style>p{}</style><script>var x='<p>';</script></head>\
          <body><p>Caf&eacute; <b>cr&egrave;me</b> br&ucirc;l&eacute;e, <!-- note -->\
          na&#xEF;ve &amp; s&#233;ance</p></body></html>",
        Format::Html,
    );
    let plain = prepare(
        "CAFE\u{301} Cr\u{e8}me brûlée, naïve & Séance".as_bytes(),
        Format::Plain,
    );
    let (a, b) = (token_fps(standard(), &html), token_fps(standard(), &plain));
    assert_eq!(a.fps.len(), 5);
    assert_eq!(a.fps, b.fps);
    let (mut ka, mut kb) = (Vec::new(), Vec::new());
    shingle_keys(standard(), &a.fps, 4, &mut ka);
    shingle_keys(standard(), &b.fps, 4, &mut kb);
    assert_eq!(ka.len(), 2);
    assert_eq!(ka, kb);
}
