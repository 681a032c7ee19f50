//! Elementwise kernels over strided, broadcast operands.
//!
//! Contiguous operands run as plain slice loops that the compiler
//! vectorises; large ones are split across the rayon pool. Anything else
//! walks storage offsets.

use crate::tensor::layout::{broadcast_shapes, Layout};
use crate::tensor::storage::try_buffer;
use crate::tensor::{Element, Shape, Tensor};
use crate::Result;
use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard};
use std::mem::MaybeUninit;

/// Element counts below this run on the calling thread: spawning costs more.
pub const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;
pub(crate) const CHUNK: usize = 1 << 14;

/// The contiguous slice a tensor covers, if it is contiguous.
/// Empty views may carry any offset (even past the end of the storage).
fn contiguous_range(l: &Layout) -> Option<std::ops::Range<usize>> {
    match l.numel() {
        0 => Some(0..0),
        n => l.is_contiguous().then(|| l.offset..l.offset + n),
    }
}

/// The storage range of a layout that is dense in an order other than
/// row-major: a transposed or permuted contiguous tensor, or a
/// channels-last one, whose elements fill `offset..offset + numel` exactly
/// once. `None` for row-major, broadcast, sliced or overlapping layouts.
fn permuted_range(l: &Layout) -> Option<std::ops::Range<usize>> {
    (!l.is_contiguous() && l.is_non_overlapping_and_dense()).then(|| l.offset..l.offset + l.numel())
}

/// `out`, the elements of a result in the storage order of `like` (a
/// layout that [`permuted_range`] accepts), as a tensor with `like`'s
/// strides: an elementwise result keeps its operand's memory order, as
/// PyTorch's do, so `-w.t()` is one pass in storage order rather than a
/// transpose, and is itself `w`-shaped in memory.
fn laid_out_as<O: Element>(out: Vec<O>, like: &Layout) -> Result<Tensor> {
    let flat = Tensor::from_vec(out, &[like.numel()])?;
    let layout = Layout {
        shape: like.shape.clone(),
        strides: like.strides.clone(),
        offset: 0,
    };
    Ok(Tensor::from_parts(flat.storage().clone(), layout))
}

/// Whether every element of `l` is the same storage element (a number or
/// a tensor expanded from one), so kernels can treat it as a constant.
fn is_single_element(l: &Layout) -> bool {
    l.shape
        .iter()
        .zip(&l.strides)
        .all(|(&d, &s)| d <= 1 || s == 0)
}

/// Offsets of one row: `len` elements from `start`, `stride` apart.
#[inline(always)]
pub(crate) fn row(start: usize, len: usize, stride: isize) -> impl Iterator<Item = usize> {
    (0..len).map(move |k| (start as isize + k as isize * stride) as usize)
}

