//! Running (cumulative) sums along a dim: `cumsum`, whose gradient is the
//! running sum taken from the other end.

use super::copy::{contiguous, to_dtype};
use super::elementwise::PARALLEL_MIN_ELEMENTS;
use super::num::Arith;
use crate::autograd::record;
use crate::tensor::layout::wrap_dim;
use crate::tensor::{DType, Element, Tensor};
use crate::{grads, with_dtype, Result};

/// `cumsum(dim, dtype)` (`CumsumBackward0`): element `k` along `dim` is the
/// sum of elements `0..=k`. Integers and bools sum in int64 unless `dtype`
/// says otherwise.
pub fn cumsum(t: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim().max(1))?;
    let dtype = dtype.unwrap_or(match t.dtype() {
        DType::Bool | DType::Int64 => DType::Int64,
        float => float,
    });
    running_sums(&to_dtype(t, dtype)?, d, false)
}

/// Running sums along `d`, from the far end when `reverse`; each is the
/// other's gradient.
fn running_sums(t: &Tensor, d: usize, reverse: bool) -> Result<Tensor> {
    let x = contiguous(&t.detach())?;
    let shape = x.shape();
    let (size, inner) = match shape.len() {
        0 => (1, 1),
        _ => (shape[d], shape[d + 1..].iter().product()),
    };
    let out = with_dtype!(x.dtype(), T => {
        let sums = x.with_contiguous(|xs: &[T]| scan_blocks(xs, size, inner, reverse));
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

/// `xs` seen as blocks of `size` rows of `inner` elements, each row plus
/// the rows before it in its block (after it when `reverse`). Whole rows
/// are added at a time, which vectorises; blocks spread over the pool.
fn scan_blocks<T: Element + Arith>(xs: &[T], size: usize, inner: usize, reverse: bool) -> Vec<T> {
    let mut out = xs.to_vec();
    let block = size * inner;
    if block == 0 {
        return out;
    }
    let scan = |_: usize, span: &mut [T]| {
        if inner == 1 {
            // Lanes along the last dim: one running total each.
            for b in span.chunks_mut(block) {
                let mut total = T::zero();
                let mut step = |x: &mut T| {
                    total = total.add(*x);
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
                    *o = o.add(s);
                }
            }
        }
    };
    if xs.len() >= PARALLEL_MIN_ELEMENTS {
        crate::parallel::for_each_span_mut(&mut out, block, scan);
    } else {
        scan(0, &mut out);
    }
    out
}
