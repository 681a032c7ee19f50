//! Matrix products: `matmul` and the primitives it dispatches to (`dot`,
//! `mv`, `mm`, `bmm`), plus `addmm` and `outer`. Floating dtypes run on the
//! `gemm` crate with the operands' own strides (transposes are not copied;
//! only a right operand whose column stride aliases in cache is, see
//! `unaliased_columns`).

use super::binary::{add, mul};
use super::copy::contiguous;
use super::elementwise::transpose_runs;
use super::num::Arith;
use super::reduce::sum;
use super::result_type;
use super::shape::{expand_to, reshape, squeeze_dims, transpose, unsqueeze, view};
use super::unary::conj;
use crate::autograd::{needs_input_grad, record, SavedTensor};
use crate::tensor::layout::{broadcast_shapes, Layout};
use crate::tensor::storage::{try_buffer, try_filled};
use crate::tensor::{DType, Element, Scalar, Shape, Tensor};
use crate::{bail, grads, with_float, Result};
use std::ops::Range;

/// The most rows of a left operand stored by rows for which a product with
/// a right operand stored by columns is computed transposed.
const SWAP_MAX_ROWS: usize = 128;

/// Products with more multiply-adds than this run on the rayon pool.
const PARALLEL_MIN_FLOPS: usize = 64 * 64 * 64;

/// `a @ b + bias` for matrices and a contiguous vector `bias` of the
/// product's dtype with one element per column, the bias added by each
/// part of the product to what it has just written. `None` where the
/// product does not run on gemm (other dtypes, nothing to contract, an
/// operand repeated along the contracted dimension) or is empty.
fn mm_plus_row_raw(a: &Tensor, b: &Tensor, bias: &Tensor) -> Result<Option<Tensor>> {
    let (la, lb) = (as_batch(a.layout()), as_batch(b.layout()));
    let (m, k, n) = (la.shape[1], la.shape[2], lb.shape[2]);
    if k == 0 || m * n == 0 || repeats_along_k(&la, &lb) {
        return Ok(None);
    }
    let out = with_float!(
        a.dtype(),
        T => gemm_kernel::<T>(a, &la, b, &lb, Some(bias))?,
        return Ok(None)
    );
    Ok(Some(out.alias(Layout::contiguous(&[m, n]))))
}

/// Whether one of the `[B, m, k] x [B, k, n]` operands repeats along the
/// contracted dimension (stride 0 there), see [`product_constant_along_k`].
fn repeats_along_k(la: &Layout, lb: &Layout) -> bool {
    la.shape[2] > 1 && (la.strides[2] == 0 || lb.strides[1] == 0)
}

/// `[B, m, k] x [B, k, n]` layouts of two same-dtype tensors (any strides)
/// into a new contiguous `[B, m, n]` tensor. No history.
fn bmm_raw(a: &Tensor, la: &Layout, b: &Tensor, lb: &Layout) -> Result<Tensor> {
    let dtype = a.dtype();
    if dtype != DType::Bool {
        if let Some(out) = product_constant_along_k(a, la, b, lb)? {
            return Ok(out);
        }
    }
    match dtype {
        DType::UInt8 => loop_kernel::<u8>(a, la, b, lb),
        DType::Int8 => loop_kernel::<i8>(a, la, b, lb),
        DType::Int16 => loop_kernel::<i16>(a, la, b, lb),
        DType::Int32 => loop_kernel::<i32>(a, la, b, lb),
        DType::Int64 => loop_kernel::<i64>(a, la, b, lb),
        DType::Bool => bail!(
            NotImplemented,
            "\"addmm_impl_cpu_\" not implemented for 'Bool'"
        ),
        _ => with_float!(dtype, T => gemm_kernel::<T>(a, la, b, lb, None), unreachable!()),
    }
}

/// A product whose operand repeats along the contracted dimension (stride
/// 0 there, as the gradient of a `sum` or `mean` arrives) is an outer
/// product: `a[i, p] = a[i, 0]` for every `p` gives
/// `(a @ b)[i, j] = a[i, 0] * sum_p b[p, j]`, and likewise for `b`. That
/// takes `m*k + m*n` operations instead of `m*n*k`. `None` when neither
/// operand repeats.
fn product_constant_along_k(
    a: &Tensor,
    la: &Layout,
    b: &Tensor,
    lb: &Layout,
) -> Result<Option<Tensor>> {
    if !repeats_along_k(la, lb) {
        return Ok(None);
    }
    let (bsz, m, n) = (la.shape[0], la.shape[1], lb.shape[2]);
    // The first row or column of a `[B, rows, cols]` layout.
    let first = |l: &Layout, shape: [usize; 3]| Layout {
        shape: smallvec::smallvec![shape[0], shape[1], shape[2]],
        ..l.clone()
    };
    // `a.alias`/`b.alias` carry no history, so these ops record nothing.
    let out = if la.strides[2] == 0 {
        let column = a.alias(first(la, [bsz, m, 1]));
        mul(&column, &sum(&b.alias(lb.clone()), &[1], true)?)?
    } else {
        let row = b.alias(first(lb, [bsz, 1, n]));
        mul(&sum(&a.alias(la.clone()), &[2], true)?, &row)?
    };
    Ok(Some(out))
}

/// The batch dimension of a `[B, rows, cols]` layout as its own layout.
fn batch_layout(l: &Layout) -> Layout {
    Layout {
        shape: smallvec::smallvec![l.shape[0]],
        strides: smallvec::smallvec![l.strides[0]],
        offset: l.offset,
    }
}

