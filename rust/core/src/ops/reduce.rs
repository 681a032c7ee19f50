//! Reductions over dimensions.

use super::copy::try_cast;
use super::elementwise::wide_loop;
use super::num::{Arith, Real, RealFloat};
use super::shape::{expand_to, reshape};
use crate::autograd::{formulas_differentiable, record, SavedTensor};
use crate::tensor::layout::{wrap_dim, Layout, Shape};
use crate::tensor::storage::{try_buffer, try_collect, try_filled};
use crate::tensor::{DType, Element, Scalar, Tensor};
use crate::{bail, grads, with_dtype, with_real, with_real_float, Result};
use std::cmp::Ordering;

/// Sorted, de-duplicated dimensions to reduce; empty means all.
pub fn reduce_dims(dims: &[i64], ndim: usize) -> Result<Vec<usize>> {
    if dims.is_empty() {
        return Ok((0..ndim).collect());
    }
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if out.contains(&w) {
            bail!(
                Runtime,
                "dim {} appears multiple times in the list of dims",
                w
            );
        }
        out.push(w);
    }
    if ndim == 0 {
        // A 0-d tensor accepts dim 0 / -1 and has no dimension to reduce.
        out.clear();
    }
    out.sort_unstable();
    Ok(out)
}

/// The output shape of reducing `dims` of `shape`.
pub fn reduced_shape(shape: &[usize], dims: &[usize], keepdim: bool) -> Shape {
    let mut out = Shape::new();
    for (i, &s) in shape.iter().enumerate() {
        if dims.contains(&i) {
            if keepdim {
                out.push(1);
            }
        } else {
            out.push(s);
        }
    }
    out
}

/// Folds each group of elements that `dims` collapses: `fold` within a
/// group, `combine` for partial results computed in parallel.
pub fn reduce<T: Element, O: Element>(
    t: &Tensor,
    dims: &[usize],
    keepdim: bool,
    init: O,
    fold: impl Fn(O, T) -> O + Sync + Send,
    combine: impl Fn(O, O) -> O + Sync + Send,
) -> Result<Tensor> {
    let l = t.layout();
    let out_shape = reduced_shape(&l.shape, dims, keepdim);
    let data = t.storage().read::<T>();
    let outer_dims: Vec<usize> = (0..l.ndim()).filter(|d| !dims.contains(d)).collect();
    let outer = Layout {
        shape: outer_dims.iter().map(|&d| l.shape[d]).collect(),
        strides: outer_dims.iter().map(|&d| l.strides[d]).collect(),
        offset: l.offset,
    };
    let inner = Layout {
        shape: dims.iter().map(|&d| l.shape[d]).collect(),
        strides: dims.iter().map(|&d| l.strides[d]).collect(),
        offset: 0,
    };
    let inner_n = inner.numel();
    let inner_contiguous = inner.is_contiguous();
    // A group whose innermost (coalesced) dim is dense is folded run by run
    // (the height and width of an image, reduced per channel, are one run).
    let [runs] = Layout::coalesced([&inner]);
    let (run_starts, run_len, run_stride) = runs.rows();
    let group = |base: usize| -> O {
        if inner_n == 0 {
            init
        } else if inner_contiguous {
            fold_lanes(&data[base..base + inner_n], init, &fold, &combine)
        } else if run_stride == 1 {
            run_starts.offsets().fold(init, |acc, o| {
                let run = &data[base + o..base + o + run_len];
                combine(acc, fold_lanes(run, init, &fold, &combine))
            })
        } else {
            // Strided runs (a middle dim, summed per column).
            run_starts.offsets().fold(init, |acc, o| {
                let start = (base + o) as isize;
                (0..run_len as isize).fold(acc, |acc, k| {
                    fold(acc, data[(start + k * run_stride) as usize])
                })
            })
        }
    };
    let out: Vec<O> = if inner_n > 0 && reduced_dims_lead_in_memory(l, dims) {
        // Reducing the dims that are outermost in memory (a bias gradient,
        // or the column sums of a transposed matrix): fold whole rows into
        // the accumulator row, which vectorises.
        let cols = outer.numel();
        let fold_rows = |rows: std::ops::Range<usize>, first_col: usize, acc: &mut [O]| {
            let width = acc.len();
            for r in rows {
                let start = l.offset + r * cols + first_col;
                for (a, &x) in acc.iter_mut().zip(&data[start..start + width]) {
                    *a = fold(*a, x);
                }
            }
        };
        let mut acc = try_filled(init, cols)?;
        let large = t.numel() >= super::elementwise::PARALLEL_MIN_ELEMENTS;
        if large && cols < 4096 {
            // Too few columns to share out (the sums over batch and sequence
            // of a few features): bands of rows fold into rows of partials,
            // combined in band order so that the result is the same for any
            // thread count.
            let band = (1usize << 14).div_ceil(cols);
            let mut partials = try_filled(init, inner_n.div_ceil(band) * cols)?;
            crate::parallel::for_each_chunk_mut(&mut partials, cols, |start, part| {
                let first = start / cols * band;
                fold_rows(first..inner_n.min(first + band), 0, part)
            });
            for part in partials.chunks(cols) {
                for (a, &p) in acc.iter_mut().zip(part) {
                    *a = combine(*a, p);
                }
            }
        } else if large {
            crate::parallel::for_each_chunk_mut(&mut acc, 1024, |first_col, acc| {
                fold_rows(0..inner_n, first_col, acc)
            });
        } else {
            fold_rows(0..inner_n, 0, &mut acc);
        }
        acc
    } else if let Some((row_starts, width)) = kept_rows(&outer).filter(|_| inner_n > 0) {
        // The kept elements lie in rows of adjacent elements (features after
        // a reduced sequence axis, the tiles of a repeat): each output row
        // folds the input row at every reduced position, which vectorises.
        let row_starts = row_starts.offset_vec()?;
        let reduced = inner.offset_vec()?;
        let fold_rows = |first: usize, acc: &mut [O]| {
            let starts = &row_starts[first / width..];
            for (acc_row, &start) in acc.chunks_mut(width).zip(starts) {
                for &o in &reduced {
                    // Offsets of negative-stride (flipped) dims wrap around.
                    let at = start.wrapping_add(o);
                    for (a, &x) in acc_row.iter_mut().zip(&data[at..at + width]) {
                        *a = fold(*a, x);
                    }
                }
            }
        };
        let mut acc = try_filled(init, outer.numel())?;
        if t.numel() >= super::elementwise::PARALLEL_MIN_ELEMENTS {
            let chunk = width * 1024usize.div_ceil(width);
            crate::parallel::for_each_chunk_mut(&mut acc, chunk, fold_rows);
        } else {
            fold_rows(0, &mut acc);
        }
        acc
    } else if outer.numel() == 1
        && inner_contiguous
        && inner_n >= super::elementwise::PARALLEL_MIN_ELEMENTS
    {
        let base = outer.offset;
        // Partials are combined in chunk order, never in the order threads
        // finish, so the result does not depend on scheduling.
        let src = &data[base..base + inner_n];
        const PART: usize = 1 << 14;
        let partials = crate::parallel::map_indices(src.len().div_ceil(PART), |i| {
            let part = &src[i * PART..src.len().min((i + 1) * PART)];
            fold_lanes(part, init, &fold, &combine)
        })?;
        vec![partials.into_iter().fold(init, &combine)]
    } else if outer.numel() >= 64 && t.numel() >= super::elementwise::PARALLEL_MIN_ELEMENTS {
        let bases = outer.offset_vec()?;
        crate::parallel::map_indices(bases.len(), |i| group(bases[i]))?
    } else {
        try_collect(outer.numel(), outer.offsets().map(group))?
    };
    drop(data);
    Tensor::from_vec(out, &out_shape)
}

