//! A counting global allocator, so fuzz targets can bound the memory an input makes the
//! library allocate, and tests can count the allocations a hot path makes.
//!
//! Binaries that want the bound install it:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: reftable_harness::alloc::CountingAlloc = reftable_harness::alloc::CountingAlloc;
//! ```
//!
//! Counts are kept per thread (the test harness runs tests on several threads at once): the
//! bytes live on this thread and their peak. [`measure`] reports the peak growth of a
//! closure, or `None` when the counting allocator is not installed, in which case the bound
//! is simply not checked.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// A [`GlobalAlloc`] that forwards to [`System`] and counts live and peak bytes per thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAlloc;

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static CALLS: Cell<u64> = const { Cell::new(0) };
}

/// One more allocation (or reallocation) on this thread.
fn count_call() {
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
}

fn note(delta: isize) {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    // `try_with`: allocations during thread teardown are simply not counted.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| {
            if now > peak.get() {
                peak.set(now);
            }
        });
    });
}

// SAFETY: every method forwards to `System` with the same arguments and only updates
// thread-local counters, which neither allocate nor unwind.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
            count_call();
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
            count_call();
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
            count_call();
        }
        p
    }
}

/// Whether [`CountingAlloc`] is the global allocator of this process (it has seen an
/// allocation).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Run `f` and return its result with the peak number of bytes it had allocated on this
/// thread beyond what was live when it started (`None` without [`CountingAlloc`]).
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    let start = LIVE.with(Cell::get);
    let outer_peak = PEAK.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    // Restore the enclosing measurement's peak, so that `measure` nests.
    PEAK.with(|p| p.set(outer_peak.max(peak)));
    let grown = (peak - start).max(0) as usize;
    (out, installed().then_some(grown))
}

/// Run `f` and return its result with the number of allocations and reallocations it made
/// on this thread (`None` without [`CountingAlloc`]).
pub fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, Option<u64>) {
    let start = CALLS.with(Cell::get);
    let out = f();
    let calls = CALLS.with(Cell::get) - start;
    (out, installed().then_some(calls))
}
