//! Memory for tables: how much the machine has, and zeroed vectors backed by
//! huge pages.

/// The machine's physical memory in bytes (`u64::MAX` where unknown).
pub(super) fn physical_memory() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads system constants; no memory is passed.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            return (pages as u64).saturating_mul(page as u64);
        }
    }
    u64::MAX
}

/// A zeroed vector of `n` elements. Large ones are backed by huge pages where
/// the kernel offers them: a big table is touched at random, and 4 KiB pages
/// would cost a fault (and a TLB miss) per entry touched.
pub(crate) fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let v = vec![T::default(); n];
    advise_huge_pages(&v);
    v
}

/// Write to every page of `v` now, so that the faults that map its memory
/// (the OS zeroing it, and in a VM the host mapping it) are taken here, on
/// the thread that calls this, and not by the first lookups that land in it.
/// Contents stay as they are: each write puts back the value read.
pub(super) fn touch<T: Copy>(v: &mut [T]) {
    let step = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for x in v.iter_mut().step_by(step) {
        // SAFETY: a valid, aligned element of our own slice; volatile so
        // the write of the value it already holds is not elided.
        unsafe { std::ptr::write_volatile(x, std::ptr::read_volatile(x)) };
    }
}

#[cfg(target_os = "linux")]
pub(super) fn advise_huge_pages<T>(v: &[T]) {
    const HUGE: usize = 2 << 20;
    let start = v.as_ptr() as usize;
    let end = (start + std::mem::size_of_val(v)) & !(HUGE - 1);
    let aligned = (start + HUGE - 1) & !(HUGE - 1);
    if end > aligned {
        // SAFETY: advice about pages of our own live allocation; MADV_HUGEPAGE
        // changes neither their contents nor their validity.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn advise_huge_pages<T>(_: &[T]) {}