/// The rows of adjacent elements that the kept dims `outer` walk (their
/// innermost merged dim), as the layout of the row starts and the row
/// length, when those rows are long enough to fold whole.
fn kept_rows(outer: &Layout) -> Option<(Layout, usize)> {
    let [kept] = Layout::coalesced([outer]);
    let (starts, width, stride) = kept.rows();
    (kept.ndim() > 0 && stride == 1 && width >= 4).then_some((starts, width))
}

/// Whether `l` is a dense block whose reduced `dims` are, in memory, all
/// outside its kept dims, which follow one another in their own order: the
/// tensor is then `inner_n` consecutive rows of the kept elements. Dims of
/// size 1 are left out, as they place no element.
fn reduced_dims_lead_in_memory(l: &Layout, dims: &[usize]) -> bool {
    let mut order: smallvec::SmallVec<[usize; 8]> =
        (0..l.ndim()).filter(|&d| l.shape[d] > 1).collect();
    order.sort_by_key(|&d| (std::cmp::Reverse(l.strides[d]), !dims.contains(&d), d));
    let reduced = order.iter().take_while(|d| dims.contains(d)).count();
    let kept = &order[reduced..];
    if reduced == 0 || kept.is_empty() || kept.iter().any(|d| dims.contains(d)) {
        return false;
    }
    let mut expected = 1;
    for &d in order.iter().rev() {
        if l.strides[d] != expected as isize {
            return false;
        }
        expected *= l.shape[d];
    }
    kept.windows(2).all(|w| w[0] < w[1])
}

/// Folds a contiguous run into `LANES` independent accumulators, combined
/// in a fixed order at the end. A single accumulator makes each step wait
/// for the last (floating-point folds cannot be reordered by the
/// compiler); independent lanes vectorise. `init` must be an identity of
/// `combine`, as it is for every reduction here.
#[inline(always)]
pub(crate) fn fold_lanes<T: Copy, O: Copy>(
    xs: &[T],
    init: O,
    fold: &impl Fn(O, T) -> O,
    combine: &impl Fn(O, O) -> O,
) -> O {
    // Short runs (a small last dim summed per row) would fold wholly in
    // the scalar tail of 16 lanes.
    match xs.len() < 32 {
        true => fold_in_lanes::<T, O, 4>(xs, init, fold, combine),
        false => fold_in_lanes::<T, O, 16>(xs, init, fold, combine),
    }
}

/// [`fold_lanes`] with `LANES` accumulators.
#[inline(always)]
fn fold_in_lanes<T: Copy, O: Copy, const LANES: usize>(
    xs: &[T],
    init: O,
    fold: &impl Fn(O, T) -> O,
    combine: &impl Fn(O, O) -> O,
) -> O {
    let mut chunks = xs.chunks_exact(LANES);
    let mut acc = [init; LANES];
    for chunk in &mut chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a = fold(*a, x);
        }
    }
    let total = acc.into_iter().fold(init, combine);
    chunks.remainder().iter().fold(total, |a, &x| fold(a, x))
}

/// The dtype `sum` produces: integers and bools sum to int64.
fn sum_dtype(d: DType) -> DType {
    if d.is_differentiable() {
        d
    } else {
        DType::Int64
    }
}

/// Sum without recording history.
fn sum_raw(t: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
    let dtype = sum_dtype(t.dtype());
    let t = try_cast(t, dtype)?;
    let l = t.layout();
    let broadcast = |d: usize| l.strides[d] == 0 && l.shape[d] > 1;
    if l.numel() > 0 && (0..l.ndim()).any(broadcast) {
        // A broadcast dim repeats one element (an expanded gradient summed
        // back): sum a single copy, times the repeats of the reduced dims.
        let mut single = l.clone();
        let mut repeats = 1;
        for d in (0..l.ndim()).filter(|&d| broadcast(d)) {
            single.shape[d] = 1;
            if dims.contains(&d) {
                repeats *= l.shape[d];
            }
        }
        let mut out = sum_raw(&t.alias(single), dims, keepdim)?;
        if repeats > 1 {
            let times = Tensor::scalar(Scalar::Int(repeats as i64), dtype);
            out = super::binary::mul(&out, &times)?;
        }
        let shape = reduced_shape(&l.shape, dims, keepdim);
        return super::copy::contiguous(&expand_to(&out, &shape)?);
    }
    with_dtype!(dtype, T => reduce::<T, T>(&t, dims, keepdim, T::zero(), |a, x| a.add(x), |a, b| a.add(b)))
}

