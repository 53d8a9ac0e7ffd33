//! What the tests of every lineage crate share: a dev-dependency only, with
//! no dependency of its own, so any crate's unit tests can use it.

#![forbid(unsafe_code)]

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// Run `test` on a thread of its own and fail, instead of hanging, when it
/// has not finished within `limit`: for tests of code that must never block
/// (a FIFO opened without a writer blocks forever, and a regression there
/// would stall the whole run). Its panic is the test's.
pub fn within<T: Send + 'static>(limit: Duration, test: impl FnOnce() -> T + Send + 'static) -> T {
    let (finished, done) = mpsc::channel();
    let test = std::thread::spawn(move || {
        let r = test();
        let _ = finished.send(());
        r
    });
    match done.recv_timeout(limit) {
        // Disconnected: it panicked.
        Ok(()) | Err(RecvTimeoutError::Disconnected) => match test.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("still running after {limit:?}: a wait where none may be")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::within;
    use std::time::Duration;

    #[test]
    fn a_test_that_finishes_gives_its_result() {
        assert_eq!(within(Duration::from_secs(5), || 6 * 7), 42);
    }

    #[test]
    #[should_panic(expected = "a wait where none may be")]
    fn a_test_that_hangs_fails_at_the_limit() {
        within(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_secs(3600));
        });
    }

    #[test]
    #[should_panic(expected = "its own failure")]
    fn a_test_that_fails_fails_with_its_own_panic() {
        within(Duration::from_secs(5), || panic!("its own failure"));
    }
}