/// `a @ b` on gemm, plus `row_bias` (a contiguous vector of the product's
/// dtype, one element per column) when given.
fn gemm_kernel<T: Element + Arith>(
    a: &Tensor,
    la: &Layout,
    b: &Tensor,
    lb: &Layout,
    row_bias: Option<&Tensor>,
) -> Result<Tensor> {
    let (bsz, m, k, n) = (la.shape[0], la.shape[1], la.shape[2], lb.shape[2]);
    let len = bsz * m * n;
    if k == 0 || len == 0 {
        return Tensor::from_vec(try_filled(T::zero(), len)?, &[bsz, m, n]);
    }
    // The output and scratch buffers start uninitialised: gemm (which
    // never reads its destination here) and the band transposes write
    // every element, and zero-filling them first measured about 3% of a
    // training step.
    let mut out: Vec<T> = try_buffer(len)?;
    let (da, db) = (a.storage().read::<T>(), b.storage().read::<T>());
    let bias_data = row_bias.map(|t| (t.storage().read::<T>(), t.layout().offset));
    // SAFETY (pointer arithmetic only): the offset of a vector's first element.
    let bias = bias_data
        .as_ref()
        .map(|(d, offset)| unsafe { d.as_ptr().add(*offset) });
    // gemm streams a right operand stored by columns slowly once it is
    // wide; then compute `out^T = b^T @ a^T` into a scratch block, each
    // part transposing its own band into place (gemm writes a
    // column-major destination slowly, hence the scratch block). For a
    // left operand stored by rows this pays up to 128 rows: `x @ W.t()`
    // for a 64x784 batch and a 512x784 weight takes 0.6x the time of the
    // direct product on an AVX-512 machine and 0.7x on an AVX2 one, while
    // from 256 rows on the transposes cost more than they save. Copying
    // `a^T` by rows first, as an earlier version did, measured slower than
    // handing gemm `a^T` as it is stored.
    let rhs_by_columns = stored_by_columns((lb.strides[1], lb.strides[2]));
    // Stored by rows: its transpose is stored by columns.
    let lhs_by_rows = stored_by_columns((la.strides[2], la.strides[1]));
    let swap = rhs_by_columns && (!lhs_by_rows || (n > m && m <= SWAP_MAX_ROWS));
    let mut scratch: Vec<T> = try_buffer(if swap { len } else { 0 })?;
    let out_ptr = out.spare_capacity_mut().as_mut_ptr().cast::<T>();
    let dst = match swap {
        true => scratch.spare_capacity_mut().as_mut_ptr().cast::<T>(),
        false => out_ptr,
    };
    let products: Vec<Product<T>> = batch_layout(la)
        .offsets()
        .zip(batch_layout(lb).offsets())
        .enumerate()
        .map(|(i, (oa, ob))| {
            // SAFETY (pointer arithmetic only): `oa`/`ob` are offsets of
            // elements of the storages, `i * m * n` of elements of the
            // destination and scratch buffers.
            let (pa, pb, dst, block) = unsafe {
                (
                    da.as_ptr().add(oa),
                    db.as_ptr().add(ob),
                    dst.add(i * m * n),
                    out_ptr.add(i * m * n),
                )
            };
            if swap {
                Product {
                    rows: n,
                    cols: m,
                    k,
                    dst,
                    dst_rs: m as isize,
                    lhs: pb,
                    lhs_s: (lb.strides[2], lb.strides[1]),
                    rhs: pa,
                    rhs_s: (la.strides[2], la.strides[1]),
                    transpose_into: Some(block),
                    row_bias: bias,
                }
            } else {
                Product {
                    rows: m,
                    cols: n,
                    k,
                    dst,
                    dst_rs: n as isize,
                    lhs: pa,
                    lhs_s: (la.strides[1], la.strides[2]),
                    rhs: pb,
                    rhs_s: (lb.strides[1], lb.strides[2]),
                    transpose_into: None,
                    row_bias: bias,
                }
            }
        })
        .collect();
    let parts = parts_per_product(m * n * k);
    let run = |job: usize| {
        let (product, part) = (&products[job / parts], job % parts);
        // SAFETY: each product addresses valid elements of the operand
        // storages (borrowed by `da`/`db` for this call) and of its own
        // destination (and output) block; the parts of one product write
        // disjoint rows or columns of them, and distinct products
        // distinct blocks.
        unsafe { product.run_part(part, parts) }
    };
    let jobs = products.len() * parts;
    if bsz * m * n * k > PARALLEL_MIN_FLOPS {
        crate::parallel::for_each_index(jobs, run);
    } else {
        (0..jobs).for_each(run);
    }
    // SAFETY: gemm, or the band transposes from the scratch blocks, wrote
    // every element of every block (`k > 0`).
    unsafe { out.set_len(len) };
    Tensor::from_vec(out, &[bsz, m, n])
}

/// Column strides of this many bytes (multiples of 1 KiB) map a right
/// operand's columns onto a few cache sets.
const ALIASING_STRIDE_BYTES: usize = 1024;

/// Products with fewer rows than this read an aliasing right operand as
/// it is: the copy would cost more than the product loses.
const UNALIAS_MIN_ROWS: usize = 32;