/// `sum(dim, keepdim)`; `dims` empty means every dimension.
pub fn sum(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let name = if dims.is_empty() {
        "SumBackward0"
    } else {
        "SumBackward1"
    };
    let dims = reduce_dims(dims, t.ndim())?;
    let out = sum_raw(t, &dims, keepdim)?;
    let in_shape: Shape = t.shape().into();
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| {
            Ok(grads![Some(expand_to(
                &unsqueeze_reduced(g, &in_shape, &dims, keepdim)?,
                &in_shape
            )?)])
        },
    );
    Ok(out)
}

/// `sum(dim, keepdim, dtype=...)`: the input cast to `dtype` and summed, the
/// result in `dtype` too (an integer sum is otherwise widened to int64, and
/// with `dtype` it wraps as PyTorch's does).
pub fn sum_as(t: &Tensor, dims: &[i64], keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
    let Some(dtype) = dtype else {
        return sum(t, dims, keepdim);
    };
    let out = sum(&super::copy::to_dtype(t, dtype)?, dims, keepdim)?;
    match out.dtype() == dtype {
        true => Ok(out),
        false => super::copy::to_dtype(&out, dtype),
    }
}

/// `g` (shaped like a reduction's result) with reduced dims put back as 1s.
pub fn unsqueeze_reduced(
    g: &Tensor,
    in_shape: &[usize],
    dims: &[usize],
    keepdim: bool,
) -> Result<Tensor> {
    if keepdim {
        return Ok(g.clone());
    }
    let shape: Vec<i64> = reduced_shape(in_shape, dims, true)
        .iter()
        .map(|&d| d as i64)
        .collect();
    reshape(g, &shape)
}

/// `mean(dim, keepdim)` for floating tensors.
pub fn mean(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    if !t.dtype().is_differentiable() {
        bail!(
            Runtime,
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
            DType::scalar_type_name(t.dtype())
        );
    }
    let name = if dims.is_empty() {
        "MeanBackward0"
    } else {
        "MeanBackward1"
    };
    let dims = reduce_dims(dims, t.ndim())?;
    let count = Tensor::wrapped_number(Scalar::Int(
        dims.iter().map(|&d| t.shape()[d]).product::<usize>() as i64,
    ));
    let out = super::binary::div(&sum_raw(t, &dims, keepdim)?, &count)?;
    let in_shape: Shape = t.shape().into();
    record(
        name,
        &[t],
        &out,
        || (),
        move |_, _, g| {
            let g = super::binary::div(g, &count)?;
            Ok(grads![Some(expand_to(
                &unsqueeze_reduced(&g, &in_shape, &dims, keepdim)?,
                &in_shape
            )?)])
        },
    );
    Ok(out)
}

/// Sums `t` down to `shape` (undoing broadcasting): the gradient of expand.
pub fn sum_to(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    let lead = t.ndim() - shape.len();
    let dims: Vec<i64> = (0..t.ndim())
        .filter(|&d| d < lead || (shape[d - lead] == 1 && t.shape()[d] != 1))
        .map(|d| d as i64)
        .collect();
    let s = sum(t, &dims, true)?;
    let target: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    reshape(&s, &target)
}

