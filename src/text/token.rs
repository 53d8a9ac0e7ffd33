//! Tokens (CONTRACT §1): a maximal run that starts with an alphanumeric character
//! and continues with alphanumerics or combining marks (Mn, Mc, Me). The key text
//! is NFC(lowercase(token)).

use std::ops::Range;

/// A token with its byte span in the prepared text and its key text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub span: Range<usize>,
    pub key: String,
}

/// Calls `f(span, key)` for every token in document order, without allocating
/// per token (the key borrows a scratch buffer).
pub fn for_each_token(text: &str, mut f: impl FnMut(Range<usize>, &str)) {
    let _ = (&text, &mut f);
    todo!("text::token::for_each_token")
}

/// All tokens of `text`, in order.
pub fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for_each_token(text, |span, key| {
        out.push(Token {
            span,
            key: key.to_owned(),
        })
    });
    out
}
