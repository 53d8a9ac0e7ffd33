//! A list over a pane that asked the engine a question: what was asked,
//! the answer when it comes (an answer to another question is not taken),
//! why none is coming, and the list's cursor.

use std::sync::Arc;

use super::scroll::Cursor;

/// An open list asking `Q`, answered by a `V`.
pub(crate) struct Asked<Q, V> {
    /// What was asked.
    pub(crate) requested: Q,
    /// None until the engine answers.
    pub(crate) view: Option<Arc<V>>,
    /// Why no answer is coming (the index is closed).
    pub(crate) failed: Option<String>,
    pub(crate) cursor: Cursor,
}

impl<Q: PartialEq, V> Asked<Q, V> {
    /// A list waiting on the answer to `requested`.
    pub(crate) fn new(requested: Q) -> Asked<Q, V> {
        Asked {
            requested,
            view: None,
            failed: None,
            cursor: Cursor::default(),
        }
    }

    /// Take `view` if it answers `to`, what was asked.
    pub(crate) fn receive(&mut self, to: &Q, view: Arc<V>) {
        if self.requested == *to {
            self.cursor = Cursor::default();
            self.view = Some(view);
        }
    }

    /// Say why no answer is coming, if none came yet.
    pub(crate) fn refuse(&mut self, why: &str) {
        if self.view.is_none() {
            self.failed = Some(why.to_string());
        }
    }
}