/// Copies the `k x cols` right operand at `rhs` of a product with `rows`
/// rows, when it is stored by columns a multiple of 1 KiB apart, into
/// columns 64 bytes further apart. gemm packs that operand by reading
/// across its columns, and with such strides every read lands in the same
/// few cache sets: `h @ W.t()` for a 64x512 batch and a 512x512 weight ran
/// at 0.75x the rate of the same product with a 528-element stride. On the
/// 2-core Intel machine a 256³ `a @ b.t()` took 239 µs reading `b` as it
/// is, 234 with its columns copied apart (the copy, one `memcpy` a column,
/// takes 7 of them), and 259 with `b` transposed into rows as an earlier
/// version did (221 for `a @ b`; that copy had measured better than
/// columns moved apart on an earlier machine, 0.88x of `a @ b` against
/// 0.81x). The columns live in the returned buffer's capacity, from its
/// `as_ptr()`, the second value (the new column stride) elements apart.
/// `None` when the stride does not alias, or the buffer cannot be had (the
/// product then reads `rhs` as it is).
///
/// # Safety
/// `rhs` must be valid for reads of the `k x cols` operand with strides
/// `rhs_s` (row, column).
unsafe fn unaliased_columns<T: Element>(
    rhs: *const T,
    rhs_s: (isize, isize),
    rows: usize,
    k: usize,
    cols: usize,
) -> Option<(Vec<T>, isize)> {
    let (size, stride) = (std::mem::size_of::<T>(), rhs_s.1);
    if rhs_s.0 != 1
        || rows < UNALIAS_MIN_ROWS
        || cols < 2
        || (stride.unsigned_abs() * size) % ALIASING_STRIDE_BYTES != 0
    {
        return None;
    }
    let spaced = k + (64 / size).max(1);
    // The copy stays an empty `Vec` whose capacity holds the columns: only
    // gemm reads them.
    let mut copy: Vec<T> = try_buffer(cols * spaced).ok()?;
    let dst = copy.spare_capacity_mut().as_mut_ptr().cast::<T>();
    for j in 0..cols {
        // SAFETY: the caller vouches for column `j` (`k` elements from
        // `rhs + j * stride`); the copy holds `cols` columns of `spaced >= k`.
        std::ptr::copy_nonoverlapping(rhs.offset(j as isize * stride), dst.add(j * spaced), k);
    }
    Some((copy, spaced as isize))
}

/// Bands of this many rows or more split a product even when it is wider
/// than tall: the 512x64x784 weight gradient `g.t() @ x` of a 784-wide
/// layer ran at 125–190 GFLOP/s on two threads split by columns, varying
/// from process to process, against 206 split by rows.
const ROW_BAND_MIN_ROWS: usize = 128;

/// Whether a matrix with these (row, column) strides is stored by columns:
/// its rows are adjacent in memory and its columns are not.
fn stored_by_columns((row_stride, column_stride): (isize, isize)) -> bool {
    row_stride == 1 && column_stride != 1
}

/// Whether a product splits into bands of rows rather than of columns.
/// gemm reads a right operand stored by columns as it is, without packing
/// it, and a band of rows reads (and, for aliasing strides, copies) the
/// whole of it, so such a product splits by columns unless it is more than
/// twice as tall as wide (then the left operand, which every band of
/// columns packs whole, is the larger). On the 2-core Zen 4 machine `a @
/// w.t()` ran at 154 against 122–139 GFLOP/s for 256³ split by columns and
/// by rows, 163 against 134 for 512³, 161 against 151 for 256x1024x1024.
/// Otherwise bands of rows, unless the block is wider than tall and too
/// short for bands of [`ROW_BAND_MIN_ROWS`].
fn split_by_rows(rows: usize, cols: usize, rhs_by_columns: bool, parts: usize) -> bool {
    match rhs_by_columns {
        true => rows > 2 * cols,
        false => rows >= cols || rows >= ROW_BAND_MIN_ROWS * parts,
    }
}

/// Products smaller than this many multiply-adds (about 20 µs on one
/// core) run whole on one thread: waking a helper costs more than it saves.
const SPLIT_MIN_FLOPS: usize = 1 << 21;

/// How many pieces one product of `flops` multiply-adds is cut into for
/// the pool: one per thread (each piece packs the whole of the operand it
/// does not split, so more pieces measured slower) once it is large enough.
/// A thread with jobs of its own still queued (the backward engine's other
/// ready branches) keeps the product whole: the other threads have those
/// jobs to take, and splitting would only pack the shared operand twice.
fn parts_per_product(flops: usize) -> usize {
    let parts = crate::parallel::num_threads().min(flops / SPLIT_MIN_FLOPS);
    match parts > 1 && !crate::parallel::has_queued_jobs() {
        true => parts,
        false => 1,
    }
}

/// `dst = lhs @ rhs` for one `rows x cols` block with strided operands
/// (strides as (row, col)), in raw parts so that pieces of it can run on
/// several threads.
struct Product<T> {
    rows: usize,
    cols: usize,
    k: usize,
    dst: *mut T,
    dst_rs: isize,
    lhs: *const T,
    lhs_s: (isize, isize),
    rhs: *const T,
    rhs_s: (isize, isize),
    /// Where the transpose of `dst` (a `cols x rows` row-major block)
    /// goes, when the product is computed transposed.
    transpose_into: Option<*mut T>,
    /// A vector added to every row of the result (to the columns of `dst`,
    /// or to its rows when it is computed transposed).
    row_bias: Option<*const T>,
}

// SAFETY: a `Product` is only read, and its parts write disjoint elements
// of the destination (see `run_part`).
unsafe impl<T: Send> Sync for Product<T> {}

