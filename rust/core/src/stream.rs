//! Filling large outputs with non-temporal stores.
//!
//! A plain store to a line that is not in cache first reads the line from
//! memory, so an elementwise kernel whose output is larger than the caches
//! moves each output byte twice. Kernels that fill such outputs compute
//! each block into a small staging buffer that stays in L1, then write it
//! out with streaming stores, which skip that read: `a * b` on 16 MB
//! operands moves 48 MB instead of 64.

use std::mem::MaybeUninit;

/// Outputs at least this large are streamed: smaller ones are likely still
/// in the last-level cache when the next op reads them.
pub const STREAM_MIN_BYTES: usize = 4 << 20;

const STAGE_BYTES: usize = 4096;

#[repr(C, align(64))]
struct Stage([MaybeUninit<u8>; STAGE_BYTES]);

/// Whether an output of `n` elements of `T` should be streamed.
pub fn worth_streaming<T>(n: usize) -> bool {
    n.saturating_mul(std::mem::size_of::<T>()) >= STREAM_MIN_BYTES
}

/// Fills `dst` block by block: `fill(offset, block)` must write every
/// element of `block`, which stands for `dst[offset..offset + block.len()]`.
pub fn fill_streaming<T: Copy>(
    dst: &mut [MaybeUninit<T>],
    fill: impl Fn(usize, &mut [MaybeUninit<T>]),
) {
    let size = std::mem::size_of::<T>();
    if size == 0 || size > STAGE_BYTES || std::mem::align_of::<T>() > 64 {
        return fill(0, dst);
    }
    let per_stage = STAGE_BYTES / size;
    let mut stage = Stage([MaybeUninit::uninit(); STAGE_BYTES]);
    // SAFETY: the stage is 64-byte aligned, which covers `T`'s alignment
    // (checked above), and holds `per_stage * size <= STAGE_BYTES` bytes;
    // `MaybeUninit<T>` has no validity requirement on those bytes.
    let block: &mut [MaybeUninit<T>] =
        unsafe { std::slice::from_raw_parts_mut(stage.0.as_mut_ptr().cast(), per_stage) };
    for (k, out) in dst.chunks_mut(per_stage).enumerate() {
        let staged = &mut block[..out.len()];
        fill(k * per_stage, staged);
        // SAFETY: `fill` wrote every element of `staged`, so its bytes are
        // initialised; `out` is exactly as long and does not overlap it.
        unsafe {
            copy_streaming(
                out.as_mut_ptr().cast(),
                staged.as_ptr().cast(),
                size * out.len(),
            )
        };
    }
    fence();
}

/// Copies `len` bytes from `src` to `dst` with streaming stores where
/// the CPU has them.
///
/// # Safety
/// `src` must be valid for `len` initialised bytes, `dst` valid for
/// writing `len` bytes, and the two must not overlap.
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(len);
        // SAFETY (this block): the caller's contract covers every byte in
        // `0..len`; the loop only touches `head..head + 16 * whole`, and
        // `dst + head` is 16-byte aligned as `_mm_stream_si128` requires.
        std::ptr::copy_nonoverlapping(src, dst, head);
        let whole = (len - head) / 16;
        for i in 0..whole {
            let at = head + 16 * i;
            let v = _mm_loadu_si128(src.add(at).cast::<__m128i>());
            _mm_stream_si128(dst.add(at).cast::<__m128i>(), v);
        }
        let done = head + 16 * whole;
        std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), len - done);
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::copy_nonoverlapping(src, dst, len);
}

/// Orders this thread's streaming stores before its later stores, so the
/// data is visible to a thread that learns through an atomic that the
/// block is done (streaming stores are weakly ordered).
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no memory-safety preconditions; SSE is part of
    // the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled_with<T: Copy + PartialEq + std::fmt::Debug>(
        len: usize,
        skip: usize,
        value: impl Fn(usize) -> T,
    ) {
        // `skip` misaligns the destination so the head and tail paths run.
        let mut buf: Vec<MaybeUninit<T>> = vec![MaybeUninit::uninit(); len + skip];
        fill_streaming(&mut buf[skip..], |offset, block| {
            for (i, slot) in block.iter_mut().enumerate() {
                slot.write(value(offset + i));
            }
        });
        for (i, slot) in buf[skip..].iter().enumerate() {
            // SAFETY: `fill_streaming` wrote every element past `skip`.
            assert_eq!(unsafe { slot.assume_init() }, value(i), "element {i}");
        }
    }

    #[test]
    fn every_element_lands_whatever_the_size_and_alignment() {
        for len in [0, 1, 3, 17, 1023, 1024, 1025, 5000] {
            for skip in 0..4 {
                filled_with(len, skip, |i| i as f32 * 0.5);
                filled_with(len, skip, |i| i % 3 == 0);
                filled_with(len, skip, |i| (i as f64, -(i as f64)));
                filled_with(len, skip, |i| i as i64 - 7);
            }
        }
    }
}
