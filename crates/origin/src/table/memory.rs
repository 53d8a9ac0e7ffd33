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

/// Ask for the cache line holding `p` ahead of its use.
#[inline]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults or changes memory
    // (any address will do), and SSE is part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch`] every cache line of `s`.
#[inline]
pub(crate) fn prefetch_lines<T>(s: &[T]) {
    // A plain loop over line starts: `step_by` cost more than the prefetches.
    let p = s.as_ptr().cast::<u8>();
    let (first, end) = (p.addr() & !63, p.addr() + size_of_val(s));
    let mut line = p.wrapping_sub(p.addr() - first);
    while line.addr() < end {
        prefetch(line);
        line = line.wrapping_add(64);
    }
}

/// The largest table mapped ahead of use ([`touch`]) and backed by huge pages.
pub(super) const MAP_AHEAD: usize = 1 << 30;

/// A zeroed vector of `n` elements. With `huge`, large ones are backed by
/// huge pages where the kernel offers them: a table is touched at random,
/// and 4 KiB pages would cost a fault (and a TLB miss) per entry touched.
pub(crate) fn zeroed<T: Copy + Default>(n: usize, huge: bool) -> Vec<T> {
    let v = vec![T::default(); n];
    if huge {
        advise_huge_pages(&v);
    }
    v
}

/// Element types whose all-zero bytes are a valid value, their default.
///
/// # Safety
///
/// An implementor must be valid with every byte zero: [`try_zeroed`]
/// hands out zeroed memory as values of it.
pub(super) unsafe trait Zeroable: Copy + Default {}
// SAFETY: every bit pattern of an unsigned integer is valid; zero is 0.
unsafe impl Zeroable for u8 {}
// SAFETY: as for u8.
unsafe impl Zeroable for u16 {}
// SAFETY: as for u8.
unsafe impl Zeroable for u32 {}

/// [`zeroed`], or `None` when the memory cannot be had (the machine's, or
/// an address-space limit): the allocator's zeroed memory is asked for
/// directly, so a failure is an answer, not an abort. Pages are still
/// mapped only when first touched.
pub(super) fn try_zeroed<T: Zeroable>(n: usize, huge: bool) -> Option<Vec<T>> {
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is non-null and was allocated by the global allocator with
    // the layout of `[T; n]`; its `n` elements are zero bytes, a valid `T`.
    let v = unsafe { Vec::from_raw_parts(p, n, n) };
    if huge {
        advise_huge_pages(&v);
    }
    Some(v)
}

/// Map every page of `v` now, so that the faults that map its memory (the
/// OS zeroing it, and in a VM the host mapping it) are taken here, on the
/// thread that calls this, and not by the first lookups that land in it.
/// Contents stay as they are.
pub(super) fn touch<T: Copy>(v: &mut [T]) {
    if !populate_write(v) {
        write_each_page(v);
    }
}

/// [`touch`] where the kernel cannot populate: a write to every page, each
/// putting back the value read.
fn write_each_page<T: Copy>(v: &mut [T]) {
    let step = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for x in v.iter_mut().step_by(step) {
        // SAFETY: a valid, aligned element of our own slice; volatile so
        // the write of the value it already holds is not elided.
        unsafe { std::ptr::write_volatile(x, std::ptr::read_volatile(x)) };
    }
}

/// Linux 5.14's `MADV_POPULATE_WRITE`: the kernel maps `v`'s pages writable
/// as a write to each would, contents kept, without the read that first maps
/// the shared zero page and the copy-on-write fault (and the TLB shootdown
/// across the process's threads) that a write after it takes. False where
/// the kernel does not have it.
#[cfg(target_os = "linux")]
fn populate_write<T>(v: &[T]) -> bool {
    const PAGE: usize = 4096;
    let start = v.as_ptr() as usize & !(PAGE - 1);
    let end = (v.as_ptr() as usize + std::mem::size_of_val(v)).next_multiple_of(PAGE);
    // SAFETY: advice about whole pages that hold (part of) our own live
    // allocation, so all of them are mapped; populating changes no contents.
    end > start
        && unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            )
        } == 0
}

#[cfg(not(target_os = "linux"))]
fn populate_write<T>(_: &[T]) -> bool {
    false
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ways_of_touching_keep_every_value() {
        let want: Vec<u32> = (0..3 << 20)
            .map(|i: u32| i.wrapping_mul(2_654_435_761))
            .collect();
        for way in [touch::<u32>, write_each_page::<u32>] {
            let mut v = zeroed::<u32>(want.len(), true);
            v.copy_from_slice(&want);
            way(&mut v);
            assert!(v == want);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_populates_a_fresh_vector() {
        // Linux >= 5.14; every kernel this project is built and tested on.
        assert!(populate_write(&zeroed::<u64>(1 << 20, true)));
    }
}