impl<T: Element + Arith> Product<T> {
    /// Computes piece `part` of `parts`: a band of rows or of columns (see
    /// [`split_by_rows`]), then transposes that band into
    /// `transpose_into` when set. Bands are multiples of 16 so each holds
    /// whole register tiles.
    ///
    /// # Safety
    /// The pointers must address valid elements for the whole block, and
    /// no other thread may write the same band.
    unsafe fn run_part(&self, part: usize, parts: usize) {
        let by_rows = split_by_rows(self.rows, self.cols, stored_by_columns(self.rhs_s), parts);
        let len = if by_rows { self.rows } else { self.cols };
        let band = len.div_ceil(parts).next_multiple_of(16);
        let start = (part * band).min(len);
        let end = ((part + 1) * band).min(len);
        if start == end {
            return;
        }
        let s = start as isize;
        let (rows, cols, dst, lhs, rhs) = if by_rows {
            (
                end - start,
                self.cols,
                self.dst.offset(s * self.dst_rs),
                self.lhs.offset(s * self.lhs_s.0),
                self.rhs,
            )
        } else {
            (
                self.rows,
                end - start,
                self.dst.offset(s),
                self.lhs,
                self.rhs.offset(s * self.rhs_s.1),
            )
        };
        // Each part copies what it reads, so that no core reads a copy
        // another core has just written.
        let copy = unaliased_columns(rhs, self.rhs_s, rows, self.k, cols);
        let (rhs, (rhs_rs, rhs_cs)) = match &copy {
            Some((columns, stride)) => (columns.as_ptr(), (1, *stride)),
            None => (rhs, self.rhs_s),
        };
        gemm::gemm::<T>(
            rows,
            cols,
            self.k,
            dst,
            1,
            self.dst_rs,
            false,
            lhs,
            self.lhs_s.1,
            self.lhs_s.0,
            rhs,
            rhs_cs,
            rhs_rs,
            T::zero(),
            T::one(),
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
        if let Some(target) = self.transpose_into {
            // The band is `rows x cols` of the row-major block (row
            // stride `dst_rs`); its transpose starts at the band's
            // offset along the other axis of the `self.cols x self.rows`
            // target. SAFETY: gemm has just written the band, and the
            // target elements it maps to belong to this band alone.
            let offset = if by_rows { start } else { start * self.rows };
            transpose_runs(
                dst.cast_const(),
                rows,
                cols,
                self.dst_rs,
                target.add(offset).cast(),
                self.rows,
                &|x| x,
            );
        }
        if let Some(bias) = self.row_bias {
            // Added here, while the band is in this core's cache, rather
            // than in a pass over the whole result, half of which another
            // core wrote.
            let (rows, cols) = match by_rows {
                true => (start..end, 0..self.cols),
                false => (0..self.rows, start..end),
            };
            self.add_row_bias(bias, rows, cols);
        }
    }

    /// Adds `bias` (element `j` to column `j` of the result) to the part of
    /// the result computed as `rows` x `cols` of `dst`. Each element is
    /// `product + bias`, as `bias + product` rounds.
    ///
    /// # Safety
    /// That part of the result must be written, and belong to the calling
    /// thread alone; `bias` must hold an element for every result column.
    unsafe fn add_row_bias(&self, bias: *const T, rows: Range<usize>, cols: Range<usize>) {
        // The result block, its row stride, and the part's rows and columns in it.
        let (block, stride, rows, cols) = match self.transpose_into {
            Some(block) => (block, self.rows, cols, rows),
            None => (self.dst, self.dst_rs as usize, rows, cols),
        };
        let bias = std::slice::from_raw_parts(bias.add(cols.start), cols.len());
        for i in rows {
            let row =
                std::slice::from_raw_parts_mut(block.add(i * stride + cols.start), cols.len());
            for (x, &b) in row.iter_mut().zip(bias) {
                *x = x.add(b);
            }
        }
    }
}

/// Integer products: a plain loop (gemm has no integer kernels).
fn loop_kernel<T: Element + Arith>(
    a: &Tensor,
    la: &Layout,
    b: &Tensor,
    lb: &Layout,
) -> Result<Tensor> {
    let (bsz, m, k, n) = (la.shape[0], la.shape[1], la.shape[2], lb.shape[2]);
    let (da, db) = (a.storage().read::<T>(), b.storage().read::<T>());
    let mut out = try_buffer(bsz * m * n)?;
    for (oa, ob) in batch_layout(la).offsets().zip(batch_layout(lb).offsets()) {
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::zero();
                for p in 0..k {
                    let x = da[(oa as isize
                        + i as isize * la.strides[1]
                        + p as isize * la.strides[2]) as usize];
                    let y = db[(ob as isize
                        + p as isize * lb.strides[1]
                        + j as isize * lb.strides[2]) as usize];
                    acc = acc.add(x.mul(y));
                }
                out.push(acc);
            }
        }
    }
    Tensor::from_vec(out, &[bsz, m, n])
}

/// A 2-D layout as a batch of one.
fn as_batch(l: &Layout) -> Layout {
    Layout {
        shape: smallvec::smallvec![1, l.shape[0], l.shape[1]],
        strides: smallvec::smallvec![0, l.strides[0], l.strides[1]],
        offset: l.offset,
    }
}

/// `a @ b` for matrices, without history.
fn mm_raw(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let out = bmm_raw(a, &as_batch(a.layout()), b, &as_batch(b.layout()))?;
    Ok(out.alias(Layout::contiguous(&[a.shape()[0], b.shape()[1]])))
}

/// The conjugate transpose of the last two dimensions.
fn adjoint(t: &Tensor) -> Result<Tensor> {
    conj(&transpose(t, -2, -1)?)
}

/// Saves `t` only when the other operand needs a gradient.
fn save_if(cond: bool, t: &Tensor) -> Option<SavedTensor> {
    cond.then(|| SavedTensor::input(t))
}

pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() != 2 {
        bail!(Runtime, "self must be a matrix");
    }
    if b.ndim() != 2 {
        bail!(Runtime, "mat2 must be a matrix");
    }
    check_mm(a, b)?;
    let out = mm_raw(a, b)?;
    record_mm("MmBackward0", a, b, &out);
    Ok(out)
}

fn check_mm(a: &Tensor, b: &Tensor) -> Result<()> {
    let (sa, sb) = (a.shape(), b.shape());
    if sa[1] != sb[0] {
        bail!(
            Runtime,
            "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
            sa[0],
            sa[1],
            sb[0],
            sb[1]
        );
    }
    if a.dtype() != b.dtype() {
        bail!(
            Runtime,
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            DType::cpp_name(a.dtype()),
            DType::cpp_name(b.dtype())
        );
    }
    Ok(())
}

/// The backward of a (batched) matrix product, shared by `mm` and `bmm`.
fn record_mm(name: &'static str, a: &Tensor, b: &Tensor, out: &Tensor) {
    let (ra, rb) = (needs_input_grad(a), needs_input_grad(b));
    let prod = if name == "MmBackward0" { mm } else { bmm };
    let transposed = (stored_transposed(a), stored_transposed(b));
    record(
        name,
        &[a, b],
        out,
        || (save_if(rb, a), save_if(ra, b)),
        move |ctx, (sa, sb), g| {
            let a = sa.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let b = sb.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let (ga, gb) = product_grads(prod, transposed, a.as_ref(), b.as_ref(), g)?;
            Ok(grads![ga, gb])
        },
    );
}