/// Defines `$name`, whose loop is compiled twice: for the baseline target
/// and for AVX2, chosen at run time. The float32 polynomials of `fastmath`
/// then run eight lanes wide where the CPU allows instead of four. The
/// element function should be `#[inline(always)]` (or small) so that it is
/// inlined into, and vectorised with, each copy of the loop.
macro_rules! wide_loop {
    ($vis:vis $name:ident<$($g:ident),*>($($arg:ident: $ty:ty),*) where [$($bound:tt)*] $body:block) => {
        #[inline(always)]
        $vis fn $name<$($g),*>($($arg: $ty),*) where $($bound)* {
            #[inline(always)]
            fn body<$($g),*>($($arg: $ty),*) where $($bound)* $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                unsafe fn avx512<$($g),*>($($arg: $ty),*) where $($bound)* {
                    body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2<$($g),*>($($arg: $ty),*) where $($bound)* {
                    body($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU supports AVX-512F, checked just above.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU supports AVX2 and FMA, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}

pub(crate) use wide_loop;

wide_loop!(map_into<A, O, F>(out: &mut [MaybeUninit<O>], src: &[A], f: &F)
    where [A: Copy, F: Fn(A) -> O] {
    for (o, &x) in out.iter_mut().zip(src) {
        o.write(f(x));
    }
});

wide_loop!(zip_into<A, B, O, F>(out: &mut [MaybeUninit<O>], sa: &[A], sb: &[B], f: &F)
    where [A: Copy, B: Copy, F: Fn(A, B) -> O] {
    for ((o, &x), &y) in out.iter_mut().zip(sa).zip(sb) {
        o.write(f(x, y));
    }
});

wide_loop!(update_from<D, S, F>(dst: &mut [D], src: &[S], f: &F)
    where [D: Copy, S: Copy, F: Fn(D, S) -> D] {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = f(*d, s);
    }
});

wide_loop!(pub(crate) update_pair_from<D, S, F>(a: &mut [D], b: &mut [D], src: &[S], f: &F)
    where [D: Copy, S: Copy, F: Fn(D, D, S) -> (D, D)] {
    for ((x, y), &s) in a.iter_mut().zip(b.iter_mut()).zip(src) {
        (*x, *y) = f(*x, *y, s);
    }
});

wide_loop!(update_with<D, F>(dst: &mut [D], f: &F) where [D: Copy, F: Fn(D) -> D] {
    for d in dst.iter_mut() {
        *d = f(*d);
    }
});

wide_loop!(zip3_into<A, B, C, O, F>(out: &mut [MaybeUninit<O>], sa: &[A], sb: &[B], sc: &[C], f: &F)
    where [A: Copy, B: Copy, C: Copy, F: Fn(A, B, C) -> O] {
    for ((o, &x), (&y, &z)) in out.iter_mut().zip(sa).zip(sb.iter().zip(sc)) {
        o.write(f(x, y, z));
    }
});

wide_loop!(zip3_pair_into<T, F>(
        first: &mut [MaybeUninit<T>],
        second: &mut [MaybeUninit<T>],
        sx: &[T],
        sy: &[T],
        sz: &[T],
        f: &F
    )
    where [T: Copy, F: Fn(T, T, T) -> (T, T)] {
    let outs = first.iter_mut().zip(second.iter_mut());
    for (((o, p), &x), (&y, &z)) in outs.zip(sx).zip(sy.iter().zip(sz)) {
        let (u, v) = f(x, y, z);
        o.write(u);
        p.write(v);
    }
});

wide_loop!(pub(crate) rows_into<T, F>(
        out: &mut [T],
        sa: &[T],
        sb: &[T],
        row_len: usize,
        first_row: usize,
        f: &F
    )
    where [T: Copy, F: Fn(usize, &[T], &[T], &mut [T])] {
    let sources = sa.chunks_exact(row_len).zip(sb.chunks_exact(row_len));
    for (k, (o, (a, b))) in out.chunks_exact_mut(row_len).zip(sources).enumerate() {
        f(first_row + k, a, b, o);
    }
});

/// Calls `body(start, chunk)` over `xs` in chunks, on the pool when `xs` is
/// large, where `start` is the index of the chunk's first element.
fn for_chunks<T: Send>(xs: &mut [T], body: impl Fn(usize, &mut [T]) + Sync + Send) {
    if xs.len() >= PARALLEL_MIN_ELEMENTS {
        crate::parallel::for_each_span_mut(xs, CHUNK, body);
    } else {
        body(0, xs);
    }
}

/// A vector of `n` elements written by `fill(start, chunk)`, which must
/// write every element of each chunk it is given.
fn filled<O: Element>(
    n: usize,
    fill: impl Fn(usize, &mut [MaybeUninit<O>]) + Sync + Send,
) -> Result<Vec<O>> {
    let mut out = try_buffer(n)?;
    let dst = &mut out.spare_capacity_mut()[..n];
    if crate::stream::worth_streaming::<O>(n) {
        for_chunks(dst, |start, chunk| {
            crate::stream::fill_streaming(chunk, |offset, block| fill(start + offset, block))
        });
    } else {
        for_chunks(dst, fill);
    }
    // SAFETY: `for_chunks` (and `fill_streaming` within a chunk) hands
    // every element of the first `n` to `fill` exactly once, and each
    // caller's `fill` zips its block with a source at least as long,
    // writing each element.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// Where the rows of one broadcast operand start: the offsets of its outer
/// rows (every dim of the row starts but the last) and the count and stride
/// of that last dim. One offset per row, as an earlier version kept, took
/// about a quarter of a broadcast over a last dim of 16 elements to write.
struct RowStarts {
    outer: Vec<usize>,
    inner_len: usize,
    inner_stride: isize,
}

impl RowStarts {
    /// The row starts of `l`, a layout coalesced for the walk, with the
    /// length and stride of its rows. (A layout of one row has one outer
    /// row of one inner row.)
    fn of(l: &Layout) -> Result<(RowStarts, usize, isize)> {
        let (starts, len, stride) = l.rows();
        let (outer, inner_len, inner_stride) = starts.rows();
        let row_starts = RowStarts {
            outer: outer.offset_vec()?,
            inner_len,
            inner_stride,
        };
        Ok((row_starts, len, stride))
    }

    /// The start of row `inner` of outer row `outer`.
    #[inline(always)]
    fn at(&self, (outer, inner): (usize, usize)) -> usize {
        (self.outer[outer] as isize + inner as isize * self.inner_stride) as usize
    }
}

/// Splits the piece `[start, start + n)` of an output walked in rows of
/// `len` (pieces may start and end inside a row), whose rows are numbered
/// `(outer, inner)` with `inner_len` inner rows to an outer one, at the row
/// ends: `body(range within the piece, row, first column)`.
#[inline(always)]
fn for_row_pieces(
    start: usize,
    n: usize,
    len: usize,
    inner_len: usize,
    mut body: impl FnMut(std::ops::Range<usize>, (usize, usize), usize),
) {
    if n == 0 {
        return;
    }
    let (r, mut col, mut done) = (start / len, start % len, 0);
    let (mut outer, mut inner) = (r / inner_len, r % inner_len);
    while done < n {
        let end = (done + len - col).min(n);
        body(done..end, (outer, inner), col);
        (col, done, inner) = (0, end, inner + 1);
        if inner == inner_len {
            (outer, inner) = (outer + 1, 0);
        }
    }
}

/// Square tiles of this many elements on a side: a tile's buffer (4 KiB
/// of float32) stays in L1 between its copy in and its copy out.
const TILE: usize = 32;

/// How to walk a layout whose last dim is strided while an earlier dim is
/// contiguous, as a transpose's is: one element per source line a row of
/// the output reads, each line used once per row. Walked in square tiles,
/// a source line is read whole for a tile's rows (a 1024x1024 `t()` copied
/// in 3.4 ms by rows).
struct TransposedWalk {
    /// Source offsets of the dims before the contiguous one, the
    /// contiguous dim's length, and the source offsets of the dims between
    /// it and the last (relative to a row start).
    outer: Vec<usize>,
    len: usize,
    middle: Vec<usize>,
    /// The last dim's length and stride.
    cols: usize,
    col_stride: isize,
}

impl TransposedWalk {
    /// The walk for `l` (coalesced), or `None` when its last dim is
    /// contiguous, broadcast or short, or no earlier dim is contiguous.
    fn of(l: &Layout) -> Result<Option<TransposedWalk>> {
        let Some((&cols, outer_dims)) = l.shape.split_last() else {
            return Ok(None);
        };
        let col_stride = l.strides[outer_dims.len()];
        let contiguous = outer_dims
            .iter()
            .zip(&l.strides)
            .rposition(|(&d, &s)| s == 1 && d >= TILE / 4);
        let Some(p) = contiguous.filter(|_| cols >= 4 && col_stride.unsigned_abs() > 1) else {
            return Ok(None);
        };
        let part = |dims: std::ops::Range<usize>, offset: usize| Layout {
            shape: l.shape[dims.clone()].into(),
            strides: l.strides[dims].into(),
            offset,
        };
        Ok(Some(TransposedWalk {
            outer: part(0..p, l.offset).offset_vec()?,
            len: l.shape[p],
            middle: part(p + 1..outer_dims.len(), 0).offset_vec()?,
            cols,
            col_stride,
        }))
    }

    /// `f` of every element of `src` walked this way, in row-major order
    /// (`n` elements). Pieces of `TILE` steps along the contiguous dim
    /// are independent: they write disjoint runs of the output, split
    /// over the pool when large.
    fn map<A: Element, O: Element>(
        &self,
        src: &[A],
        n: usize,
        f: &(impl Fn(A) -> O + Sync),
    ) -> Result<Vec<O>> {
        let mut out = try_buffer(n)?;
        let step = self.middle.len() * self.cols;
        let pieces = out.spare_capacity_mut()[..n]
            .chunks_mut(self.len * step)
            .zip(&self.outer)
            .flat_map(|(block, &base)| {
                let starts = (0..self.len).step_by(TILE).map(move |i| base + i);
                block.chunks_mut(TILE * step).zip(starts)
            });
        let fill = |(piece, start): &mut (&mut [MaybeUninit<O>], usize)| {
            self.tile_rows(piece, src, *start, f)
        };
        if n >= PARALLEL_MIN_ELEMENTS {
            crate::parallel::for_each_item_mut(pieces, |_, piece| fill(piece));
        } else {
            pieces.for_each(|mut piece| fill(&mut piece));
        }
        // SAFETY: the pieces cover the first `n` elements (one block of
        // `len * step` per outer offset, `n` in all), and `tile_rows`
        // writes every element of each.
        unsafe { out.set_len(n) };
        Ok(out)
    }

    /// Writes `out`, the rows for up to `TILE` consecutive steps along the
    /// contiguous dim from source offset `start`.
    fn tile_rows<A: Copy, O>(
        &self,
        out: &mut [MaybeUninit<O>],
        src: &[A],
        start: usize,
        f: &impl Fn(A) -> O,
    ) {
        let row_len = self.middle.len() * self.cols;
        let rows = out.len() / row_len;
        for (m, &mid) in self.middle.iter().enumerate() {
            // SAFETY: the runs are `rows` steps along the contiguous dim
            // from each column's element of these rows, all elements of
            // the layout `of` was given, which lie in `src`; row `i` of
            // this middle index is `cols` elements of `out` from
            // `i * row_len + m * cols`.
            unsafe {
                transpose_runs(
                    src.as_ptr().add(start + mid),
                    self.cols,
                    rows,
                    self.col_stride,
                    out.as_mut_ptr().add(m * self.cols),
                    row_len,
                    f,
                )
            }
        }
    }
}

/// Writes `f` of the transpose of `runs` runs of `len` contiguous elements
/// (run `j` at `src + j * run_stride`) as `len` rows of `runs` elements
/// (row `i` at `dst + i * dst_stride`), in square tiles. A tile's runs are
/// copied whole into a buffer, then its rows are written whole from it:
/// with power-of-two strides the runs (and the rows) fall in one cache
/// set, and tiles read and written in place evicted them before they were
/// used up (1.2 ms for a 1024x1024 `t()` against 0.06 for a plain copy,
/// 0.2 ms this way).
///
/// # Safety
/// `src` must be valid for reads of every run and `dst` for writes of every
/// row, and no other thread may write those rows meanwhile.
pub(crate) unsafe fn transpose_runs<A: Copy, O>(
    src: *const A,
    runs: usize,
    len: usize,
    run_stride: isize,
    dst: *mut MaybeUninit<O>,
    dst_stride: usize,
    f: &impl Fn(A) -> O,
) {
    let mut tile = [MaybeUninit::<A>::uninit(); TILE * TILE];
    for i0 in (0..len).step_by(TILE) {
        let rows = TILE.min(len - i0);
        for j0 in (0..runs).step_by(TILE) {
            let j1 = runs.min(j0 + TILE);
            for j in j0..j1 {
                let run = src.offset(j as isize * run_stride).add(i0);
                std::ptr::copy_nonoverlapping(
                    run,
                    tile[(j - j0) * TILE..].as_mut_ptr().cast(),
                    rows,
                );
            }
            for i in 0..rows {
                let row = dst.add((i0 + i) * dst_stride);
                for j in j0..j1 {
                    // SAFETY (of the read): element `i` of run `j` was
                    // copied into the tile just above.
                    row.add(j)
                        .write(MaybeUninit::new(f(tile[(j - j0) * TILE + i].assume_init())));
                }
            }
        }
    }
}

/// `t`, of shape `shape`, copied into row-major order when it is a
/// transposed view ([`TransposedWalk`]), or `None`. Callers ask for shapes
/// of [`UNTRANSPOSE_MIN_ELEMENTS`] or more. Walked by rows beside
/// a row-major operand it would be read one element per source line: `a +
/// b.t()` for 1024x1024 matrices took 1.7 ms that way, against 0.2 for the
/// copy and 0.05 for the sum of row-major operands.
fn untransposed<T: Element>(t: &Tensor, shape: &[usize]) -> Result<Option<Tensor>> {
    let l = t.layout();
    if l.shape[..] != *shape || l.is_contiguous() {
        return Ok(None);
    }
    let [coalesced] = Layout::coalesced([l]);
    let Some(walk) = TransposedWalk::of(&coalesced)? else {
        return Ok(None);
    };
    let out = walk.map(&t.storage().read::<T>(), l.numel(), &|x| x)?;
    Ok(Some(Tensor::from_vec(out, shape)?))
}

/// Transposed operands smaller than this are walked as they are.
const UNTRANSPOSE_MIN_ELEMENTS: usize = 4 * TILE * TILE;

/// `f` applied to every element, as a new tensor laid out as `a` when `a`
/// is dense in some dim order (see [`laid_out_as`]), else row-major.
pub fn map<A: Element, O: Element>(a: &Tensor, f: impl Fn(A) -> O + Sync + Send) -> Result<Tensor> {
    map_in(a, f, true)
}

/// `f` applied to every element, as a new contiguous tensor: for callers
/// that go on to read or write the result's buffer in row-major order.
pub fn map_row_major<A: Element, O: Element>(
    a: &Tensor,
    f: impl Fn(A) -> O + Sync + Send,
) -> Result<Tensor> {
    map_in(a, f, false)
}

fn map_in<A: Element, O: Element>(
    a: &Tensor,
    f: impl Fn(A) -> O + Sync + Send,
    keep_order: bool,
) -> Result<Tensor> {
    let data = a.storage().read::<A>();
    let l = a.layout();
    let n = l.numel();
    if n == 1 {
        // A number (a micrograd-style model is made of them): no kernel
        // dispatch or chunking, which cost more than the element.
        let value = f(data[l.offset]);
        drop(data);
        return Ok(Tensor::from_element(value, &l.shape));
    }
    let dense = contiguous_range(l).or_else(|| permuted_range(l).filter(|_| keep_order));
    let out: Vec<O> = match dense {
        Some(r) => {
            let src = &data[r];
            let out = filled(n, |start, out| map_into(out, &src[start..], &f))?;
            if !l.is_contiguous() {
                drop(data);
                return laid_out_as(out, l);
            }
            out
        }
        None => {
            let [l] = Layout::coalesced([l]);
            if let Some(walk) = TransposedWalk::of(&l)? {
                let out = walk.map(&data, n, &f)?;
                drop(data);
                return Tensor::from_vec(out, a.shape());
            }
            let (outer, len, stride) = l.rows();
            let mut out = try_buffer(n)?;
            for start in outer.offsets() {
                if stride == 1 {
                    out.extend(data[start..start + len].iter().map(|&x| f(x)));
                } else if stride == 0 {
                    // A broadcast row (an expanded gradient): one value.
                    out.extend(std::iter::repeat_n(f(data[start]), len));
                } else {
                    out.extend(row(start, len, stride).map(|o| f(data[o])));
                }
            }
            out
        }
    };
    drop(data);
    Tensor::from_vec(out, &l.shape)
}

/// Two outputs of `f(x, y, z)` from one pass over three contiguous operands
/// of one shape (the two gradients of a product read the incoming gradient
/// once), or `None` for any other layout.
pub fn zip3_map_pair<T: Element>(
    x: &Tensor,
    y: &Tensor,
    z: &Tensor,
    f: impl Fn(T, T, T) -> (T, T) + Sync + Send,
) -> Result<Option<(Tensor, Tensor)>> {
    let shape = x.shape();
    if y.shape() != shape || z.shape() != shape {
        return Ok(None);
    }
    let (Some(rx), Some(ry), Some(rz)) = (
        contiguous_range(x.layout()),
        contiguous_range(y.layout()),
        contiguous_range(z.layout()),
    ) else {
        return Ok(None);
    };
    let (dx, dy, dz) = (
        x.storage().read::<T>(),
        y.storage().read::<T>(),
        z.storage().read::<T>(),
    );
    let (sx, sy, sz) = (&dx[rx], &dy[ry], &dz[rz]);
    let n = sx.len();
    let (mut first, mut second) = (try_buffer(n)?, try_buffer(n)?);
    let outs = (
        &mut first.spare_capacity_mut()[..n],
        &mut second.spare_capacity_mut()[..n],
    );
    let fill = |start: usize, a: &mut [MaybeUninit<T>], b: &mut [MaybeUninit<T>]| {
        zip3_pair_into(a, b, &sx[start..], &sy[start..], &sz[start..], &f)
    };
    if n >= PARALLEL_MIN_ELEMENTS {
        let len = crate::parallel::span_len(n, CHUNK);
        let pieces = outs.0.chunks_mut(len).zip(outs.1.chunks_mut(len));
        let streamed = crate::stream::worth_streaming::<T>(n);
        crate::parallel::for_each_item_mut(pieces, |i, (a, b)| {
            if streamed {
                crate::stream::fill_streaming_pair(a, b, |offset, a, b| {
                    fill(i * len + offset, a, b)
                });
            } else {
                fill(i * len, a, b);
            }
        });
    } else {
        fill(0, outs.0, outs.1);
    }
    drop((dx, dy, dz));
    // SAFETY: the pieces cover both outputs' first `n` elements exactly
    // once, and `zip3_pair_into` writes every element of the blocks it is
    // given (its three sources are at least as long).
    unsafe {
        first.set_len(n);
        second.set_len(n);
    }
    Ok(Some((
        Tensor::from_vec(first, shape)?,
        Tensor::from_vec(second, shape)?,
    )))
}

/// `f` applied pairwise over the broadcast of `a` and `b`.
pub fn zip_map<A: Element, B: Element, O: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(A, B) -> O + Sync + Send,
) -> Result<Tensor> {
    zip_map_by(a, b, &f)
}

/// [`zip_map`] with `f` by reference, so that its recursion (through
/// copies and reorderings of the operands) instantiates it once.
fn zip_map_by<A: Element, B: Element, O: Element, F: Fn(A, B) -> O + Sync + Send>(
    a: &Tensor,
    b: &Tensor,
    f: &F,
) -> Result<Tensor> {
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    let n = crate::tensor::layout::numel(&shape);
    let (la, lb) = (a.layout(), b.layout());
    if n == 1 {
        // Two numbers (each has the one element: see `map`).
        let value = f(
            a.storage().read::<A>()[la.offset],
            b.storage().read::<B>()[lb.offset],
        );
        return Ok(Tensor::from_element(value, &shape));
    }
    let ranges = (contiguous_range(la), contiguous_range(lb));
    if ranges.0.is_none() || ranges.1.is_none() {
        let permuted = |l: &Layout| l.shape == shape && permuted_range(l).is_some();
        if permuted(la) {
            return zip_in_order_of(la, a, b, &shape, f);
        }
        if is_single_element(la) && permuted(lb) {
            return zip_in_order_of(lb, a, b, &shape, f);
        }
        if n >= UNTRANSPOSE_MIN_ELEMENTS {
            if let Some(a) = untransposed::<A>(a, &shape)? {
                return zip_map_by(&a, b, f);
            }
            if let Some(b) = untransposed::<B>(b, &shape)? {
                return zip_map_by(a, &b, f);
            }
        }
    }
    let da = a.storage().read::<A>();
    let db = b.storage().read::<B>();
    let out: Vec<O> = match ranges {
        (Some(ra), Some(rb)) if la.shape == shape && lb.shape == shape => {
            let (sa, sb) = (&da[ra], &db[rb]);
            filled(n, |start, out| zip_into(out, &sa[start..], &sb[start..], f))?
        }
        (Some(ra), _) if la.shape == shape && is_single_element(lb) && lb.numel() > 0 => {
            let (sa, y) = (&da[ra], db[lb.offset]);
            filled(n, |start, out| {
                map_into(out, &sa[start..], &{
                    #[inline(always)]
                    |x| f(x, y)
                })
            })?
        }
        (_, Some(rb)) if lb.shape == shape && is_single_element(la) && la.numel() > 0 => {
            let (x, sb) = (da[la.offset], &db[rb]);
            filled(n, |start, out| {
                map_into(out, &sb[start..], &{
                    #[inline(always)]
                    |y| f(x, y)
                })
            })?
        }
        _ => {
            let (ba, bb) = (la.broadcast_to(&shape)?, lb.broadcast_to(&shape)?);
            let [ba, bb] = Layout::coalesced([&ba, &bb]);
            let ((starts_a, len, sa), (starts_b, _, sb)) =
                (RowStarts::of(&ba)?, RowStarts::of(&bb)?);
            filled(n, |start, out| {
                let (a, b) = ((&da[..], &starts_a, sa), (&db[..], &starts_b, sb));
                zip_broadcast_rows(out, start, len, a, b, f)
            })?
        }
    };
    drop((da, db));
    Tensor::from_vec(out, &shape)
}

/// [`zip_map`] laid out as `lead` (the layout of `a` or `b`), dense in an
/// order other than row-major and of the result's shape (`x.t() + y`,
/// `x.t() * 2`, `2 * x.t()`): both operands seen with their dims in
/// `lead`'s memory order, outermost first, so the result comes out
/// row-major in that order (one pass over storage when the other operand
/// shares the layout or is a number) and, seen back, has `lead`'s layout,
/// as PyTorch lays out a result after its first operand.
fn zip_in_order_of<A: Element, B: Element, O: Element, F: Fn(A, B) -> O + Sync + Send>(
    lead: &Layout,
    a: &Tensor,
    b: &Tensor,
    shape: &[usize],
    f: &F,
) -> Result<Tensor> {
    let mut order: smallvec::SmallVec<[usize; 6]> = (0..shape.len()).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(lead.strides[d]));
    let in_order = |t: &Tensor| -> Result<Tensor> {
        let l = t.layout().broadcast_to(shape)?;
        Ok(t.alias(Layout {
            shape: order.iter().map(|&d| l.shape[d]).collect(),
            strides: order.iter().map(|&d| l.strides[d]).collect(),
            offset: l.offset,
        }))
    };
    let out = zip_map_by(&in_order(a)?, &in_order(b)?, f)?;
    let lo = out.layout();
    let mut strides = lead.strides.clone();
    for (i, &d) in order.iter().enumerate().filter(|&(_, &d)| shape[d] > 1) {
        strides[d] = lo.strides[i];
    }
    Ok(out.alias(Layout {
        shape: Shape::from_slice(shape),
        strides,
        offset: lo.offset,
    }))
}

/// One operand of [`zip_broadcast_rows`]: its elements, where its rows
/// start, and the stride along a row.
type BroadcastRows<'a, T> = (&'a [T], &'a RowStarts, isize);

wide_loop!(zip_broadcast_rows<A, B, O, F>(
        out: &mut [MaybeUninit<O>],
        start: usize,
        len: usize,
        a: BroadcastRows<'_, A>,
        b: BroadcastRows<'_, B>,
        f: &F
    )
    where [A: Copy, B: Copy, O: Copy, F: Fn(A, B) -> O] {
    // The rows are walked inside one vectorised function rather than by a
    // call per row: broadcasts over a short last dimension have many rows.
    let ((da, starts_a, sa), (db, starts_b, sb)) = (a, b);
    let n = out.len();
    let piece_of_row = {
        #[inline(always)]
        |at: std::ops::Range<usize>, r: (usize, usize), c: usize| {
            let piece = &mut out[at];
            let (ra, rb) = (starts_a.at(r), starts_b.at(r));
            match (sa, sb) {
                // The common broadcasts: a row against a row, a number against
                // a row (an outer product), or two numbers (a column against a
                // row of one repeated value, as the gradient of a `sum`).
                (1, 1) => {
                    let pairs = da[ra + c..].iter().zip(&db[rb + c..]);
                    for (o, (&x, &y)) in piece.iter_mut().zip(pairs) {
                        o.write(f(x, y));
                    }
                }
                (0, 0) => piece.fill(MaybeUninit::new(f(da[ra], db[rb]))),
                (1, 0) => {
                    let y = db[rb];
                    for (o, &x) in piece.iter_mut().zip(&da[ra + c..]) {
                        o.write(f(x, y));
                    }
                }
                (0, 1) => {
                    let x = da[ra];
                    for (o, &y) in piece.iter_mut().zip(&db[rb + c..]) {
                        o.write(f(x, y));
                    }
                }
                _ => {
                    let pairs = row(ra, len, sa).zip(row(rb, len, sb));
                    for (o, (i, j)) in piece.iter_mut().zip(pairs.skip(c)) {
                        o.write(f(da[i], db[j]));
                    }
                }
            }
        }
    };
    for_row_pieces(start, n, len, starts_a.inner_len, piece_of_row)
});

/// `f` applied over three broadcast operands (e.g. `where`).
pub fn zip3_map<A: Element, B: Element, C: Element, O: Element>(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(A, B, C) -> O + Sync + Send,
) -> Result<Tensor> {
    let shape = broadcast_shapes(&broadcast_shapes(a.shape(), b.shape())?, c.shape())?;
    let n = crate::tensor::layout::numel(&shape);
    let (da, db, dc) = (
        a.storage().read::<A>(),
        b.storage().read::<B>(),
        c.storage().read::<C>(),
    );
    let la = a.layout().broadcast_to(&shape)?;
    let lb = b.layout().broadcast_to(&shape)?;
    let lc = c.layout().broadcast_to(&shape)?;
    let [la, lb, lc] = Layout::coalesced([&la, &lb, &lc]);
    let (starts_a, len, sa) = RowStarts::of(&la)?;
    let ((starts_b, _, sb), (starts_c, _, sc)) = (RowStarts::of(&lb)?, RowStarts::of(&lc)?);
    let at =
        |start: usize, stride: isize, k: usize| (start as isize + stride * k as isize) as usize;
    let out: Vec<O> = filled(n, |start, out| {
        for_row_pieces(
            start,
            out.len(),
            len,
            starts_a.inner_len,
            |piece, r, col| {
                let piece = &mut out[piece];
                let (ra, rb, rc) = (starts_a.at(r), starts_b.at(r), starts_c.at(r));
                match (sa, sb, sc) {
                    (1, 1, 1) => {
                        zip3_into(piece, &da[ra + col..], &db[rb + col..], &dc[rc + col..], &f)
                    }
                    // A mask and a tensor against a number (`where(m, x, 0)`).
                    (1, 1, 0) => {
                        let z = dc[rc];
                        zip_into(piece, &da[ra + col..], &db[rb + col..], &{
                            #[inline(always)]
                            |x, y| f(x, y, z)
                        })
                    }
                    (1, 0, 1) => {
                        let y = db[rb];
                        zip_into(piece, &da[ra + col..], &dc[rc + col..], &{
                            #[inline(always)]
                            |x, z| f(x, y, z)
                        })
                    }
                    _ => {
                        for (o, k) in piece.iter_mut().zip(col..) {
                            o.write(f(da[at(ra, sa, k)], db[at(rb, sb, k)], dc[at(rc, sc, k)]));
                        }
                    }
                }
            },
        )
    })?;
    drop((da, db, dc));
    Tensor::from_vec(out, &shape)
}

/// A source read and a destination written together.
pub type ReadWriteGuards<'a, S, D> = (
    MappedRwLockReadGuard<'a, [S]>,
    MappedRwLockWriteGuard<'a, [D]>,
);

/// Read access to `src` and write access to `dst` (distinct storages),
/// taken in address order so that concurrent updates in opposite
/// directions (`a += b` beside `b += a`) cannot deadlock.
pub fn lock_pair<'a, S: Element, D: Element>(
    src: &'a Tensor,
    dst: &'a Tensor,
) -> Result<ReadWriteGuards<'a, S, D>> {
    Ok(if src.storage().buffer_id() < dst.storage().buffer_id() {
        let ds = src.storage().read::<S>();
        (ds, dst.storage().write::<D>()?)
    } else {
        let dd = dst.storage().write::<D>()?;
        (src.storage().read::<S>(), dd)
    })
}