/// PyTorch's error for reducing an empty tensor over all dims (`max()`).
fn check_nonempty_all(t: &Tensor, op: &str) -> Result<()> {
    if t.numel() == 0 {
        bail!(
            Runtime,
            "{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        );
    }
    Ok(())
}

/// PyTorch's error for reducing over an empty dimension.
fn check_nonempty_dims(t: &Tensor, dims: &[usize], op: &str) -> Result<()> {
    if t.numel() == 0 {
        if let Some(d) = dims.iter().find(|&&d| t.shape()[d] == 0) {
            bail!(
                Index,
                "{op}(): Expected reduction dim {d} to have non-zero size."
            );
        }
    }
    Ok(())
}

/// NaN-propagating max (or min) over `dims`, without history.
fn extreme_raw(
    t: &Tensor,
    dims: &[usize],
    keepdim: bool,
    is_max: bool,
    op: &str,
) -> Result<Tensor> {
    let init = match (t.dtype(), is_max) {
        (DType::Bool, m) => Scalar::Bool(!m),
        (_, true) => Scalar::Float(f64::NEG_INFINITY),
        (_, false) => Scalar::Float(f64::INFINITY),
    };
    with_real!(t.dtype(), T => {
        let init = <T as crate::tensor::ScalarConvert>::from_scalar(init);
        if is_max {
            reduce::<T, T>(t, dims, keepdim, init, |a, x| a.max_nan(x), |a, b| a.max_nan(b))
        } else {
            reduce::<T, T>(t, dims, keepdim, init, |a, x| a.min_nan(x), |a, b| a.min_nan(b))
        }
    }, bail!(
        NotImplemented,
        "\"{}\" not implemented for '{}'",
        op,
        DType::scalar_type_name(t.dtype())
    ))
}

/// The gradient of a max/min reduction: split evenly among the elements
/// equal to the result (PyTorch's `evenly_distribute_backward`).
fn extreme_backward(
    g: &Tensor,
    x: &Tensor,
    out: &Tensor,
    dims: &[usize],
    keepdim: bool,
    nan_ties: bool,
) -> Result<Tensor> {
    let in_shape: Shape = x.shape().into();
    let out_k = unsqueeze_reduced(out, &in_shape, dims, keepdim)?;
    let g_k = unsqueeze_reduced(g, &in_shape, dims, keepdim)?;
    // `max()`/`min()` of a tensor holding NaN share the gradient among
    // the NaNs (which equal nothing), as PyTorch does.
    let mask = match nan_ties && out.numel() == 1 && out.item()?.as_f64().is_nan() {
        true => super::binary::ne(x, x)?,
        false => super::binary::eq(x, &out_k)?,
    };
    let mask = try_cast(&mask, g.dtype())?;
    let all: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    let count = sum(&mask, &all, true)?;
    super::binary::mul(&super::binary::div(&g_k, &count)?, &mask)
}

fn extreme(
    t: &Tensor,
    dims: &[i64],
    keepdim: bool,
    is_max: bool,
    nan_ties: bool,
    name: &'static str,
    op: &'static str,
) -> Result<Tensor> {
    let all = dims.is_empty();
    let dims = reduce_dims(dims, t.ndim())?;
    if all {
        check_nonempty_all(t, op)?;
    } else {
        check_nonempty_dims(t, &dims, op)?;
    }
    let out = extreme_raw(t, &dims, keepdim, is_max, op)?;
    record_evenly_shared(name, t, &out, dims, keepdim, nan_ties);
    Ok(out)
}

/// Records `out`, picked from `t` by a reduction over `dims`, with the
/// gradient of [`extreme_backward`].
fn record_evenly_shared(
    name: &'static str,
    t: &Tensor,
    out: &Tensor,
    dims: Vec<usize>,
    keepdim: bool,
    nan_ties: bool,
) {
    record(
        name,
        &[t],
        out,
        || (SavedTensor::input(t), SavedTensor::output(out, 0)),
        move |ctx, (sx, so), g| {
            let (x, out) = (sx.unpack(ctx)?, so.unpack(ctx)?);
            Ok(grads![Some(extreme_backward(
                g, &x, &out, &dims, keepdim, nan_ties
            )?)])
        },
    );
}

/// `amax(dim, keepdim)`; `dims` empty means every dimension.
pub fn amax(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    extreme(t, dims, keepdim, true, false, "AmaxBackward0", "amax")
}

pub fn amin(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    extreme(t, dims, keepdim, false, false, "AminBackward0", "amin")
}

/// `max()` over every element: a 0-d tensor (`MaxBackward1`). Unlike
/// `amax`, a NaN result shares its gradient among the NaNs.
pub fn max_all(t: &Tensor) -> Result<Tensor> {
    extreme(t, &[], false, true, true, "MaxBackward1", "max")
}

pub fn min_all(t: &Tensor) -> Result<Tensor> {
    extreme(t, &[], false, false, true, "MinBackward1", "min")
}

/// The lower median of every element, a 0-d tensor: `median()`
/// (`MedianBackward0`), NaN when any element is, or `nanmedian()`
/// (`NanmedianBackward0`, `ignore_nan`), which leaves NaNs out and is NaN
/// only when every element is. The gradient is shared evenly among the
/// elements equal to the median (among the NaNs when it is NaN).
pub fn median_all(t: &Tensor, ignore_nan: bool) -> Result<Tensor> {
    let (name, op) = match ignore_nan {
        true => ("NanmedianBackward0", "nanmedian"),
        false => ("MedianBackward0", "median"),
    };
    if t.dtype() == DType::Bool || t.dtype().is_complex() {
        bail!(
            NotImplemented,
            "\"{op}_cpu\" not implemented for '{}'",
            DType::scalar_type_name(t.dtype())
        );
    }
    check_nonempty_all(t, op)?;
    let out = with_real!(t.dtype(), T => {
        let mut values = t.to_vec::<T>();
        let first_nan = values.iter().copied().find(|v| v.is_nan_val());
        if ignore_nan {
            values.retain(|v| !v.is_nan_val());
        }
        let median = match first_nan {
            Some(nan) if !ignore_nan || values.is_empty() => nan,
            _ => {
                let k = (values.len() - 1) / 2;
                // No NaN is left here, so the order is total.
                let by_value = |a: &T, b: &T| a.partial_cmp(b).unwrap_or(Ordering::Equal);
                *values.select_nth_unstable_by(k, by_value).1
            }
        };
        Tensor::from_vec(vec![median], &[])?
    }, unreachable!("bool and complex were refused above"));
    record_evenly_shared(name, t, &out, reduce_dims(&[], t.ndim())?, false, true);
    Ok(out)
}

/// Values and int64 positions of the max (or min) along `dim`, first
/// occurrence winning and NaN counting as the extreme.
fn arg_extreme(
    t: &Tensor,
    dim: usize,
    keepdim: bool,
    is_max: bool,
    op: &str,
) -> Result<(Tensor, Tensor)> {
    let l = t.layout();
    let (ndim, size) = (l.ndim(), l.shape.get(dim).copied().unwrap_or(1));
    let stride = l.strides.get(dim).copied().unwrap_or(0);
    let outer = Layout {
        shape: (0..ndim)
            .filter(|&d| d != dim)
            .map(|d| l.shape[d])
            .collect(),
        strides: (0..ndim)
            .filter(|&d| d != dim)
            .map(|d| l.strides[d])
            .collect(),
        offset: l.offset,
    };
    let reduced: Vec<usize> = if ndim == 0 { vec![] } else { vec![dim] };
    let out_shape = reduced_shape(&l.shape, &reduced, keepdim);
    with_real!(t.dtype(), T => {
        let data = t.storage().read::<T>();
        let mut values: Vec<T> = try_buffer(outer.numel())?;
        let mut indices: Vec<i64> = try_buffer(outer.numel())?;
        for base in outer.offsets() {
            let (mut best, mut at) = (data[base], 0usize);
            for j in 1..size {
                let v = data[(base as isize + j as isize * stride) as usize];
                let better = if best.is_nan_val() {
                    false
                } else if v.is_nan_val() {
                    true
                } else {
                    // partial_cmp rather than `>`: clippy rejects ordering bools.
                    let want = if is_max { Ordering::Greater } else { Ordering::Less };
                    v.partial_cmp(&best) == Some(want)
                };
                if better {
                    best = v;
                    at = j;
                }
            }
            values.push(best);
            indices.push(at as i64);
        }
        drop(data);
        Ok((
            Tensor::from_vec(values, &out_shape)?,
            Tensor::from_vec(indices, &out_shape)?,
        ))
    }, bail!(
        Runtime,
        "{}(): does not support complex input",
        op
    ))
}

/// `max(dim, keepdim)`: `(values, indices)`; the gradient flows to the
/// selected positions (`MaxBackward0`).
pub fn max_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
    extreme_dim(t, dim, keepdim, true, "MaxBackward0", "max")
}