/// The gradients of `a @ b` for incoming gradient `g`: `g @ b^H` when `b`
/// is given (the gradient of `a`) and `a^H @ g` when `a` is given (the
/// gradient of `b`). A gradient is computed transposed when its operand is
/// stored transposed (a weight used as `W.t()`), so it reaches `.grad`
/// with the operand's own strides and `.grad` keeps it as it is.
fn product_grads(
    prod: fn(&Tensor, &Tensor) -> Result<Tensor>,
    (a_transposed, b_transposed): (bool, bool),
    a: Option<&Tensor>,
    b: Option<&Tensor>,
    g: &Tensor,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    if let Some(grads) = grads_of_single_value(a, b, g)? {
        return Ok(grads);
    }
    let ga = match b {
        Some(b) if a_transposed => Some(transpose(
            &prod(&conj(b)?, &transpose(g, -2, -1)?)?,
            -2,
            -1,
        )?),
        Some(b) => Some(prod(g, &adjoint(b)?)?),
        None => None,
    };
    let gb = match a {
        Some(a) if b_transposed => Some(transpose(
            &prod(&transpose(g, -2, -1)?, &conj(a)?)?,
            -2,
            -1,
        )?),
        Some(a) => Some(prod(&adjoint(a)?, g)?),
        None => None,
    };
    Ok((ga, gb))
}

/// The gradients of `a @ b` when every element of each matrix of `g` is
/// one value `c` (the gradient of a `sum` or `mean` of the product):
/// `g @ b^H` has every row `c * (row sums of conj(b))^T` and `a^H @ g`
/// every column `c * (column sums of conj(a))^T`, returned expanded, so
/// neither the product nor the full matrix is computed. The engine's
/// consumers read expanded gradients as they are (a leaf's `.grad` is
/// made dense when stored). Only outside grad mode (no `create_graph`):
/// as a function of `g` these read just its first element. `None` when
/// `g` varies or grad mode is on.
fn grads_of_single_value(
    a: Option<&Tensor>,
    b: Option<&Tensor>,
    g: &Tensor,
) -> Result<Option<(Option<Tensor>, Option<Tensor>)>> {
    let (n, l) = (g.ndim(), g.layout());
    let varies = |d: usize| l.shape[d] > 1 && l.strides[d] != 0;
    if n < 2
        || l.numel() == 0
        || varies(n - 2)
        || varies(n - 1)
        || crate::autograd::formulas_differentiable()
    {
        return Ok(None);
    }
    let mut corner = l.clone();
    corner.shape[n - 2] = 1;
    corner.shape[n - 1] = 1;
    // `g.alias` carries no history, and none is recorded outside grad mode.
    let c = g.alias(corner);
    let (m, cols) = (l.shape[n - 2], l.shape[n - 1]);
    let with_shape = |rows: usize, cols: usize| {
        let mut shape = l.shape.to_vec();
        shape[n - 2] = rows;
        shape[n - 1] = cols;
        shape
    };
    // `c` times the sums of `conj(t)` along `dim`, with the last two dims swapped.
    let scaled_sums =
        |t: &Tensor, dim: i64| mul(&c, &transpose(&sum(&conj(t)?, &[dim], true)?, -2, -1)?);
    let ga = b.map(|b| {
        let row = scaled_sums(b, -1)?;
        let k = row.shape()[n - 1];
        expand_to(&row, &with_shape(m, k))
    });
    let gb = a.map(|a| {
        let column = scaled_sums(a, -2)?;
        let k = column.shape()[n - 2];
        expand_to(&column, &with_shape(k, cols))
    });
    Ok(Some((ga.transpose()?, gb.transpose()?)))
}

/// Whether `t` is the transpose of a contiguous tensor (and not itself
/// contiguous), as `W.t()` is.
fn stored_transposed(t: &Tensor) -> bool {
    let (l, n) = (t.layout(), t.ndim());
    n >= 2 && !l.is_contiguous() && l.transposed(n - 2, n - 1).is_contiguous()
}

pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() != 3 {
        bail!(Runtime, "batch1 must be a 3D tensor");
    }
    if b.ndim() != 3 {
        bail!(Runtime, "batch2 must be a 3D tensor");
    }
    let (sa, sb) = (a.shape(), b.shape());
    if sb[0] != sa[0] || sb[1] != sa[2] {
        bail!(
            Runtime,
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
            sa[0],
            sa[2],
            sb[0],
            sb[1]
        );
    }
    if a.dtype() != b.dtype() {
        bail!(
            Runtime,
            "expected scalar type {} but found {}",
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(b.dtype())
        );
    }
    let out = bmm_raw(a, a.layout(), b, b.layout())?;
    record_mm("BmmBackward0", a, b, &out);
    Ok(out)
}

pub fn dot(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() != 1 || b.ndim() != 1 {
        bail!(
            Runtime,
            "1D tensors expected, but got {}D and {}D tensors",
            a.ndim(),
            b.ndim()
        );
    }
    if a.numel() != b.numel() {
        bail!(
            Runtime,
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
            a.numel(),
            b.numel(),
            a.numel(),
            b.numel()
        );
    }
    if a.dtype() != b.dtype() {
        bail!(
            Runtime,
            "dot : expected both vectors to have same dtype, but found {} and {}",
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(b.dtype())
        );
    }
    let row = a.alias(Layout {
        shape: smallvec::smallvec![1, a.numel()],
        strides: smallvec::smallvec![0, a.strides()[0]],
        offset: a.storage_offset(),
    });
    let col = b.alias(Layout {
        shape: smallvec::smallvec![b.numel(), 1],
        strides: smallvec::smallvec![b.strides()[0], 0],
        offset: b.storage_offset(),
    });
    let out = mm_raw(&row, &col)?.alias(Layout::contiguous(&[]));
    let (ra, rb) = (needs_input_grad(a), needs_input_grad(b));
    record(
        "DotBackward0",
        &[a, b],
        &out,
        || (save_if(rb, a), save_if(ra, b)),
        |ctx, (sa, sb), g| {
            let ga = match sb {
                Some(b) => Some(mul(g, &conj(&b.unpack(ctx)?)?)?),
                None => None,
            };
            let gb = match sa {
                Some(a) => Some(mul(g, &conj(&a.unpack(ctx)?)?)?),
                None => None,
            };
            Ok(grads![ga, gb])
        },
    );
    Ok(out)
}

