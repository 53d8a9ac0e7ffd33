//! The process's allocator around the Tune pane's sweeps (see
//! [`lineage_engine::Memory`]): a process setting, made here by the binary.

/// What `watch` does around each sweep.
pub const SWEEPS: lineage_engine::Memory = lineage_engine::Memory {
    before_sweep: Some(fix_malloc_thresholds),
    after_sweep: Some(give_back_memory),
};

/// Stop glibc from raising its mmap threshold (and the trim threshold, twice
/// it) each time a large block is freed, which it does up to 32 MiB: a
/// sweep's selections and tables then land in the rayon threads' arenas, and
/// `malloc_trim` does not reach the free top of an arena that is not the main
/// one, so after a sweep on rust-book-editions 13 MB more than before it
/// stayed resident. With fixed thresholds an arena's top is trimmed as it is
/// freed and large blocks are mapped and unmapped on their own.
///
/// At the first sweep, not at start: fixed from the start it slows the
/// indexing before any sweep (`index` on wiki-revisions, median of 7: 2.19 s
/// → 2.52 s; git-docs 1.57 → 1.68 s, BENCHMARKS.md "Allocator thresholds"),
/// and only a sweep needs it.
fn fix_malloc_thresholds() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; 128 KiB is its
    // default threshold.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Return freed heap pages to the OS. glibc keeps them in its arenas for
/// reuse, so without this a watcher that ran one sweep stays at the sweep's
/// size for the rest of its life.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; any thread may call it.
    unsafe {
        libc::malloc_trim(0);
    }
}