pub fn min_dim(t: &Tensor, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
    extreme_dim(t, dim, keepdim, false, "MinBackward0", "min")
}

fn extreme_dim(
    t: &Tensor,
    dim: i64,
    keepdim: bool,
    is_max: bool,
    name: &'static str,
    op: &'static str,
) -> Result<(Tensor, Tensor)> {
    let d = wrap_dim(dim, t.ndim())?;
    if t.ndim() > 0 {
        check_nonempty_dims(t, &[d], op)?;
    }
    let (values, indices) = arg_extreme(t, d, keepdim, is_max, op)?;
    let in_shape: Shape = t.shape().into();
    let idx = indices.clone();
    record(
        name,
        &[t],
        &values,
        || (),
        move |_, _, g| {
            if in_shape.is_empty() {
                return Ok(grads![Some(g.clone())]);
            }
            let dims = [d];
            let g = unsqueeze_reduced(g, &in_shape, &dims, keepdim)?;
            let i = unsqueeze_reduced(&idx, &in_shape, &dims, keepdim)?;
            Ok(grads![Some(super::scatter::scatter_add_zeros(
                &g, d, &i, &in_shape
            )?)])
        },
    );
    Ok((values, indices))
}

/// `argmax(dim, keepdim)`; no dim means over the flattened tensor.
pub fn argmax(t: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
    arg(t, dim, keepdim, true, "argmax")
}

pub fn argmin(t: &Tensor, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
    arg(t, dim, keepdim, false, "argmin")
}

fn arg(t: &Tensor, dim: Option<i64>, keepdim: bool, is_max: bool, op: &str) -> Result<Tensor> {
    let t = t.detach();
    match dim {
        None => {
            if t.numel() == 0 {
                bail!(
                    Index,
                    "{op}(): Expected reduction dim to be specified for input.numel() == 0."
                );
            }
            let flat = reshape(&t, &[-1])?;
            let (_, i) = arg_extreme(&flat, 0, false, is_max, op)?;
            if keepdim {
                let ones = vec![1i64; t.ndim()];
                return reshape(&i, &ones);
            }
            Ok(i)
        }
        Some(dim) => {
            let d = wrap_dim(dim, t.ndim())?;
            if t.ndim() > 0 {
                check_nonempty_dims(&t, &[d], op)?;
            }
            Ok(arg_extreme(&t, d, keepdim, is_max, op)?.1)
        }
    }
}

/// `all` over `dims` (`None`: every dim) as a bool tensor.
pub fn all(t: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    logical_reduce(t, dims, keepdim, true, |a, b| a & b)
}

pub fn any(t: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    logical_reduce(t, dims, keepdim, false, |a, b| a | b)
}

/// `all`/`any`: an empty list of dims reduces none, as in PyTorch (where
/// `sum` over an empty list reduces every dim).
fn logical_reduce(
    t: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    init: bool,
    combine: fn(bool, bool) -> bool,
) -> Result<Tensor> {
    let out = match dims {
        Some([]) => to_bool(t)?,
        _ => {
            let dims = reduce_dims(dims.unwrap_or_default(), t.ndim())?;
            reduce::<bool, bool>(&to_bool(t)?, &dims, keepdim, init, combine, combine)?
        }
    };
    keep_uint8(t, out)
}

/// PyTorch's `all` and `any` of a uint8 tensor are uint8.
fn keep_uint8(t: &Tensor, out: Tensor) -> Result<Tensor> {
    match t.dtype() {
        DType::UInt8 => super::copy::try_cast(&out, DType::UInt8),
        _ => Ok(out),
    }
}

fn to_bool(t: &Tensor) -> Result<Tensor> {
    super::binary::ne(t, &Tensor::wrapped_number(Scalar::Int(0)))
}

/// A dim for softmax-like ops, which accept 0-d tensors with dim 0 or -1.
fn softmax_dims(t: &Tensor, dim: i64) -> Result<(usize, Vec<usize>)> {
    let d = wrap_dim(dim, t.ndim())?;
    Ok((d, if t.ndim() == 0 { vec![] } else { vec![d] }))
}

fn check_float(t: &Tensor, kernel: &str) -> Result<()> {
    if !t.dtype().is_floating_point() {
        bail!(
            NotImplemented,
            "\"{}\" not implemented for '{}'",
            kernel,
            DType::scalar_type_name(t.dtype())
        );
    }
    Ok(())
}

/// `x - max(x)` along `dims` (kept), finite maxima only: the stable shift
/// used by softmax, log_softmax and logsumexp. No history.
fn shifted(x: &Tensor, dims: &[usize]) -> Result<(Tensor, Tensor)> {
    let m = extreme_raw(x, dims, true, true, "max")?;
    let finite = super::unary::float_predicate(&m, f64::is_finite)?;
    let m = super::unary::where_(&finite, &m, &super::unary::zero_of(&m))?;
    Ok((super::binary::sub(x, &m)?, m))
}

