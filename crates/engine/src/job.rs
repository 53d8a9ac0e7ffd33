//! One background job of a kind at a time (Tune's shadow runs, the search
//! of every page): starting one cancels the one under way, as gitui's
//! `AsyncSingleJob` does. The job reads its cancel flag and stops.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The job of one kind under way, if any.
pub(super) struct SingleJob {
    /// Its thread's name.
    name: &'static str,
    /// The generation it was started for, and its cancel flag.
    running: Option<(u64, Arc<AtomicBool>)>,
}

impl SingleJob {
    pub(super) const fn new(name: &'static str) -> SingleJob {
        SingleJob {
            name,
            running: None,
        }
    }

    /// Cancel the job under way, if any.
    pub(super) fn cancel(&mut self) {
        if let Some((_, cancel)) = self.running.take() {
            cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Cancel the job under way if it is `generation`'s; whether it was.
    pub(super) fn cancel_generation(&mut self, generation: u64) -> bool {
        let ours = self.running.as_ref().is_some_and(|(g, _)| *g == generation);
        if ours {
            self.cancel();
        }
        ours
    }

    /// Cancel the job under way and run `work` on a thread of its own,
    /// given the new job's cancel flag.
    pub(super) fn start(
        &mut self,
        generation: u64,
        work: impl FnOnce(Arc<AtomicBool>) + Send + 'static,
    ) -> std::io::Result<()> {
        self.cancel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || work(flag))?;
        self.running = Some((generation, cancel));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A job that waits for its cancel flag and says when it saw it.
    fn waiting(seen: mpsc::Sender<u64>, generation: u64) -> impl FnOnce(Arc<AtomicBool>) + Send {
        move |cancel| {
            while !cancel.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = seen.send(generation);
        }
    }

    #[test]
    fn a_new_job_cancels_the_one_under_way_and_only_a_matching_generation_cancels() {
        let (tx, rx) = mpsc::channel();
        let mut job = SingleJob::new("lineage-test-job");
        job.start(1, waiting(tx.clone(), 1)).unwrap();
        job.start(2, waiting(tx.clone(), 2)).unwrap();
        let within = Duration::from_secs(10);
        assert_eq!(
            rx.recv_timeout(within),
            Ok(1),
            "the first cancelled by the second"
        );
        assert!(!job.cancel_generation(1), "no longer under way");
        assert!(
            rx.recv_timeout(Duration::from_millis(50)).is_err(),
            "the second runs on"
        );
        assert!(job.cancel_generation(2));
        assert_eq!(rx.recv_timeout(within), Ok(2));
        assert!(!job.cancel_generation(2), "cancelled once");
    }
}
