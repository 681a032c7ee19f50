//! The process allocator, with a small cache of large blocks.
//!
//! A training loop allocates the same large buffers every step. Freed to
//! the C allocator, a block of a few MiB goes back to the kernel, and the
//! next step pays a page fault (and zeroing) for every 4 KiB page of its
//! replacement: on memory-bound workloads that fault time costs more than
//! the arithmetic. Blocks of 128 KiB or more are therefore kept on free and handed out
//! again to requests of the same size class, already resident.
//!
//! Size classes round a request up to an eighth of its power of two; the
//! rounding costs address space only, as untouched pages are never
//! faulted in. The cache holds at most [`CACHE_BYTES`], evicting the
//! oldest block first. Small allocations never touch the cache or its lock.
//!
//! Blocks larger than the cache go to the C library's allocator: mimalloc
//! maps memory with `MAP_NORESERVE`, which Linux grants whatever its size,
//! so `torch.ones(2**40)` was handed 4 TiB of address space and the process
//! was killed for memory while filling it. The C library's mappings are
//! checked against the machine's memory (unless the kernel is set to
//! overcommit always), and one no machine can hold fails at once, as an
//! out-of-memory error.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::Mutex;

/// The allocator behind the cache, and the one for every small block:
/// mimalloc's thread-local free lists make the handful of small blocks an
/// op allocates (tensor, node, saved values) cheaper than glibc's malloc.
const BACKING: Mimalloc = Mimalloc;

/// The alignment every mimalloc block of at least this many bytes has.
const MIMALLOC_ALIGN: usize = 16;

/// mimalloc, asked for an alignment only when its blocks lack it.
///
/// Its aligned entry points serve a block from the free list of the
/// requested size only when that list happens to be non-empty, and
/// otherwise over-allocate unless the size is a power of two. Nothing else
/// fills those lists, so every tensor, node and saved value (whose sizes
/// are seldom powers of two) took the over-allocating path: about 240
/// instructions a block against some 30, and a block of a larger size.
struct Mimalloc;

/// Whether plain `mi_malloc` already aligns blocks of `layout` (as the
/// system allocator's own rule for `malloc`).
fn naturally_aligned(layout: &Layout) -> bool {
    layout.align() <= MIMALLOC_ALIGN && layout.align() <= layout.size()
}

/// A block of `layout` from `plain` where mimalloc's blocks have its
/// alignment anyway, else from `aligned`.
///
/// # Safety
/// Both must be mimalloc's entry points of one kind (fresh or zeroed).
unsafe fn allocate(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    // SAFETY: plain FFI calls with a valid size and power-of-two alignment.
    let block = unsafe {
        match naturally_aligned(&layout) {
            true => plain(layout.size()),
            false => aligned(layout.size(), layout.align()),
        }
    };
    block.cast()
}

// SAFETY: blocks come from mimalloc with at least the layout's alignment
// (plain calls only where its blocks have it) and go back to `mi_free`,
// which takes blocks from every one of its entry points.
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's two entry points for fresh blocks.
        unsafe { allocate(layout, mi::mi_malloc, mi::mi_malloc_aligned) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's two entry points for zeroed blocks.
        unsafe { allocate(layout, mi::mi_zalloc, mi::mi_zalloc_aligned) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: the caller passes a block this allocator handed out.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align(new_size, layout.align())
            .expect("the caller guarantees a valid layout");
        // SAFETY: `ptr` is a live block of this allocator; mimalloc keeps
        // its contents up to the smaller size.
        unsafe {
            match naturally_aligned(&new_layout) {
                true => mi::mi_realloc(ptr.cast(), new_size),
                false => mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()),
            }
        }
        .cast()
    }
}

/// Requests below this go straight to [`BACKING`]. It is glibc's
/// initial mmap threshold: blocks from there up are the ones that malloc
/// maps afresh or trims off its heap, and that fault again when reused.
const MIN_CACHED_BYTES: usize = 128 << 10;
/// Alignment of every cached block, enough for any element type and SIMD.
const BLOCK_ALIGN: usize = 64;
/// Most bytes the cache keeps while nothing uses them; larger requests go
/// to the C library's allocator (see the module's notes).
pub const CACHE_BYTES: usize = 256 << 20;
const SLOTS: usize = 64;

#[derive(Clone, Copy)]
struct Block {
    addr: usize,
    size: usize,
}

struct Cache {
    blocks: [Block; SLOTS],
    len: usize,
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    blocks: [Block { addr: 0, size: 0 }; SLOTS],
    len: 0,
    bytes: 0,
});

/// The size class of a cached request: `size` rounded up to a multiple of
/// an eighth of its power of two.
fn class_of(size: usize) -> usize {
    let step = (size.next_power_of_two() / 8).max(1);
    size.div_ceil(step) * step
}

