//! SIGINT, SIGTERM and SIGHUP end `index` and `watch` the way `q` does: the
//! work done so far is saved (the table checkpointed), so the next start
//! goes on from there instead of replaying. The signals are blocked in every
//! thread and taken by one of their own (`sigwait`), which notes the signal
//! and runs what the command registered; a second signal ends the process
//! at once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

/// The first stop signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// What to do on it, registered by the command once it can stop.
type Action = Box<dyn FnOnce() + Send>;
static ACTION: Mutex<Option<Action>> = Mutex::new(None);

/// Take the stop signals from now on: called before any other thread is
/// started, since threads inherit the mask (a thread that left them
/// unblocked would be killed by them, the process with it).
pub(super) fn take() {
    #[cfg(target_os = "linux")]
    // SAFETY: a zeroed sigset_t is filled by sigemptyset/sigaddset before
    // use; pthread_sigmask and sigwait get valid pointers to it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("lineage-signals".into())
            .spawn(move || {
                let mut sig = 0;
                if libc::sigwait(&set, &mut sig) != 0 {
                    return;
                }
                RECEIVED.store(sig, Ordering::SeqCst);
                if let Some(act) = ACTION.lock().ok().and_then(|mut a| a.take()) {
                    act();
                }
                if libc::sigwait(&set, &mut sig) == 0 {
                    std::process::exit(128 + sig);
                }
            });
        if waiter.is_err() {
            // Nobody to take them: back to their default.
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Run `act` on the first stop signal (at once if it came already).
pub(crate) fn on_stop(act: impl FnOnce() + Send + 'static) {
    if received().is_some() {
        act();
        return;
    }
    if let Ok(mut a) = ACTION.lock() {
        *a = Some(Box::new(act));
    }
    // It may have come while registering: then the waiter found no action.
    if received().is_some()
        && let Some(act) = ACTION.lock().ok().and_then(|mut a| a.take())
    {
        act();
    }
}

/// The stop signal received, if one was.
pub(crate) fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// A signal's name, for the last line.
pub(super) fn name(sig: i32) -> &'static str {
    match sig {
        #[cfg(target_os = "linux")]
        libc::SIGINT => "SIGINT",
        #[cfg(target_os = "linux")]
        libc::SIGTERM => "SIGTERM",
        #[cfg(target_os = "linux")]
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