/// `softmax(dim)` (`SoftmaxBackward0`), computed stably.
pub fn softmax(t: &Tensor, dim: i64) -> Result<Tensor> {
    check_float(t, "softmax_lastdim_kernel_impl")?;
    let (d, dims) = softmax_dims(t, dim)?;
    let out = match by_rows(t, d) {
        Some(row_len) => with_real_float!(t.dtype(), T => {
            map_rows::<T>(t, t, row_len, softmax_row)?
        }, unreachable!("checked to be a real float")),
        None => {
            let (z, _) = shifted(&t.detach(), &dims)?;
            let e = super::unary::exp(&z)?;
            super::binary::div(&e, &sum_raw(&e, &dims, true)?)?
        }
    };
    let sd = [d as i64];
    record(
        "SoftmaxBackward0",
        &[t],
        &out,
        || SavedTensor::output(&out, 0),
        move |ctx, so, g| {
            let y = so.unpack(ctx)?;
            let rows: (RowKernel<f32>, RowKernel<f64>) =
                (softmax_backward_row, softmax_backward_row);
            if let Some(dx) = fused_row_backward(&y, g, d, rows)? {
                return Ok(grads![Some(dx)]);
            }
            let dot = sum(&super::binary::mul(g, &y)?, &sd, true)?;
            Ok(grads![Some(super::binary::mul(
                &y,
                &super::binary::sub(g, &dot)?
            )?)])
        },
    );
    Ok(out)
}

/// `log_softmax(dim)` (`LogSoftmaxBackward0`), computed stably.
pub fn log_softmax(t: &Tensor, dim: i64) -> Result<Tensor> {
    check_float(t, "log_softmax_lastdim_kernel_impl")?;
    let (d, dims) = softmax_dims(t, dim)?;
    let out = match by_rows(t, d) {
        Some(row_len) => with_real_float!(t.dtype(), T => {
            map_rows::<T>(t, t, row_len, log_softmax_row)?
        }, unreachable!("checked to be a real float")),
        None => {
            // Unlike `shifted`, an infinite maximum is kept, as in PyTorch:
            // a row holding +inf is all NaN, a row of -inf too.
            let x = t.detach();
            let z = super::binary::sub(&x, &extreme_raw(&x, &dims, true, true, "max")?)?;
            let lse = super::unary::log(&sum_raw(&super::unary::exp(&z)?, &dims, true)?)?;
            super::binary::sub(&z, &lse)?
        }
    };
    let sd = [d as i64];
    record(
        "LogSoftmaxBackward0",
        &[t],
        &out,
        || SavedTensor::output(&out, 0),
        move |ctx, so, g| {
            let y = so.unpack(ctx)?;
            let rows: (RowKernel<f32>, RowKernel<f64>) =
                (log_softmax_backward_row, log_softmax_backward_row);
            if let Some(dx) = fused_row_backward(&y, g, d, rows)? {
                return Ok(grads![Some(dx)]);
            }
            let s = sum(g, &sd, true)?;
            Ok(grads![Some(super::binary::sub(
                g,
                &super::binary::mul(&super::unary::exp(&y)?, &s)?
            )?)])
        },
    );
    Ok(out)
}

/// The row length when softmax-like `dim` of `t` is its last dimension, of
/// non-zero length, in a contiguous real float tensor: then the row
/// kernels below apply.
fn by_rows(t: &Tensor, dim: usize) -> Option<usize> {
    let real = matches!(t.dtype(), DType::Float32 | DType::Float64);
    let last = t.ndim().checked_sub(1) == Some(dim);
    match real && last && t.is_contiguous() {
        true => Some(t.shape()[dim]).filter(|&n| n > 0),
        false => None,
    }
}

/// A new tensor shaped as `a` whose rows are `row(i, a_row, b_row, out_row)`
/// for the rows `i` of the contiguous, same-shaped `a` and `b`; rows are
/// spread over the pool in spans of whole rows.
pub(crate) fn map_rows<T: Element + Arith>(
    a: &Tensor,
    b: &Tensor,
    row_len: usize,
    row: impl Fn(usize, &[T], &[T], &mut [T]) + Sync,
) -> Result<Tensor> {
    let n = a.numel();
    let (da, db) = (a.storage().read::<T>(), b.storage().read::<T>());
    let (oa, ob) = (a.layout().offset, b.layout().offset);
    let (sa, sb) = (&da[oa..oa + n], &db[ob..ob + n]);
    let mut out = try_filled(T::zero(), n)?;
    let rows_per_span = (super::elementwise::CHUNK / row_len).max(1);
    crate::parallel::for_each_span_mut(&mut out, rows_per_span * row_len, |start, span| {
        let (a, b) = (&sa[start..], &sb[start..]);
        super::elementwise::rows_into(span, a, b, row_len, start / row_len, &row);
    });
    drop((da, db));
    Tensor::from_vec(out, a.shape())
}

/// The gradient of a softmax-like op from its output `y` by one pass per
/// row, when nothing records (no `create_graph`), `dim` is the last of a
/// contiguous real float output and `g` matches it (an expanded gradient,
/// as from a `sum`, is copied first): it replaces four differentiable ops.
fn fused_row_backward(
    y: &Tensor,
    g: &Tensor,
    dim: usize,
    (row32, row64): (RowKernel<f32>, RowKernel<f64>),
) -> Result<Option<Tensor>> {
    let Some(row_len) = by_rows(y, dim).filter(|_| !formulas_differentiable()) else {
        return Ok(None);
    };
    if g.shape() != y.shape() || g.dtype() != y.dtype() {
        return Ok(None);
    }
    let g = match g.is_contiguous() {
        true => g.clone(),
        false => super::copy::contiguous(g)?,
    };
    Ok(Some(match y.dtype() {
        DType::Float32 => map_rows::<f32>(y, &g, row_len, row32)?,
        _ => map_rows::<f64>(y, &g, row_len, row64)?,
    }))
}

