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
    {
        let set = stop_signals();
        if !mask(libc::SIG_BLOCK, &set) {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("lineage-signals".into())
            .spawn(move || {
                let Some(sig) = wait(&set) else { return };
                RECEIVED.store(sig, Ordering::SeqCst);
                if let Some(act) = ACTION.lock().ok().and_then(|mut a| a.take()) {
                    act();
                }
                if let Some(sig) = wait(&set) {
                    std::process::exit(128 + sig);
                }
            });
        if waiter.is_err() {
            // Nobody to take them: back to their default.
            mask(libc::SIG_UNBLOCK, &set);
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP, as a set.
#[cfg(target_os = "linux")]
fn stop_signals() -> libc::sigset_t {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initializes the set it points to (it cannot fail
    // on a valid pointer), then sigaddset adds valid signal numbers to it.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        set.assume_init()
    }
}

/// Block (or unblock) `set` in this thread, and so in the threads it
/// starts from now on; whether it took.
#[cfg(target_os = "linux")]
fn mask(how: libc::c_int, set: &libc::sigset_t) -> bool {
    // SAFETY: an initialized set; the old mask is not asked for.
    unsafe { libc::pthread_sigmask(how, set, std::ptr::null_mut()) == 0 }
}

/// The next signal of `set` (blocked), once it comes.
#[cfg(target_os = "linux")]
fn wait(set: &libc::sigset_t) -> Option<i32> {
    let mut sig = 0;
    // SAFETY: an initialized set and a place for the signal's number.
    let waited = unsafe { libc::sigwait(set, &mut sig) };
    (waited == 0).then_some(sig)
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
