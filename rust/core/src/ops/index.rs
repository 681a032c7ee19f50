//! Indexing: slicing back-propagation, gathers with integer tensors and
//! boolean masks, and joining tensors.

use super::copy::cast;
use super::elementwise::update;
use super::shape::slice;
use crate::autograd::record;
use crate::tensor::layout::Layout;
use crate::tensor::{Shape, Tensor};
use crate::{grads, with_dtype, Result};

/// Zeros of `shape` with `g` written at positions `start, start+step, ...`
/// of `dim`: the gradient of a slice (and of `select`).
pub fn slice_backward(
    g: &Tensor,
    shape: &Shape,
    dim: usize,
    start: usize,
    step: usize,
) -> Result<Tensor> {
    let out = Tensor::zeros(shape, g.dtype());
    let count = g.shape()[dim];
    let mut l: Layout = out.layout().clone();
    if count > 0 {
        l.offset += start * l.strides[dim] as usize;
    }
    l.shape[dim] = count;
    l.strides[dim] *= step as isize;
    let window = out.alias(l);
    let src = cast(g, out.dtype());
    with_dtype!(out.dtype(), T => update::<T, T>(&window, &src, |_, s| s))?;
    record(
        "SliceBackwardBackward0",
        &[g],
        &out,
        || (),
        move |_, _, gg| Ok(grads![Some(slice(gg, dim, start, count, step)?)]),
    );
    Ok(out)
}
