//! Ordering along a dim: `sort` and `topk`. Their values take the gradient
//! back to the positions they came from, as `gather` does.

use super::copy::contiguous;
use super::elementwise::PARALLEL_MIN_ELEMENTS;
use super::index::movedim;
use super::num::Real;
use super::scatter::scatter_add_zeros;
use crate::autograd::record;
use crate::tensor::layout::wrap_dim;
use crate::tensor::storage::{try_collect, try_filled};
use crate::tensor::{Shape, Tensor};
use crate::{bail, grads, with_real, Result};

/// `sort(dim, descending)`: `(values, indices)` along `dim`
/// (`SortBackward0`). NaN sorts above every number, and equal elements
/// keep their order, so the result is also what `stable=True` asks for.
pub fn sort(t: &Tensor, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
    let d = wrap_dim(dim, t.ndim())?;
    let size = t.shape().get(d).copied().unwrap_or(1);
    ordered(t, d, descending, size, "SortBackward0", "Sort")
}

/// `topk(k, dim, largest)`: the `k` largest (smallest) elements along `dim`
/// and their positions, in order (`TopkBackward0`).
pub fn topk(t: &Tensor, k: i64, dim: i64, largest: bool) -> Result<(Tensor, Tensor)> {
    let d = wrap_dim(dim, t.ndim())?;
    let size = t.shape().get(d).copied().unwrap_or(1);
    if k < 0 || k as usize > size {
        bail!(Runtime, "selected index k out of range");
    }
    // A 0-d tensor is its own top element whatever `k` (as in PyTorch).
    let k = if t.ndim() == 0 { 1 } else { k as usize };
    ordered(t, d, largest, k, "TopkBackward0", "topk")
}

/// The first `k` elements of each lane along `d` in order, and where each
/// came from.
fn ordered(
    t: &Tensor,
    d: usize,
    descending: bool,
    k: usize,
    name: &'static str,
    op: &str,
) -> Result<(Tensor, Tensor)> {
    // Lanes become rows: `d` moved last, then made contiguous.
    let last = t.ndim().saturating_sub(1) as i64;
    let move_dim = |u: &Tensor, from: i64, to: i64| -> Result<Tensor> {
        match u.ndim() {
            0 => Ok(u.clone()),
            _ => contiguous(&movedim(u, &[from], &[to])?),
        }
    };
    let x = move_dim(&t.detach(), d as i64, last)?;
    let size = x.shape().last().copied().unwrap_or(1);
    let rows: usize = x.shape().iter().rev().skip(1).product();
    let mut indices = try_filled(0i64, rows * k)?;
    let mut shape: Shape = x.shape().into();
    if let Some(s) = shape.last_mut() {
        *s = k;
    }
    let values = with_real!(x.dtype(), T => {
        x.with_contiguous(|xs: &[T]| {
            let order_row = |first: usize, out: &mut [i64]| {
                for (r, out) in (first / k..).zip(out.chunks_mut(k)) {
                    order_lane(&xs[r * size..(r + 1) * size], descending, out);
                }
            };
            if k > 0 && x.numel() >= PARALLEL_MIN_ELEMENTS {
                let rows_per_task = 4096usize.div_ceil(size.max(1));
                crate::parallel::for_each_chunk_mut(&mut indices, rows_per_task * k, order_row);
            } else if k > 0 {
                order_row(0, &mut indices);
            }
            let picked = indices.chunks(k.max(1)).enumerate().flat_map(|(r, row)| {
                row.iter().map(move |&i| xs[r * size + i as usize])
            });
            Tensor::from_vec(try_collect(indices.len(), picked)?, &shape)
        })?
    }, bail!(Runtime, " {} does not support complex dtypes on CPU", op));
    let values = move_dim(&values, last, d as i64)?;
    let indices = move_dim(&Tensor::from_vec(indices, &shape)?, last, d as i64)?;
    let (in_shape, idx): (Shape, Tensor) = (t.shape().into(), indices.clone());
    record(
        name,
        &[t],
        &values,
        || (),
        move |_, _, g| match in_shape.is_empty() {
            true => Ok(grads![Some(g.clone())]),
            false => Ok(grads![Some(scatter_add_zeros(g, d, &idx, &in_shape)?)]),
        },
    );
    Ok((values, indices))
}

/// Positions of the first `out.len()` elements of `lane` in order, NaN
/// above every number and ties broken by position.
fn order_lane<T: Real>(lane: &[T], descending: bool, out: &mut [i64]) {
    // Sorting plain integers, each an order key with its position, is
    // several times faster than comparing values through a closure.
    let flip = if descending { u64::MAX } else { 0 };
    if T::ORDER_KEY_BITS <= 32 && u32::try_from(lane.len()).is_ok() {
        // Key and position packed into one word.
        let keys = lane.iter().zip(0u64..);
        let keys = keys.map(|(x, i)| ((x.order_key() ^ (flip >> 32)) << 32) | i);
        first_in_order(keys.collect(), out, |key| {
            (key & u64::from(u32::MAX)) as i64
        });
    } else {
        let keys = lane.iter().zip(0..).map(|(x, i)| (x.order_key() ^ flip, i));
        first_in_order(keys.collect(), out, |&(_, i)| i);
    }
}

/// Writes to `out` the positions of the `out.len()` smallest `keys`, in
/// order.
fn first_in_order<K: Ord>(mut keys: Vec<K>, out: &mut [i64], position: impl Fn(&K) -> i64) {
    let k = out.len();
    if k == 0 {
        return;
    }
    if k < keys.len() {
        // Only the first k need ordering: partition them out first.
        keys.select_nth_unstable(k - 1);
        keys.truncate(k);
    }
    keys.sort_unstable();
    for (o, key) in out.iter_mut().zip(&keys) {
        *o = position(key);
    }
}
