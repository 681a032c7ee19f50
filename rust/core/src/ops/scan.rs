//! Running (cumulative) sums and products along a dim: `cumsum`, whose
//! gradient is the running sum taken from the other end, and `cumprod`;
//! and the products of all other elements of a lane, `prod`'s gradient.

use super::binary::{div, mul};
use super::copy::{contiguous, to_dtype};
use super::elementwise::PARALLEL_MIN_ELEMENTS;
use super::num::{Arith, Float};
use super::unary::conj;
use crate::autograd::{record, SavedTensor};
use crate::tensor::layout::wrap_dim;
use crate::tensor::storage::{try_buffer, try_filled};
use crate::tensor::{DType, Element, Tensor};
use crate::{bail, grads, with_dtype, with_float, Result};

/// `cumsum(dim, dtype)` (`CumsumBackward0`): element `k` along `dim` is the
/// sum of elements `0..=k`. Integers and bools sum in int64 unless `dtype`
/// says otherwise.
pub fn cumsum(t: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim().max(1))?;
    running_sums(&to_dtype(t, scan_dtype(t, dtype))?, d, false)
}

/// The dtype a running sum or product is taken in: `dtype` if given, else
/// int64 for integers and bools, else the input's.
pub fn scan_dtype(t: &Tensor, dtype: Option<DType>) -> DType {
    dtype.unwrap_or(match t.dtype() {
        d if d.is_integral(true) => DType::Int64,
        float => float,
    })
}

/// The (rows, inner) extents of the lanes along `d`: each lane is `rows`
/// elements `inner` apart.
fn lanes(shape: &[usize], d: usize) -> (usize, usize) {
    match shape.len() {
        0 => (1, 1),
        _ => (shape[d], shape[d + 1..].iter().product()),
    }
}

/// `cumprod(dim, dtype)` (`CumprodBackward0`): element `k` along `dim` is
/// the product of elements `0..=k`.
pub fn cumprod(t: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim().max(1))?;
    let t = to_dtype(t, scan_dtype(t, dtype))?;
    let x = contiguous(&t.detach())?;
    let (size, inner) = lanes(x.shape(), d);
    let out = with_dtype!(x.dtype(), T => {
        let prods = x.with_contiguous(|xs: &[T]| scan_blocks(xs, size, inner, false, T::one(), T::mul))?;
        Tensor::from_vec(prods, x.shape())?
    });
    record(
        "CumprodBackward0",
        &[&t],
        &out,
        || (SavedTensor::input(&t), SavedTensor::output(&out, 0)),
        move |ctx, (x, out), g| {
            let (x, out) = (x.unpack(ctx)?, out.unpack(ctx)?);
            Ok(grads![Some(cumprod_backward(g, &x, &out, d)?)])
        },
    );
    Ok(out)
}

/// The gradient of `cumprod`: element `k` gets `sum over i >= k of g[i]`
/// times the product of elements `0..=i` but `k`. Without zeros that is a
/// reverse running sum of `g * out` over `x`, built from recorded ops so
/// that it differentiates again.
fn cumprod_backward(g: &Tensor, x: &Tensor, out: &Tensor, d: usize) -> Result<Tensor> {
    if !contains_zero(x) {
        let shares = running_sums(&mul(g, &conj(out)?)?, d, true)?;
        return div(&shares, &conj(x)?);
    }
    let grad = with_float!(x.dtype(), T => {
        let (xs, outs, gs) = (elements::<T>(x)?, elements::<T>(out)?, elements::<T>(g)?);
        let grad = map_lanes([&xs, &outs, &gs], x.shape(), d, |[x, out, g], grad| {
            cumprod_lane_grad(x, out, g, grad)
        })?;
        Tensor::from_vec(grad, x.shape())?
    }, bail!(Runtime, "cumprod: no gradient for dtype {:?}", x.dtype()));
    without_second_derivative(&grad, &[g, x], "cumprod")
}

/// One lane of [`cumprod_backward`] for inputs with zeros. Before the first
/// zero `z` the running-sum formula holds; `z` itself gets each later
/// `g[i]` times the product of the lane up to `i` without `z`; after `z`
/// every product includes the zero.
fn cumprod_lane_grad<T: Float>(x: &[T], out: &[T], g: &[T], grad: &mut [T]) {
    let n = x.len();
    let z = x.iter().position(|&v| v == T::zero()).unwrap_or(n);
    let mut share = T::zero();
    for k in (0..z).rev() {
        share = share.add(g[k].mul(out[k].conj()));
        grad[k] = share.div(x[k].conj());
    }
    if z < n {
        let mut without_z = if z == 0 { T::one() } else { out[z - 1] };
        let mut total = T::zero();
        for i in z..n {
            if i > z {
                without_z = without_z.mul(x[i]);
            }
            total = total.add(g[i].mul(without_z.conj()));
        }
        grad[z] = total;
        grad[z + 1..].fill(T::zero());
    }
}

/// For each element, the product of the other elements of its lane along
/// `d` (`prod`'s gradient is `g` times its conjugate): the products before
/// and after it, so zeros need no division.
pub fn products_of_others(x: &Tensor, d: usize) -> Result<Tensor> {
    Ok(with_float!(x.dtype(), T => {
        let others = map_lanes([&elements::<T>(x)?], x.shape(), d, |[x], others| other_products(x, others))?;
        Tensor::from_vec(others, x.shape())?
    }, bail!(Runtime, "prod: no gradient for dtype {:?}", x.dtype())))
}

