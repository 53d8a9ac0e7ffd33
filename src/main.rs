mod cli;
mod memory;

fn main() -> std::process::ExitCode {
    // The process's signals are set here, first thing, before any thread
    // exists (the stop signals are taken by `cli::signals` once a command
    // can stop). Like other Unix filters, end quietly when the reader of
    // stdout goes away (`lineage scan ROOT | head`) instead of reporting a
    // broken pipe.
    #[cfg(target_os = "linux")]
    // SAFETY: no other thread exists yet; restores one signal's default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    lineage_source::watch::ignore_lease_signal();
    cli::run()
}