fn cached(layout: &Layout) -> bool {
    (MIN_CACHED_BYTES..=CACHE_BYTES).contains(&layout.size()) && layout.align() <= BLOCK_ALIGN
}

fn block_layout(class: usize) -> Layout {
    Layout::from_size_align(class, BLOCK_ALIGN).expect("size classes are at most CACHE_BYTES")
}

/// Which allocator serves a request of `layout`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// mimalloc directly.
    Small,
    /// The cache, in front of mimalloc.
    Cached,
    /// The C library's allocator.
    Huge,
}

fn route(layout: &Layout) -> Route {
    if layout.size() > CACHE_BYTES {
        Route::Huge
    } else if cached(layout) {
        Route::Cached
    } else {
        Route::Small
    }
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    // The cache holds plain addresses: a panic elsewhere cannot leave it torn.
    CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Cache {
    fn take(&mut self, class: usize) -> Option<usize> {
        let i = (0..self.len)
            .rev()
            .find(|&i| self.blocks[i].size == class)?;
        let block = self.blocks[i];
        self.blocks.copy_within(i + 1..self.len, i);
        self.len -= 1;
        self.bytes -= block.size;
        Some(block.addr)
    }

    /// Keeps `block`, returning the blocks evicted to make room for it.
    fn put(&mut self, block: Block) -> ([Block; SLOTS], usize) {
        let mut evicted = [Block { addr: 0, size: 0 }; SLOTS];
        let mut n = 0;
        while self.len > 0 && (self.len == SLOTS || self.bytes + block.size > CACHE_BYTES) {
            evicted[n] = self.blocks[0];
            n += 1;
            self.bytes -= self.blocks[0].size;
            self.blocks.copy_within(1..self.len, 0);
            self.len -= 1;
        }
        self.blocks[self.len] = block;
        self.len += 1;
        self.bytes += block.size;
        (evicted, n)
    }
}

/// mimalloc with the large-block cache in front of it, and the C library's
/// allocator for blocks larger than the cache.
pub struct CachingAllocator;

// SAFETY: every block handed out comes from `BACKING` with the layout
// `block_layout(class)` or the caller's own layout, or from `System` with
// the caller's layout, and goes back to the same allocator with that same
// layout (`route` of a layout always gives the same answer); a cached
// block is owned by the cache alone until `alloc` hands it to exactly one
// caller.
unsafe impl GlobalAlloc for CachingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match route(&layout) {
            // SAFETY: forwarded with the caller's layout.
            Route::Small => unsafe { BACKING.alloc(layout) },
            // SAFETY: forwarded with the caller's layout.
            Route::Huge => unsafe { System.alloc(layout) },
            Route::Cached => {
                let class = class_of(layout.size());
                if let Some(addr) = lock().take(class) {
                    return addr as *mut u8;
                }
                // SAFETY: a non-zero size, as cached requests are at least 128 KiB.
                unsafe { BACKING.alloc(block_layout(class)) }
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match route(&layout) {
            // SAFETY: forwarded with the caller's layout.
            Route::Small => unsafe { BACKING.alloc_zeroed(layout) },
            // SAFETY: forwarded with the caller's layout.
            Route::Huge => unsafe { System.alloc_zeroed(layout) },
            Route::Cached => {
                let class = class_of(layout.size());
                if let Some(addr) = lock().take(class) {
                    let ptr = addr as *mut u8;
                    // SAFETY: the block has `class >= layout.size()` writable bytes.
                    unsafe { ptr.write_bytes(0, layout.size()) };
                    return ptr;
                }
                // Fresh pages from the system are zero already: no memset.
                // SAFETY: a non-zero size, as cached requests are at least 128 KiB.
                unsafe { BACKING.alloc_zeroed(block_layout(class)) }
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match route(&layout) {
            // SAFETY: `ptr` came from `BACKING` with this layout.
            Route::Small => unsafe { BACKING.dealloc(ptr, layout) },
            // SAFETY: `ptr` came from `System` with this layout.
            Route::Huge => unsafe { System.dealloc(ptr, layout) },
            Route::Cached => {
                let block = Block {
                    addr: ptr as usize,
                    size: class_of(layout.size()),
                };
                let (evicted, n) = lock().put(block);
                for b in &evicted[..n] {
                    // SAFETY: each evicted block came from `BACKING` with its class's layout.
                    unsafe { BACKING.dealloc(b.addr as *mut u8, block_layout(b.size)) };
                }
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align(new_size, layout.align())
            .expect("the caller guarantees a valid layout");
        match (route(&layout), route(&new_layout)) {
            // SAFETY: mimalloc owns the block and serves the new size.
            (Route::Small, Route::Small) => unsafe { BACKING.realloc(ptr, layout, new_size) },
            // SAFETY: the C library owns the block and serves the new size.
            (Route::Huge, Route::Huge) => unsafe { System.realloc(ptr, layout, new_size) },
            (Route::Cached, Route::Cached) if class_of(layout.size()) == class_of(new_size) => ptr,
            _ => {
                // SAFETY: `new_layout` is valid; the old block holds
                // `layout.size()` readable bytes and is freed exactly once.
                unsafe {
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_blocks_have_their_alignment() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (align..2048).step_by(align).chain([align * 41, 96 << 10]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; each block is written within its
                // size and freed once with its layout.
                unsafe {
                    for zeroed in [false, true] {
                        let ptr = match zeroed {
                            true => BACKING.alloc_zeroed(layout),
                            false => BACKING.alloc(layout),
                        };
                        assert!(!ptr.is_null());
                        assert_eq!(ptr as usize % align, 0, "size {size}, align {align}");
                        if zeroed {
                            assert!((0..size).all(|i| *ptr.add(i) == 0));
                        }
                        ptr.write_bytes(0xa5, size);
                        let grown = BACKING.realloc(ptr, layout, size * 3);
                        assert_eq!(
                            grown as usize % align,
                            0,
                            "grown from {size}, align {align}"
                        );
                        assert!((0..size).all(|i| *grown.add(i) == 0xa5));
                        let grown_layout = Layout::from_size_align(size * 3, align).unwrap();
                        BACKING.dealloc(grown, grown_layout);
                    }
                }
            }
        }
    }

    #[test]
    fn classes_round_up_by_at_most_an_eighth() {
        assert_eq!(class_of(1 << 20), 1 << 20);
        assert_eq!(class_of((1 << 20) + 1), (1 << 20) + (1 << 18));
        assert_eq!(class_of(16_000_000), 16 << 20);
        for size in [3 << 20, 5_000_001, 123_456_789] {
            let class = class_of(size);
            assert!(class >= size && class - size <= size.next_power_of_two() / 8);
        }
    }

    #[test]
    fn a_freed_large_block_is_reused_and_zeroed_on_request() {
        // An odd size class no other test allocates.
        let n = (37 << 20) / 4 + 3;
        let mut first = vec![7.0f32; n];
        first[n - 1] = 1.0;
        let addr = first.as_ptr() as usize;
        drop(first);
        let second = vec![0.0f32; n];
        assert_eq!(second.as_ptr() as usize, addr);
        assert!(second.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn realloc_within_a_class_keeps_the_block() {
        let mut v: Vec<u8> = Vec::with_capacity(41 << 20);
        v.push(5);
        let addr = v.as_ptr() as usize;
        v.reserve_exact((41 << 20) + 1000);
        assert_eq!(v.as_ptr() as usize, addr);
        assert_eq!(v[0], 5);
    }

    #[test]
    fn blocks_larger_than_the_cache_keep_their_contents_across_every_route() {
        let huge = CACHE_BYTES + 4096;
        let mut v: Vec<u8> = Vec::with_capacity(CACHE_BYTES / 2);
        v.extend_from_slice(b"ferrograd");
        // Cached to huge, huge to huge, then back to a cached size.
        v.reserve_exact(huge);
        assert_eq!(&v[..], b"ferrograd");
        v.reserve_exact(2 * huge);
        assert_eq!(&v[..], b"ferrograd");
        v.shrink_to(1 << 20);
        assert_eq!(&v[..], b"ferrograd");
        let zeroed = vec![0u64; huge / 8];
        assert!(zeroed[..4096]
            .iter()
            .chain(&zeroed[huge / 8 - 4096..])
            .all(|&x| x == 0));
    }

    #[test]
    fn an_impossible_block_is_refused_not_mapped() {
        // 4 TiB: past any machine's memory, which the C library's mappings
        // are checked against (unless the kernel is set to overcommit
        // always, when nothing can be refused before it is touched).
        let always_overcommits = std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
            .is_ok_and(|mode| mode.trim() == "1");
        if always_overcommits {
            return;
        }
        assert!(Vec::<u8>::new().try_reserve_exact(1 << 42).is_err());
    }

    #[test]
    fn the_cache_evicts_the_oldest_block_to_stay_bounded() {
        let mut cache = Cache {
            blocks: [Block { addr: 0, size: 0 }; SLOTS],
            len: 0,
            bytes: 0,
        };
        let big = CACHE_BYTES / 2;
        for addr in 1..=3 {
            cache.put(Block { addr, size: big });
        }
        assert_eq!(cache.len, 2);
        assert!(cache.bytes <= CACHE_BYTES);
        assert_eq!(cache.take(big), Some(3));
        assert_eq!(cache.take(big), Some(2));
        assert_eq!(cache.take(big), None);
    }
}