/// One lane of [`products_of_others`].
fn other_products<T: Arith + Copy>(x: &[T], others: &mut [T]) {
    let mut before = T::one();
    for (o, &v) in others.iter_mut().zip(x.iter()) {
        *o = before;
        before = before.mul(v);
    }
    let mut after = T::one();
    for (o, &v) in others.iter_mut().zip(x.iter()).rev() {
        *o = o.mul(after);
        after = after.mul(v);
    }
}

/// Whether any element of `x` is zero.
pub fn contains_zero(x: &Tensor) -> bool {
    let x = contiguous(&x.detach()).expect("a plain copy");
    with_dtype!(x.dtype(), T => x.with_contiguous(|xs: &[T]| xs.contains(&T::default())))
}

/// `f(lanes, out)` for each lane along `d` of same-shaped buffers (shaped
/// `shape`, contiguous), each lane gathered; the results, lane by lane, in
/// that shape.
fn map_lanes<T: Element, const N: usize>(
    inputs: [&[T]; N],
    shape: &[usize],
    d: usize,
    f: impl Fn([&[T]; N], &mut [T]),
) -> Result<Vec<T>> {
    let (size, inner) = lanes(shape, d);
    let mut out = try_filled(T::default(), inputs.first().map_or(0, |xs| xs.len()))?;
    if size == 0 || inner == 0 {
        return Ok(out);
    }
    let mut gathered = [(); N].map(|_| vec![T::default(); size]);
    let mut result = try_filled(T::default(), size)?;
    for block in 0..out.len() / (size * inner) {
        for i in 0..inner {
            let at = |k: usize| (block * size + k) * inner + i;
            for (lane, xs) in gathered.iter_mut().zip(inputs) {
                lane.iter_mut()
                    .enumerate()
                    .for_each(|(k, v)| *v = xs[at(k)]);
            }
            f(gathered.each_ref().map(|lane| lane.as_slice()), &mut result);
            result.iter().enumerate().for_each(|(k, &v)| out[at(k)] = v);
        }
    }
    Ok(out)
}

/// `t`'s elements in order, as `T`.
fn elements<T: Element>(t: &Tensor) -> Result<Vec<T>> {
    Ok(contiguous(&t.detach())?.to_vec::<T>())
}

/// Records on `grad` (a gradient computed by a kernel) a node that fails
/// when differentiated, so that a second derivative is never silently
/// wrong.
pub(crate) fn without_second_derivative(
    grad: &Tensor,
    inputs: &[&Tensor],
    op: &'static str,
) -> Result<Tensor> {
    let grad = grad.detach();
    record(
        "NotImplemented",
        inputs,
        &grad,
        || (),
        move |_, _, _| {
            bail!(
                Runtime,
                "the derivative of {op}'s gradient is not implemented for inputs containing zeros"
            )
        },
    );
    Ok(grad)
}

/// Running sums along `d`, from the far end when `reverse`; each is the
/// other's gradient.
fn running_sums(t: &Tensor, d: usize, reverse: bool) -> Result<Tensor> {
    let x = contiguous(&t.detach())?;
    let shape = x.shape();
    let (size, inner) = lanes(shape, d);
    let out = with_dtype!(x.dtype(), T => {
        let sums = x.with_contiguous(|xs: &[T]| scan_blocks(xs, size, inner, reverse, T::zero(), T::add))?;
        Tensor::from_vec(sums, shape)?
    });
    record(
        "CumsumBackward0",
        &[t],
        &out,
        || (),
        move |_, _, g| Ok(grads![Some(running_sums(g, d, !reverse)?)]),
    );
    Ok(out)
}

/// `xs` seen as blocks of `size` rows of `inner` elements, each row
/// combined with the running result of the rows before it in its block
/// (after it when `reverse`). Whole rows are combined at a time, which
/// vectorises; blocks spread over the pool.
fn scan_blocks<T: Element + Arith>(
    xs: &[T],
    size: usize,
    inner: usize,
    reverse: bool,
    identity: T,
    combine: impl Fn(T, T) -> T + Sync,
) -> Result<Vec<T>> {
    let mut out = try_buffer(xs.len())?;
    out.extend_from_slice(xs);
    let block = size * inner;
    if block == 0 {
        return Ok(out);
    }
    let scan = |_: usize, span: &mut [T]| {
        if inner == 1 {
            // Lanes along the last dim: one running total each.
            for b in span.chunks_mut(block) {
                let mut total = identity;
                let mut step = |x: &mut T| {
                    total = combine(total, *x);
                    *x = total;
                };
                match reverse {
                    true => b.iter_mut().rev().for_each(&mut step),
                    false => b.iter_mut().for_each(&mut step),
                }
            }
            return;
        }
        for b in span.chunks_mut(block) {
            for k in 1..size {
                // Rows `to` and `from` are adjacent: `from` already summed.
                let (to, from) = if reverse {
                    (size - 1 - k, size - k)
                } else {
                    (k, k - 1)
                };
                let (low, high) = b.split_at_mut(to.max(from) * inner);
                let (dst, src) = match reverse {
                    true => (&mut low[to * inner..], &high[..inner]),
                    false => (&mut high[..inner], &low[from * inner..]),
                };
                for (o, &s) in dst.iter_mut().zip(src) {
                    *o = combine(*o, s);
                }
            }
        }
    };
    if xs.len() >= PARALLEL_MIN_ELEMENTS {
        crate::parallel::for_each_span_mut(&mut out, block, scan);
    } else {
        scan(0, &mut out);
    }
    Ok(out)
}
