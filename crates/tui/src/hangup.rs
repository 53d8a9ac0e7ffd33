//! A terminal that goes away (its window closed, its tmux server killed)
//! hangs up: every read of it returns nothing at once, for ever. crossterm's
//! reader retries such a read in a loop it never leaves (a core at 100 %),
//! and no SIGHUP need reach lineage: the kernel sends it to the session
//! leader, and a shell without job control does not pass it on. So one
//! thread sleeps until the hang-up itself (`poll` asked for no event still
//! reports POLLHUP) and then stops lineage as SIGHUP would.

/// Run `act` once the terminal the keys come from hangs up.
pub(crate) fn on_hangup(act: impl FnOnce() + Send + 'static) {
    #[cfg(unix)]
    {
        // Found now, while it is still a terminal.
        tty();
        let _ = std::thread::Builder::new()
            .name("lineage-hangup".into())
            .spawn(move || {
                if wait(-1) {
                    act();
                }
            });
    }
    #[cfg(not(unix))]
    drop(act);
}

/// Whether the terminal has hung up: then the input thread may be stuck in
/// that loop and is not waited for, and the screen is not restored (writes
/// to it only fail).
pub(crate) fn happened() -> bool {
    #[cfg(unix)]
    return wait(0);
    #[cfg(not(unix))]
    false
}

/// Wait up to `timeout_ms` (-1: no limit), asleep, for the terminal to hang
/// up: true if it has, false on the timeout or if there is none to watch.
#[cfg(unix)]
fn wait(timeout_ms: i32) -> bool {
    let Some(fd) = tty() else { return false };
    loop {
        let mut p = libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, its count 1.
        let n = unsafe { libc::poll(&mut p, 1, timeout_ms) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0;
    }
}

/// The terminal crossterm reads (standard input when it is one, else
/// `/dev/tty`), found once: a hung-up terminal is no longer a terminal
/// to `isatty`, and `/dev/tty` can no longer be opened.
#[cfg(unix)]
fn tty() -> Option<std::os::fd::RawFd> {
    use std::os::fd::IntoRawFd;
    static TTY: std::sync::OnceLock<Option<std::os::fd::RawFd>> = std::sync::OnceLock::new();
    *TTY.get_or_init(|| {
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
            return Some(libc::STDIN_FILENO);
        }
        // Kept open for the process's life, as crossterm keeps its own.
        let f = std::fs::File::open("/dev/tty").ok()?;
        Some(f.into_raw_fd())
    })
}