pub fn mv(a: &Tensor, v: &Tensor) -> Result<Tensor> {
    if a.ndim() != 2 || v.ndim() != 1 {
        bail!(
            Runtime,
            "vector + matrix @ vector expected, got 1, {}, {}",
            a.ndim(),
            v.ndim()
        );
    }
    if a.shape()[1] != v.numel() {
        bail!(
            Runtime,
            "size mismatch, got input ({}), mat ({}x{}), vec ({})",
            a.shape()[0],
            a.shape()[0],
            a.shape()[1],
            v.numel()
        );
    }
    if a.dtype() != v.dtype() {
        bail!(
            Runtime,
            "addmv input tensors must have the same dtype, but got {}, {}, and {}",
            DType::scalar_type_name(result_type(&[a, v])),
            DType::scalar_type_name(a.dtype()),
            DType::scalar_type_name(v.dtype())
        );
    }
    let col = v.alias(Layout {
        shape: smallvec::smallvec![v.numel(), 1],
        strides: smallvec::smallvec![v.strides()[0], 0],
        offset: v.storage_offset(),
    });
    let out = mm_raw(a, &col)?.alias(Layout::contiguous(&[a.shape()[0]]));
    let (ra, rv) = (needs_input_grad(a), needs_input_grad(v));
    record(
        "MvBackward0",
        &[a, v],
        &out,
        || (save_if(rv, a), save_if(ra, v)),
        |ctx, (sa, sv), g| {
            let ga = match sv {
                Some(v) => Some(outer(g, &conj(&v.unpack(ctx)?)?)?),
                None => None,
            };
            let gv = match sa {
                Some(a) => Some(mv(&adjoint(&a.unpack(ctx)?)?, g)?),
                None => None,
            };
            Ok(grads![ga, gv])
        },
    );
    Ok(out)
}

/// `outer(a, b)`: `a[:, None] * b`, as PyTorch composes it.
pub fn outer(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    for (t, name) in [(a, "self"), (b, "vec2")] {
        if t.ndim() != 1 {
            bail!(
                Runtime,
                "outer: Expected 1-D argument {}, but got {}-D",
                name,
                t.ndim()
            );
        }
    }
    mul(&reshape(a, &[-1, 1])?, b)
}

/// The result of a batched product reinterpreted with another shape: a
/// plain reshape of a fresh tensor, named as PyTorch names it.
fn unsafe_view(t: &Tensor, shape: &[usize]) -> Tensor {
    let out = t.alias(Layout::contiguous(shape));
    let in_shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    record(
        "UnsafeViewBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(reshape(g, &in_shape)?)]),
    );
    out
}

/// `a @ b` with PyTorch's rules for 1-D operands and broadcast batches.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (da, db) = (a.ndim(), b.ndim());
    match (da, db) {
        (0, _) | (_, 0) => bail!(
            Runtime,
            "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
            da,
            db
        ),
        (1, 1) => dot(a, b),
        (2, 1) => mv(a, b),
        (1, 2) => squeeze_dims(&mm(&unsqueeze(a, 0)?, b)?, &[0]),
        (2, 2) => mm(a, b),
        (_, 1) | (_, 2) => {
            // Fold the batch into the rows: one large product.
            let k = a.shape()[da - 1];
            let mut out_shape: Shape = a.shape()[..da - 1].into();
            let rows = reshape(a, &[out_shape.iter().product::<usize>() as i64, k as i64])?;
            let prod = if db == 1 {
                mv(&rows, b)?
            } else {
                out_shape.push(b.shape()[1]);
                mm(&rows, b)?
            };
            Ok(unsafe_view(&prod, &out_shape))
        }
        (2, _) => {
            // As PyTorch: (b^T @ a^T)^T, made contiguous.
            let r = matmul(&transpose(b, -2, -1)?, &transpose(a, -2, -1)?)?;
            contiguous(&transpose(&r, -2, -1)?)
        }
        _ => batched(a, b),
    }
}

/// N-D products: broadcast batch dims, run `bmm`, drop the dims that 1-D
/// operands gained.
fn batched(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let a2 = if a.ndim() == 1 {
        unsqueeze(a, 0)?
    } else {
        a.clone()
    };
    let b2 = if b.ndim() == 1 {
        unsqueeze(b, -1)?
    } else {
        b.clone()
    };
    let (sa, sb) = (a2.shape(), b2.shape());
    let (na, nb) = (sa.len(), sb.len());
    let (m, k1, k2, n) = (sa[na - 2], sa[na - 1], sb[nb - 2], sb[nb - 1]);
    let batch = broadcast_shapes(&sa[..na - 2], &sb[..nb - 2])?;
    let bsz: usize = batch.iter().product();
    if k1 != k2 {
        bail!(
            Runtime,
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
            bsz,
            k1,
            bsz,
            k2
        );
    }
    let expand = |t: &Tensor, r: usize, c: usize| -> Result<Tensor> {
        let mut shape = batch.clone();
        shape.extend([r, c]);
        reshape(&expand_to(t, &shape)?, &[bsz as i64, r as i64, c as i64])
    };
    let prod = bmm(&expand(&a2, m, k1)?, &expand(&b2, k2, n)?)?;
    let mut out_shape = batch.clone();
    if a.ndim() > 1 {
        out_shape.push(m);
    }
    if b.ndim() > 1 {
        out_shape.push(n);
    }
    Ok(unsafe_view(&prod, &out_shape))
}