/// Writes `f(dst, src)` into `dst` in place, `src` broadcast to `dst`'s
/// shape. `src` is read into a buffer first when it shares `dst`'s storage,
/// so overlapping operands see the values from before the write.
pub fn update<D: Element, S: Element>(
    dst: &Tensor,
    src: &Tensor,
    f: impl Fn(D, S) -> D + Sync + Send,
) -> Result<()> {
    let distinct = !src.storage().same_buffer(dst.storage());
    if distinct && dst.numel() == 1 && src.numel() == 1 && src.ndim() <= dst.ndim() {
        // A number into a number (a gradient summed in a micrograd-style
        // model): nothing to broadcast, chunk or dispatch.
        let (ds, mut dd) = lock_pair::<S, D>(src, dst)?;
        let (o, so) = (dst.layout().offset, src.layout().offset);
        dd[o] = f(dd[o], ds[so]);
        drop((ds, dd));
        dst.bump_version();
        return Ok(());
    }
    if dst.numel() >= UNTRANSPOSE_MIN_ELEMENTS {
        if let Some(copy) = untransposed::<S>(src, dst.shape())? {
            return update(dst, &copy, f);
        }
    }
    super::shape::check_expandable(src, dst.shape())?;
    let lsrc = src.layout().broadcast_to(dst.shape())?;
    let ld = dst.layout();
    // Views of one buffer may hold different storages (`z.real`, `z.imag`).
    if !distinct {
        let copy = Tensor::from_vec(src.to_vec::<S>(), src.shape())?;
        return update(dst, &copy, f);
    }
    let (ds, mut dd) = lock_pair::<S, D>(src, dst)?;
    match (contiguous_range(ld), contiguous_range(&lsrc)) {
        (Some(r), _) if is_single_element(&lsrc) && lsrc.numel() > 0 => {
            let s = ds[lsrc.offset];
            for_chunks(&mut dd[r], |_, dst| {
                update_with(dst, &{
                    #[inline(always)]
                    |d| f(d, s)
                })
            });
        }
        (Some(r), Some(rs)) => {
            let src = &ds[rs];
            for_chunks(&mut dd[r], |start, dst| update_from(dst, &src[start..], &f));
        }
        _ => {
            let [ld, lsrc] = Layout::coalesced([ld, &lsrc]);
            let ((od, len, sd), (os, _, ss)) = (ld.rows(), lsrc.rows());
            for (rd, rs) in od.offsets().zip(os.offsets()) {
                match (sd, ss) {
                    // Rows of a slice or a window: the slice loops.
                    (1, 1) => update_from(&mut dd[rd..rd + len], &ds[rs..rs + len], &f),
                    (1, 0) => {
                        let s = ds[rs];
                        update_with(&mut dd[rd..rd + len], &{
                            #[inline(always)]
                            |d| f(d, s)
                        });
                    }
                    _ => {
                        for (o, so) in row(rd, len, sd).zip(row(rs, len, ss)) {
                            dd[o] = f(dd[o], ds[so]);
                        }
                    }
                }
            }
        }
    }
    drop((ds, dd));
    dst.bump_version();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::shape::{expand_to, narrow, permute, transpose, unsqueeze};

    fn ramp(shape: &[usize], scale: f64) -> Tensor {
        let n = shape.iter().product();
        Tensor::from_vec((0..n).map(|i| i as f64 * scale).collect(), shape).unwrap()
    }

    #[test]
    fn a_number_updates_a_number_at_their_offsets_and_keeps_broadcast_errors() {
        let dst = unsqueeze(&narrow(&ramp(&[4], 1.0), 0, 2, 1).unwrap(), 0).unwrap();
        let src = narrow(&ramp(&[3], 10.0), 0, 1, 1).unwrap();
        let version = dst.version();
        update::<f64, f64>(&dst, &src, |d, s| d + s).unwrap();
        assert_eq!(dst.to_vec::<f64>(), vec![12.0]);
        assert_eq!(dst.version(), version + 1);
        // `[[y]] += [[[x]]]` cannot broadcast to the destination's shape.
        let deep = Tensor::from_vec(vec![1.0f64], &[1, 1, 1]).unwrap();
        let err = update::<f64, f64>(&dst, &deep, |d, s| d + s).unwrap_err();
        assert!(
            err.to_string().contains("must be greater or equal"),
            "{err}"
        );
        // A number updated from a view of its own buffer reads it first.
        let both = ramp(&[2], 1.0);
        let (first, second) = (
            narrow(&both, 0, 0, 1).unwrap(),
            narrow(&both, 0, 1, 1).unwrap(),
        );
        update::<f64, f64>(&first, &second, |d, s| d - s).unwrap();
        assert_eq!(both.to_vec::<f64>(), vec![-1.0, 1.0]);
    }

    #[test]
    fn single_elements_read_their_offset_and_take_the_broadcast_shape() {
        // The element of a one-element view sits at its offset, not at 0.
        let last = narrow(&ramp(&[5], 1.0), 0, 4, 1).unwrap();
        let number = Tensor::from_vec(vec![10.0f64], &[]).unwrap();
        let column = unsqueeze(&unsqueeze(&number, 0).unwrap(), 1).unwrap();
        let sum = zip_map::<f64, f64, f64>(&last, &column, |x, y| x + y).unwrap();
        assert_eq!(
            (sum.shape(), sum.to_vec::<f64>()),
            (&[1usize, 1][..], vec![14.0])
        );
        let halved = map::<f64, f64>(&last, |x| x / 2.0).unwrap();
        assert_eq!(
            (halved.shape(), halved.to_vec::<f64>()),
            (&[1usize][..], vec![2.0])
        );
    }

    #[test]
    fn broadcast_rows_match_elementwise_indexing_across_split_pieces() {
        // 400 rows of 301: large enough to split into pieces that start
        // and end inside rows.
        let (rows, cols) = (400, 301);
        let full = ramp(&[rows, cols], 1.0);
        let row = ramp(&[cols], 0.5);
        let column = ramp(&[rows, 1], 3.0);
        let repeated =
            expand_to(&Tensor::from_vec(vec![2.5f64], &[1]).unwrap(), &[1, cols]).unwrap();
        let row_2d = ramp(&[1, cols], 0.25);
        let transposed = transpose(&ramp(&[cols, rows], 2.0), 0, 1).unwrap();
        let at = |i: usize, j: usize, which: &str| -> f64 {
            match which {
                "full" => (i * cols + j) as f64,
                "row" => j as f64 * 0.5,
                "column" => i as f64 * 3.0,
                "row_2d" => j as f64 * 0.25,
                "repeated" => 2.5,
                _ => (j * rows + i) as f64 * 2.0,
            }
        };
        let cases = [
            (&full, &row, "full", "row"),
            (&full, &column, "full", "column"),
            (&column, &row_2d, "column", "row_2d"),
            (&transposed, &row, "transposed", "row"),
            (&column, &repeated, "column", "repeated"),
        ];
        for (a, b, name_a, name_b) in cases {
            let out = zip_map(a, b, |x: f64, y: f64| x * 7.0 + y).unwrap();
            assert_eq!(out.shape(), &[rows, cols]);
            let values = out.to_vec::<f64>();
            for (k, &v) in values.iter().enumerate() {
                let (i, j) = (k / cols, k % cols);
                assert_eq!(
                    v,
                    at(i, j, name_a) * 7.0 + at(i, j, name_b),
                    "{name_a} {name_b} at {k}"
                );
            }
        }
    }

    /// `a[:, None, :len] * b[None, :, :len]` and a three-operand form of it,
    /// for last dims shorter and longer than the vectorised loop's width,
    /// from operands sliced out of wider rows (so their row starts step by
    /// the wide row, not by `len`). Large enough cases are split into
    /// pieces that start inside rows.
    #[test]
    fn outer_broadcasts_over_short_last_dims_match_indexing() {
        let (m, width) = (90usize, 80usize);
        let wide = |scale: f32| {
            let data = (0..m * width).map(|i| (i % 97) as f32 * scale).collect();
            Tensor::from_vec::<f32>(data, &[m, width]).unwrap()
        };
        let (a, b, c) = (wide(0.5), wide(0.25), wide(2.0));
        for len in [1, 3, 7, 8, 9, 13, 16, 17, 24, 40, 63, 64, 70] {
            let cut = |t: &Tensor, at: i64| {
                let part = narrow(t, 1, 3, len as i64).unwrap();
                unsqueeze(&part, at).unwrap()
            };
            let (left, right, third) = (cut(&a, 1), cut(&b, 0), cut(&c, 1));
            let two = zip_map(&left, &right, |x: f32, y: f32| x * 3.0 + y).unwrap();
            let three = zip3_map(&left, &right, &third, |x: f32, y: f32, z: f32| {
                x * 3.0 + y - z
            })
            .unwrap();
            assert_eq!(two.shape(), &[m, m, len]);
            let (two, three) = (two.to_vec::<f32>(), three.to_vec::<f32>());
            let (av, bv, cv) = (a.to_vec::<f32>(), b.to_vec::<f32>(), c.to_vec::<f32>());
            for (k, (&v2, &v3)) in two.iter().zip(&three).enumerate() {
                let (i, j, col) = (k / (m * len), k / len % m, k % len + 3);
                let expected = av[i * width + col] * 3.0 + bv[j * width + col];
                assert_eq!(v2, expected, "len {len} at {k}");
                assert_eq!(v3, expected - cv[i * width + col], "len {len} at {k}");
            }
        }
    }

    /// Transposed and permuted views (a last dim strided, an earlier one
    /// contiguous, with dims before and between them, lengths that are not
    /// multiples of the tile, an offset, large enough to split) read in
    /// tiles give each element where offset-by-offset reading puts it.
    #[test]
    fn transposed_views_map_in_tiles_to_their_elements_in_order() {
        let cases = [
            transpose(&ramp(&[300, 70], 1.0), 0, 1).unwrap(),
            transpose(&ramp(&[400, 300], 0.5), 0, 1).unwrap(),
            permute(&ramp(&[6, 9, 40, 50], 1.0), &[0, 3, 1, 2]).unwrap(),
            transpose(&narrow(&ramp(&[100, 80], 1.0), 1, 3, 67).unwrap(), 0, 1).unwrap(),
            transpose(&ramp(&[8, 5], 1.0), 0, 1).unwrap(),
        ];
        for t in cases {
            assert!(!t.is_contiguous());
            let expected: Vec<f32> = {
                let data = t.storage().read::<f64>();
                t.layout()
                    .offsets()
                    .map(|o| (data[o] * 3.0) as f32)
                    .collect()
            };
            let out = map::<f64, f32>(&t, |x| (x * 3.0) as f32).unwrap();
            assert_eq!(out.shape(), t.shape());
            assert_eq!(out.to_vec::<f32>(), expected, "shape {:?}", t.shape());
        }
    }

    /// A large transposed operand of a binary op or of an in-place update
    /// (copied into row-major order first) pairs each element with the
    /// one at the same index of the other operand.
    #[test]
    fn transposed_operands_pair_elements_by_index() {
        let (rows, cols) = (90, 130);
        let plain = ramp(&[rows, cols], 1.0);
        let transposed = transpose(&ramp(&[cols, rows], 0.5), 0, 1).unwrap();
        let at = |k: usize| (k / cols, k % cols);
        let expected: Vec<f64> = (0..rows * cols)
            .map(|k| {
                let (i, j) = at(k);
                k as f64 * 10.0 + (j * rows + i) as f64 * 0.5
            })
            .collect();
        let sum = zip_map(&plain, &transposed, |x: f64, y: f64| x * 10.0 + y).unwrap();
        assert_eq!(sum.to_vec::<f64>(), expected);
        update(&plain, &transposed, |d: f64, s: f64| d * 10.0 + s).unwrap();
        assert_eq!(plain.to_vec::<f64>(), expected);
    }

    #[test]
    fn only_dense_layouts_in_another_order_are_walked_in_storage_order() {
        let base = ramp(&[4, 5, 6], 1.0);
        let permuted = permute(&base, &[2, 0, 1]).unwrap();
        let shifted = permute(
            &narrow(&ramp(&[3, 4, 5], 1.0), 0, 1, 2).unwrap(),
            &[1, 0, 2],
        );
        assert_eq!(permuted_range(permuted.layout()), Some(0..120));
        assert_eq!(permuted_range(shifted.unwrap().layout()), Some(20..60));
        assert_eq!(permuted_range(base.layout()), None);
        let sliced = narrow(&permuted, 0, 1, 3).unwrap();
        let expanded = expand_to(&unsqueeze(&ramp(&[5], 1.0), 1).unwrap(), &[5, 3]).unwrap();
        assert_eq!(permuted_range(sliced.layout()), None);
        assert_eq!(permuted_range(expanded.layout()), None);
    }

    #[test]
    fn results_keep_a_dense_operands_order_and_row_major_results_do_not() {
        let a = transpose(&ramp(&[70, 90], 1.0), 0, 1).unwrap();
        let b = transpose(&ramp(&[70, 90], 0.5), 0, 1).unwrap();
        let number = Tensor::from_vec(vec![2.0f64], &[]).unwrap();
        let expected: Vec<f64> = a.to_vec::<f64>().iter().map(|x| x * 3.0).collect();
        for out in [
            map(&a, |x: f64| x * 3.0).unwrap(),
            zip_map(&a, &b, |x: f64, y: f64| x + 4.0 * y).unwrap(),
            zip_map(&a, &number, |x: f64, y: f64| x * (y + 1.0)).unwrap(),
            zip_map(&number, &a, |y: f64, x: f64| x * (y + 1.0)).unwrap(),
        ] {
            assert_eq!(out.strides(), a.strides());
            assert_eq!(out.to_vec::<f64>(), expected);
        }
        let rows = map_row_major(&a, |x: f64| x * 3.0).unwrap();
        assert!(rows.is_contiguous());
        assert_eq!(rows.to_vec::<f64>(), expected);
        // With a row-major partner (or a broadcast row) the first operand's
        // order decides, as in PyTorch.
        let twice = map_row_major(&a, |x: f64| x * 2.0).unwrap();
        let first = zip_map(&a, &twice, |x: f64, y: f64| x + y).unwrap();
        assert_eq!(first.strides(), a.strides());
        assert_eq!(first.to_vec::<f64>(), expected);
        let second = zip_map(&twice, &a, |y: f64, x: f64| x + y).unwrap();
        assert!(second.is_contiguous());
        assert_eq!(second.to_vec::<f64>(), expected);
        let row = ramp(&[70], 1.0);
        let biased = zip_map(&a, &row, |x: f64, y: f64| x + y).unwrap();
        assert_eq!(biased.strides(), a.strides());
        let a_rows = a.to_vec::<f64>();
        let expected: Vec<f64> = (0..90 * 70).map(|k| a_rows[k] + (k % 70) as f64).collect();
        assert_eq!(biased.to_vec::<f64>(), expected);
    }
}