/// A row kernel for [`map_rows`]: `(row index, a row, b row, out row)`.
type RowKernel<T> = fn(usize, &[T], &[T], &mut [T]);

/// The maximum of a non-empty row, NaN if it holds one.
#[inline(always)]
fn row_max<T: Real>(x: &[T]) -> T {
    fold_lanes(x, x[0], &|a: T, v: T| a.max_nan(v), &|a: T, b: T| {
        a.max_nan(b)
    })
}

/// The sum of a row.
#[inline(always)]
fn row_sum<T: Arith>(x: &[T]) -> T {
    fold_lanes(x, T::zero(), &|a: T, v: T| a.add(v), &|a: T, b: T| a.add(b))
}

// The row kernels of the softmax family dispatch to an AVX2 copy per row,
// so that their `exp` runs eight lanes wide: as plain functions they were
// compiled for the baseline target only. They are `RowKernel`s.

wide_loop!(softmax_row<T>(_row: usize, x: &[T], _same: &[T], out: &mut [T]) where [T: RealFloat + Real] {
    // `exp(x - m) / sum(exp(x - m))` with `m` the row's maximum (a row
    // holding +inf or NaN is all NaN, as in PyTorch).
    let m = row_max(x);
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v.sub(m).exp();
    }
    let scale = T::one().div(row_sum(out));
    for o in out.iter_mut() {
        *o = o.mul(scale);
    }
});

wide_loop!(softmax_backward_row<T>(_row: usize, y: &[T], g: &[T], out: &mut [T]) where [T: RealFloat + Real] {
    // `y * (g - sum(g * y))`.
    for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
        *o = yv.mul(gv);
    }
    let dot = row_sum(out);
    for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
        *o = yv.mul(gv.sub(dot));
    }
});

wide_loop!(log_softmax_row<T>(_row: usize, x: &[T], _same: &[T], out: &mut [T]) where [T: RealFloat + Real] {
    // `x - m - log(sum(exp(x - m)))` with `m` the row's maximum; the
    // exponentials go through `out` so that they vectorise apart from the
    // sum.
    let m = row_max(x);
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v.sub(m).exp();
    }
    let lse = row_sum(out).ln();
    for (o, &v) in out.iter_mut().zip(x) {
        *o = v.sub(m).sub(lse);
    }
});

wide_loop!(log_softmax_backward_row<T>(_row: usize, y: &[T], g: &[T], out: &mut [T]) where [T: RealFloat + Real] {
    // `g - exp(y) * sum(g)`.
    let total = row_sum(g);
    for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
        *o = gv.sub(yv.exp().mul(total));
    }
});

/// `logsumexp(dim, keepdim)` (`LogsumexpBackward0`).
pub fn logsumexp(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let x = if t.dtype().is_floating_point() || t.dtype().is_complex() {
        t.detach()
    } else {
        try_cast(t, DType::default_float())?
    };
    let dims = reduce_dims(dims, t.ndim())?;
    let (z, m) = match x.dtype().is_complex() {
        // Shifted by the largest real part, which bounds the exponentials' moduli.
        true => {
            let (_, m) = shifted(&super::complex::real(&x)?, &dims)?;
            let m = super::copy::to_dtype(&m, x.dtype())?;
            (super::binary::sub(&x, &m)?, m)
        }
        false => shifted(&x, &dims)?,
    };
    let lse = super::unary::log(&sum_raw(&super::unary::exp(&z)?, &dims, true)?)?;
    let out = super::binary::add(&lse, &m)?;
    let out = if keepdim {
        out
    } else {
        out.alias(Layout::contiguous(&reduced_shape(t.shape(), &dims, false)))
    };
    let in_shape: Shape = t.shape().into();
    record(
        "LogsumexpBackward0",
        &[t],
        &out,
        || (SavedTensor::input(t), SavedTensor::output(&out, 0)),
        move |ctx, (sx, so), g| {
            let (x, out) = (sx.unpack(ctx)?, so.unpack(ctx)?);
            let out = unsqueeze_reduced(&out, &in_shape, &dims, keepdim)?;
            let g = unsqueeze_reduced(g, &in_shape, &dims, keepdim)?;
            // The derivative's conjugate, as for every holomorphic function.
            let w = super::unary::conj(&super::unary::exp(&super::binary::sub(&x, &out)?)?)?;
            Ok(grads![Some(super::binary::mul(&g, &w)?)])
        },
    );
    Ok(out)
}

/// `var`/`std` over `dims` with `correction` (1: unbiased).
pub fn var(t: &Tensor, dims: &[i64], correction: f64, keepdim: bool) -> Result<Tensor> {
    var_std(t, dims, correction, keepdim, false)
}

pub fn std(t: &Tensor, dims: &[i64], correction: f64, keepdim: bool) -> Result<Tensor> {
    var_std(t, dims, correction, keepdim, true)
}

