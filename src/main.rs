mod cli;

fn main() -> std::process::ExitCode {
    // Like other Unix filters, end quietly when the reader of stdout goes
    // away (`lineage scan ROOT | head`) instead of reporting a broken pipe.
    #[cfg(target_os = "linux")]
    // SAFETY: called first thing, before any thread exists; restores the
    // default disposition of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cli::run()
}