/// `beta * input + alpha * (m1 @ m2)`, one node (`AddmmBackward0`).
pub fn addmm(
    input: &Tensor,
    m1: &Tensor,
    m2: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<Tensor> {
    if m1.ndim() != 2 {
        bail!(Runtime, "mat1 must be a matrix, got {}-D tensor", m1.ndim());
    }
    if m2.ndim() != 2 {
        bail!(Runtime, "mat2 must be a matrix, got {}-D tensor", m2.ndim());
    }
    for (what, t) in [("self", input), ("mat1", m1)] {
        if t.dtype() != m2.dtype() {
            bail!(
                Runtime,
                "{what} and mat2 must have the same dtype, but got {} and {}",
                t.dtype().scalar_type_name(),
                m2.dtype().scalar_type_name()
            );
        }
    }
    check_mm(m1, m2)?;
    let shape = [m1.shape()[0], m2.shape()[1]];
    let (beta_t, alpha_t) = (Tensor::wrapped_number(beta), Tensor::wrapped_number(alpha));
    let one = num_complex::Complex64::new(1.0, 0.0);
    let (unit_beta, unit_alpha) = (beta.as_complex() == one, alpha.as_complex() == one);
    // Multiplying by one changes no value (not even a NaN or a signed
    // zero), so the default factors skip that pass, forward and backward.
    let times = move |t: Tensor, factor: &Tensor, unit: bool| match unit {
        true => Ok(t),
        false => mul(&t, factor),
    };
    let inp = expand_to(&input.detach(), &shape)?;
    // A bias along the rows (`linear`'s) is added by the product itself.
    let row_bias = unit_alpha
        && unit_beta
        && input.shape().last() == Some(&shape[1])
        && input.numel() == shape[1];
    let fused = match row_bias {
        true => mm_plus_row_raw(m1, m2, &contiguous(&reshape(&input.detach(), &[-1])?)?)?,
        false => None,
    };
    let out = match fused {
        Some(out) => out,
        None => {
            let scaled = times(mm_raw(m1, m2)?, &alpha_t, unit_alpha)?;
            // beta == 0 ignores `input` entirely (NaNs in it do not propagate).
            match beta.as_complex() == num_complex::Complex64::new(0.0, 0.0) {
                true => super::copy::try_cast(&scaled, result_type(&[input, m1, m2]))?,
                false => add(&times(inp, &beta_t, unit_beta)?, &scaled)?,
            }
        }
    };
    let out = out.detach();
    let (r1, r2) = (needs_input_grad(m1), needs_input_grad(m2));
    let transposed = (stored_transposed(m1), stored_transposed(m2));
    record(
        "AddmmBackward0",
        &[input, m1, m2],
        &out,
        || (save_if(r2, m1), save_if(r1, m2)),
        move |ctx, (s1, s2), g| {
            let gi = Some(times(g.clone(), &conj(&beta_t)?, unit_beta)?);
            let m1 = s1.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let m2 = s2.as_ref().map(|s| s.unpack(ctx)).transpose()?;
            let (g1, g2) = product_grads(mm, transposed, m1.as_ref(), m2.as_ref(), g)?;
            let alpha_c = conj(&alpha_t)?;
            let scale = |t: Option<Tensor>| t.map(|t| times(t, &alpha_c, unit_alpha)).transpose();
            Ok(grads![gi, scale(g1)?, scale(g2)?])
        },
    );
    Ok(out)
}

/// `input @ weight.t() + bias` (`torch.nn.functional.linear`), recorded as
/// PyTorch records it: a batch of rows with a bias is one `AddmmBackward0`
/// node; other contiguous inputs with a vector bias fold their leading
/// dimensions into rows for that product and view the result back.
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    if input.ndim() == 0 || weight.ndim() == 0 {
        bail!(
            Runtime,
            "both arguments to linear need to be at least 1D, but they are {}D and {}D",
            input.ndim(),
            weight.ndim()
        );
    }
    let weight_t = super::shape::t(weight)?;
    let (one, ndim) = (Scalar::Int(1), input.ndim());
    match bias {
        None => matmul(input, &weight_t),
        Some(bias) if ndim == 2 => addmm(bias, input, &weight_t, one, one),
        Some(bias) if ndim > 0 && bias.ndim() == 1 && input.is_contiguous() => {
            let features = input.shape()[ndim - 1] as i64;
            let rows = view(input, &[-1, features])?;
            let out = addmm(bias, &rows, &weight_t, one, one)?;
            let mut shape: Vec<i64> = input.shape()[..ndim - 1]
                .iter()
                .map(|&d| d as i64)
                .collect();
            shape.push(out.shape()[1] as i64);
            view(&out, &shape)
        }
        Some(bias) => add(&matmul(input, &weight_t)?, bias),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::shape::narrow;

    #[test]
    fn gemm_handles_transposed_and_batched_operands() {
        let a = Tensor::from_vec((0..6).map(|x| x as f64).collect(), &[2, 3]).unwrap();
        let b = Tensor::from_vec((0..6).map(|x| x as f64).collect(), &[3, 2]).unwrap();
        assert_eq!(
            mm(&a, &b).unwrap().to_vec::<f64>(),
            vec![10.0, 13.0, 28.0, 40.0]
        );
        // a^T @ a^T... via strides: (3x2) @ (2x3), no copies.
        let at = transpose(&a, 0, 1).unwrap();
        let bt = transpose(&b, 0, 1).unwrap();
        let p = mm(&at, &bt).unwrap();
        assert_eq!(p.shape(), &[3, 3]);
        assert_eq!(p.to_vec::<f64>()[..3], [3.0, 9.0, 15.0]);
        let ai = Tensor::from_vec((0..6).collect::<Vec<i64>>(), &[2, 3]).unwrap();
        let bi = Tensor::from_vec((0..6).collect::<Vec<i64>>(), &[3, 2]).unwrap();
        assert_eq!(mm(&ai, &bi).unwrap().to_vec::<i64>(), vec![10, 13, 28, 40]);
        let e = Tensor::zeros(&[2, 0], DType::Float32);
        let f = Tensor::zeros(&[0, 3], DType::Float32);
        assert_eq!(mm(&e, &f).unwrap().to_vec::<f32>(), vec![0.0; 6]);
    }

    /// A `[b, r, c]` float64 tensor of small integers (products are exact),
    /// stored by rows or, as the transpose of a contiguous tensor, by
    /// columns.
    fn operand(b: usize, r: usize, c: usize, by_columns: bool, seed: usize) -> Tensor {
        let values = |n: usize| {
            (0..n)
                .map(|i| ((i * 37 + seed) % 17) as f64 - 8.0)
                .collect()
        };
        match by_columns {
            false => Tensor::from_vec(values(b * r * c), &[b, r, c]).unwrap(),
            true => {
                let t = Tensor::from_vec(values(b * r * c), &[b, c, r]).unwrap();
                transpose(&t, 1, 2).unwrap()
            }
        }
    }

    #[test]
    fn products_computed_transposed_match_a_plain_loop() {
        // Shapes large enough to split over threads, with a left operand
        // stored by rows (up to and past the rows computed transposed)
        // and by columns, so bands of rows and of columns are transposed.
        for (bsz, m, k, n) in [
            (1, 64, 300, 520),
            (2, 200, 190, 130),
            (1, 300, 64, 260),
            // Wider than tall, yet tall enough for bands of rows.
            (1, 300, 64, 520),
            (3, 17, 33, 9),
            // Right operands whose columns lie 1 KiB and 2 KiB apart,
            // which each part copies to a padded buffer first: whole, and
            // split into bands of columns (each copying its own).
            (1, 64, 128, 96),
            (2, 96, 256, 80),
            (1, 256, 128, 256),
            // Split by rows, being more than twice as tall as wide.
            (1, 600, 64, 200),
        ] {
            for lhs_by_columns in [false, true] {
                let a = operand(bsz, m, k, lhs_by_columns, 1);
                let b = operand(bsz, k, n, true, 5);
                let (av, bv) = (
                    contiguous(&a).unwrap().to_vec::<f64>(),
                    contiguous(&b).unwrap().to_vec::<f64>(),
                );
                let got = bmm(&a, &b).unwrap().to_vec::<f64>();
                for (i, &value) in got.iter().enumerate() {
                    let (batch, row, col) = (i / (m * n), i / n % m, i % n);
                    let want: f64 = (0..k)
                        .map(|p| av[(batch * m + row) * k + p] * bv[(batch * k + p) * n + col])
                        .sum();
                    assert_eq!(value, want, "{bsz}x{m}x{k}x{n} at {i}");
                }
            }
        }
    }

    #[test]
    fn addmm_adds_a_row_bias_inside_the_product_as_add_would() {
        // Non-integer values, so the sum rounds: the fused bias must give
        // the bits `bias + (a @ b)` gives. The shapes run whole and split
        // over threads, by rows and by columns, computed as stored and
        // transposed.
        let values = |n: usize, seed: usize| -> Vec<f32> {
            (0..n)
                .map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 / 37.0 - 13.5)
                .collect()
        };
        for (m, k, n) in [(3, 5, 4), (64, 300, 520), (200, 190, 130), (300, 64, 520)] {
            for (lhs_by_columns, rhs_by_columns) in [(false, false), (false, true), (true, true)] {
                let stored = |r: usize, c: usize, by_columns: bool, seed: usize| match by_columns {
                    false => Tensor::from_vec(values(r * c, seed), &[r, c]).unwrap(),
                    true => {
                        let t = Tensor::from_vec(values(r * c, seed), &[c, r]).unwrap();
                        transpose(&t, 0, 1).unwrap()
                    }
                };
                let a = stored(m, k, lhs_by_columns, 1);
                let b = stored(k, n, rhs_by_columns, 2);
                for bias_shape in [vec![n], vec![1, n]] {
                    let bias = Tensor::from_vec(values(n, 3), &bias_shape).unwrap();
                    let one = Scalar::Int(1);
                    let vector = reshape(&bias, &[-1]).unwrap();
                    let direct = mm_plus_row_raw(&a, &b, &vector).unwrap();
                    let apart = add(&bias, &mm(&a, &b).unwrap()).unwrap().to_vec::<f32>();
                    let fused = addmm(&bias, &a, &b, one, one).unwrap();
                    assert_eq!(fused.shape(), &[m, n]);
                    for got in [direct.expect("runs on gemm"), fused] {
                        let got = got.to_vec::<f32>();
                        let same = got
                            .iter()
                            .zip(&apart)
                            .all(|(x, y)| x.to_bits() == y.to_bits());
                        let case = (lhs_by_columns, rhs_by_columns, &bias_shape);
                        assert!(same, "{m}x{k}x{n} {case:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_sliced_right_operand_with_aliasing_column_stride_multiplies_as_stored() {
        // Columns 1 KiB apart (128 float64) holding only 100 elements each:
        // the padded copy takes the 100 and nothing past them.
        let (m, k, n) = (96, 100, 64);
        let a = operand(1, m, k, false, 3);
        let wide = operand(1, 128, n, true, 7);
        let b = narrow(&wide, 1, 0, k as i64).unwrap();
        assert_eq!(b.layout().strides.as_slice(), &[(128 * n) as isize, 1, 128]);
        let (av, bv) = (
            contiguous(&a).unwrap().to_vec::<f64>(),
            contiguous(&b).unwrap().to_vec::<f64>(),
        );
        let got = bmm(&a, &b).unwrap().to_vec::<f64>();
        for (i, &value) in got.iter().enumerate() {
            let (row, col) = (i / n, i % n);
            let want: f64 = (0..k).map(|p| av[row * k + p] * bv[p * n + col]).sum();
            assert_eq!(value, want, "at {i}");
        }
    }
}