fn var_std(
    t: &Tensor,
    dims: &[i64],
    correction: f64,
    keepdim: bool,
    is_std: bool,
) -> Result<Tensor> {
    if !t.dtype().is_differentiable() {
        bail!(
            Runtime,
            "std and var only support floating point and complex dtypes"
        );
    }
    use super::binary::{add, div, mul, sub};
    let dims = reduce_dims(dims, t.ndim())?;
    let n = dims.iter().map(|&d| t.shape()[d]).product::<usize>() as f64;
    let x = t.detach();
    let count = Tensor::wrapped_number(Scalar::Int(n as i64));
    let mu = div(&sum_raw(&x, &dims, true)?, &count)?;
    let dev = sub(&x, &mu)?;
    // A complex deviation's squared magnitude, real as the result is.
    let squared = match dev.dtype().is_complex() {
        true => {
            let (re, im) = (super::complex::real(&dev)?, super::complex::imag(&dev)?);
            add(&mul(&re, &re)?, &mul(&im, &im)?)?
        }
        false => mul(&dev, &dev)?,
    };
    let denom = Tensor::wrapped_number(Scalar::Float((n - correction).max(0.0)));
    let v = div(&sum_raw(&squared, &dims, keepdim)?, &denom)?;
    let out = if is_std { super::unary::sqrt(&v)? } else { v };
    let in_shape: Shape = t.shape().into();
    let name = if is_std {
        "StdBackward0"
    } else {
        "VarBackward0"
    };
    record(
        name,
        &[t],
        &out,
        || {
            (
                SavedTensor::input(t),
                is_std.then(|| SavedTensor::output(&out, 0)),
            )
        },
        move |ctx, (sx, so), g| {
            let x = sx.unpack(ctx)?;
            let all: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            let dev = sub(&x, &mean(&x, &all, true)?)?;
            let g = unsqueeze_reduced(g, &in_shape, &dims, keepdim)?;
            let scale = match so {
                // d std = d var / (2 std), and 0 where the std is 0 (as in
                // PyTorch: constant data moves no input).
                Some(o) => {
                    let o = unsqueeze_reduced(&o.unpack(ctx)?, &in_shape, &dims, keepdim)?;
                    let zero = super::binary::eq(&o, &Tensor::wrapped_number(Scalar::Int(0)))?;
                    super::index::masked_fill(&div(&g, &o)?, &zero, Scalar::Int(0))?
                }
                None => mul(&g, &Tensor::wrapped_number(Scalar::Float(2.0)))?,
            };
            Ok(grads![Some(div(&mul(&scale, &dev)?, &denom)?)])
        },
    );
    Ok(out)
}

/// `norm(p=2, dim, keepdim)` for p = 2 (`LinalgVectorNormBackward0`).
pub fn norm2(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    if !t.dtype().is_differentiable() {
        bail!(
            Runtime,
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
            DType::scalar_type_name(t.dtype())
        );
    }
    use super::binary::{div, mul};
    let dims = reduce_dims(dims, t.ndim())?;
    let x = t.detach();
    let a = super::unary::abs(&x)?;
    let out = super::unary::sqrt(&sum_raw(&mul(&a, &a)?, &dims, keepdim)?)?;
    let in_shape: Shape = t.shape().into();
    record(
        "LinalgVectorNormBackward0",
        &[t],
        &out,
        || (SavedTensor::input(t), SavedTensor::output(&out, 0)),
        move |ctx, (sx, so), g| {
            let (x, n) = (sx.unpack(ctx)?, so.unpack(ctx)?);
            let n = unsqueeze_reduced(&n, &in_shape, &dims, keepdim)?;
            let g = unsqueeze_reduced(g, &in_shape, &dims, keepdim)?;
            // x / norm, zero where the norm is zero.
            let zero = Tensor::wrapped_number(Scalar::Int(0));
            let safe = super::unary::where_(
                &super::binary::eq(&n, &zero)?,
                &super::unary::ones_like(&n)?,
                &n,
            )?;
            Ok(grads![Some(mul(&g, &div(&x, &safe)?)?)])
        },
    );
    Ok(out)
}

/// Wrapped, de-duplicated dims where an empty list means none (not all).
pub fn reduce_dims_exact(dims: &[i64], ndim: usize) -> Result<Vec<usize>> {
    if dims.is_empty() {
        return Ok(Vec::new());
    }
    reduce_dims(dims, ndim)
}

/// `prod()` (`ProdBackward0`) or `prod(dim, keepdim)` (`ProdBackward1`),
/// in int64 for integers and bools unless `dtype` says otherwise.
pub fn prod(t: &Tensor, dim: Option<i64>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
    let t = super::copy::to_dtype(t, super::scan::scan_dtype(t, dtype))?;
    let name = match dim {
        None => "ProdBackward0",
        Some(_) => "ProdBackward1",
    };
    let dims = match dim {
        _ if t.ndim() == 0 => vec![],
        None => (0..t.ndim()).collect(),
        Some(d) => vec![wrap_dim(d, t.ndim())?],
    };
    let keepdim = keepdim && dim.is_some();
    let out =
        with_dtype!(t.dtype(), T => reduce::<T, T>(&t, &dims, keepdim, T::one(), T::mul, T::mul))?;
    record(
        name,
        &[&t],
        &out,
        || (SavedTensor::input(&t), SavedTensor::output(&out, 0)),
        move |ctx, (x, out), g| {
            let (x, out) = (x.unpack(ctx)?, out.unpack(ctx)?);
            Ok(grads![Some(prod_backward(g, &x, &out, &dims, keepdim)?)])
        },
    );
    Ok(out)
}

/// The gradient of `prod`: each element gets `g` times the product of the
/// others reduced with it. Without zeros that is `out / x`, built from
/// recorded ops so that it differentiates again.
fn prod_backward(
    g: &Tensor,
    x: &Tensor,
    out: &Tensor,
    dims: &[usize],
    keepdim: bool,
) -> Result<Tensor> {
    use super::binary::{div, mul};
    use super::unary::conj;
    let g = unsqueeze_reduced(g, x.shape(), dims, keepdim)?;
    if !super::scan::contains_zero(x) {
        let out = unsqueeze_reduced(out, x.shape(), dims, keepdim)?;
        return mul(&g, &conj(&div(&out, x)?)?);
    }
    let others = match dims {
        [d] => super::scan::products_of_others(x, *d)?,
        _ => {
            let whole: Vec<i64> = x.shape().iter().map(|&n| n as i64).collect();
            let flat = super::scan::products_of_others(&reshape(x, &[-1])?, 0)?;
            reshape(&flat, &whole)?
        }
    };
    let grad = mul(&g, &conj(&others)?)?;
    super::scan::without_second_derivative(&grad, &[&g, x], "prod")
}
